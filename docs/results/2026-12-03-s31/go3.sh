#!/usr/bin/env bash
# Call 3 (2026-12-03, thirty-first session): Barnes-Hut's `compute_force` declaring that it
# creates and frees nothing (new, the bundle's commit) against cf2f8fc (undeclared), each side its
# own release binary and cubin (scripts/gpu-ab.sh): DSL runs base new new base, twice, and
# per-kernel times (DYNASOAR_PROFILE=1) per side; then all nine apps with --compare on the
# bundle.
set -u
SAVE=$OUT
C=$(cat gpu-bundle/COMMIT); C=${C/+/-}
export DYNASOAR_DATA=$PWD/gpu-bundle/data
AB=/tmp/ab; rm -rf $AB; mkdir -p $AB; xz -dc gpu-bundle/extra/ab/ab.tar.xz | tar xf - -C $AB
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base cf2f8fc, new $C (scripts/gpu-ab.sh, each side's own binary and sm_90 cubin)"
  echo "command: bash docs/results/2026-12-03-s31/go3.sh ($1)"; }
run() { local side=$1; shift; printf '%s %s ' $side "$*"
  DYNASOAR_CUBIN_DIR=$AB/$side/cubin timeout 90 $AB/$side/bin/barnes-hut --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'impl=[^ ]*\|total_us=[0-9]*\|fingerprint=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -3 /tmp/run.log | cut -c1-300)"; echo; }
{ hdr "barnes-hut --backend cuda --no-progress --impl dynasoar: base new new base twice"
  for r in 0 1; do for s in base new new base; do run $s --impl dynasoar; done; done
} > $SAVE/bh-effects-ab.txt 2>&1
cat $SAVE/bh-effects-ab.txt
{ hdr "DYNASOAR_PROFILE=1 barnes-hut --backend cuda --no-progress --impl dynasoar, per side"
  for s in base new; do echo "=== $s"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$AB/$s/cubin timeout 90 $AB/$s/bin/barnes-hut --backend cuda --no-progress --impl dynasoar 2>&1 | grep -E '^app=|compute_force|update|insert|summar|enumerat|launches' | head -24; done
} > $SAVE/bh-effects-profile.txt 2>&1
cat $SAVE/bh-effects-profile.txt
OUT=/tmp/a timeout 400 bash gpu-bundle/run.sh apps > /tmp/apps.log 2>&1; echo "apps rc=$?"
cp /tmp/a/summary.txt $SAVE/gpu-apps-$C.txt
tail -30 /tmp/a/summary.txt | head -16
