#!/usr/bin/env bash
# Call 1 (2026-11-30, eighteenth session): two changes to the allocator's search, each as a
# models cubin of main 44aff6b's bundle (scripts/cubin-variant.py --as) on the same binaries:
#   hint: the bitmap search reads the levels above the bottom with `ld.relaxed.cta` (may hit
#         L1), a second descent from L2 where the first finds an empty container (variant-hint.diff);
#   open: where nothing next to a full note is active, open a block at once instead of
#         searching from the top (variant-open.diff);
#   both: the two together.
# Order base hint open both both open hint base; traffic profiled on each side.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-base; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
for v in hint open both; do d=/tmp/c-$v; rm -rf $d; cp -r $B/cubin $d; cp gpu-bundle/extra/$v/*.cubin $d/; done
dir() { if [[ $1 == base ]]; then echo $B/cubin; else echo /tmp/c-$1; fi; }
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90) and the variants' models cubins of it"
  echo "command: bash docs/results/2026-11-30-s18/go1.sh ($1)"; }
run() { local app=$1 side=$2; shift 2
  printf '%s %s ' $app $side; DYNASOAR_CUBIN_DIR=$(dir $side) $B/bin/$app --backend cuda --no-progress "$@" 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; echo; }
{ hdr "APP --backend cuda --no-progress, order base hint open both both open hint base (Barnes-Hut base both)"
  for a in traffic game-of-life generation wa-tor sugarscape; do for s in base hint open both both open hint base; do run $a $s; done; done
  for s in base both; do run barnes-hut $s; done
} > $OUT/search-ab.txt 2>&1
cat $OUT/search-ab.txt
{ hdr "DYNASOAR_PROFILE=1 traffic --backend cuda --no-progress, each side"
  for s in base hint open both; do
    echo "=== traffic $s"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$(dir $s) $B/bin/traffic --backend cuda --no-progress 2>&1 | grep -E 'create_car|Car__|^Car |blocks'
  done
} > $OUT/search-profile.txt 2>&1
cat $OUT/search-profile.txt
