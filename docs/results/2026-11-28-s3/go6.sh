#!/usr/bin/env bash
# Call 6 (2026-11-28, third session): the bundle of the commit that lands (n-body's SOA
# baseline on 8 threads per body): n-body with --compare twice (the DSL version and both
# baselines in each run), then the GPU suite (run.sh tests).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_CUBIN_DIR=$B/cubin DYNASOAR_DATA=$PWD/gpu-bundle/data
for r in 1 2; do echo "=== nbody --compare (run $r)"
  timeout 120 $B/bin/nbody --backend cuda --compare --no-progress 2>&1; echo "rc=$?"
done > $OUT/nbody-compare.txt 2>&1
cat $OUT/nbody-compare.txt | cut -c1-200
OUT=$OUT/suite bash gpu-bundle/run.sh tests > $OUT/suite.log 2>&1; echo "suite rc=$?"
tail -45 $OUT/suite/summary.txt
