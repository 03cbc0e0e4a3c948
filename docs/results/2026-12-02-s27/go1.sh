#!/usr/bin/env bash
# Call 1 (2026-12-02, twenty-seventh session): Wa-Tor's agents moved to fresh slots in the order
# of their cells every R steps (an experiment: `OceanCell::relocate`, WATOR_RELOCATE=R, branch
# relocate-bound), against the bundle's DSL and SOA versions.
set -u
SAVE=$OUT
B=/tmp/b-base; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
Q=/tmp/quick; rm -rf $Q; mkdir -p $Q; xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (base); quick: branch relocate-bound (models cubin be2c07cca2266811)"
  echo "command: bash docs/results/2026-12-02-s27/go1.sh ($1)"; }
run() { local side=$1; shift
  if [[ $side == base ]]; then bin=$B/bin/wa-tor; dir=$B/cubin; else bin=$Q/bin/wa-tor; dir=$Q/cubin; fi
  printf '%s R=%s %s ' $side "${WATOR_RELOCATE:-0}" "$*"; DYNASOAR_CUBIN_DIR=$dir timeout 60 $bin --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep -o '^order.*' /tmp/run.log | tr '\n' ' '
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|objects=[^ ]*\|fingerprint=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -1 /tmp/run.log | cut -c1-160)"; echo; }
{ hdr "wa-tor --backend cuda --no-progress --impl IMPL, WATOR_RELOCATE=R WATOR_ORDER=1 on the quick side"
  run base --impl soa; run base --impl soa
  run base --impl dynasoar; run base --impl dynasoar
  export WATOR_ORDER=1
  for r in 0 100 20 5 1 0 100 20 5 1; do WATOR_RELOCATE=$r run quick --impl dynasoar; done
  for r in 0 20 1; do echo "== profile R=$r"; WATOR_RELOCATE=$r DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$Q/cubin $Q/bin/wa-tor --backend cuda --no-progress 2>&1 | grep -E "^dynasoar|^enumerate|^order|^app|blocks|^Fish|^Shark|^Ocean"; done
} > $SAVE/relocate-bound.txt 2>&1
cat $SAVE/relocate-bound.txt
