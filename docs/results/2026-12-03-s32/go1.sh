#!/usr/bin/env bash
# Call 1 (2026-12-03, thirty-second session): where a listing's time goes. On the bundle of
# 2fabdb4 (device code identical to 78fb4f3's, PTX digests equal): per-kernel times of the apps
# that list every step (DYNASOAR_PROFILE=1), then Nsight Compute (full set, SASS source page) of
# the flat enumeration kernel in the Game of Life and Wa-Tor.
set -u
SAVE=$OUT
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-main; mkdir -p $B
[[ -x $B/bin/wa-tor ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (models PTX bc4e46aad8d03273, as 78fb4f3's)"
  echo "command: bash docs/results/2026-12-03-s32/go1.sh ($1)"; }
{ hdr "DYNASOAR_PROFILE=1 APP --backend cuda --no-progress --impl dynasoar"
  for app in game-of-life wa-tor generation traffic sugarscape structure; do echo "=== $app"
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$B/cubin timeout 90 $B/bin/$app --backend cuda --no-progress --impl dynasoar 2>&1 | grep -E '^app=|  |kernel' | head -24; done
} > $SAVE/listing-profile.txt 2>&1
cat $SAVE/listing-profile.txt
cd /tmp
for app in game-of-life wa-tor; do
  steps=150; [[ $app == wa-tor ]] && steps=100
  DYNASOAR_CUBIN_DIR=$B/cubin timeout 200 ncu --set full --import-source no -k regex:heap_enumerate --launch-skip 100 --launch-count 2 \
    -o /tmp/ncu-$app -f $B/bin/$app --backend cuda --no-progress --impl dynasoar --steps $steps > /tmp/ncu-$app.log 2>&1
  echo "ncu $app rc=$?"; tail -3 /tmp/ncu-$app.log
  { hdr "ncu --set full --import-source no -k regex:heap_enumerate --launch-skip 100 --launch-count 2 $app --backend cuda --no-progress --impl dynasoar --steps $steps"
    ncu -i /tmp/ncu-$app.ncu-rep --page details; } > $SAVE/ncu-enum-$app.txt 2>&1
  ncu -i /tmp/ncu-$app.ncu-rep --page source --print-source sass --csv > /tmp/src-$app.csv 2>/dev/null
done
cd - >/dev/null
{ hdr "SASS source page of the first profiled launch (ncu -i REP --page source --print-source sass --csv), scripts/ncu-sass-hotspots.py CSV --top 45"
  for app in game-of-life wa-tor; do echo "## $app"; python3 scripts/ncu-sass-hotspots.py /tmp/src-$app.csv --top 45; done
} > $SAVE/enum-sass-hotspots.txt 2>&1
tar cf - -C /tmp src-game-of-life.csv src-wa-tor.csv | xz -6 > $SAVE/enum-sass-src.tar.xz
ls -la $SAVE
