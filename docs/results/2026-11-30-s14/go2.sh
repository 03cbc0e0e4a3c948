#!/usr/bin/env bash
# Call 2 (2026-11-30, fourteenth session): the bundle of main 289237a (base, gpu-bundle/old)
# against the bundle of 5874dd3 (new: a launch that creates objects of a class it neither frees
# nor visits keeps the class's list right, Heap::enlist; the Game of Life's and generation's
# updates declare their effects), six apps at their default sizes, order base new new base;
# per-kernel profiles of traffic, the Game of Life and generation on the new side; traffic and
# the Game of Life with --compare (new side); then the GPU suite on the new bundle.
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
  echo "command: bash docs/results/2026-11-30-s14/go2.sh"
  for a in traffic game-of-life generation structure sugarscape wa-tor; do for s in base new new base; do run $a $s; done; done
} > $OUT/enlist-ab.txt 2>&1
cat $OUT/enlist-ab.txt
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: new bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s14/go2.sh (DYNASOAR_PROFILE=1 APP --backend cuda --no-progress)"
  for a in traffic game-of-life generation; do
    echo "=== $a"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=/tmp/b-new/cubin /tmp/b-new/bin/$a --backend cuda --no-progress 2>&1 | grep -v "^device time"
  done
} > $OUT/enlist-profile.txt 2>&1
grep -E "===|^enumerate|update|create_car|^app=" $OUT/enlist-profile.txt | cut -c1-110
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: new bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s14/go2.sh (APP --backend cuda --no-progress --compare)"
  for a in traffic game-of-life; do echo "=== $a"; DYNASOAR_CUBIN_DIR=/tmp/b-new/cubin /tmp/b-new/bin/$a --backend cuda --no-progress --compare 2>&1 | grep -v "^device time"; done
} > $OUT/enlist-compare.txt 2>&1
grep -E "===|^dynasoar|^soa|^aos|ratio|x " $OUT/enlist-compare.txt | cut -c1-150
OUT=/tmp/t bash gpu-bundle/run.sh tests > /dev/null 2>&1; echo "tests rc=$?"
cp /tmp/t/summary.txt $OUT/gpu-tests-summary.txt 2>/dev/null
grep -E "FAIL|steps" /tmp/t/summary.txt | tail -8
