#!/usr/bin/env bash
# Call 6 (2026-12-03, thirtieth session): where the Game of Life's step goes on the bundle of
# 88c6a9f (heap capped at 72): each kernel's time with DYNASOAR_PROFILE=1 (DSL), then Nsight
# Compute (full set, SASS source page) of launch 101 of three of the DSL's do-alls (the updates and `Candidate::prepare`) and of
# the SOA (lists) baseline's two kernels, for the hot spots.
set -u
SAVE=$OUT
export DYNASOAR_DATA=$PWD/gpu-bundle/data
N=/tmp/b-new; mkdir -p $N; [[ -x $N/bin/game-of-life ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
export DYNASOAR_CUBIN_DIR=$N/cubin
C=$(cat gpu-bundle/COMMIT)
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $C"; echo "command: bash docs/results/2026-12-03-s30/go6.sh ($1)"; }
{ hdr "DYNASOAR_PROFILE=1 game-of-life --backend cuda --no-progress --compare"
  DYNASOAR_PROFILE=1 timeout 60 $N/bin/game-of-life --backend cuda --no-progress --compare 2>&1 | tail -40
} > $SAVE/gol-profile.txt 2>&1
cat $SAVE/gol-profile.txt | head -30
cd /tmp
for k in Alive__update Candidate__update Candidate__prepare life_lists_update life_lists_decide; do
  impl=dynasoar; [[ $k == life_* ]] && impl=soa
  timeout 100 ncu --set full --import-source no -k regex:$k --launch-skip 100 --launch-count 1 -o /tmp/ncu-$k -f \
    $N/bin/game-of-life --backend cuda --no-progress --impl $impl --steps 150 > /tmp/ncu-$k.log 2>&1; echo "ncu $k rc=$?"
  ncu -i /tmp/ncu-$k.ncu-rep --page source --print-source sass --csv > /tmp/src-$k.csv 2>/dev/null
  { echo "## $k"; ncu -i /tmp/ncu-$k.ncu-rep --page details | grep -E 'Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Executed Ipc A|L1/TEX Hit|L2 Hit|Local Memory Spilling Requests  |Warp Cycles Per Issued|Avg. Active Threads|Block Size|Grid Size|DRAM Through'; } >> /tmp/ncu-gol.txt 2>&1
done
cd - >/dev/null
{ hdr "ncu --set full --import-source no -k regex:K --launch-skip 100 --launch-count 1 game-of-life --backend cuda --no-progress --impl IMPL --steps 150 (--page details, selected metrics)"
  cat /tmp/ncu-gol.txt; } > $SAVE/ncu-gol.txt
{ hdr "the SASS source pages (ncu -i REP --page source --print-source sass --csv), then scripts/ncu-sass-hotspots.py CSV --top 30"
  for k in Alive__update Candidate__update Candidate__prepare life_lists_update life_lists_decide; do
    echo "## $k"; python3 scripts/ncu-sass-hotspots.py /tmp/src-$k.csv --top 30; done; } > $SAVE/gol-sass-hotspots.txt 2>&1
tar cf - -C /tmp $(cd /tmp && ls src-*.csv) | xz -6 > $SAVE/gol-sass-src.tar.xz
cat $SAVE/ncu-gol.txt
