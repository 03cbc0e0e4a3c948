#!/usr/bin/env bash
# Call 1: do-all thread blocks of 128 threads where they let more threads reside (variant
# binaries of scripts/gpu-quick.sh; DYNASOAR_XBT=256 keeps every plain do-all at 256 threads a
# block, as main does), with main's register caps and with lower caps (scripts/cubin-variant.py
# on main's models PTX 1187f8f9f7e64f07: Wa-Tor's heap at 72, the Game of Life's at 56,
# traffic's create_car at 72). Order 256 auto auto 256 per app and cubin.
set -u
Q=/tmp/quick; mkdir -p $Q; xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
export DYNASOAR_DATA=gpu-bundle/data
run() { # app side cubin-dir
  printf '%s %s %s ' $1 $2 $(basename $3)
  if [[ $2 == 256 ]]; then export DYNASOAR_XBT=256; else unset DYNASOAR_XBT; fi
  DYNASOAR_CUBIN_DIR=$3 $Q/bin/$1 --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: 7ca8e92 with the thread-block choice of variant-xbt.diff (scripts/gpu-quick.sh, models PTX 1187f8f9f7e64f07); cubins: main's caps (cubin), Wa-Tor's heap at 72 (w72), the Game of Life's at 56 (g56), create_car at 72 (t72)"
  echo "command: bash docs/results/2026-11-30/go1.sh"
  for a in generation sugarscape structure; do for s in 256 auto auto 256; do run $a $s $Q/cubin; done; done
  for c in $Q/cubin gpu-bundle/extra/w72; do for s in 256 auto auto 256; do run wa-tor $s $c; done; done
  for c in $Q/cubin gpu-bundle/extra/g56; do for s in 256 auto auto 256; do run game-of-life $s $c; done; done
  for c in $Q/cubin gpu-bundle/extra/t72; do for s in 256 auto auto 256; do run traffic $s $c; done; done
} > $OUT/xbt-ab.txt 2>&1
cat $OUT/xbt-ab.txt
{ for c in $Q/cubin gpu-bundle/extra/w72; do for s in 256 auto; do
    if [[ $s == 256 ]]; then export DYNASOAR_XBT=256; else unset DYNASOAR_XBT; fi
    echo "=== wa-tor $s $(basename $c)"; DYNASOAR_DO_ALL_REPORT=1 DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$c $Q/bin/wa-tor --backend cuda --no-progress 2>&1 | grep -v "^\s*$" | head -40
  done; done; } > $OUT/xbt-profile.txt 2>&1
grep -E "^===|update|grid" $OUT/xbt-profile.txt | cut -c1-120 | head -40
