#!/usr/bin/env bash
# Call 1 (2026-12-03, twenty-ninth session): per-kernel device times of the DSL version and of
# the SOA baseline of the Game of Life, Wa-Tor and structure on the bundle of 217b252 (the models
# PTX of main 71c67a3: digest fd393b9810af8f29), Nsight Compute with one metric
# (gpu__time_duration.sum), kernels serialised, caches NOT flushed (--cache-control none), a
# window of launches in each app's default run; and each app's run with DYNASOAR_PROFILE=1.
set -u
B=/tmp/b-main; mkdir -p $B
[[ -x $B/bin/wa-tor ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_CUBIN_DIR=$B/cubin DYNASOAR_DATA=$PWD/gpu-bundle/data
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (models PTX of main 71c67a3, sm_90)"
  echo "command: bash docs/results/2026-12-03-s29/go1.sh ($1)"; }
prof() { # name skip count app args...
  local name=$1 skip=$2 count=$3; shift 3
  { hdr "ncu --cache-control none --metrics gpu__time_duration.sum --csv --launch-skip $skip --launch-count $count $*"
    timeout 75 ncu --cache-control none --metrics gpu__time_duration.sum --csv --launch-skip $skip --launch-count $count $B/bin/"$@" --backend cuda --no-progress 2>&1 | grep -E '^"|^app=' ; } > $OUT/kt-$name.csv
  echo "$name $(grep -c gpu__time_duration $OUT/kt-$name.csv) kernels"
}
prof gol-dsl 400 300 game-of-life --steps 120
prof gol-soa 100 120 game-of-life --steps 120 --impl soa
prof wator-dsl 400 300 wa-tor --steps 120
prof wator-soa 400 300 wa-tor --steps 120 --impl soa
prof structure-dsl 2000 400 structure --steps 30
prof structure-soa 2000 400 structure --steps 30 --impl soa
{ hdr "DYNASOAR_PROFILE=1 APP --backend cuda --no-progress --compare"
  for app in game-of-life wa-tor structure; do echo "=== $app"
    DYNASOAR_PROFILE=1 timeout 120 $B/bin/$app --backend cuda --no-progress --compare 2>&1 | tail -60; done; } > $OUT/profile-apps.txt
ls -la $OUT
