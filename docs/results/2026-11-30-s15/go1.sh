#!/usr/bin/env bash
# Call 1 (2026-11-30, fifteenth session): the bundle of main 289237a (base, gpu-bundle/old)
# against the bundle of the one-launch change (new: a parallel_do over a class with subclasses
# visits its concrete classes of equal blocks in one launch; "off" is the new bundle with
# DYNASOAR_MERGE_SUBCLASSES=0), three apps at their default sizes, order base new off new off
# base; per-kernel profiles of structure and Sugarscape on the new side; traffic's create_car
# under three settings (profiles) and under Nsight Compute (source counters); then the GPU suite
# on the new bundle.
set -u
export DYNASOAR_DATA=gpu-bundle/data
for side in old new; do
  d=/tmp/b-$side; mkdir -p $d
  if [[ $side == old ]]; then p=gpu-bundle/old/payload.tar.xz; else p=gpu-bundle/payload.tar.xz; fi
  [[ -d $d/bin ]] || xz -dc $p | tar xf - -C $d
done
run() { local d=/tmp/b-new; [[ $2 == base ]] && d=/tmp/b-old; local merge=1; [[ $2 == off ]] && merge=0
  printf '%s %s ' $1 $2; DYNASOAR_MERGE_SUBCLASSES=$merge DYNASOAR_CUBIN_DIR=$d/cubin $d/bin/$1 --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base bundle $(cat gpu-bundle/old/COMMIT), new bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s15/go1.sh"
  for a in structure sugarscape traffic; do for s in base new off new off base; do run $a $s; done; done
} > $OUT/merge-ab.txt 2>&1
cat $OUT/merge-ab.txt
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: new bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s15/go1.sh (DYNASOAR_PROFILE=1 APP --backend cuda --no-progress)"
  for a in structure sugarscape; do
    echo "=== $a"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=/tmp/b-new/cubin /tmp/b-new/bin/$a --backend cuda --no-progress 2>&1 | grep -v "^device time"
  done
} > $OUT/merge-profile.txt 2>&1
grep -E "===|^dynasoar|^enumerate|^app=" $OUT/merge-profile.txt | cut -c1-110
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: new bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s15/go1.sh (SETTING DYNASOAR_PROFILE=1 traffic --backend cuda --no-progress)"
  for v in "X=1" "DYNASOAR_ALLOCATOR_VARIANT=nolast" "DYNASOAR_DO_ALL_WAVES=1" "DYNASOAR_DO_ALL_WAVES=4" "DYNASOAR_DEPENDENT_LAUNCH=0"; do
    echo "=== traffic, $v"; env $v DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=/tmp/b-new/cubin /tmp/b-new/bin/traffic --backend cuda --no-progress 2>&1 | grep -E "^dynasoar|^enumerate|^app=|^kernel"
  done
} > $OUT/traffic-create-settings.txt 2>&1
grep -E "===|create_car|^app=" $OUT/traffic-create-settings.txt | cut -c1-120
export DYNASOAR_CUBIN_DIR=/tmp/b-new/cubin
name=ncu-traffic-create
timeout 240 ncu --section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy --section SpeedOfLight --section SchedulerStats --import-source no -k 'regex:ProducerCell__create_car' --launch-skip 3000 --launch-count 1 -o $OUT/$name /tmp/b-new/bin/traffic --backend cuda --no-progress --steps 4000 > $OUT/$name.log 2>&1
ncu -i $OUT/$name.ncu-rep > $OUT/$name.txt 2>&1
ncu -i $OUT/$name.ncu-rep --page source --print-source sass --csv > $OUT/$name-sass.csv 2>&1
rm -f $OUT/$name.ncu-rep
grep -E "^  [a-z_]+.*\(|Duration|Elapsed Cycles|SM Active|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Grid Size|Block Size" $OUT/$name.txt | cut -c1-100
xz -9 $OUT/$name-sass.csv
unset DYNASOAR_CUBIN_DIR
OUT=/tmp/t bash gpu-bundle/run.sh tests > /tmp/tests.log 2>&1; echo "tests rc=$?"
cp /tmp/t/summary.txt $OUT/gpu-tests.txt; tail -8 /tmp/t/summary.txt
