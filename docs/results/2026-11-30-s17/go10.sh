#!/usr/bin/env bash
# Call 10 (2026-11-30, seventeenth session): a search that found no active block searches
# again, twice, before its leader opens a block (73c30fc): its bundle (new) against that of
# 805f0c4 (old), order old new new old (Barnes-Hut old new), traffic profiled on both; then the
# GPU suite on the new bundle.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
for side in old new; do
  d=/tmp/b-$side; rm -rf $d; mkdir -p $d
  if [[ $side == old ]]; then p=gpu-bundle/old/payload.tar.xz; else p=gpu-bundle/payload.tar.xz; fi
  xz -dc $p | tar xf - -C $d
done
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: old bundle $(cat gpu-bundle/old/COMMIT), new bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s17/go10.sh ($1)"; }
run() { local app=$1 side=$2; shift 2
  printf '%s %s ' $app $side; DYNASOAR_CUBIN_DIR=/tmp/b-$side/cubin /tmp/b-$side/bin/$app --backend cuda --no-progress "$@" 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; echo; }
{ hdr "APP --backend cuda --no-progress, order old new new old (Barnes-Hut old new)"
  for a in traffic game-of-life generation wa-tor sugarscape; do for s in old new new old; do run $a $s; done; done
  for s in old new; do run barnes-hut $s; done
  for s in old new; do echo "=== traffic profile $s"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=/tmp/b-$s/cubin /tmp/b-$s/bin/traffic --backend cuda --no-progress 2>&1 | grep -E 'create_car|Car__|^Car '; done
} > $OUT/retry-ab.txt 2>&1
cat $OUT/retry-ab.txt
OUT_SAVE=$OUT
OUT=/tmp/t bash gpu-bundle/run.sh tests > /tmp/tests.log 2>&1; echo "tests rc=$?"
OUT=$OUT_SAVE
cp /tmp/t/summary.txt $OUT/gpu-tests-73c30fc.txt; grep -v PASS /tmp/t/summary.txt | tail -6
