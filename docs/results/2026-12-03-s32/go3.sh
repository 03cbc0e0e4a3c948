#!/usr/bin/env bash
# Call 3 (2026-12-03, thirty-second session): Wa-Tor's `OceanCell::decide` against the SOA
# baseline's `wator_soa_decide`, Nsight Compute (full set, SASS source page), launch 41 of each
# in a 60-step run, on the bundle of 2fabdb4 (device code of 78fb4f3). Then the apps with every
# do-all on the streaming loop (DYNASOAR_DO_ALL=streaming) against the default (auto), order
# auto streaming streaming auto, per-kernel times of each, and the default's loop choices
# (DYNASOAR_DO_ALL_REPORT=1).
set -u
SAVE=$OUT
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-main; mkdir -p $B
[[ -x $B/bin/wa-tor ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (models PTX bc4e46aad8d03273, as 78fb4f3's)"
  echo "command: bash docs/results/2026-12-03-s32/go3.sh ($1)"; }
cd /tmp
for side in dsl soa; do
  if [[ $side == dsl ]]; then k=regex:OceanCell__decide; impl=dynasoar; else k=regex:wator_soa_decide; impl=soa; fi
  DYNASOAR_CUBIN_DIR=$B/cubin timeout 200 ncu --set full --import-source no -k $k --launch-skip 40 --launch-count 1 \
    -o /tmp/ncu-$side -f $B/bin/wa-tor --backend cuda --no-progress --impl $impl --steps 60 > /tmp/ncu-$side.log 2>&1
  echo "ncu $side rc=$?"; tail -2 /tmp/ncu-$side.log
  { hdr "ncu --set full --import-source no -k $k --launch-skip 40 --launch-count 1 wa-tor --backend cuda --no-progress --impl $impl --steps 60"
    ncu -i /tmp/ncu-$side.ncu-rep --page details; } > $SAVE/ncu-wator-decide-$side.txt 2>&1
  ncu -i /tmp/ncu-$side.ncu-rep --page source --print-source sass --csv > /tmp/src-$side.csv 2>/dev/null
done
cd - >/dev/null
{ hdr "SASS source page (ncu -i REP --page source --print-source sass --csv), scripts/ncu-sass-hotspots.py CSV --top 40"
  for side in dsl soa; do echo "## $side"; python3 scripts/ncu-sass-hotspots.py /tmp/src-$side.csv --top 40; done
} > $SAVE/decide-sass-hotspots.txt 2>&1
tar cf - -C /tmp src-dsl.csv src-soa.csv | xz -6 > $SAVE/decide-sass-src.tar.xz
for side in dsl soa; do grep -E "Duration|Registers Per|Achieved Occ|Executed Instructions  |DRAM Throughput|L2 Hit|L1/TEX Hit|Memory Throughput" $SAVE/ncu-wator-decide-$side.txt; done
run() { local app=$1 mode=$2; shift 2; printf '%s %s ' $app $mode
  DYNASOAR_DO_ALL=$mode DYNASOAR_CUBIN_DIR=$B/cubin timeout 90 $B/bin/$app --backend cuda --no-progress --impl dynasoar "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -3 /tmp/run.log | cut -c1-300)"; echo; }
{ hdr "DYNASOAR_DO_ALL=MODE APP --backend cuda --no-progress --impl dynasoar: auto streaming streaming auto"
  for app in wa-tor game-of-life structure traffic; do for m in auto streaming streaming auto; do run $app $m; done; done
} > $SAVE/stream-ab.txt 2>&1
cat $SAVE/stream-ab.txt
{ hdr "DYNASOAR_PROFILE=1 DYNASOAR_DO_ALL=MODE APP --backend cuda --no-progress --impl dynasoar (and DYNASOAR_DO_ALL_REPORT=1 on auto)"
  for app in wa-tor game-of-life; do for m in auto streaming; do echo "=== $app $m"
    DYNASOAR_DO_ALL_REPORT=1 DYNASOAR_PROFILE=1 DYNASOAR_DO_ALL=$m DYNASOAR_CUBIN_DIR=$B/cubin timeout 90 $B/bin/$app --backend cuda --no-progress --impl dynasoar 2>&1 | grep -v '^step' | tail -40; done; done
} > $SAVE/stream-profile.txt 2>&1
ls -la $SAVE
