#!/usr/bin/env bash
# Call 3 (2026-11-30, seventeenth session): how long one `make_new` of traffic's
# `ProducerCell::create_car` takes (a diagnostic build of main 081b4d7: the method reads the
# multiprocessor's cycle counter before and after its `make_new` and adds the cycles and a
# histogram bucket to spare counters, which the app prints at the end; gpu-bundle/extra/vI).
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
D=/tmp/vI; rm -rf $D; mkdir -p $D; cp gpu-bundle/extra/vI/*.cubin $D/; xz -dc gpu-bundle/extra/vI/traffic.xz > $D/traffic; chmod +x $D/traffic
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  echo "commit: diagnostic build of 081b4d7 (PTX for sm_90; create_car timed around make_new)"
  echo "command: bash docs/results/2026-11-30-s17/go3.sh (traffic --backend cuda --no-progress [--steps N])"
  for steps in 12000 100; do
    echo "=== steps $steps"; DYNASOAR_CUBIN_DIR=$D $D/traffic --backend cuda --no-progress --steps $steps 2>&1 | grep -E 'instr|^app=' | cut -c1-400
  done
  echo "=== profile"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$D $D/traffic --backend cuda --no-progress 2>&1 | grep -E 'instr|create_car|^app=' | cut -c1-300
} > $OUT/make-new-cycles.txt 2>&1
cat $OUT/make-new-cycles.txt
