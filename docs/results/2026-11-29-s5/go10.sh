#!/usr/bin/env bash
# Call 10 (2026-11-29, fifth session), bundle of 7b639fd: where traffic's create_car goes.
# (a) traffic, 1,000 steps, DSL (per-kernel times, DYNASOAR_PROFILE=1) and SOA baseline at car
#     ratios 0 (no car is ever created), 0.002, 0.02 (the default) and 0.1;
# (b) Nsight Compute (full set, SASS source page) of launch 501 of create_car and of the SOA
#     baseline's traffic_soa_create_cars, default ratio, packed into ncu.tar.xz.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_CUBIN_DIR=$B/cubin
{ for r in 0 0.002 0.02 0.1; do
    echo "=== dynasoar car-ratio $r"; DYNASOAR_PROFILE=1 timeout 60 $B/bin/traffic --backend cuda --no-progress --steps 1000 --car-ratio $r 2>&1 | grep -E "^app=|rror|create_car|enumerate Car|Car__"
    echo "=== soa car-ratio $r"; timeout 60 $B/bin/traffic --backend cuda --no-progress --steps 1000 --car-ratio $r --impl soa 2>&1 | grep -E "^app=|rror"
  done; } > $OUT/traffic-ratio.txt 2>&1
grep -E "^===|^app=|create_car" $OUT/traffic-ratio.txt | sed -E 's/^(app=[a-z-]+ backend=[a-z]+ allocator=[a-z]+).*(total_us=[0-9]+).*(cars=[0-9]+).*(created=[0-9]+).*/\1 \2 \3 \4/' | cut -c1-120
prof() { local name=$1 re=$2 skip=$3; shift 3
  echo "=== $name: ncu --set full -k regex:'$re' --launch-skip $skip --launch-count 1 $*"
  timeout 150 ncu --set full --import-source no -k "regex:$re" --launch-skip $skip --launch-count 1 -o $OUT/$name "$@" > $OUT/$name.log 2>&1
  ncu -i $OUT/$name.ncu-rep > $OUT/$name.txt 2>&1
  ncu -i $OUT/$name.ncu-rep --page source --print-source sass --csv > $OUT/$name-sass.csv 2>&1
  rm -f $OUT/$name.ncu-rep
}
W=$OUT; OUT=/tmp/ncu-out; mkdir -p $OUT
prof ncu-create-dsl 'ProducerCell__create_car' 500 $B/bin/traffic --backend cuda --no-progress --steps 600
prof ncu-create-soa 'traffic_soa_create_cars' 500 $B/bin/traffic --impl soa --backend cuda --no-progress --steps 600
grep -E "^===|Duration|Elapsed Cycles|SM Active Cycles|Registers Per|Achieved Occupancy|Grid Size|Block Size|Executed Ipc Active|No Eligible" $OUT/ncu-*.txt | cut -c1-150
tar cf - -C /tmp/ncu-out . | xz -1 > $W/ncu.tar.xz
