#!/usr/bin/env bash
# Call 3 (2026-12-03, thirtieth session): more per-kernel register caps on the bundle of c897ebf
# (its binaries; side `base` its own cubin with examples/apps/build.rs's caps: the Game of Life's
# heap 64, structure's `Spring::compute_force` none (80 used), generation's updates 96). Each
# variant is the bundle's embedded PTX assembled by scripts/cubin-variant.py with other caps:
#   GoL         g68/g72/g76: Alive::update and Candidate::update at 68 / 72 / 76;
#               a72/c72: Alive::update alone / Candidate::update alone at 72;
#   structure   st72/st64/st56: Spring::compute_force at 72 / 64 / 56;
#   generation  gen80/gen72/gen0: Alive::update and Candidate::update at 80 / 72 / none (90, 86).
# Rounds in rotating order, then the SOA baselines.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-main; mkdir -p $B
[[ -x $B/bin/wa-tor ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
V=/tmp/variants2; [[ -d $V/g72 ]] || xz -dc gpu-bundle/extra/variants2.tar.xz | tar xf - -C /tmp
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (models PTX d153a411b9cf00c6); variants of its cubin by scripts/cubin-variant.py (see go3.sh)"
  echo "command: bash docs/results/2026-12-03-s30/go3.sh ($1)"; }
run() { local app=$1 side=$2; shift 2; local dir=$B/cubin; [[ $side != base ]] && dir=$V/$side
  printf '%s %s ' $side "$*"; DYNASOAR_CUBIN_DIR=$dir timeout 60 $B/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -2 /tmp/run.log | cut -c1-200)"; echo; }
rounds() { local app=$1 n=$2; shift 2; local sides=("$@") k r
  for ((r = 0; r < n; r++)); do for ((k = 0; k < ${#sides[@]}; k++)); do
    run $app ${sides[$(( (k + r * 2) % ${#sides[@]} ))]} --impl dynasoar; done; done
  run $app base --impl soa; run $app base --impl soa; }
{ hdr "game-of-life --backend cuda --no-progress --impl IMPL, 3 rounds in rotating order, then SOA"
  rounds game-of-life 3 base g68 g72 g76 a72 c72; } > $OUT/gol-caps2-ab.txt 2>&1
cat $OUT/gol-caps2-ab.txt
{ hdr "structure --backend cuda --no-progress --impl IMPL, 2 rounds in rotating order, then SOA"
  rounds structure 2 base st72 st64 st56; } > $OUT/structure-caps-ab.txt 2>&1
cat $OUT/structure-caps-ab.txt
{ hdr "generation --backend cuda --no-progress --impl IMPL, 2 rounds in rotating order, then SOA"
  rounds generation 2 base gen80 gen72 gen0; } > $OUT/generation-caps-ab.txt 2>&1
cat $OUT/generation-caps-ab.txt
