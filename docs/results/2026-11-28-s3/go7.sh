#!/usr/bin/env bash
# Call 7 (2026-11-28, third session): Nsight Compute (full set, SASS source page) of n-body's
# force kernels on the bundle of c266d49: the DSL's `Body::compute_force` (device_reduce on 8
# lanes, dense walk, 48-register cap) and the SOA baseline's `nbody_soa_force` (8 threads per
# body over one array), launch 3 of a 5-step run each.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_CUBIN_DIR=$B/cubin DYNASOAR_DATA=$PWD/gpu-bundle/data
prof() { local name=$1 re=$2; shift 2
  echo "=== $name: ncu --set full -k regex:'$re' --launch-skip 2 --launch-count 1 $*"
  timeout 100 ncu --set full --import-source no -k "regex:$re" --launch-skip 2 --launch-count 1 -o $OUT/$name "$B/bin/$@" --backend cuda --no-progress --steps 5 > $OUT/$name.log 2>&1
  ncu -i $OUT/$name.ncu-rep > $OUT/$name.txt 2>&1
  ncu -i $OUT/$name.ncu-rep --page source --print-source sass --csv > $OUT/$name-sass.csv 2>&1
  rm -f $OUT/$name.ncu-rep
}
prof ncu-nbody-dsl 'NbodyHeap__Body__compute_force' nbody
prof ncu-nbody-soa 'nbody_soa_force' nbody --impl soa
grep -E "^===|Duration|Registers Per|Achieved Occupancy|Executed Instructions  |L1/TEX Hit|Issue Slots Busy|Warp Cycles Per Issued" $OUT/ncu-nbody-*.txt | cut -c1-150
