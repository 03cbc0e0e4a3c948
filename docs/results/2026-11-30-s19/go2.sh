#!/usr/bin/env bash
# Call 2 (2026-11-30, nineteenth session): allocations in a launch that creates one class only
# and frees none of it (SOLE: relaxed reservation, no type read for blocks found in the class's
# active bitmap, a hint's type read with the reservation), with the Game of Life's and
# generation's updates declaring their effects. Base: the bundle of 582da07 (main's device
# code); new: a quick payload of the working tree. Order base new new base.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-base; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
Q=/tmp/b-new; rm -rf $Q; mkdir -p $Q; xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base bundle $(cat gpu-bundle/COMMIT) (cubin $(ls $B/cubin | grep -v aos | head -3 | tr '\n' ' ')), new quick payload (cubin $(ls $Q/cubin))"
  echo "command: bash docs/results/2026-11-30-s19/go2.sh ($1)"; }
run() { local app=$1 side=$2 t=$3; shift 3
  printf '%s %s ' $app $side; DYNASOAR_CUBIN_DIR=/tmp/b-$side/cubin timeout $t /tmp/b-$side/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -1 /tmp/run.log | cut -c1-160)"; echo; }
{ hdr "APP --backend cuda --no-progress, order base new new base"
  for a in traffic:8 wa-tor:8 game-of-life:8 generation:15 sugarscape:20 structure:20; do
    for s in base new new base; do run ${a%%:*} $s ${a##*:}; done; done
  for a in traffic game-of-life wa-tor generation; do for s in base new; do echo "=== $a profile $s"
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=/tmp/b-$s/cubin timeout 20 /tmp/b-$s/bin/$a --backend cuda --no-progress 2>&1 | grep -E 'update|create_car|advance|prepare|enumerate' | head -12; done; done
} > $OUT/sole-ab.txt 2>&1
cat $OUT/sole-ab.txt
