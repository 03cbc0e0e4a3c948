#!/usr/bin/env bash
# Call 3 (2026-11-28, fourth session). The bundle of db034f5 (bulk creation landed).
# 1. The GPU suite (run.sh tests).
# 2. n-body --compare twice, collision --compare once (DSL against both baselines, one process
#    each), and the collision's per-kernel times (DYNASOAR_PROFILE=1, DSL).
# 3. full (a dense walk visits a part whose every position is taken without bit tests,
#    variant-full.diff on db034f5, assembled under the bundle's digest): n-body DSL, order base
#    full full base.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
bash gpu-bundle/run.sh tests > $OUT/run-tests.txt 2>&1
tail -45 $OUT/summary.txt
cp $OUT/summary.txt $OUT/gpu-tests-summary.txt
B=/tmp/dynasoar-bundle
export DYNASOAR_DATA=$B/data
dir() { case $1 in base) echo $B/cubin ;; *) echo $PWD/gpu-bundle/extra/$1 ;; esac; }
{ for app in nbody nbody collision; do echo "=== $app --compare"
    DYNASOAR_CUBIN_DIR=$B/cubin timeout 150 $B/bin/$app --backend cuda --no-progress --compare 2>&1 | tail -8
  done; } > $OUT/compare-db034f5.txt 2>&1
cat $OUT/compare-db034f5.txt
DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$B/cubin timeout 60 $B/bin/collision --backend cuda --no-progress \
  > $OUT/collision-profile-db034f5.txt 2>&1
cat $OUT/collision-profile-db034f5.txt
side() { local s=$1; shift; echo "=== $s $*"
  DYNASOAR_CUBIN_DIR=$(dir $s) timeout 120 "$B/bin/$1" --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in base full full base; do side $s nbody; done; } > $OUT/full-ab.txt 2>&1
grep -E "^===|total_us" $OUT/full-ab.txt | sed -E 's/(total_us=[0-9]+).*(checksum=[-0-9.e]+).*/\1 \2/'
