#!/usr/bin/env bash
# Call 5 (2026-11-27, ninth session): Barnes-Hut on the bundle of f0b0f94 (final device code)
# with the allocator's last-block tables (default) and without (DYNASOAR_ALLOCATOR_VARIANT=nolast,
# which placed tree nodes differently before the field groups): full runs, order default nolast
# nolast default; then one profiled full run of each (per-kernel device times over 4,000 steps).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
N=/tmp/bundle-new; mkdir -p $N
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
echo "bundle $(cat gpu-bundle/COMMIT) cubins: $(ls $N/cubin | tr '\n' ' ')" | tee $OUT/sides.txt
export DYNASOAR_DATA=$PWD/gpu-bundle/data
side() { local s=$1; shift; echo "=== $s $*"
  case $s in default) V=default ;; nolast) V=nolast ;; esac
  DYNASOAR_ALLOCATOR_VARIANT=$V DYNASOAR_CUBIN_DIR=$N/cubin "$N/bin/barnes-hut" --backend cuda --no-progress "$@" 2>&1; }
{ side default; side nolast; side nolast; side default
  for s in default nolast; do DYNASOAR_PROFILE=1 side $s; done
} > $OUT/nolast-bh.txt 2>&1
grep -E "^===|total_us|compute_force|insert|summarize|update" $OUT/nolast-bh.txt | cut -c1-200
