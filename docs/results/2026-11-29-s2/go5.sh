#!/usr/bin/env bash
# Call 5 (2026-11-29, second session). Collision on 32 lanes (main: the bundle of c280da6)
# against the same binaries with a models cubin whose ranked-list walk folds its objects two at
# a time, the next pair loaded before this one is folded (lpair: variant-list-pair.diff, the
# first session's variant-pair.diff, assembled under the bundle's digest f1adcd159b977ac3 by
# scripts/cubin-variant.py --as). Order main lpair lpair main main lpair, then each side's
# per-kernel times (DYNASOAR_PROFILE=1).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B /tmp/v
[[ -x $B/bin/nbody ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/lpair.tar.xz | tar xf - -C /tmp/v
dir() { case $1 in main) echo $B/cubin ;; *) echo /tmp/v/$1 ;; esac; }
side() { local s=$1; shift; echo "=== $s $*"
  DYNASOAR_CUBIN_DIR=$(dir $s) timeout ${LIMIT:-120} $B/bin/$1 --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in main lpair lpair main main lpair; do side $s collision; done; } > $OUT/list-pair-ab.txt 2>&1
cut -c1-220 $OUT/list-pair-ab.txt
{ for s in main lpair; do echo "=== $s collision DYNASOAR_PROFILE=1"
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$(dir $s) timeout 60 $B/bin/collision --backend cuda --no-progress 2>&1
  done; } > $OUT/list-pair-profile.txt 2>&1
grep -E "^===|compute_force|prepare_merge" $OUT/list-pair-profile.txt
