#!/usr/bin/env bash
# Call 8: the GPU suite on the bundle of main after the plain loop's first loads (db56505 and
# its docs), then four apps once with --compare.
set -u
mkdir -p /tmp/t
OUT=/tmp/t bash gpu-bundle/run.sh tests > /tmp/t/stdout.txt 2>&1; echo "tests rc=$?"
cp /tmp/t/summary.txt $OUT/gpu-tests.txt
tail -40 $OUT/gpu-tests.txt | grep -E "FAIL|steps"
N=/tmp/dynasoar-bundle
export DYNASOAR_DATA=gpu-bundle/data
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT)"
  echo "command: bash docs/results/2026-11-30/go7.sh"
  for a in wa-tor game-of-life traffic generation; do
    DYNASOAR_CUBIN_DIR=$N/cubin $N/bin/$a --backend cuda --no-progress --compare 2>&1 | grep -E "^app=|vs soa|^(soa|aos|dynasoar) "
  done
} > $OUT/compare4.txt 2>&1
cat $OUT/compare4.txt
