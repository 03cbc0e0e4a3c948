#!/usr/bin/env bash
# Call 2 (2026-11-29, third session). The streaming loop's prefetch into L1 instead of L2
# (prefetch.global.L1; l1pf: the models cubin of that one-line change, assembled under the bundle's
# digest f1adcd159b977ac3) against the bundle of c280da6 (main): field access, then the apps whose
# kernels stream (Sugarscape, Game of Life). Order main l1pf l1pf main main l1pf.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B /tmp/v
[[ -x $B/bin/nbody ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/l1pf.tar.xz | tar xf - -C /tmp/v
dir() { case $1 in main) echo $B/cubin ;; *) echo /tmp/v/$1 ;; esac; }
export DYNASOAR_DATA=$B/data
side() { local s=$1; shift; echo "=== $s $*"
  DYNASOAR_CUBIN_DIR=$(dir $s) timeout ${LIMIT:-60} $B/bin/$1 --backend cuda "${@:2}" 2>&1 | grep -E "^app=|^bench=|rror"; }
{ for s in main l1pf l1pf main main l1pf; do side $s field-access; done; } > $OUT/l1pf-field.txt 2>&1
grep -E "^===|loop=default" $OUT/l1pf-field.txt | sed -E 's/.*(parallel_do_us=[0-9.]+).*(method_us=[0-9.]+).*(copy_us=[0-9.]+).*(array_us=[0-9.]+).*(ratio_vs_copy=[0-9.]+).*/\1 \2 \3 \4 \5/'
{ for s in main l1pf l1pf main; do side $s sugarscape --no-progress; side $s game-of-life --no-progress; done; } > $OUT/l1pf-apps.txt 2>&1
grep -E "^===|^app=" $OUT/l1pf-apps.txt | sed -E 's/^(app=[a-z-]+).*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2 \3/'
