#!/usr/bin/env bash
# Call 2 (2026-11-29). The bundle of 9c318ef (new: ranked lists padded per block, parts by
# rank in each block, dense methods walk blocks) against the bundle of db034f5 (base: models
# PTX 94c6a29ffcec441f, as main's b360557).
# 1. n-body and collision, DSL, order base new new base.
# 2. collision's per-kernel times on new (DYNASOAR_PROFILE=1).
# 3. n-body and collision --compare on new (the baselines' times in the same processes).
# 4. The GPU suite on new.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B /tmp/base
[[ -x $B/bin/nbody ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
[[ -x /tmp/base/bin/nbody ]] || xz -dc gpu-bundle/extra/base-payload.tar.xz | tar xf - -C /tmp/base
export DYNASOAR_DATA=$PWD/gpu-bundle/data
bin() { case $1 in base) echo /tmp/base/bin ;; *) echo $B/bin ;; esac; }
dir() { case $1 in base) echo /tmp/base/cubin ;; new) echo $B/cubin ;; *) echo $PWD/gpu-bundle/extra/$1 ;; esac; }
side() { local s=$1; shift; echo "=== $s $*"
  DYNASOAR_CUBIN_DIR=$(dir $s) timeout ${LIMIT:-120} "$(bin $s)/$1" --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in base new new base; do
    for app in nbody collision; do side $s $app; done
  done; } > $OUT/ranked-ab.txt 2>&1
grep -E "^===|total_us" $OUT/ranked-ab.txt | cut -c1-220
{ echo "=== new collision DYNASOAR_PROFILE=1"
  DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$(dir new) timeout 60 $B/bin/collision --backend cuda --no-progress 2>&1
} > $OUT/collision-profile.txt 2>&1
cat $OUT/collision-profile.txt
{ for app in nbody collision; do echo "=== new $app --compare"
    DYNASOAR_CUBIN_DIR=$(dir new) timeout 150 $B/bin/$app --backend cuda --no-progress --compare 2>&1 | tail -8
  done; } > $OUT/compare-new.txt 2>&1
cat $OUT/compare-new.txt
bash gpu-bundle/run.sh tests > $OUT/gpu-tests.log 2>&1
tail -45 $OUT/gpu-tests.log
