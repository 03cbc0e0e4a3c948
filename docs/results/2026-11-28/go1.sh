#!/usr/bin/env bash
# Call 1 (2026-11-28): Barnes-Hut's force walk. Full runs on the bundle of f0b0f94 (device code
# of 1acc0fa, models PTX aa8e7f69bde163e3) with its cubin (base) and with variants of it: the
# walk capped at 40 / 32 registers (cap40, cap32), the handle's objects-per-block decode without
# its 0-means-64 case (ntfix, PTX 76b57ce28ace1c40), and both (ntfix40). Order base, variants,
# variants reversed, base. Then the AOS baseline's full run, and Nsight Compute on one force
# launch (step 201) of the DSL version and of the AOS baseline.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
B=/tmp/bundle; mkdir -p $B
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_DATA=$PWD/gpu-bundle/data
cubin() { case $1 in base) echo $B/cubin ;; *) echo $PWD/gpu-bundle/extra/$1 ;; esac; }
side() { local s=$1; shift; echo "=== $s $*"
  DYNASOAR_CUBIN_DIR=$(cubin $s) "$B/bin/barnes-hut" --backend cuda --no-progress "$@" 2>&1; }
{ for s in base cap40 cap32 ntfix ntfix40 ntfix40 ntfix cap32 cap40 base; do side $s; done
  echo "=== aos"; DYNASOAR_CUBIN_DIR=$B/cubin "$B/bin/barnes-hut" --backend cuda --no-progress --impl aos 2>&1
} > $OUT/bh-walk-variants.txt 2>&1
grep -E "^===|total_us" $OUT/bh-walk-variants.txt | cut -c1-160
S="--section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section SchedulerStats --section InstructionStats"
prof() { local name=$1 re=$2; shift 2
  echo "=== $name: ncu -k regex:'$re' --launch-skip 200 --launch-count 1 barnes-hut --steps 202 $*"
  DYNASOAR_CUBIN_DIR=$B/cubin timeout 200 ncu $S -k "regex:$re" --launch-skip 200 --launch-count 1 "$B/bin/barnes-hut" --backend cuda --no-progress --steps 202 "$@" 2>&1; }
prof dsl 'BodyNode__compute_force' > $OUT/ncu-bh-dsl.txt 2>&1
prof aos 'barnes_hut_aos_force' --impl aos > $OUT/ncu-bh-aos.txt 2>&1
for f in $OUT/ncu-bh-*.txt; do echo "## $f"; grep -E "^  [a-z_]+.*\(|Duration|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|L1/TEX Hit|L2 Hit|Mem Busy|Issued Ipc|Executed Instructions |Local|Warp Cycles Per Issued|Stall" $f | head -60; done | cut -c1-150
