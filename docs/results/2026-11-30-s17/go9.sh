#!/usr/bin/env bash
# Call 9 (2026-11-30, seventeenth session): how long each path of a car allocation takes on
# 805f0c4 (a diagnostic build, variant-diag3.diff: the leader's search reads the cycle counter
# at its start and adds the cycles of its round to its path's counters: a reservation in the
# noted block, in a block found next to the note, by a search from the top, after a lost
# reservation, or in a block it opened; rounds of 16,384 cycles or more counted apart).
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
D=/tmp/d3; rm -rf $D; mkdir -p $D; cp gpu-bundle/extra/diag3/*.cubin $D/; xz -dc gpu-bundle/extra/diag3/traffic.xz > $D/traffic; chmod +x $D/traffic
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: diagnostic build of 805f0c4 (PTX for sm_90; variant-diag3.diff)"
  echo "command: bash docs/results/2026-11-30-s17/go9.sh (traffic --backend cuda --no-progress [--steps N])"
  for steps in 12000 1000; do
    echo "=== steps $steps"; DYNASOAR_CUBIN_DIR=$D $D/traffic --backend cuda --no-progress --steps $steps 2>&1 | grep -E 'instr|path|^app=' | cut -c1-400
  done
} > $OUT/make-new-path-cycles.txt 2>&1
cat $OUT/make-new-path-cycles.txt
