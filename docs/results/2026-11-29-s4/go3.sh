#!/usr/bin/env bash
# Calls 3 and 5 (2026-11-29, fourth session): Nsight Compute (full set, SASS source page) of
# (a) the field-access benchmark's streaming do-all kernel `Scalar::bump` and the plain array
# kernel `array_bump` (field-access of acc37e1, 16,777,216 objects; launch 6 and 3 of each),
# (b) n-body's force kernels on the bundle of 60bdddb (blocks full since bulk creation): the
# DSL's `Body::compute_force` and the SOA baseline's `nbody_soa_force`, launch 3 of a 5-step run.
# (Run twice: the first run returned only 8 of its files, the copy-back's limit on their count;
# everything now comes back as one archive, ncu.tar.xz.)
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B /tmp/v
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/field-access-acc37e1.xz > /tmp/v/field-access; chmod +x /tmp/v/field-access
export DYNASOAR_CUBIN_DIR=$B/cubin
prof() { local name=$1 re=$2 skip=$3; shift 3
  echo "=== $name: ncu --set full -k regex:'$re' --launch-skip $skip --launch-count 1 $*"
  timeout 120 ncu --set full --import-source no -k "regex:$re" --launch-skip $skip --launch-count 1 -o $OUT/$name "$@" > $OUT/$name.log 2>&1
  ncu -i $OUT/$name.ncu-rep > $OUT/$name.txt 2>&1
  ncu -i $OUT/$name.ncu-rep --page source --print-source sass --csv > $OUT/$name-sass.csv 2>&1
  ncu -i $OUT/$name.ncu-rep --page raw --csv > $OUT/$name-raw.csv 2>&1
  rm -f $OUT/$name.ncu-rep
}
W=$OUT; OUT=/tmp/ncu-out; mkdir -p $OUT
prof ncu-field-stream 'Scalar__bump' 5 /tmp/v/field-access --backend cuda --reps 3
prof ncu-field-array 'array_bump' 2 /tmp/v/field-access --backend cuda --reps 3
prof ncu-nbody-dsl 'NbodyHeap__Body__compute_force' 2 $B/bin/nbody --backend cuda --no-progress --steps 5
prof ncu-nbody-soa 'nbody_soa_force' 2 $B/bin/nbody --impl soa --backend cuda --no-progress --steps 5
grep -E "^===|  dyn|  array|  nbody|Duration|Registers Per|Achieved Occupancy|Executed Instructions  |L1/TEX Hit|L2 Hit|DRAM Throughput|Memory Throughput|Issue Slots Busy|Warp Cycles Per Issued" $OUT/ncu-*.txt | cut -c1-150
tar cf - -C /tmp/ncu-out . | xz -1 > $W/ncu.tar.xz
