#!/usr/bin/env bash
# Call 2 (2026-12-01, twenty-second session): frees that do not wait for their blocks' bitmaps,
# built. In a launch that creates objects of one class only and frees none of them, a free
# clears its slot's bit with a `red.and` and leaves the block's transitions to the class's next
# enumeration anew (or the reactivation kernel the host runs before a launch that needs the
# bitmaps exact); the launch's allocations clear an active bit without waiting for it. Base:
# the bundle of f58a01b (main's device code); new: a quick payload of the change (uncommitted
# tree of this session, the commit that lands it named in the results README). Order base new
# new base, then per-kernel profiles of both sides.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-base; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
Q=/tmp/b-new; rm -rf $Q; mkdir -p $Q; xz -dc gpu-bundle/extra/unwaited/quick.tar.xz | tar xf - -C $Q
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base bundle $(cat gpu-bundle/COMMIT) (cubin $(ls $B/cubin | grep -v aos | head -3 | tr '\n' ' ')), new quick payload of the change (cubin $(ls $Q/cubin))"
  echo "command: bash docs/results/2026-12-01-s22/go2.sh ($1)"; }
run() { local app=$1 side=$2 t=$3; shift 3
  printf '%s %s ' $app $side; DYNASOAR_CUBIN_DIR=/tmp/b-$side/cubin timeout $t /tmp/b-$side/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -1 /tmp/run.log | cut -c1-160)"; echo; }
{ hdr "APP --backend cuda --no-progress, order base new new base"
  for a in game-of-life:8 generation:15 wa-tor:8 traffic:8 sugarscape:20 structure:20; do
    for s in base new new base; do run ${a%%:*} $s ${a##*:}; done; done
  for a in game-of-life generation wa-tor traffic; do for s in base new; do echo "=== $a profile $s"
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=/tmp/b-$s/cubin timeout 20 /tmp/b-$s/bin/$a --backend cuda --no-progress 2>&1 | grep -E 'update|prepare|enumerate|reactiv|decide|create|advance|blocks|^[A-Z][a-z]+ +[0-9]' | head -16; done; done
  echo "=== game-of-life --check (new)"; DYNASOAR_CUBIN_DIR=/tmp/b-new/cubin timeout 60 /tmp/b-new/bin/game-of-life --backend cuda --no-progress --pattern random:1024x1024 --steps 100 --check 2>&1 | tail -2
  echo "=== generation --check (new)"; DYNASOAR_CUBIN_DIR=/tmp/b-new/cubin timeout 60 /tmp/b-new/bin/generation --backend cuda --no-progress --size 1000x1000 --steps 300 --check 2>&1 | tail -2
} > $OUT/unwaited-ab.txt 2>&1
cat $OUT/unwaited-ab.txt
