#!/usr/bin/env bash
# Call 1 (2026-12-01, twenty-first session): launches that create one class only set its change
# flags once, and their allocations skip the flags' load and store. Base: the bundle of f58a01b
# (main's device code before the change); new: a quick payload of fb41abb. Order base new new
# base; then per-kernel profiles of both sides.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-base; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
Q=/tmp/b-new; rm -rf $Q; mkdir -p $Q; xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base bundle $(cat gpu-bundle/COMMIT) (cubin $(ls $B/cubin | grep -v aos | head -3 | tr '\n' ' ')), new quick payload of fb41abb (cubin $(ls $Q/cubin))"
  echo "command: bash docs/results/2026-12-01-s21/go1.sh ($1)"; }
run() { local app=$1 side=$2 t=$3; shift 3
  printf '%s %s ' $app $side; DYNASOAR_CUBIN_DIR=/tmp/b-$side/cubin timeout $t /tmp/b-$side/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -1 /tmp/run.log | cut -c1-160)"; echo; }
{ hdr "APP --backend cuda --no-progress, order base new new base"
  for a in game-of-life:8 wa-tor:8 generation:15 traffic:8 sugarscape:20 structure:20; do
    for s in base new new base; do run ${a%%:*} $s ${a##*:}; done; done
  for a in game-of-life wa-tor generation traffic; do for s in base new; do echo "=== $a profile $s"
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=/tmp/b-$s/cubin timeout 20 /tmp/b-$s/bin/$a --backend cuda --no-progress 2>&1 | grep -E 'update|prepare|enumerate|decide|create|advance' | head -12; done; done
} > $OUT/sole-flags-ab.txt 2>&1
cat $OUT/sole-flags-ab.txt
