#!/usr/bin/env bash
# Call 5 (2026-12-03, thirty-second session): larger do-all grids. The default (`auto`) times 1, 2
# and 4 times the grid of whole waves on a method's first launches and keeps the fastest; the
# allocating updates all kept 4, their times still falling (stream-profile.txt). Every method at
# 8 or 16 times (DYNASOAR_DO_ALL_WAVES=N) against auto, on the bundle of 2fabdb4: runs in the
# order auto 8 16 16 8 auto, then per-kernel times at each.
set -u
SAVE=$OUT
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-main; mkdir -p $B
[[ -x $B/bin/wa-tor ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (models PTX bc4e46aad8d03273, as 78fb4f3's)"
  echo "command: bash docs/results/2026-12-03-s32/go5.sh ($1)"; }
run() { local app=$1 w=$2; shift 2; printf '%s waves=%s ' $app $w
  DYNASOAR_DO_ALL_WAVES=$w DYNASOAR_CUBIN_DIR=$B/cubin timeout 90 $B/bin/$app --backend cuda --no-progress --impl dynasoar "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -3 /tmp/run.log | cut -c1-300)"; echo; }
{ hdr "DYNASOAR_DO_ALL_WAVES=W APP --backend cuda --no-progress --impl dynasoar: auto 8 16 16 8 auto"
  for app in wa-tor game-of-life traffic generation structure sugarscape; do for w in auto 8 16 16 8 auto; do run $app $w; done; done
} > $SAVE/waves-ab.txt 2>&1
cat $SAVE/waves-ab.txt
{ hdr "DYNASOAR_PROFILE=1 DYNASOAR_DO_ALL_WAVES=W APP --backend cuda --no-progress --impl dynasoar"
  for app in wa-tor game-of-life traffic generation; do for w in auto 4 8 16; do echo "=== $app waves=$w"
    DYNASOAR_PROFILE=1 DYNASOAR_DO_ALL_WAVES=$w DYNASOAR_CUBIN_DIR=$B/cubin timeout 90 $B/bin/$app --backend cuda --no-progress --impl dynasoar 2>&1 | grep -E '^dynasoar|^enumerate' | head -8; done; done
} > $SAVE/waves-profile.txt 2>&1
ls -la $SAVE
