#!/usr/bin/env bash
# Call 6: the bundle of a567b50 (base, gpu-bundle/old) against the bundle of 8aecc46 (new: a
# launch that frees objects of a class and creates none keeps the class's list right; only the
# classes such launches free note their entries in their listings), six apps
# at their default sizes, order base new new base; per-kernel profiles of structure and
# Sugarscape on the new side; structure and Sugarscape with --compare (new side); then the GPU
# suite on the new bundle.
set -u
export DYNASOAR_DATA=gpu-bundle/data
for side in old new; do
  d=/tmp/b-$side; mkdir -p $d
  if [[ $side == old ]]; then p=gpu-bundle/old/payload.tar.xz; else p=gpu-bundle/payload.tar.xz; fi
  [[ -d $d/bin ]] || xz -dc $p | tar xf - -C $d
done
run() { local d=/tmp/b-$2; [[ $2 == base ]] && d=/tmp/b-old
  printf '%s %s ' $1 $2; DYNASOAR_CUBIN_DIR=$d/cubin $d/bin/$1 --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base bundle $(cat gpu-bundle/old/COMMIT), new bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s13/go6.sh"
  for a in structure sugarscape generation game-of-life wa-tor traffic; do for s in base new new base; do run $a $s; done; done
} > $OUT/keep-ab.txt 2>&1
cat $OUT/keep-ab.txt
for side in new; do
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  d=/tmp/b-$side; [[ $side == base ]] && d=/tmp/b-old
  echo "commit: $side bundle $(cat $( [[ $side == base ]] && echo gpu-bundle/old/COMMIT || echo gpu-bundle/COMMIT)) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s13/go6.sh (DYNASOAR_PROFILE=1 APP --backend cuda --no-progress)"
  for a in structure sugarscape; do
    echo "=== $a"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$d/cubin $d/bin/$a --backend cuda --no-progress 2>&1 | grep -v "^device time"
  done
} > $OUT/keep-profile-$side.txt 2>&1
done
grep -E "===|enumerate|compute_force|Node__update|age_and" $OUT/keep-profile-new.txt
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: new bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s13/go6.sh (APP --backend cuda --no-progress --compare)"
  for a in structure sugarscape; do echo "=== $a"; DYNASOAR_CUBIN_DIR=/tmp/b-new/cubin /tmp/b-new/bin/$a --backend cuda --no-progress --compare 2>&1 | grep -v "^device time"; done
} > $OUT/keep-compare.txt 2>&1
grep -E "===|^dynasoar|^soa|^aos" $OUT/keep-compare.txt
OUT=/tmp/t bash gpu-bundle/run.sh tests > /dev/null 2>&1; echo "tests rc=$?"
cp /tmp/t/summary.txt $OUT/gpu-tests-summary.txt 2>/dev/null
grep -E "FAIL|steps" /tmp/t/summary.txt | tail -8
