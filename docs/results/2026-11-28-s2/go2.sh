#!/usr/bin/env bash
# Call 2 (2026-11-28, second session): Nsight Compute (full set, SASS source page) of the
# allocating kernels that cost traffic and Wa-Tor most against their SOA baselines:
# traffic's ProducerCell::create_car and Wa-Tor's Fish::update and Shark::update (bundle of
# 8930652), and the SOA baselines' counterparts.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B
[[ -x $B/bin/traffic ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_DATA=$B/data DYNASOAR_CUBIN_DIR=$B/cubin
[[ -d $B/data ]] || export DYNASOAR_DATA=$PWD/gpu-bundle/data
prof() { # name skip regex app args...
  local name=$1 skip=$2 re=$3; shift 3
  echo "=== $name: ncu --set full -k regex:'$re' --launch-skip $skip --launch-count 1 $*"
  timeout 150 ncu --set full --import-source no -k "regex:$re" --launch-skip $skip --launch-count 1 -o $OUT/$name "$B/bin/$@" --backend cuda --no-progress > $OUT/$name.log 2>&1
  ncu -i $OUT/$name.ncu-rep > $OUT/$name.txt 2>&1
  ncu -i $OUT/$name.ncu-rep --page source --print-source sass --csv > $OUT/$name-sass.csv 2>&1
  rm -f $OUT/$name.ncu-rep
  grep -E "Duration|Registers Per|Achieved Occupancy|L1/TEX Hit|L2 Hit" $OUT/$name.txt
}
prof ncu-traffic-create-dsl 3000 'ProducerCell__create_car' traffic --steps 4000
prof ncu-traffic-create-soa 3000 'traffic_soa_create_cars' traffic --steps 4000 --impl soa
prof ncu-wator-fish-dsl 150 'Fish__update' wa-tor --steps 200
prof ncu-wator-shark-dsl 150 'Shark__update' wa-tor --steps 200
cd $OUT && tar czf ncu.tgz *.txt *.log *-sass.csv && rm -f *-sass.csv *.log ncu-*.txt
