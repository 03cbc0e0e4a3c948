#!/usr/bin/env bash
# Call 2 (2026-12-03, twenty-ninth session): the GPU suite on the bundle of the ByIndex change
# (Wa-Tor's agents find their cells' neighbours by index), then Wa-Tor's DSL version, main's
# binary and cubin (the bundle of 217b252, models PTX of 71c67a3: side `base`, carried in
# gpu-bundle/extra/base.tar.xz) against the bundle (side `new`), order base new new base twice,
# and the SOA baseline twice on new; then each side once with DYNASOAR_PROFILE=1.
set -u
SAVE=$OUT
C=$(cat gpu-bundle/COMMIT); C=${C/+/-}
OUT=/tmp/t timeout 340 bash gpu-bundle/run.sh tests > /tmp/tests.log 2>&1; echo "tests rc=$?"
cp /tmp/t/summary.txt $SAVE/gpu-tests-$C.txt; grep -v PASS /tmp/t/summary.txt | tail -6
grep -B2 -A20 "panicked" /tmp/tests.log | head -40
export DYNASOAR_DATA=$PWD/gpu-bundle/data
N=/tmp/b-new; rm -rf $N; mkdir -p $N; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
B=/tmp/b-base; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/extra/base.tar.xz | tar xf - -C $B
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: new = bundle $(cat gpu-bundle/COMMIT); base = main 71c67a3 (wa-tor and the models cubin of the bundle of 217b252, same models PTX fd393b9810af8f29)"
  echo "command: bash docs/results/2026-12-03-s29/go3.sh ($1)"; }
run() { local side=$1; shift
  if [[ $side == base ]]; then bin=$B/bin/wa-tor; dir=$B/cubin; else bin=$N/bin/wa-tor; dir=$N/cubin; fi
  printf '%s %s ' $side "$*"; DYNASOAR_CUBIN_DIR=$dir timeout 60 $bin --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[^ ]*\|fish=[^ ]*\|sharks=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -2 /tmp/run.log | cut -c1-200)"; echo; }
{ hdr "wa-tor --backend cuda --no-progress --impl IMPL; base new new base, twice, then SOA twice on new"
  for r in 1 2; do for s in base new new base; do run $s --impl dynasoar; done; done
  run new --impl soa; run new --impl soa
  for s in base new; do echo "=== DYNASOAR_PROFILE=1, $s"; bin=$B/bin/wa-tor; dir=$B/cubin; [[ $s == new ]] && { bin=$N/bin/wa-tor; dir=$N/cubin; }
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$dir timeout 60 $bin --backend cuda --no-progress --impl dynasoar 2>&1 | grep -v '^\s*$' | tail -25; done
} > $SAVE/wator-by-index-ab.txt 2>&1
head -16 $SAVE/wator-by-index-ab.txt
