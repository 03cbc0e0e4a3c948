#!/usr/bin/env bash
# Call 1 (2026-11-28, second session): the GPU suite and Barnes-Hut --compare twice on the
# bundle of main (the packed walk as landed, against both baselines in one call), then Nsight
# Compute (full set, SASS source page) of structure's Spring::compute_force and the SOA
# baseline's compute kernel.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
OUT=$OUT/suite timeout 330 bash gpu-bundle/run.sh tests > $OUT/gpu-tests.txt 2>&1
tail -3 $OUT/gpu-tests.txt
B=/tmp/dynasoar-bundle
export DYNASOAR_DATA=$B/data DYNASOAR_CUBIN_DIR=$B/cubin
for i in 1 2; do echo "=== barnes-hut --compare ($i)"; timeout 120 $B/bin/barnes-hut --backend cuda --no-progress --compare 2>&1; done > $OUT/bh-compare.txt
grep -E "^===|total_us|x " $OUT/bh-compare.txt | cut -c1-220
prof() { # name skip regex app args...
  local name=$1 skip=$2 re=$3; shift 3
  echo "=== $name: ncu --set full -k regex:'$re' --launch-skip $skip --launch-count 1 $*"
  timeout 150 ncu --set full --import-source no -k "regex:$re" --launch-skip $skip --launch-count 1 -o $OUT/$name "$B/bin/$@" --backend cuda --no-progress > $OUT/$name.log 2>&1
  ncu -i $OUT/$name.ncu-rep > $OUT/$name.txt 2>&1
  ncu -i $OUT/$name.ncu-rep --page source --print-source sass --csv > $OUT/$name-sass.csv 2>&1
  rm -f $OUT/$name.ncu-rep
  grep -E "Duration|Registers Per|Achieved Occupancy|L1/TEX Hit|L2 Hit" $OUT/$name.txt
}
prof ncu-structure-dsl 2000 'Spring__compute_force' structure --steps 100
prof ncu-structure-soa 2000 'structure_soa_compute' structure --steps 100 --impl soa
cd $OUT && tar czf suite.tgz suite && rm -rf suite && xz -9 *-sass.csv
