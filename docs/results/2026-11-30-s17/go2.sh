#!/usr/bin/env bash
# Call 2 (2026-11-30, seventeenth session): does the allocator's state fall out of L2 between
# launches? The bundle of main 081b4d7 (base) against a models cubin of the same binaries whose
# every GPU atomic (arch/atomic.rs: loads, stores, read-modify-writes and reductions, not the
# compare-and-swap, which takes no hint) carries an L2 eviction policy of evict_last
# (createpolicy.fractional.L2::evict_last, `.L2::cache_hint`): vK, a diagnostic.
# Per-kernel profiles of traffic, then whole runs, order base vK vK base.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-new; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
for v in vK; do d=/tmp/c-$v; rm -rf $d; cp -r $B/cubin $d; cp gpu-bundle/extra/$v/*.cubin $d/; done
dir() { if [[ $1 == base ]]; then echo $B/cubin; else echo /tmp/c-$1; fi; }
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90), variant models cubin of it (go2.sh's header)"
  echo "command: bash docs/results/2026-11-30-s17/go2.sh ($1)"; }
{ hdr "DYNASOAR_PROFILE=1 APP --backend cuda --no-progress, per side"
  for a in traffic game-of-life wa-tor; do for s in base vK; do
    echo "=== $a $s"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$(dir $s) $B/bin/$a --backend cuda --no-progress 2>&1 | grep -v '^device time' | head -14
  done; done
} > $OUT/keep-profile.txt 2>&1
grep -E '===|create_car|update|^app=' $OUT/keep-profile.txt | cut -c1-150
run() { local app=$1 side=$2; shift 2
  printf '%s %s ' $app $side; DYNASOAR_CUBIN_DIR=$(dir $side) $B/bin/$app --backend cuda --no-progress "$@" 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; echo; }
{ hdr "APP --backend cuda --no-progress, order base vK vK base"
  for a in traffic game-of-life wa-tor generation structure sugarscape; do for s in base vK vK base; do run $a $s; done; done
} > $OUT/keep-ab.txt 2>&1
cat $OUT/keep-ab.txt
