#!/usr/bin/env bash
# Call 1, part 2 (2026-12-03, twenty-ninth session): Wa-Tor with its agents' neighbour cells
# computed from their cell's place instead of loaded from the cell (branch `wator-index`, not
# landed; side `idx`, packed by scripts/gpu-quick.sh wa-tor) against the bundle of 217b252
# (side `base`), order base idx idx base, then each side with DYNASOAR_PROFILE=1; and the SOA
# baseline on base.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-main; mkdir -p $B
[[ -x $B/bin/wa-tor ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
Q=/tmp/quick; rm -rf $Q; mkdir -p $Q; xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base = bundle $(cat gpu-bundle/COMMIT); idx = branch wator-index on 71c67a3 (quick: wa-tor and its models cubin $(ls $Q/cubin))"
  echo "command: bash docs/results/2026-12-03-s29/go2.sh ($1)"; }
run() { local side=$1; shift
  if [[ $side == idx ]]; then bin=$Q/bin/wa-tor; dir=$Q/cubin; else bin=$B/bin/wa-tor; dir=$B/cubin; fi
  printf '%s %s ' $side "$*"; DYNASOAR_CUBIN_DIR=$dir timeout 60 $bin --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[^ ]*\|fish=[^ ]*\|sharks=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -2 /tmp/run.log | cut -c1-200)"; echo; }
{ hdr "wa-tor --backend cuda --no-progress --impl IMPL; base idx idx base, twice, then SOA on base"
  for r in 1 2; do for s in base idx idx base; do run $s --impl dynasoar; done; done
  run base --impl soa; run base --impl soa
} > $OUT/wator-index-ab.txt 2>&1
cat $OUT/wator-index-ab.txt
{ hdr "DYNASOAR_PROFILE=1 wa-tor --backend cuda --no-progress --impl dynasoar, each side"
  for s in base idx; do echo "=== $s"; bin=$B/bin/wa-tor; dir=$B/cubin; [[ $s == idx ]] && { bin=$Q/bin/wa-tor; dir=$Q/cubin; }
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$dir timeout 60 $bin --backend cuda --no-progress --impl dynasoar 2>&1 | tail -30; done
} > $OUT/wator-index-profile.txt 2>&1
