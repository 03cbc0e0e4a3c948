#!/usr/bin/env bash
# Call 1 (2026-12-03, thirtieth session): Wa-Tor with its cells' `decide` finding the requesting
# neighbour by index (side `new`, packed by scripts/gpu-quick.sh wa-tor from the working tree on
# d444ddb) against the bundle of c897ebf (side `base`), order base new new base twice, then
# each side with DYNASOAR_PROFILE=1, and the SOA baseline on base; then Nsight Compute (full
# set, SASS source page) of one `Shark::update` launch of the DSL and one `update_sharks` of
# the SOA baseline on base, for the hot spots.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-main; mkdir -p $B
[[ -x $B/bin/wa-tor ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
Q=/tmp/quick; rm -rf $Q; mkdir -p $Q; xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base = bundle $(cat gpu-bundle/COMMIT); new = d444ddb + decide by index (quick: wa-tor and its models cubin $(ls $Q/cubin))"
  echo "command: bash docs/results/2026-12-03-s30/go1.sh ($1)"; }
run() { local side=$1; shift
  if [[ $side == new ]]; then bin=$Q/bin/wa-tor; dir=$Q/cubin; else bin=$B/bin/wa-tor; dir=$B/cubin; fi
  printf '%s %s ' $side "$*"; DYNASOAR_CUBIN_DIR=$dir timeout 60 $bin --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[^ ]*\|fish=[^ ]*\|sharks=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -2 /tmp/run.log | cut -c1-200)"; echo; }
{ hdr "wa-tor --backend cuda --no-progress --impl IMPL; base new new base, twice, then SOA on base"
  for r in 1 2; do for s in base new new base; do run $s --impl dynasoar; done; done
  run base --impl soa; run base --impl soa
} > $OUT/wator-decide-ab.txt 2>&1
cat $OUT/wator-decide-ab.txt
{ hdr "DYNASOAR_PROFILE=1 wa-tor --backend cuda --no-progress --impl dynasoar, each side"
  for s in base new; do echo "=== $s"; bin=$B/bin/wa-tor; dir=$B/cubin; [[ $s == new ]] && { bin=$Q/bin/wa-tor; dir=$Q/cubin; }
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$dir timeout 60 $bin --backend cuda --no-progress --impl dynasoar 2>&1 | tail -30; done
} > $OUT/wator-decide-profile.txt 2>&1
# Nsight Compute on base: launch 41 of Shark::update / update_sharks in a 60-step run.
cd /tmp  # (the headers of the ncu files then missed gpu-bundle/COMMIT: their commit line was corrected by hand)
for side in dsl soa; do
  if [[ $side == dsl ]]; then k=regex:Shark__update; impl=dynasoar; else k=regex:update_sharks; impl=soa; fi
  DYNASOAR_CUBIN_DIR=$B/cubin timeout 200 ncu --set full --import-source no -k $k --launch-skip 40 --launch-count 1 \
    -o /tmp/ncu-$side -f $B/bin/wa-tor --backend cuda --no-progress --impl $impl --steps 60 > /tmp/ncu-$side.log 2>&1
  echo "ncu $side rc=$?"; tail -3 /tmp/ncu-$side.log
  { hdr "ncu --set full --import-source no -k $k --launch-skip 40 --launch-count 1 wa-tor --backend cuda --no-progress --impl $impl --steps 60 (base)"
    ncu -i /tmp/ncu-$side.ncu-rep --page details; } > $OUT/ncu-wator-shark-$side.txt 2>&1
  ncu -i /tmp/ncu-$side.ncu-rep --page source --print-source sass --csv > /tmp/src-$side.csv 2>/dev/null
done
cd - >/dev/null
{ hdr "the SASS source page (ncu -i REP --page source --print-source sass --csv), then scripts/ncu-sass-hotspots.py CSV --top 40"
  for side in dsl soa; do echo "## $side"; python3 scripts/ncu-sass-hotspots.py /tmp/src-$side.csv --top 40; done
} > $OUT/shark-sass-hotspots.txt 2>&1
tar cf - -C /tmp src-dsl.csv src-soa.csv | xz -6 > $OUT/shark-sass-src.tar.xz
ls -la $OUT
