#!/usr/bin/env bash
# Call 3 (2026-12-01, twenty-second session): frees that do not wait for their blocks' bitmaps,
# as landed: the bundle of the change against the bundle of f58a01b (main's device code before
# it), order base new new base, profiles of both sides; then the GPU suite on the new bundle.
set -u
SAVE=$OUT
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-base; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/extra/base/payload.tar.xz | tar xf - -C $B
Q=/tmp/b-new; rm -rf $Q; mkdir -p $Q; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $Q
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base bundle $(cat gpu-bundle/extra/base/COMMIT) (cubin $(ls $B/cubin | grep -v aos | head -3 | tr '\n' ' ')), new bundle $(cat gpu-bundle/COMMIT) (cubin $(ls $Q/cubin | grep -v aos | head -3 | tr '\n' ' '))"
  echo "command: bash docs/results/2026-12-01-s22/go3.sh ($1)"; }
run() { local app=$1 side=$2 t=$3; shift 3
  printf '%s %s ' $app $side; DYNASOAR_CUBIN_DIR=/tmp/b-$side/cubin timeout $t /tmp/b-$side/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -1 /tmp/run.log | cut -c1-160)"; echo; }
{ hdr "APP --backend cuda --no-progress, order base new new base"
  for a in game-of-life:8 generation:15 wa-tor:8 traffic:8 sugarscape:20 structure:20; do
    for s in base new new base; do run ${a%%:*} $s ${a##*:}; done; done
  for a in game-of-life wa-tor traffic sugarscape; do for s in base new; do echo "=== $a profile $s"
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=/tmp/b-$s/cubin timeout 25 /tmp/b-$s/bin/$a --backend cuda --no-progress 2>&1 | grep -E '__|enumerate|reactivation|^[A-Z][A-Za-z]+ +[0-9]' | head -16; done; done
} > $SAVE/unwaited-final-ab.txt 2>&1
cat $SAVE/unwaited-final-ab.txt
OUT=/tmp/t timeout 330 bash gpu-bundle/run.sh tests > /tmp/tests.log 2>&1; echo "tests rc=$?"
C=$(cat gpu-bundle/COMMIT)
cp /tmp/t/summary.txt $SAVE/gpu-tests-$C.txt; grep -v PASS /tmp/t/summary.txt | tail -6
grep -B2 -A20 "panicked" /tmp/tests.log | head -60
