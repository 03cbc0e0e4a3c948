#!/usr/bin/env bash
# Call 1 (2026-11-29, seventh session): per-kernel device times (DYNASOAR_PROFILE=1) of the apps
# whose read-only methods run on the plain loop, with the default loop choice (auto) and with
# every method streaming (streaming), default sizes; quick bundle of main (gpu-quick.sh).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
Q=/tmp/quick; rm -rf $Q; mkdir -p $Q; xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
export DYNASOAR_CUBIN_DIR=$Q/cubin DYNASOAR_DATA=gpu-bundle/data DYNASOAR_REQUIRE_GPU=1
for a in wa-tor game-of-life traffic sugarscape structure generation; do
  for mode in auto streaming; do
    echo "=== $a DYNASOAR_DO_ALL=$mode"
    DYNASOAR_DO_ALL=$mode DYNASOAR_DO_ALL_REPORT=1 DYNASOAR_PROFILE=1 timeout 90 $Q/bin/$a --backend cuda --no-progress 2>&1 | grep -vE "^\s*$" | head -60
  done
done > $OUT/loops-profile.txt 2>&1
grep -E "^===|^dynasoar_(do|stream)|^app=" $OUT/loops-profile.txt | cut -c1-100 | head -150
