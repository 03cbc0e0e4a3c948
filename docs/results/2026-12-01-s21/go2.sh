#!/usr/bin/env bash
# Call 2 (2026-12-01, twenty-first session): the change flags of an allocation stored without
# their load. Base: the bundle of f58a01b (main's device code); sole: a quick payload of the
# tree with variant-blind-sole.diff (launches that create one class only); all: the same with
# variant-blind-all.diff (every allocation). Order base sole all all sole base; then per-kernel
# profiles.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-base; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
for v in 2:sole 3:all; do Q=/tmp/b-${v#*:}; rm -rf $Q; mkdir -p $Q; xz -dc gpu-bundle/extra/quick${v%%:*}/quick.tar.xz | tar xf - -C $Q; done
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base bundle $(cat gpu-bundle/COMMIT) (cubin $(ls $B/cubin | grep -v aos | head -3 | tr '\n' ' ')), sole quick payload (cubin $(ls /tmp/b-sole/cubin)), all quick payload (cubin $(ls /tmp/b-all/cubin)), both on fb41abb's parent with the variant diffs"
  echo "command: bash docs/results/2026-12-01-s21/go2.sh ($1)"; }
run() { local app=$1 side=$2 t=$3; shift 3
  printf '%s %s ' $app $side; DYNASOAR_CUBIN_DIR=/tmp/b-$side/cubin timeout $t /tmp/b-$side/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -1 /tmp/run.log | cut -c1-160)"; echo; }
{ hdr "APP --backend cuda --no-progress, order base sole all all sole base"
  for a in game-of-life:8 generation:15 traffic:8 wa-tor:8 sugarscape:20; do
    for s in base sole all all sole base; do run ${a%%:*} $s ${a##*:}; done; done
  for a in game-of-life generation traffic; do for s in base sole all; do echo "=== $a profile $s"
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=/tmp/b-$s/cubin timeout 20 /tmp/b-$s/bin/$a --backend cuda --no-progress 2>&1 | grep -E '__|enumerate' | head -8; done; done
} > $OUT/blind-flags-ab.txt 2>&1
cat $OUT/blind-flags-ab.txt
