#!/usr/bin/env bash
# Call 1 (2026-11-30, fourteenth session): the bundle of a567b50 (base, gpu-bundle/old) against
# the bundle of main 289237a (new: frees keep lists right, with traffic's cars no longer kept
# after their kept lists went unused, eb8e1ca), six apps at their default sizes, order base new
# new base; per-kernel profiles of the Game of Life, traffic and Wa-Tor on the new side; then
# Nsight Compute of the Game of Life's two allocating updates at step 151 (source counters).
set -u
export DYNASOAR_DATA=gpu-bundle/data
for side in old new; do
  d=/tmp/b-$side; mkdir -p $d
  if [[ $side == old ]]; then p=gpu-bundle/old/payload.tar.xz; else p=gpu-bundle/payload.tar.xz; fi
  [[ -d $d/bin ]] || xz -dc $p | tar xf - -C $d
done
run() { local d=/tmp/b-$2; [[ $2 == base ]] && d=/tmp/b-old
  printf '%s %s ' $1 $2; DYNASOAR_CUBIN_DIR=$d/cubin $d/bin/$1 --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base bundle $(cat gpu-bundle/old/COMMIT), new bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s14/go1.sh"
  for a in traffic structure sugarscape generation game-of-life wa-tor; do for s in base new new base; do run $a $s; done; done
} > $OUT/main-ab.txt 2>&1
cat $OUT/main-ab.txt
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: new bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s14/go1.sh (DYNASOAR_PROFILE=1 APP --backend cuda --no-progress)"
  for a in game-of-life traffic wa-tor; do
    echo "=== $a"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=/tmp/b-new/cubin /tmp/b-new/bin/$a --backend cuda --no-progress 2>&1 | grep -v "^device time"
  done
} > $OUT/main-profile.txt 2>&1
grep -E "===|^dynasoar|^enumerate|^app=" $OUT/main-profile.txt | cut -c1-110
export DYNASOAR_CUBIN_DIR=/tmp/b-new/cubin
name=ncu-gol-updates
timeout 240 ncu --section SourceCounters --section WarpStateStats --section LaunchStats --section Occupancy --section SpeedOfLight --section MemoryWorkloadAnalysis --import-source no -k 'regex:GolHeap__(Alive|Candidate)__update' --launch-skip 300 --launch-count 2 -o $OUT/$name /tmp/b-new/bin/game-of-life --backend cuda --no-progress > $OUT/$name.log 2>&1
ncu -i $OUT/$name.ncu-rep > $OUT/$name.txt 2>&1
ncu -i $OUT/$name.ncu-rep --page source --print-source sass --csv > $OUT/$name-sass.csv 2>&1
rm -f $OUT/$name.ncu-rep
grep -E "^  [a-z_]+.*\(|Duration|Registers Per|Achieved Occupancy|Executed Ipc|L1/TEX Hit|L2 Hit|Warp Cycles Per Issued" $OUT/$name.txt | cut -c1-100
xz -9 $OUT/$name-sass.csv
