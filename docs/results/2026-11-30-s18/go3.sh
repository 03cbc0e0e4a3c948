#!/usr/bin/env bash
# Call 3 (2026-11-30, eighteenth session): frees in a launch that creates nothing leave out
# the fence (582da07): its bundle (new) against that of 44aff6b (old), order old new new old,
# each run limited to 60 s; traffic profiled on both; then the GPU suite on the new bundle.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
for side in old new; do
  d=/tmp/b-$side; rm -rf $d; mkdir -p $d
  if [[ $side == old ]]; then p=gpu-bundle/old/payload.tar.xz; else p=gpu-bundle/payload.tar.xz; fi
  xz -dc $p | tar xf - -C $d
done
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: old bundle $(cat gpu-bundle/old/COMMIT), new bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s18/go3.sh ($1)"; }
run() { local app=$1 side=$2; shift 2
  printf '%s %s ' $app $side; DYNASOAR_CUBIN_DIR=/tmp/b-$side/cubin timeout 60 /tmp/b-$side/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -1 /tmp/run.log | cut -c1-160)"; echo; }
{ hdr "APP --backend cuda --no-progress, order old new new old"
  for a in traffic structure sugarscape wa-tor game-of-life; do for s in old new new old; do run $a $s; done; done
  for s in old new; do echo "=== traffic profile $s"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=/tmp/b-$s/cubin timeout 60 /tmp/b-$s/bin/traffic --backend cuda --no-progress 2>&1 | grep -E 'create_car|Car__|^Car '; done
  for s in old new; do echo "=== structure profile $s"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=/tmp/b-$s/cubin timeout 60 /tmp/b-$s/bin/structure --backend cuda --no-progress 2>&1 | grep -E 'dynasoar_do' | head -4; done
} > $OUT/quiet-ab.txt 2>&1
cat $OUT/quiet-ab.txt
OUT_SAVE=$OUT
OUT=/tmp/t timeout 330 bash gpu-bundle/run.sh tests > /tmp/tests.log 2>&1; echo "tests rc=$?"
OUT=$OUT_SAVE
cp /tmp/t/summary.txt $OUT/gpu-tests-582da07.txt; grep -v PASS /tmp/t/summary.txt | tail -6
