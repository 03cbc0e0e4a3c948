#!/usr/bin/env bash
# Calls 1 and 2 (2026-12-01, twenty-second session; call 1 without the variant's reserve_in
# hunk, call 2 with it): an upper bound for frees without their round
# trip. In a launch that creates no object of the freed object's class (the kept-block form of
# the free), the free clears its slot's bit with a `red.and` whose old value nobody waits for:
# no double-free check, no full -> active transition, no count of emptied blocks; the flat
# listing activates the listed blocks that have room. Base: the bundle of f58a01b (main's device
# code); new: a quick payload of the variant (variant-redfree.diff). Order base new new base,
# then per-kernel profiles of both sides.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-base; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
Q=/tmp/b-new; rm -rf $Q; mkdir -p $Q; xz -dc gpu-bundle/extra/redfree/quick.tar.xz | tar xf - -C $Q
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base bundle $(cat gpu-bundle/COMMIT) (cubin $(ls $B/cubin | grep -v aos | head -3 | tr '\n' ' ')), new quick payload of the variant (cubin $(ls $Q/cubin))"
  echo "command: bash docs/results/2026-12-01-s22/go1.sh ($1)"; }
run() { local app=$1 side=$2 t=$3; shift 3
  printf '%s %s ' $app $side; DYNASOAR_CUBIN_DIR=/tmp/b-$side/cubin timeout $t /tmp/b-$side/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -1 /tmp/run.log | cut -c1-160)"; echo; }
{ hdr "APP --backend cuda --no-progress, order base new new base"
  for a in game-of-life:8 wa-tor:8 generation:15; do
    for s in base new new base; do run ${a%%:*} $s ${a##*:}; done; done
  for a in game-of-life wa-tor generation; do for s in base new; do echo "=== $a profile $s"
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=/tmp/b-$s/cubin timeout 20 /tmp/b-$s/bin/$a --backend cuda --no-progress 2>&1 | grep -E 'update|prepare|enumerate|decide|create|advance|blocks|^[A-Z][a-z]+ +[0-9]' | head -16; done; done
} > $OUT/redfree-ab.txt 2>&1
cat $OUT/redfree-ab.txt
