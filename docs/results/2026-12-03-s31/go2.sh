#!/usr/bin/env bash
# Call 2 (2026-12-03, thirty-first session): the Game of Life whose prepares declare that they
# create and free nothing (new, the bundle of ec6b10d) against cf2f8fc (packed grid, prepares of
# unknown effects), each side its own release binary and cubin (scripts/gpu-ab.sh): DSL runs
# base new new base, twice, SOA twice, one --check run per side, and per-kernel times
# (DYNASOAR_PROFILE=1) per side; then the GPU suite on the bundle.
set -u
SAVE=$OUT
C=$(cat gpu-bundle/COMMIT); C=${C/+/-}
export DYNASOAR_DATA=$PWD/gpu-bundle/data
AB=/tmp/ab; rm -rf $AB; mkdir -p $AB; xz -dc gpu-bundle/extra/ab/ab.tar.xz | tar xf - -C $AB
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base cf2f8fc, new $C (scripts/gpu-ab.sh, each side's own binary and sm_90 cubin)"
  echo "command: bash docs/results/2026-12-03-s31/go2.sh ($1)"; }
run() { local side=$1; shift; printf '%s %s ' $side "$*"
  DYNASOAR_CUBIN_DIR=$AB/$side/cubin timeout 90 $AB/$side/bin/game-of-life --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'impl=[^ ]*\|total_us=[0-9]*\|fingerprint=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -3 /tmp/run.log | cut -c1-300)"; echo; }
{ hdr "game-of-life --backend cuda --no-progress --impl IMPL [--check]: base new new base twice, SOA twice, then --check per side"
  for r in 0 1; do for s in base new new base; do run $s --impl dynasoar; done; done
  run new --impl soa; run new --impl soa
  run base --impl dynasoar --check; run new --impl dynasoar --check
} > $SAVE/gol-effects-ab.txt 2>&1
cat $SAVE/gol-effects-ab.txt
{ hdr "DYNASOAR_PROFILE=1 game-of-life --backend cuda --no-progress --impl dynasoar, per side"
  for s in base new; do echo "=== $s"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$AB/$s/cubin timeout 90 $AB/$s/bin/game-of-life --backend cuda --no-progress --impl dynasoar 2>&1 | grep -E '^app=|prepare|update|listing|enumerat|launches' | head -20; done
} > $SAVE/gol-effects-profile.txt 2>&1
cat $SAVE/gol-effects-profile.txt
OUT=/tmp/t timeout 420 bash gpu-bundle/run.sh tests > /tmp/tests.log 2>&1; echo "tests rc=$?"
cp /tmp/t/summary.txt $SAVE/gpu-tests-$C.txt; grep -v PASS /tmp/t/summary.txt | tail -6
grep -B2 -A20 "panicked" /tmp/tests.log | head -40
