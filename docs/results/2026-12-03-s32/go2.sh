#!/usr/bin/env bash
# Call 2 (2026-12-03, thirty-second session): the flat listing with fewer dependent round trips
# (new: the working tree on 78fb4f3, models PTX c6015473579357e2, assembled by
# scripts/cubin-variant.py --as bc4e46aad8d03273, so that the bundle's binaries load it; only
# `dynasoar_heap_enumerate` differs from the bundle's PTX) against the bundle of 2fabdb4 (base,
# models PTX bc4e46aad8d03273, the device code of 78fb4f3). Rounds base new new base per app,
# the Game of Life with --check per side, per-kernel times per side, and Nsight Compute of the
# new listing kernel in the Game of Life.
set -u
SAVE=$OUT
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-main; mkdir -p $B
[[ -x $B/bin/wa-tor ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
V=$PWD/gpu-bundle/extra/enum1
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base = bundle $(cat gpu-bundle/COMMIT) (models PTX bc4e46aad8d03273, as 78fb4f3's); new = 78fb4f3 + flat listing change (models PTX c6015473579357e2, cubin named bc4e46aad8d03273)"
  echo "command: bash docs/results/2026-12-03-s32/go2.sh ($1)"; }
run() { local app=$1 side=$2; shift 2; local dir=$B/cubin; [[ $side == new ]] && dir=$V
  printf '%s %s %s ' $app $side "$*"; DYNASOAR_CUBIN_DIR=$dir timeout 90 $B/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'impl=[^ ]*\|total_us=[0-9]*\|enum_us=[0-9]*\|fingerprint=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -3 /tmp/run.log | cut -c1-300)"; echo; }
{ hdr "APP --backend cuda --no-progress --impl dynasoar: base new new base (twice for the Game of Life, generation, traffic, Wa-Tor), SOA twice, --check per side"
  for app in game-of-life generation traffic wa-tor; do
    for r in 0 1; do for s in base new new base; do run $app $s --impl dynasoar; done; done
    run $app base --impl soa; run $app base --impl soa; done
  for s in base new new base; do run sugarscape $s --impl dynasoar; done
  run game-of-life base --impl dynasoar --check; run game-of-life new --impl dynasoar --check
  run generation new --impl dynasoar --check; run traffic new --impl dynasoar --check; run wa-tor new --impl dynasoar --check
} > $SAVE/listing-ab.txt 2>&1
cat $SAVE/listing-ab.txt
{ hdr "DYNASOAR_PROFILE=1 APP --backend cuda --no-progress --impl dynasoar, per side"
  for app in game-of-life generation; do for s in base new; do echo "=== $app $s"; dir=$B/cubin; [[ $s == new ]] && dir=$V
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$dir timeout 90 $B/bin/$app --backend cuda --no-progress --impl dynasoar 2>&1 | grep -E '^app=|  |kernel' | head -12; done; done
} > $SAVE/listing-profile-ab.txt 2>&1
cat $SAVE/listing-profile-ab.txt
cd /tmp
DYNASOAR_CUBIN_DIR=$V timeout 200 ncu --set full --import-source no -k regex:heap_enumerate --launch-skip 100 --launch-count 2 \
  -o /tmp/ncu-new -f $B/bin/game-of-life --backend cuda --no-progress --impl dynasoar --steps 150 > /tmp/ncu-new.log 2>&1
echo "ncu rc=$?"
cd - >/dev/null
{ hdr "ncu --set full --import-source no -k regex:heap_enumerate --launch-skip 100 --launch-count 2 game-of-life --backend cuda --no-progress --impl dynasoar --steps 150 (new)"
  ncu -i /tmp/ncu-new.ncu-rep --page details; } > $SAVE/ncu-enum-new.txt 2>&1
ncu -i /tmp/ncu-new.ncu-rep --page source --print-source sass --csv > /tmp/src-new.csv 2>/dev/null
{ hdr "scripts/ncu-sass-hotspots.py on the SASS source page of the first profiled launch (new)"
  python3 scripts/ncu-sass-hotspots.py /tmp/src-new.csv --top 45; } > $SAVE/enum-sass-hotspots-new.txt 2>&1
grep -E "Duration|Executed Instructions  " $SAVE/ncu-enum-new.txt
ls -la $SAVE
