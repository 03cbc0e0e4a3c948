#!/usr/bin/env bash
# Call 2: Nsight Compute on the DSL and SOA kernels of traffic, structure and Wa-Tor (main's
# device code, the bundle of f843042), and the Game of Life's per-kernel profile.
set -u
B=/tmp/dynasoar-bundle; mkdir -p $B
[[ -x $B/bin/traffic ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_CUBIN_DIR=$B/cubin DYNASOAR_DATA=$PWD/gpu-bundle/data
S="--section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats"
prof() { # name skip count regex app args...
  local name=$1 skip=$2 count=$3 re=$4; shift 4
  echo "=== $name: ncu -k regex:'$re' --launch-skip $skip --launch-count $count $*"
  timeout 240 ncu $S -k "regex:$re" --launch-skip $skip --launch-count $count "$B/bin/$@" --backend cuda --no-progress 2>&1
}
prof traffic-dsl 3000 4 'create_car|TrafficLight__step|Car__prepare|Car__advance' traffic --steps 1000 > $OUT/ncu-traffic-dsl.txt 2>&1
prof traffic-soa 3000 4 'traffic_soa_(create_cars|lights|prepare|advance)' traffic --steps 1000 --impl soa > $OUT/ncu-traffic-soa.txt 2>&1
prof structure-dsl 2000 4 'Spring__compute_force|Node__update' structure --steps 100 > $OUT/ncu-structure-dsl.txt 2>&1
prof structure-soa 2000 4 'structure_soa_(compute|update)' structure --steps 100 --impl soa > $OUT/ncu-structure-soa.txt 2>&1
prof wator-dsl 600 6 'Fish__|Shark__|OceanCell__decide' wa-tor --steps 200 > $OUT/ncu-wator-dsl.txt 2>&1
prof wator-soa 800 8 'wator_soa_(prepare|decide|update)' wa-tor --steps 200 --impl soa > $OUT/ncu-wator-soa.txt 2>&1
{ echo "=== game-of-life profile"; DYNASOAR_PROFILE=1 $B/bin/game-of-life --backend cuda --no-progress 2>&1
  echo "=== game-of-life --compare"; $B/bin/game-of-life --backend cuda --compare --no-progress 2>&1; } > $OUT/gol.txt 2>&1
for f in $OUT/ncu-*.txt; do echo "## $f"; grep -E "^  [a-z_]+.*\(|Duration|Memory Throughput|DRAM Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|L1/TEX Hit|L2 Hit|Mem Busy|Issued Ipc" $f | head -80; done | cut -c1-150 > $OUT/ncu-summary.txt
ls -la $OUT
