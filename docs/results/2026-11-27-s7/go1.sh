#!/usr/bin/env bash
# Call 1 (2026-11-27, seventh session): per-instruction warp stalls (Nsight Compute source
# counters, SASS) of the allocating / freeing kernels, main's bundle (d71481a).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
B=/tmp/dynasoar-bundle; mkdir -p $B
[[ -x $B/bin/traffic ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_CUBIN_DIR=$B/cubin DYNASOAR_DATA=$PWD/gpu-bundle/data
S="--section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy --section SpeedOfLight"
prof() { # name skip count regex app args...
  local name=$1 skip=$2 count=$3 re=$4; shift 4
  echo "=== $name: ncu -k regex:'$re' --launch-skip $skip --launch-count $count $*" > $OUT/ncu-$name.txt
  timeout 200 ncu $S --import-source no -o $OUT/$name -k "regex:$re" --launch-skip $skip --launch-count $count "$B/bin/$@" --backend cuda --no-progress >> $OUT/ncu-$name.txt 2>&1
  ncu -i $OUT/$name.ncu-rep --page details >> $OUT/ncu-$name.txt 2>&1
  ncu -i $OUT/$name.ncu-rep --page source --csv --print-source sass > $OUT/sass-$name.csv 2>&1
  python3 gpu-bundle/extra/sass_stalls.py $OUT/sass-$name.csv 45 > $OUT/stalls-$name.txt 2>&1
  head -c 600 $OUT/stalls-$name.txt; echo
}
prof wator-fish 100 1 'Fish__update' wa-tor --steps 200
prof wator-shark 100 1 'Shark__update' wa-tor --steps 200
prof gol-alive 150 1 'Alive__update' game-of-life
prof gol-cand 150 1 'Candidate__update' game-of-life
prof traffic-create 300 1 'create_car' traffic --steps 1000
prof structure-force 2000 1 'Spring__compute_force' structure --steps 100
prof wator-soa-shark 100 1 'wator_soa_update_sharks' wa-tor --steps 200 --impl soa
prof wator-soa-fish 100 1 'wator_soa_update_fish' wa-tor --steps 200 --impl soa
prof gol-soa 150 1 'gol' game-of-life --impl soa
cd $OUT && tar czf all.tgz *.txt *.csv && rm -f *.csv stalls-*.txt ncu-*.txt *.ncu-rep; ls -la $OUT
