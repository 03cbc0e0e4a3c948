#!/usr/bin/env bash
# Call 6 (2026-11-30, seventeenth session): the GPU suite on the bundle of 805f0c4 (a note of a
# full block sends the search to the blocks next to it); that bundle (new) against the bundle of
# 081b4d7 (old) and against its binaries with a models cubin whose allocation loads the class's
# enumeration flags before its reservation instead of after it (flags), order old new flags
# flags new old; per-kernel profiles of traffic, new and flags.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
for side in old new; do
  d=/tmp/b-$side; rm -rf $d; mkdir -p $d
  if [[ $side == old ]]; then p=gpu-bundle/old/payload.tar.xz; else p=gpu-bundle/payload.tar.xz; fi
  xz -dc $p | tar xf - -C $d
done
F=/tmp/c-flags; rm -rf $F; cp -r /tmp/b-new/cubin $F; cp gpu-bundle/extra/flags/*.cubin $F/
bin() { if [[ $1 == old ]]; then echo /tmp/b-old; else echo /tmp/b-new; fi; }
cub() { case $1 in old) echo /tmp/b-old/cubin;; new) echo /tmp/b-new/cubin;; *) echo /tmp/c-$1;; esac; }
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: old bundle $(cat gpu-bundle/old/COMMIT), new bundle $(cat gpu-bundle/COMMIT) (device and host code of 805f0c4; docs uncommitted), flags: the new bundle's binaries with a variant models cubin (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s17/go6.sh ($1)"; }
run() { local app=$1 side=$2; shift 2
  printf '%s %s ' $app $side; DYNASOAR_CUBIN_DIR=$(cub $side) $(bin $side)/bin/$app --backend cuda --no-progress "$@" 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; echo; }
{ hdr "APP --backend cuda --no-progress, order old new flags flags new old"
  for a in traffic game-of-life generation wa-tor sugarscape; do for s in old new flags flags new old; do run $a $s; done; done
} > $OUT/final-ab.txt 2>&1
cat $OUT/final-ab.txt
{ hdr "DYNASOAR_PROFILE=1 traffic --backend cuda --no-progress, new then flags"
  for s in new flags; do echo "=== $s"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$(cub $s) /tmp/b-new/bin/traffic --backend cuda --no-progress 2>&1 | grep -v '^device time' | head -9; done
} > $OUT/flags-profile.txt 2>&1
grep -E '===|create_car|Car__' $OUT/flags-profile.txt
OUT_SAVE=$OUT
OUT=/tmp/t bash gpu-bundle/run.sh tests > /tmp/tests.log 2>&1; echo "tests rc=$?"
OUT=$OUT_SAVE
cp /tmp/t/summary.txt $OUT/gpu-tests-805f0c4.txt; grep -v PASS /tmp/t/summary.txt | tail -6
