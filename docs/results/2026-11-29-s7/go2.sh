#!/usr/bin/env bash
# Call 2 (2026-11-29, seventh session): does the plain do-all loop lose time to work spread
# unevenly over its threads? Quick bundle of main plus variant-xwaves.diff (host only: the
# plain do-all grid multiplied by DYNASOAR_XWAVES, so each thread visits fewer positions and
# the hardware hands out the extra thread blocks as others finish). Per-kernel device times
# (DYNASOAR_PROFILE=1) at 1, 2, 4, 8 and again 1 times the wave grid, default sizes.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
Q=/tmp/quick; rm -rf $Q; mkdir -p $Q; xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
export DYNASOAR_CUBIN_DIR=$Q/cubin DYNASOAR_DATA=gpu-bundle/data DYNASOAR_REQUIRE_GPU=1
for a in game-of-life wa-tor traffic structure sugarscape; do
  for k in 1 2 4 8 1; do
    echo "=== $a DYNASOAR_XWAVES=$k"
    DYNASOAR_XWAVES=$k DYNASOAR_PROFILE=1 timeout 90 $Q/bin/$a --backend cuda --no-progress 2>&1 | grep -E "^dynasoar_do|^app=" | head -8
  done
done > $OUT/xwaves.txt 2>&1
cut -c1-110 $OUT/xwaves.txt
