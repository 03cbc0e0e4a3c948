#!/usr/bin/env bash
# Call 2 (2026-12-03, twenty-eighth session): n-body and collision, main (eb08e1c, packed by
# scripts/gpu-quick.sh nbody collision: side `main`) against the bulk-placement bundle (side
# `new`), order main new new main; and n-body's SOA baseline on the bundle (its checksum is the
# DSL version's, bit for bit, where the bodies lie in index order).
set -u
SAVE=$OUT
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-new; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
Q=/tmp/quick; rm -rf $Q; mkdir -p $Q; xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: new = bundle $(cat gpu-bundle/COMMIT); main = eb08e1c (quick: nbody, collision and the models cubin)"
  echo "command: bash docs/results/2026-12-03-s28/go2.sh ($1)"; }
run() { local app=$1 side=$2 t=$3; shift 3
  if [[ $side == main ]]; then bin=$Q/bin/$app; dir=$Q/cubin; else bin=$B/bin/$app; dir=$B/cubin; fi
  printf '%s %s %s ' $app $side "$*"; DYNASOAR_CUBIN_DIR=$dir timeout $t $bin --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|momentum=[^ ]*\|checksum=[^ ]*\|fingerprint=[^ ]*\|bodies=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -1 /tmp/run.log | cut -c1-160)"; echo; }
{ hdr "APP --backend cuda --no-progress --impl IMPL; main new new main, then n-body's SOA baseline on new"
  for s in main new new main; do run nbody $s 40 --impl dynasoar; done
  run nbody new 40 --impl soa
  for s in main new new main; do run collision $s 40 --impl dynasoar; done
} > $SAVE/bulk-placement-ab.txt 2>&1
cat $SAVE/bulk-placement-ab.txt
