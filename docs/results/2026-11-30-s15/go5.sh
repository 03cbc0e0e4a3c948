#!/usr/bin/env bash
# Call 5 (2026-11-30, fifteenth session): on the bundle of main 3daaf84, Nsight Compute of the
# Game of Life's Alive::update and Candidate::update at the launch-overhead step's tiny size
# (64 x 64, random soup), step 101 (source counters, warp states), and the generation SOA
# baseline's per-kernel times at 64 x 64 (the window of call 4 missed them).
set -u
B=/tmp/b-main; mkdir -p $B
[[ -x $B/bin/traffic ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_CUBIN_DIR=$B/cubin DYNASOAR_DATA=$PWD/gpu-bundle/data
name=ncu-gol-tiny
timeout 200 ncu --section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy --section SpeedOfLight --import-source no -k 'regex:GolHeap__(Alive|Candidate)__update' --launch-skip 200 --launch-count 2 -o $OUT/$name $B/bin/game-of-life --backend cuda --no-progress --pattern random:64x64 --steps 200 > $OUT/$name.log 2>&1
ncu -i $OUT/$name.ncu-rep > $OUT/$name.txt 2>&1
ncu -i $OUT/$name.ncu-rep --page source --print-source sass --csv > $OUT/$name-sass.csv 2>&1
rm -f $OUT/$name.ncu-rep
grep -E "^  [a-z_]+.*\(|Duration|Elapsed Cycles|SM Active|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Grid Size" $OUT/$name.txt | cut -c1-100
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s15/go5.sh (ncu --metrics gpu__time_duration.sum --csv --launch-skip 20 --launch-count 40 generation --backend cuda --no-progress --impl soa --pattern random:64x64 --steps 200)"
  timeout 100 ncu --metrics gpu__time_duration.sum --csv --launch-skip 20 --launch-count 40 $B/bin/generation --backend cuda --no-progress --impl soa --pattern random:64x64 --steps 200 2>&1 | grep -E '^"|^app='; } > $OUT/tiny-generation-soa.csv
grep -c gpu__time_duration $OUT/tiny-generation-soa.csv
