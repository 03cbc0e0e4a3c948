#!/usr/bin/env bash
# Call 1 (2026-11-27, ninth session): Barnes-Hut with its force walk's fields in two groups
# (#[group]: NodeBase's pos and mass, TreeNode's child slots and square; the working tree,
# packed by scripts/gpu-quick.sh) against the bundle's binary (ecf88c9, every field its own
# array): 1,000 steps with per-kernel times, then the full run, order base new new base (the
# second new run with --compare).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
A=/tmp/bundle-base; Q=/tmp/quick; mkdir -p $A $Q
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $A
xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
echo "base $(cat gpu-bundle/COMMIT) cubins: $(ls $A/cubin | tr '\n' ' ') new cubin: $(ls $Q/cubin)" | tee $OUT/sides.txt
export DYNASOAR_DATA=$PWD/gpu-bundle/data
side() { local s=$1; shift; echo "=== $s $*"
  case $s in base) D=$A ;; new) D=$Q ;; esac
  DYNASOAR_CUBIN_DIR=$D/cubin "$D/bin/barnes-hut" --backend cuda --no-progress "$@" 2>&1; }
{ for s in base new; do DYNASOAR_PROFILE=1 side $s --steps 1000; done
  side base; side new; side new --compare; side base
} > $OUT/groups-ab.txt 2>&1
grep -E "^===|total_us|compute_force|summarize|insert|update" $OUT/groups-ab.txt | cut -c1-220
