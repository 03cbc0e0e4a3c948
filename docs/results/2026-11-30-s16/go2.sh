#!/usr/bin/env bash
# Call 2 (2026-11-30, sixteenth session): on the bundle of make_new_each (5665586; device and
# host code as main 21a189e, which changed tests and docs only): all nine apps with --compare
# and the launch-overhead runs; then the Game of Life's kernel times at 64 x 64 (Nsight
# Compute, one metric, a window of launches after 100 steps), as the fifteenth session's go4.sh.
set -u
OUT=/tmp/a bash gpu-bundle/run.sh apps > /tmp/apps.log 2>&1; echo "apps rc=$?"
cp /tmp/a/summary.txt $OUT/gpu-apps.txt; tail -50 /tmp/a/summary.txt
B=/tmp/b-main; mkdir -p $B
[[ -x $B/bin/game-of-life ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_CUBIN_DIR=$B/cubin DYNASOAR_DATA=$PWD/gpu-bundle/data
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s16/go2.sh (ncu --metrics gpu__time_duration.sum --csv --launch-skip 600 --launch-count 120 game-of-life --backend cuda --no-progress --pattern random:64x64 --steps 200)"
  timeout 150 ncu --metrics gpu__time_duration.sum --csv --launch-skip 600 --launch-count 120 $B/bin/game-of-life --backend cuda --no-progress --pattern random:64x64 --steps 200 2>&1 | grep -E '^"|^app='
} > $OUT/tiny-gol-dsl.csv
echo "tiny gol: $(grep -c gpu__time_duration $OUT/tiny-gol-dsl.csv) kernels"
