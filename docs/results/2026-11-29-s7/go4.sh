#!/usr/bin/env bash
# Call 4 (2026-11-29, seventh session): as call 3 (go3.sh), with the grid timed again every 500
# launches of a method over a class (RETRIAL_AFTER), for the apps whose choice call 3 moved
# (generation slower, the Game of Life, Wa-Tor and Sugarscape faster) and traffic; order
# 1 auto auto 1, fingerprints checked against each app's first run. One output file.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
Q=/tmp/quick; rm -rf $Q; mkdir -p $Q; xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
export DYNASOAR_CUBIN_DIR=$Q/cubin DYNASOAR_DATA=gpu-bundle/data DYNASOAR_REQUIRE_GPU=1
fail=0
for a in generation game-of-life wa-tor sugarscape traffic; do
  first=""
  for w in 1 auto auto 1; do
    line=$(DYNASOAR_DO_ALL_WAVES=$w DYNASOAR_DO_ALL_REPORT=1 timeout 120 $Q/bin/$a --backend cuda --no-progress 2>/tmp/err.txt | grep -m1 '^app=')
    echo "$a waves=$w $line"
    [[ $w == auto ]] && grep "do-all grid" /tmp/err.txt | sed "s/^/  $a: /"
    fp=$(grep -oE 'fingerprint=[0-9a-f]+' <<< "$line")
    [[ -z $first ]] && first=$fp
    [[ -n $fp && $fp == "$first" ]] || { echo "WRONG: $a waves=$w $fp != $first"; fail=1; }
  done
done > $OUT/waves-retrial-ab.txt 2>&1
grep -E "^\S+ waves=" $OUT/waves-retrial-ab.txt | sed -E 's/^(\S+ waves=\S+) .*(total_us=[0-9]+).*/\1 \2/'
grep -E "WRONG|generation:" $OUT/waves-retrial-ab.txt | cut -c1-160
exit $fail
