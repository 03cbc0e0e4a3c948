#!/usr/bin/env bash
# Call 5 (2026-11-28, second session): the streaming do-all loop for every method
# (DYNASOAR_DO_ALL=streaming) against the default choice (auto), on the bundle of 8930652:
# structure, Wa-Tor, traffic and the Game of Life, order auto streaming streaming auto, with
# structure's per-kernel times under each (DYNASOAR_PROFILE=1) last.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B
[[ -x $B/bin/traffic ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_CUBIN_DIR=$B/cubin DYNASOAR_DATA=$B/data
[[ -d $B/data ]] || export DYNASOAR_DATA=$PWD/gpu-bundle/data
side() { local s=$1; shift; echo "=== $s $*"
  DYNASOAR_DO_ALL=$s timeout 120 "$B/bin/$1" --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in auto streaming streaming auto; do
    for app in structure wa-tor traffic game-of-life; do side $s $app; done
  done
  for s in auto streaming; do echo "=== $s structure (profile)"; DYNASOAR_PROFILE=1 DYNASOAR_DO_ALL=$s timeout 120 $B/bin/structure --backend cuda --no-progress 2>&1 | head -12; done
} > $OUT/streaming-ab.txt 2>&1
grep -E "^===|total_us|compute_force|Node__update" $OUT/streaming-ab.txt | sed -E 's/(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2/' | cut -c1-140
