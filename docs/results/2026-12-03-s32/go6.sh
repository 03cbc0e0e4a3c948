#!/usr/bin/env bash
# Call 6 (2026-12-03, thirty-second session): the read-only do-alls of the Game of Life, Wa-Tor
# and generation capped at 32 registers (r32: `Candidate::prepare`, `Alive::prepare`,
# `OceanCell::decide`, `Fish::prepare`, `Shark::prepare`, generation's two prepares; 35-39
# registers uncapped, no spills at 32 but `decide`'s 4 bytes), so that 16 blocks of 128 threads
# fit a multiprocessor instead of 12: the bundle of 2fabdb4's models PTX assembled by
# scripts/cubin-variant.py, run by the bundle's binaries against its own cubin, order base r32
# r32 base twice, then per-kernel times per side.
set -u
SAVE=$OUT
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-main; mkdir -p $B
[[ -x $B/bin/wa-tor ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
V=/tmp/r32; [[ -d $V/r32 ]] || { mkdir -p $V; xz -dc gpu-bundle/extra/r32.tar.xz | tar xf - -C $V; }
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (models PTX bc4e46aad8d03273, as 78fb4f3's); r32 its cubin with the caps of go6.sh"
  echo "command: bash docs/results/2026-12-03-s32/go6.sh ($1)"; }
run() { local app=$1 side=$2; shift 2; local dir=$B/cubin; [[ $side != base ]] && dir=$V/$side
  printf '%s %s ' $app $side; DYNASOAR_CUBIN_DIR=$dir timeout 60 $B/bin/$app --backend cuda --no-progress --impl dynasoar "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -2 /tmp/run.log | cut -c1-200)"; echo; }
{ hdr "APP --backend cuda --no-progress --impl dynasoar: base r32 r32 base, twice"
  for app in game-of-life wa-tor generation; do for r in 0 1; do for s in base r32 r32 base; do run $app $s; done; done; done
} > $SAVE/r32-ab.txt 2>&1
cat $SAVE/r32-ab.txt
{ hdr "DYNASOAR_PROFILE=1 APP --backend cuda --no-progress --impl dynasoar, per side"
  for app in game-of-life wa-tor generation; do for s in base r32; do echo "=== $app $s"; dir=$B/cubin; [[ $s != base ]] && dir=$V/$s
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$dir timeout 60 $B/bin/$app --backend cuda --no-progress --impl dynasoar 2>&1 | grep -E '^dynasoar|^enumerate' | head -8; done; done
} > $SAVE/r32-profile.txt 2>&1
grep -E "===|prepare|decide" $SAVE/r32-profile.txt
