#!/usr/bin/env bash
# Call 1 (2026-11-30, seventeenth session): where traffic's `ProducerCell::create_car` spends its
# 23.5 us a step. The bundle of main 081b4d7 (base) against models cubins of the same binaries
# (scripts/cubin-variant.py --as, diagnostic variants, fingerprints may differ):
#   vC   create_car makes no car and marks no cell (the walk, the generator and the counter only)
#   vE   create_car without the counter's atomic add (everything else as the base)
#   vR   the reservation's OR relaxed instead of acquiring (no L1 invalidation; not correct by
#        the PTX memory model, a bound only)
#   cap0, cap96  create_car's cap of 80 registers lifted, or 96
# Per-kernel profiles (DYNASOAR_PROFILE=1) of traffic, then whole runs of traffic, the Game of
# Life and Wa-Tor with vR, order base vR vR base.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-new; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
for v in vC vE vR cap0 cap96; do d=/tmp/c-$v; rm -rf $d; cp -r $B/cubin $d; cp gpu-bundle/extra/$v/*.cubin $d/; done
dir() { if [[ $1 == base ]]; then echo $B/cubin; else echo /tmp/c-$1; fi; }
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90), variant models cubins of it (go1.sh's header)"
  echo "command: bash docs/results/2026-11-30-s17/go1.sh ($1)"; }
{ hdr "DYNASOAR_PROFILE=1 traffic --backend cuda --no-progress, per side"
  for s in base vC vE vR cap0 cap96 base; do
    echo "=== $s"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$(dir $s) $B/bin/traffic --backend cuda --no-progress 2>&1 | grep -v '^device time' | head -14
  done
} > $OUT/create-profile.txt 2>&1
grep -E '===|create_car|^app=' $OUT/create-profile.txt | cut -c1-150
run() { local app=$1 side=$2; shift 2
  printf '%s %s ' $app $side; DYNASOAR_CUBIN_DIR=$(dir $side) $B/bin/$app --backend cuda --no-progress "$@" 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; echo; }
{ hdr "APP --backend cuda --no-progress, order base vR vR base (traffic also cap0 cap96)"
  for s in base cap0 cap96 vR vR cap96 cap0 base; do run traffic $s; done
  for a in game-of-life wa-tor; do for s in base vR vR base; do run $a $s; done; done
} > $OUT/create-ab.txt 2>&1
cat $OUT/create-ab.txt
