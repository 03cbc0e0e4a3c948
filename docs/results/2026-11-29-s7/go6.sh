#!/usr/bin/env bash
# Call 6 (2026-11-29, seventh session): the per-step time at the launch-overhead suite's tiny
# sizes (run.d/55-launch-overhead.sh's runs, DSL version only), one wave grid
# (DYNASOAR_DO_ALL_WAVES=1) against the timed choice (auto, the default), the full bundle of
# 2fb8a66 (as call 5), order 1 auto auto 1; fingerprints checked against each app's first run.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
B=/tmp/B; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_CUBIN_DIR=$B/cubin DYNASOAR_DATA=gpu-bundle/data DYNASOAR_REQUIRE_GPU=1
RUNS=(
  "wa-tor --width 64 --height 64 --steps 2000"
  "game-of-life --pattern random:64x64 --steps 2000"
  "generation --pattern random:64x64 --steps 2000"
  "traffic --intersections 64 --steps 2000"
  "structure --nodes 256 --springs 512 --steps 2000"
)
fail=0
for run in "${RUNS[@]}"; do
  set -- $run; app=$1; shift; first=""
  for w in 1 auto auto 1; do
    line=$(DYNASOAR_DO_ALL_WAVES=$w timeout 120 $B/bin/$app --backend cuda --no-progress "$@" 2>/dev/null | grep -m1 '^app=')
    us=$(sed -E 's/.*total_us=([0-9]+).*/\1/' <<< "$line")
    echo "$app waves=$w us_per_step=$(awk -v t="$us" 'BEGIN{printf "%.1f", t/2000}') $line"
    fp=$(grep -oE 'fingerprint=[0-9a-f]+' <<< "$line"); [[ -z $first ]] && first=$fp
    [[ -n $fp && $fp == "$first" ]] || { echo "WRONG: $app waves=$w $fp != $first"; fail=1; }
  done
done > $OUT/waves-tiny-ab.txt 2>&1
cut -d' ' -f1-3 $OUT/waves-tiny-ab.txt
exit $fail
