#!/usr/bin/env bash
# Call 1 (2026-11-29, fourth session). n-body's dense walk without a branch per position
# (spec: variant-spec.diff, the models cubin assembled under the bundle's digest
# 604641a9616de2cf): each lane folds every position of its part of a block and keeps the result
# only where the slot's bit is set, so no position's loads wait for the block's header.
# Against the bundle of 60bdddb (main). Order main spec spec main main spec; then --compare on
# each side once, and the SASS of both force kernels.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B /tmp/v
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/spec.tar.xz | tar xf - -C /tmp/v
dir() { case $1 in main) echo $B/cubin ;; *) echo /tmp/v/$1 ;; esac; }
side() { local s=$1; shift; echo "=== $s $*"
  DYNASOAR_CUBIN_DIR=$(dir $s) timeout ${LIMIT:-40} $B/bin/$1 --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in main spec spec main main spec; do side $s nbody; done; } > $OUT/spec-ab.txt 2>&1
grep -E "^===|^app=" $OUT/spec-ab.txt | sed -E 's/^(app=[a-z-]+).*(total_us=[0-9]+).* (checksum=[^ ]+).*/\1 \2 \3/' | paste - -
{ for s in spec main; do LIMIT=60 side $s nbody --compare; done; } > $OUT/spec-compare.txt 2>&1
grep -E "^===|^app=" $OUT/spec-compare.txt | cut -c1-200
for s in main spec; do
  cuobjdump -sass -fun dynasoar_do__NbodyHeap__Body__compute_force $(dir $s)/604641a9616de2cf.sm_90.cubin > $OUT/sass-$s-compute_force.txt 2>&1; wc -l $OUT/sass-$s-compute_force.txt
done
