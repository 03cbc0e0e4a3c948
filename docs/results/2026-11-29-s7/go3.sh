#!/usr/bin/env bash
# Call 3 (2026-11-29, seventh session): the plain do-all grid chosen per method and class
# (DoAllWaves::Auto: 1, 2 or 4 times the wave grid, timed on the first launches) against one
# wave grid (DYNASOAR_DO_ALL_WAVES=1, main's grid), the same binaries (quick bundle of the
# working tree), every app at its default size with --no-progress, order 1 auto auto 1; each
# run's fingerprint must equal the first's (n-body's and collision's checksums vary in their
# last digits between any two runs). The auto side's decisions (DYNASOAR_DO_ALL_REPORT=1) are
# kept in waves-report.txt.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
Q=/tmp/quick; rm -rf $Q; mkdir -p $Q; xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
export DYNASOAR_CUBIN_DIR=$Q/cubin DYNASOAR_DATA=gpu-bundle/data DYNASOAR_REQUIRE_GPU=1
fail=0
for a in game-of-life wa-tor traffic structure sugarscape generation nbody collision barnes-hut; do
  first=""
  for w in 1 auto auto 1; do
    line=$(DYNASOAR_DO_ALL_WAVES=$w DYNASOAR_DO_ALL_REPORT=1 timeout 120 $Q/bin/$a --backend cuda --no-progress 2>$OUT/err-$a-$w.txt | grep -m1 '^app=')
    echo "$a waves=$w $line"
    [[ $w == auto ]] && grep "do-all grid" $OUT/err-$a-$w.txt | sed "s/^/$a: /" >> $OUT/waves-report.txt
    fp=$(grep -oE 'fingerprint=[0-9a-f]+' <<< "$line")
    [[ -z $first ]] && first=$fp
    case $a in nbody|collision) ;; *) [[ -n $fp && $fp == "$first" ]] || { echo "WRONG: $a waves=$w $fp != $first"; fail=1; } ;; esac
  done
done > $OUT/waves-ab.txt 2>&1
sed -E 's/^(\S+ waves=\S+) .*(total_us=[0-9]+).*/\1 \2/' $OUT/waves-ab.txt
sort -u $OUT/waves-report.txt | cut -c1-150 | head -60
exit $fail
