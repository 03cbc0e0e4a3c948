#!/usr/bin/env bash
# Call 2 (2026-11-30, eighteenth session): bounds, not allocators. Models cubins of main
# 44aff6b's bundle (scripts/cubin-variant.py --as) on the same binaries:
#   vT:  the reservation's OR relaxed and no read of the block's type after it (what an
#        allocator whose blocks cannot change class during a launch could save; wrong here:
#        variant-bound-type.diff);
#   vF:  a free without its fence before the bitmap's AND (wrong: variant-bound-fence.diff);
#   vTF: both.
# Order base vT vF vTF vTF vF vT base; each run limited to 60 s; the Game of Life profiled
# on base and vTF.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-base; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
for v in vT vF vTF; do d=/tmp/c-$v; rm -rf $d; cp -r $B/cubin $d; cp gpu-bundle/extra/$v/*.cubin $d/; done
dir() { if [[ $1 == base ]]; then echo $B/cubin; else echo /tmp/c-$1; fi; }
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90) and the variants' models cubins of it"
  echo "command: bash docs/results/2026-11-30-s18/go2.sh ($1)"; }
run() { local app=$1 side=$2; shift 2
  printf '%s %s ' $app $side; DYNASOAR_CUBIN_DIR=$(dir $side) timeout 60 $B/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -1 /tmp/run.log | cut -c1-160)"; echo; }
{ hdr "APP --backend cuda --no-progress, order base vT vF vTF vTF vF vT base"
  for a in traffic game-of-life generation wa-tor sugarscape structure; do for s in base vT vF vTF vTF vF vT base; do run $a $s; done; done
} > $OUT/bound-ab.txt 2>&1
cat $OUT/bound-ab.txt
{ hdr "DYNASOAR_PROFILE=1 game-of-life and wa-tor --backend cuda --no-progress, base and vTF"
  for a in game-of-life wa-tor; do for s in base vTF; do
    echo "=== $a $s"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$(dir $s) timeout 60 $B/bin/$a --backend cuda --no-progress 2>&1 | grep -E 'dynasoar_do|enumerate' | head -8
  done; done
} > $OUT/bound-profile.txt 2>&1
cat $OUT/bound-profile.txt
