#!/usr/bin/env bash
# Call 4 (2026-12-03, thirty-second session): the Game of Life's register cap re-measured since
# its grid holds packed handles (the updates' code changed). The bundle of 2fabdb4 (its
# binaries; side `base` its own cubin, the heap capped at 72) against variants of its models PTX
# (bc4e46aad8d03273) assembled by scripts/cubin-variant.py with `Alive::update` and
# `Candidate::update` at 64 / 68 / 76 / 80 / 88 / none (g64 ... g0). Rounds in rotating order,
# then the SOA baseline.
set -u
SAVE=$OUT
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-main; mkdir -p $B
[[ -x $B/bin/wa-tor ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
V=/tmp/gcaps; [[ -d $V/g0 ]] || xz -dc gpu-bundle/extra/gcaps.tar.xz | tar xf - -C /tmp
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (models PTX bc4e46aad8d03273, as 78fb4f3's); variants of its cubin by scripts/cubin-variant.py (see go4.sh)"
  echo "command: bash docs/results/2026-12-03-s32/go4.sh ($1)"; }
run() { local app=$1 side=$2; shift 2; local dir=$B/cubin; [[ $side != base ]] && dir=$V/$side
  printf '%s %s ' $side "$*"; DYNASOAR_CUBIN_DIR=$dir timeout 60 $B/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -2 /tmp/run.log | cut -c1-200)"; echo; }
rounds() { local app=$1 n=$2; shift 2; local sides=("$@") k r
  for ((r = 0; r < n; r++)); do for ((k = 0; k < ${#sides[@]}; k++)); do
    run $app ${sides[$(( (k + r * 2) % ${#sides[@]} ))]} --impl dynasoar; done; done
  run $app base --impl soa; run $app base --impl soa; }
{ hdr "game-of-life --backend cuda --no-progress --impl IMPL, 4 rounds in rotating order, then SOA"
  rounds game-of-life 4 base g64 g68 g76 g80 g88 g0; } > $SAVE/gol-caps3-ab.txt 2>&1
cat $SAVE/gol-caps3-ab.txt
