#!/usr/bin/env bash
# Call 3 (2026-11-30, sixteenth session): the GPU suite on the bundle of main 081b4d7
# (make_new_each's out-of-memory report for a lane asking past MAX_EACH; ptxas gave every entry
# of the models the registers and spills of 5665586); then the Game of Life and generation at
# their default sizes against the bundle of 5665586 (base, gpu-bundle/old), order base new new base.
set -u
OUT_SAVE=$OUT
OUT=/tmp/t bash gpu-bundle/run.sh tests > /tmp/tests.log 2>&1; echo "tests rc=$?"
OUT=$OUT_SAVE
cp /tmp/t/summary.txt $OUT/gpu-tests-081b4d7.txt; grep -v PASS /tmp/t/summary.txt | tail -6
export DYNASOAR_DATA=$PWD/gpu-bundle/data
for side in old new; do
  d=/tmp/b-$side; rm -rf $d; mkdir -p $d
  if [[ $side == old ]]; then p=gpu-bundle/old/payload.tar.xz; else p=gpu-bundle/payload.tar.xz; fi
  xz -dc $p | tar xf - -C $d
done
run() { local app=$1 side=$2; shift 2; local d=/tmp/b-new; [[ $side == base ]] && d=/tmp/b-old
  printf '%s %s %s ' $app $side "$*"; DYNASOAR_CUBIN_DIR=$d/cubin $d/bin/$app --backend cuda --no-progress "$@" 2>&1 | grep '^app=' | grep -o 'steps=[0-9]*\|total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; echo; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base bundle $(cat gpu-bundle/old/COMMIT), new bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s16/go3.sh (APP --backend cuda --no-progress, order base new new base)"
  for a in game-of-life generation; do for s in base new new base; do run $a $s; done; done
} > $OUT/final-ab.txt 2>&1
cat $OUT/final-ab.txt
