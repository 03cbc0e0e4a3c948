#!/usr/bin/env bash
# Call 4 (2026-11-30, seventeenth session): which paths traffic's car allocations take. A
# diagnostic build of main 081b4d7 (gpu-bundle/extra/vI): go3.sh's timing of create_car's
# `make_new`, and counters in the allocator's leader path (device globals, copied into the app's
# spare counters by create_car): searches, note attempts and hits, active-bitmap searches that
# found a block or none, reservations lost, blocks opened, snoozes, retries inside a block's
# reservation, type mismatches. Counts cover the whole run (setup included).
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
D=/tmp/vI; rm -rf $D; mkdir -p $D; cp gpu-bundle/extra/vI/*.cubin $D/; xz -dc gpu-bundle/extra/vI/traffic.xz > $D/traffic; chmod +x $D/traffic
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: diagnostic build of 081b4d7 (PTX for sm_90; create_car timed around make_new; allocator path counters)"
  echo "command: bash docs/results/2026-11-30-s17/go4.sh (traffic --backend cuda --no-progress [--steps N])"
  for steps in 12000 100 1000; do
    echo "=== steps $steps"; DYNASOAR_CUBIN_DIR=$D $D/traffic --backend cuda --no-progress --steps $steps 2>&1 | grep -E 'instr|diag|^app=' | cut -c1-400
  done
} > $OUT/make-new-paths.txt 2>&1
cat $OUT/make-new-paths.txt
