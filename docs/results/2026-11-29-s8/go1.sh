#!/usr/bin/env bash
# Call 1: how Wa-Tor's agent kernels' time per object changes as the heap order of the
# agents drifts from the grid's (per-step kernel times from differences of runs of k and k+1
# steps; one-wave grids so that the grid trials do not change the early steps).
set -u
B=/tmp/b; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_CUBIN_DIR=$B/cubin DYNASOAR_DATA=gpu-bundle/data DYNASOAR_DO_ALL_WAVES=1 DYNASOAR_PROFILE=1
L=$OUT/wator-drift.txt
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; echo "commit: $(cat gpu-bundle/COMMIT)"
  echo "command: bash docs/results/2026-11-29-s8/go1.sh"
  for s in 1 2 3 4 100 101 400 401; do echo "=== steps $s"; $B/bin/wa-tor --backend cuda --no-progress --steps $s 2>&1 | grep -E "Fish__|Shark__|decide|app="; done
} > $L 2>&1
