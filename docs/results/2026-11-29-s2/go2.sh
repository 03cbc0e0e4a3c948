#!/usr/bin/env bash
# Call 2 (2026-11-29, second session), on the bundle of c280da6 (collision's two device_reduce
# methods and its SOA baseline on 32 lanes; models PTX f1adcd159b977ac3).
# 1. Collision's register cap on its two 32-lane kernels: 48 (the bundle's cubin, as
#    examples/apps/build.rs) against 40, 56, 64 and none (cubins of the same PTX assembled by
#    scripts/cubin-variant.py --cap), order c48 c56 c64 c0 c40 c40 c0 c64 c56 c48.
# 2. n-body's dense walk visiting a block's positions in straight runs where all of a run's
#    positions hold objects (pair: runs of 2, quad: runs of 4; variant-pair.diff, variant-quad.diff; cubins under
#    the bundle's digest by cubin-variant.py --as), order main pair quad quad pair main.
# 3. --compare of collision and n-body on the bundle; collision's kernel times (DYNASOAR_PROFILE=1).
# 4. The GPU suite.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B /tmp/caps
[[ -x $B/bin/nbody ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/caps.tar.xz | tar xf - -C /tmp/caps
xz -dc gpu-bundle/extra/runs.tar.xz | tar xf - -C /tmp/caps
export DYNASOAR_DATA=$PWD/gpu-bundle/data
dir() { case $1 in main|c48) echo $B/cubin ;; c*) echo /tmp/caps/cap${1#c} ;; *) echo /tmp/caps/$1 ;; esac; }
side() { local s=$1; shift; echo "=== $s $*"
  DYNASOAR_CUBIN_DIR=$(dir $s) timeout ${LIMIT:-120} $B/bin/$1 --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in c48 c56 c64 c0 c40 c40 c0 c64 c56 c48; do side $s collision; done; } > $OUT/collision-caps.txt 2>&1
cut -c1-200 $OUT/collision-caps.txt
{ for s in main pair quad quad pair main; do side $s nbody; done; } > $OUT/nbody-runs.txt 2>&1
cut -c1-200 $OUT/nbody-runs.txt
{ for app in collision nbody; do echo "=== main $app --compare"
    DYNASOAR_CUBIN_DIR=$(dir main) timeout 150 $B/bin/$app --backend cuda --no-progress --compare 2>&1 | tail -8
  done; } > $OUT/compare.txt 2>&1
cat $OUT/compare.txt
{ echo "=== main collision DYNASOAR_PROFILE=1"
  DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$(dir main) timeout 60 $B/bin/collision --backend cuda --no-progress 2>&1; } > $OUT/collision-profile.txt 2>&1
head -8 $OUT/collision-profile.txt
bash gpu-bundle/run.sh tests > $OUT/gpu-tests.log 2>&1
tail -45 $OUT/gpu-tests.log
