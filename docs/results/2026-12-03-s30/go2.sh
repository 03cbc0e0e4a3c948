#!/usr/bin/env bash
# Call 2 (2026-12-03, thirtieth session): per-kernel register caps of the allocating updates,
# Wa-Tor and the Game of Life, on the bundle of c897ebf (its binaries, side `base` its own cubin
# with the caps of examples/apps/build.rs: 72 on Wa-Tor's heap, 64 on the Game of Life's).
# Each variant is the bundle's embedded PTX assembled by scripts/cubin-variant.py with other
# caps on the updates only (named by the PTX's digest, so the same binaries load it):
#   Wa-Tor  cap80/cap96/cap0: Fish::update and Shark::update at 80 / 96 / none (88 and 108 used);
#           s96/s80: Shark::update alone at 96 / 80.
#   GoL     g72/g80/g96/g0: Alive::update and Candidate::update at 72 / 80 / 96 / none (88, 86).
# Rounds in rotating order, then the SOA baselines.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-main; mkdir -p $B
[[ -x $B/bin/wa-tor ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
V=/tmp/variants; [[ -d $V/g0 ]] || xz -dc gpu-bundle/extra/variants.tar.xz | tar xf - -C /tmp
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (models PTX d153a411b9cf00c6); variants of its cubin by scripts/cubin-variant.py (see go2.sh)"
  echo "command: bash docs/results/2026-12-03-s30/go2.sh ($1)"; }
run() { local app=$1 side=$2; shift 2; local dir=$B/cubin; [[ $side != base ]] && dir=$V/$side
  printf '%s %s ' $side "$*"; DYNASOAR_CUBIN_DIR=$dir timeout 60 $B/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -2 /tmp/run.log | cut -c1-200)"; echo; }
{ hdr "wa-tor --backend cuda --no-progress --impl IMPL, 3 rounds in rotating order, then SOA"
  sides=(base cap80 cap96 cap0 s96 s80)
  for r in 0 1 2; do for k in 0 1 2 3 4 5; do run wa-tor ${sides[$(( (k + r * 2) % 6 ))]} --impl dynasoar; done; done
  run wa-tor base --impl soa; run wa-tor base --impl soa
} > $OUT/wator-caps-ab.txt 2>&1
cat $OUT/wator-caps-ab.txt
{ hdr "game-of-life --backend cuda --no-progress --impl IMPL, 3 rounds in rotating order, then SOA"
  sides=(base g72 g80 g96 g0)
  for r in 0 1 2; do for k in 0 1 2 3 4; do run game-of-life ${sides[$(( (k + r * 2) % 5 ))]} --impl dynasoar; done; done
  run game-of-life base --impl soa; run game-of-life base --impl soa
} > $OUT/gol-caps-ab.txt 2>&1
cat $OUT/gol-caps-ab.txt
