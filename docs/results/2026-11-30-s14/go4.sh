#!/usr/bin/env bash
# Call 4 (2026-11-30, fourteenth session): per-kernel device times of the DSL version and of
# the SOA baseline of Wa-Tor, the Game of Life, traffic and structure, on the bundle of main
# 289237a: Nsight Compute with one metric (gpu__time_duration.sum, kernels serialised by the
# profiler), a window of launches in the steady state of each app's default run, CSV.
set -u
B=/tmp/b-main; mkdir -p $B
[[ -x $B/bin/traffic ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_CUBIN_DIR=$B/cubin DYNASOAR_DATA=$PWD/gpu-bundle/data
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s14/go4.sh (ncu --metrics gpu__time_duration.sum --csv --launch-skip S --launch-count C APP --backend cuda --no-progress [--impl soa] --steps N)"; }
prof() { # name skip count app args...
  local name=$1 skip=$2 count=$3; shift 3
  { hdr; echo "=== $name: skip $skip count $count: $*"
    timeout 150 ncu --metrics gpu__time_duration.sum --csv --launch-skip $skip --launch-count $count $B/bin/"$@" --backend cuda --no-progress 2>&1 | grep -E '^"|^app=' ; } > $OUT/kt-$name.csv
  echo "$name $(grep -c gpu__time_duration $OUT/kt-$name.csv) kernels"
}
prof wator-dsl 400 300 wa-tor --steps 120
prof wator-soa 400 300 wa-tor --steps 120 --impl soa
prof gol-dsl 400 300 game-of-life --steps 120
prof gol-soa 100 120 game-of-life --steps 120 --impl soa
prof traffic-dsl 2000 500 traffic --steps 600
prof traffic-soa 1500 500 traffic --steps 600 --impl soa
prof structure-dsl 2000 400 structure --steps 30
prof structure-soa 2000 400 structure --steps 30 --impl soa
ls -la $OUT
