#!/usr/bin/env bash
# Call 3 (2026-11-29, fifth session), bundle of 7b639fd: per-kernel device times
# (DYNASOAR_PROFILE=1) of the four allocating apps whose DSL versions trail their SOA baselines
# (structure, traffic, Wa-Tor, Game of Life), default sizes.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_CUBIN_DIR=$B/cubin DYNASOAR_DATA=gpu-bundle/data
for a in structure traffic wa-tor game-of-life; do
  echo "=== $a"; DYNASOAR_PROFILE=1 timeout 60 $B/bin/$a --backend cuda --no-progress 2>&1 | grep -vE "^\s*$" | head -40
done > $OUT/profiles-7b639fd.txt 2>&1
grep -E "^===|share|enumerate|^dynasoar|^app=" $OUT/profiles-7b639fd.txt | cut -c1-110 | head -80
