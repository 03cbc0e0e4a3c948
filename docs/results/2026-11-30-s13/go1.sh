#!/usr/bin/env bash
# Call 1: the bundle of a567b50 (base, gpu-bundle/old) against this session's bundle (new: a
# do-all's threads take a listed block's objects by rank, alternating ends by block index),
# seven apps at their default sizes, order base new new base; per-kernel profiles of both sides.
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
  echo "command: bash docs/results/2026-11-30-s13/go1.sh"
  for a in structure generation game-of-life wa-tor sugarscape traffic barnes-hut; do for s in base new new base; do run $a $s; done; done
} > $OUT/packed-ab.txt 2>&1
cat $OUT/packed-ab.txt
for side in base new; do
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  d=/tmp/b-$side; [[ $side == base ]] && d=/tmp/b-old
  echo "commit: $side bundle $(cat $( [[ $side == base ]] && echo gpu-bundle/old/COMMIT || echo gpu-bundle/COMMIT)) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s13/go1.sh (DYNASOAR_PROFILE=1 APP --backend cuda --no-progress)"
  for a in structure generation game-of-life wa-tor sugarscape; do
    echo "=== $a"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$d/cubin $d/bin/$a --backend cuda --no-progress 2>&1 | grep -v "^device time"
  done
} > $OUT/packed-profile-$side.txt 2>&1
done
grep -E "===|^dynasoar_do" $OUT/packed-profile-new.txt | head -40
