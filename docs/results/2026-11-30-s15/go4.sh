#!/usr/bin/env bash
# Call 4 (2026-11-30, fifteenth session): the GPU suite on the bundle of main 3daaf84 (the
# every-allocator test now runs sparrows and crows in shared launches on each general
# allocator's store); then per-kernel device times at the launch-overhead step's tiny sizes
# (Game of Life and generation at 64 x 64), DSL version and SOA baseline: Nsight Compute with
# one metric (gpu__time_duration.sum), a window of launches after 100 steps, CSV.
set -u
OUT_SAVE=$OUT
OUT=/tmp/t bash gpu-bundle/run.sh tests > /tmp/tests.log 2>&1; echo "tests rc=$?"
OUT=$OUT_SAVE
cp /tmp/t/summary.txt $OUT/gpu-tests.txt; grep -v PASS /tmp/t/summary.txt | tail -6
B=/tmp/b-main; mkdir -p $B
[[ -x $B/bin/traffic ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_CUBIN_DIR=$B/cubin DYNASOAR_DATA=$PWD/gpu-bundle/data
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s15/go4.sh (ncu --metrics gpu__time_duration.sum --csv --launch-skip S --launch-count C APP --backend cuda --no-progress [--impl soa] --pattern random:64x64 --steps N)"; }
prof() { # name skip count app args...
  local name=$1 skip=$2 count=$3; shift 3
  { hdr; echo "=== $name: skip $skip count $count: $*"
    timeout 150 ncu --metrics gpu__time_duration.sum --csv --launch-skip $skip --launch-count $count $B/bin/"$@" --backend cuda --no-progress 2>&1 | grep -E '^"|^app=' ; } > $OUT/tiny-$name.csv
  echo "$name $(grep -c gpu__time_duration $OUT/tiny-$name.csv) kernels"
}
prof gol-dsl 600 120 game-of-life --pattern random:64x64 --steps 200
prof gol-soa 200 40 game-of-life --pattern random:64x64 --steps 200 --impl soa
prof generation-dsl 600 120 generation --pattern random:64x64 --steps 200
prof generation-soa 200 40 generation --pattern random:64x64 --steps 200 --impl soa
