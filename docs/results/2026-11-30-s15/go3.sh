#!/usr/bin/env bash
# Call 3 (2026-11-30, fifteenth session): on the bundle of main b4087b4, which do-all loop each
# app's methods are best on: the default choice (auto: the streaming loop only where its kernel
# still fills a multiprocessor), every method on the streaming loop, and the adaptive choice
# (both loops timed on the first launches), order auto streaming adaptive adaptive streaming
# auto; then the default's choices and the adaptive's (DYNASOAR_DO_ALL_REPORT=1) for structure.
set -u
export DYNASOAR_DATA=gpu-bundle/data
d=/tmp/b-main; mkdir -p $d; [[ -d $d/bin ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $d
export DYNASOAR_CUBIN_DIR=$d/cubin
run() { printf '%s %s ' $1 $2; DYNASOAR_DO_ALL=$2 $d/bin/$1 --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s15/go3.sh (DYNASOAR_DO_ALL=LOOP APP --backend cuda --no-progress)"
  for a in structure traffic wa-tor sugarscape generation game-of-life; do for s in auto streaming adaptive adaptive streaming auto; do run $a $s; done; done
} > $OUT/loops-ab.txt 2>&1
cat $OUT/loops-ab.txt
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s15/go3.sh (DYNASOAR_DO_ALL_REPORT=1 DYNASOAR_DO_ALL=LOOP structure|traffic --backend cuda --no-progress --steps 100)"
  for a in structure traffic; do for s in auto adaptive; do echo "=== $a $s"; DYNASOAR_DO_ALL_REPORT=1 DYNASOAR_DO_ALL=$s $d/bin/$a --backend cuda --no-progress --steps 100 2>&1 | grep -v "^device time"; done; done
} > $OUT/loops-report.txt 2>&1
grep -E "===|stream|plain" $OUT/loops-report.txt | head -60
