#!/usr/bin/env bash
# Call 4 (2026-11-30, nineteenth session): a bound, not a correct allocator: frees of a class
# that the launch does not create leave out the fence (variant-bound-keep.diff; an emptied block
# still goes back to the free blocks, where another class may take it while a freeing thread's
# accesses are in flight). The bundle of 3f458f7 against its binaries with the variant's models
# cubin, order base keep keep base.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
K=/tmp/k; rm -rf $K; cp -r $B/cubin $K; cp gpu-bundle/extra/keep/*.cubin $K/
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (base) and its binaries with the models cubin of variant-bound-keep.diff (keep)"
  echo "command: bash docs/results/2026-11-30-s19/go4.sh ($1)"; }
run() { local app=$1 side=$2 t=$3; shift 3
  local dir=$B/cubin; [[ $side == keep ]] && dir=$K
  printf '%s %s ' $app $side; DYNASOAR_CUBIN_DIR=$dir timeout $t $B/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -1 /tmp/run.log | cut -c1-160)"; echo; }
{ hdr "APP --backend cuda --no-progress, order base keep keep base"
  for a in game-of-life:8 generation:15 wa-tor:8 traffic:8; do
    for s in base keep keep base; do run ${a%%:*} $s ${a##*:}; done; done
  for s in base keep; do echo "=== game-of-life profile $s"; dir=$B/cubin; [[ $s == keep ]] && dir=$K
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$dir timeout 10 $B/bin/game-of-life --backend cuda --no-progress 2>&1 | grep -E 'update|prepare|enumerate' | head -8; done
} > $OUT/keep-bound-ab.txt 2>&1
cat $OUT/keep-bound-ab.txt
