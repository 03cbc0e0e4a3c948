#!/usr/bin/env bash
# Call 7 (2026-11-28, second session): Nsight Compute (full set, SASS source page) of the Game
# of Life's kernels at step 151 of its benchmark run (bundle of 8930652): the DSL's four
# do-alls and the SOA baseline's two kernels (lists).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B
[[ -x $B/bin/traffic ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_CUBIN_DIR=$B/cubin DYNASOAR_DATA=$B/data
[[ -d $B/data ]] || export DYNASOAR_DATA=$PWD/gpu-bundle/data
prof() { # name skip count regex app args...
  local name=$1 skip=$2 count=$3 re=$4; shift 4
  echo "=== $name: ncu --set full -k regex:'$re' --launch-skip $skip --launch-count $count $*"
  timeout 200 ncu --set full --import-source no -k "regex:$re" --launch-skip $skip --launch-count $count -o $OUT/$name "$B/bin/$@" --backend cuda --no-progress > $OUT/$name.log 2>&1
  ncu -i $OUT/$name.ncu-rep > $OUT/$name.txt 2>&1
  ncu -i $OUT/$name.ncu-rep --page source --print-source sass --csv > $OUT/$name-sass.csv 2>&1
  rm -f $OUT/$name.ncu-rep
  grep -E "^  [a-z_]+.*\(|Duration|Registers Per|Achieved Occupancy|L1/TEX Hit|L2 Hit" $OUT/$name.txt | cut -c1-100
}
prof ncu-gol-dsl 600 4 'GolHeap__(Alive|Candidate)__(prepare|update)' game-of-life
prof ncu-gol-soa 300 2 'life_lists' game-of-life --impl soa
cd $OUT && tar czf ncu.tgz *.txt *.log *-sass.csv && rm -f *-sass.csv *.log ncu-*.txt
