#!/usr/bin/env bash
# Call 7 (2026-11-29, seventh session): after call 6, a larger grid must also save 2 us a
# launch to be kept (MORE_WAVES_MUST_SAVE). Quick bundle of the working tree (committed next);
# one wave grid (DYNASOAR_DO_ALL_WAVES=1) against the timed choice (auto), order 1 auto auto 1:
# first the launch-overhead suite's tiny sizes (DSL only; the auto runs' decisions from
# DYNASOAR_DO_ALL_REPORT=1 below each), then the Game of Life, Wa-Tor and Sugarscape at their
# default sizes. Fingerprints checked against each configuration's first run.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
Q=/tmp/quick; rm -rf $Q; mkdir -p $Q; xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
export DYNASOAR_CUBIN_DIR=$Q/cubin DYNASOAR_DATA=gpu-bundle/data DYNASOAR_REQUIRE_GPU=1
RUNS=(
  "wa-tor --width 64 --height 64 --steps 2000"
  "game-of-life --pattern random:64x64 --steps 2000"
  "generation --pattern random:64x64 --steps 2000"
  "traffic --intersections 64 --steps 2000"
  "structure --nodes 256 --springs 512 --steps 2000"
  "game-of-life"
  "wa-tor"
  "sugarscape"
)
fail=0
for run in "${RUNS[@]}"; do
  set -- $run; app=$1; shift; first=""
  for w in 1 auto auto 1; do
    line=$(DYNASOAR_DO_ALL_WAVES=$w DYNASOAR_DO_ALL_REPORT=1 timeout 120 $Q/bin/$app --backend cuda --no-progress "$@" 2>/tmp/err.txt | grep -m1 '^app=')
    echo "$app $* waves=$w $(grep -oE 'total_us=[0-9]+' <<< "$line") $line"
    [[ $w == auto ]] && grep "do-all grid" /tmp/err.txt | grep -v undecided | sed "s/^/  /"
    fp=$(grep -oE 'fingerprint=[0-9a-f]+' <<< "$line"); [[ -z $first ]] && first=$fp
    [[ -n $fp && $fp == "$first" ]] || { echo "WRONG: $app $* waves=$w $fp != $first"; fail=1; }
  done
done > $OUT/waves-saving-ab.txt 2>&1
grep -E "waves=" $OUT/waves-saving-ab.txt | sed -E 's/(total_us=[0-9]+) app=.*/\1/'
grep -c "do-all grid" $OUT/waves-saving-ab.txt
exit $fail
