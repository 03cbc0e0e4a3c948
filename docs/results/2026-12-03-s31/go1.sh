#!/usr/bin/env bash
# Call 1 (2026-12-03, thirty-first session): the Game of Life's grid of packed handles (4 bytes
# a cell, 2f4d695) against the grid of handles (8 bytes, 02f6729), each side its own release
# binary and cubin (scripts/gpu-ab.sh): DSL runs in the order base new new base, twice, then
# the SOA baseline twice (new side), one checked run (--check) per side, per-kernel times
# (DYNASOAR_PROFILE=1) per side, and Nsight Compute on launch 101 of `Candidate::prepare` per
# side (full set); then all nine apps with --compare on the bundle of cf2f8fc (the new side's
# code).
set -u
SAVE=$OUT
C=$(cat gpu-bundle/COMMIT); C=${C/+/-}
export DYNASOAR_DATA=$PWD/gpu-bundle/data
AB=/tmp/ab; rm -rf $AB; mkdir -p $AB; xz -dc gpu-bundle/extra/ab/ab.tar.xz | tar xf - -C $AB
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base 02f6729, new ad921b0 (code of 2f4d695; scripts/gpu-ab.sh, each side's own binary and sm_90 cubin)"
  echo "command: bash docs/results/2026-12-03-s31/go1.sh ($1)"; }
run() { local side=$1; shift; printf '%s %s ' $side "$*"
  DYNASOAR_CUBIN_DIR=$AB/$side/cubin timeout 90 $AB/$side/bin/game-of-life --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'impl=[^ ]*\|total_us=[0-9]*\|fingerprint=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -3 /tmp/run.log | cut -c1-300)"; echo; }
{ hdr "game-of-life --backend cuda --no-progress --impl IMPL [--check]: base new new base twice, SOA twice, then --check per side"
  for r in 0 1; do for s in base new new base; do run $s --impl dynasoar; done; done
  run new --impl soa; run new --impl soa
  run base --impl dynasoar --check; run new --impl dynasoar --check
} > $OUT/gol-packed-ab.txt 2>&1
cat $OUT/gol-packed-ab.txt
{ hdr "DYNASOAR_PROFILE=1 game-of-life --backend cuda --no-progress --impl dynasoar, per side"
  for s in base new; do echo "=== $s"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$AB/$s/cubin timeout 90 $AB/$s/bin/game-of-life --backend cuda --no-progress --impl dynasoar 2>&1 | grep -E '^app=|prepare|update|listing|enumerat|launches' | head -20; done
} > $OUT/gol-packed-profile.txt 2>&1
cat $OUT/gol-packed-profile.txt
cd /tmp
for s in base new; do for k in Candidate__prepare; do
  DYNASOAR_CUBIN_DIR=$AB/$s/cubin timeout 100 ncu --set full --import-source no -k regex:$k --launch-skip 100 --launch-count 1 -o /tmp/ncu-$s-$k -f \
    $AB/$s/bin/game-of-life --backend cuda --no-progress --impl dynasoar --steps 150 > /tmp/ncu.log 2>&1; echo "ncu $s $k rc=$?"
  { echo "## $s $k"; ncu -i /tmp/ncu-$s-$k.ncu-rep --page details | grep -E 'Duration|Registers Per|Achieved Occupancy|L1/TEX Hit|L2 Hit|Warp Cycles Per Issued|DRAM Through|Memory Throughput'; } >> /tmp/ncu-gol.txt 2>&1
done; done
cd - > /dev/null
{ hdr "ncu --set full --import-source no -k regex:K --launch-skip 100 --launch-count 1 game-of-life --backend cuda --no-progress --impl dynasoar --steps 150 (--page details, selected metrics)"
  cat /tmp/ncu-gol.txt; } > $OUT/ncu-gol-packed.txt
cat $OUT/ncu-gol-packed.txt
OUT=/tmp/a timeout 400 bash gpu-bundle/run.sh apps > /tmp/apps.log 2>&1; echo "apps rc=$?"
cp /tmp/a/summary.txt $SAVE/gpu-apps-$C.txt
tail -30 /tmp/a/summary.txt | head -16
