#!/usr/bin/env bash
# Call 4 (2026-11-27, eighth session): Barnes-Hut with a heap check at the end (the working
# tree's app, models PTX 40ed6c978e902f41), run with a5b78e8's models cubin (base) and with the
# unbounded-retry cubin (miss, 60373ca0ba00a55f), each under the app's PTX digest.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
C=gpu-bundle/extra/chk
{ for s in base miss; do for steps in 300 1000; do echo "=== barnes-hut --steps $steps $s"
  DYNASOAR_CUBIN_DIR=$PWD/$C/$s $C/barnes-hut --backend cuda --no-progress --steps $steps 2>&1; echo "rc=$?"; done; done
} > $OUT/bh-check.txt 2>&1
cat $OUT/bh-check.txt | cut -c1-400
