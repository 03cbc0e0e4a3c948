#!/usr/bin/env bash
# Deferred frees, upper bound: the bundle of c280da6 against the same binaries with a models
# cubin whose launches that create nothing free without the fence and transitions (no drain:
# blocks that a free leaves not full stay inactive, emptied blocks stay allocated).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B /tmp/v
[[ -x $B/bin/nbody ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/defer.tar.xz | tar xf - -C /tmp/v
dir() { case $1 in main) echo $B/cubin ;; *) echo /tmp/v/$1 ;; esac; }
side() { local s=$1; shift; echo "=== $s $*"
  DYNASOAR_CUBIN_DIR=$(dir $s) timeout ${LIMIT:-120} $B/bin/$1 --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in main defer defer48 defer48 defer main; do side $s structure; side $s traffic; done; } > $OUT/defer-ab.txt 2>&1
cut -c1-250 $OUT/defer-ab.txt
{ for s in main defer; do echo "=== $s structure DYNASOAR_PROFILE=1"
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$(dir $s) timeout 60 $B/bin/structure --backend cuda --no-progress 2>&1
  done; } > $OUT/defer-profile.txt 2>&1
grep -E "^===|compute_force|prune|blocks|free" $OUT/defer-profile.txt | cut -c1-200
