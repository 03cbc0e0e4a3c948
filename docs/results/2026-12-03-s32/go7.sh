#!/usr/bin/env bash
# Call 7 (2026-12-03, thirty-second session): Wa-Tor's read-only do-alls capped at 32 registers
# as landed (examples/apps/build.rs; models PTX e5f9dcb3db21d7df, which differs from the bundle's
# bc4e46aad8d03273 only by `.maxnreg 32` on `dynasoar_do__OceanHeap__{OceanCell__decide,
# Fish__prepare,Shark__prepare}`), assembled under the bundle's PTX name and run by the bundle of
# 2fabdb4's binaries: Wa-Tor base new new base, the SOA baseline twice, then the bundle's Wa-Tor
# GPU tests (tests/wator) on the new cubin.
set -u
SAVE=$OUT
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-main; mkdir -p $B
[[ -x $B/bin/wa-tor ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
N=/tmp/landed; rm -rf $N; cp -r $B/cubin $N; cp gpu-bundle/extra/landed/*.cubin $N/
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base = bundle $(cat gpu-bundle/COMMIT) (models PTX bc4e46aad8d03273); new = its binaries with the models PTX of the working tree on 17b6cab with examples/apps/build.rs's Wa-Tor caps (e5f9dcb3db21d7df)"
  echo "command: bash docs/results/2026-12-03-s32/go7.sh ($1)"; }
run() { local side=$1; shift; local dir=$B/cubin; [[ $side == new ]] && dir=$N
  printf '%s %s ' $side "$*"; DYNASOAR_CUBIN_DIR=$dir timeout 60 $B/bin/wa-tor --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -2 /tmp/run.log | cut -c1-200)"; echo; }
{ hdr "wa-tor --backend cuda --no-progress --impl IMPL: base new new base, SOA twice; then tests/wator --test-threads=1 on new"
  for s in base new new base; do run $s --impl dynasoar; done
  run base --impl soa; run base --impl soa
  DYNASOAR_REQUIRE_GPU=1 DYNASOAR_CUBIN_DIR=$N timeout 150 $B/tests/wator --test-threads=1 2>&1 | grep -E "^test |test result"
  echo "tests/wator rc=${PIPESTATUS[0]}"
} > $SAVE/wator-r32-landed.txt 2>&1
cat $SAVE/wator-r32-landed.txt
