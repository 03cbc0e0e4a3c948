#!/usr/bin/env bash
# Call 6 (2026-11-28): the GPU suite on the final device code (bundle of b087602; its later
# changes are docs only), then Barnes-Hut with --compare twice (DSL, SOA and AOS baselines).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
OUT=$OUT/suite timeout 330 bash gpu-bundle/run.sh tests > $OUT/gpu-tests.txt 2>&1
tail -3 $OUT/gpu-tests.txt
B=/tmp/dynasoar-bundle
export DYNASOAR_DATA=$B/data DYNASOAR_CUBIN_DIR=$B/cubin
for i in 1 2; do echo "=== barnes-hut --compare ($i)"; timeout 120 $B/bin/barnes-hut --backend cuda --no-progress --compare 2>&1; done > $OUT/bh-compare.txt
grep -E "^===|total_us|x " $OUT/bh-compare.txt | cut -c1-220
cd $OUT && tar czf suite.tgz suite && rm -rf suite
