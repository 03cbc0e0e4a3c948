#!/usr/bin/env bash
# Call 1 (2026-11-30, sixteenth session): the bundle of main 3daaf84 (base, gpu-bundle/old; its
# device code is 3294564's) against the bundle of make_new_each (new: the Game of Life's and
# generation's new cells get all their candidates in one allocation round). The Game of Life
# and generation at their default sizes and at the launch-overhead step's 64 x 64 (2,000
# steps), order base new new base; per-kernel profiles of both sides; the GPU suite on the new
# bundle; and the litter test against a models cubin whose hand-out ignores where a lane's
# objects start in a grant (mutation: the test must fail).
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
for side in old new; do
  d=/tmp/b-$side; mkdir -p $d
  if [[ $side == old ]]; then p=gpu-bundle/old/payload.tar.xz; else p=gpu-bundle/payload.tar.xz; fi
  [[ -d $d/bin ]] || xz -dc $p | tar xf - -C $d
done
run() { local app=$1 side=$2; shift 2; local d=/tmp/b-new; [[ $side == base ]] && d=/tmp/b-old
  printf '%s %s %s ' $app $side "$*"; DYNASOAR_CUBIN_DIR=$d/cubin $d/bin/$app --backend cuda --no-progress "$@" 2>&1 | grep '^app=' | grep -o 'steps=[0-9]*\|total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; echo; }
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base bundle $(cat gpu-bundle/old/COMMIT), new bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s16/go1.sh ($1)"; }
{ hdr "APP --backend cuda --no-progress [ARGS], order base new new base"
  for a in game-of-life generation; do
    for s in base new new base; do run $a $s; done
    for s in base new new base; do run $a $s --pattern random:64x64 --steps 2000; done
  done
} > $OUT/each-ab.txt 2>&1
cat $OUT/each-ab.txt
{ hdr "DYNASOAR_PROFILE=1 APP --backend cuda --no-progress, base then new"
  for a in game-of-life generation; do for s in base new; do
    d=/tmp/b-new; [[ $s == base ]] && d=/tmp/b-old
    echo "=== $a $s"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$d/cubin $d/bin/$a --backend cuda --no-progress 2>&1 | grep -v "^device time"
  done; done
} > $OUT/each-profile.txt 2>&1
grep -E "===|update|^app=" $OUT/each-profile.txt | cut -c1-110
OUT_SAVE=$OUT
OUT=/tmp/t bash gpu-bundle/run.sh tests > /tmp/tests.log 2>&1; echo "tests rc=$?"
OUT=$OUT_SAVE
cp /tmp/t/summary.txt $OUT/gpu-tests.txt; grep -v PASS /tmp/t/summary.txt | tail -6
# The mutation: the bundle's cubins with the models cubin replaced.
M=/tmp/mut-cubin; rm -rf $M; cp -r /tmp/dynasoar-bundle/cubin $M; cp gpu-bundle/extra/mut/*.cubin $M/
{ hdr "DYNASOAR_CUBIN_DIR=<bundle's cubins, models cubin mutated> tests/dsl litters_on_gpu"
  DYNASOAR_REQUIRE_GPU=1 DYNASOAR_CUBIN_DIR=$M timeout 120 /tmp/dynasoar-bundle/tests/dsl litters_on_gpu 2>&1 | tail -15
  echo "rc=${PIPESTATUS[0]} (a failure is what the mutation must cause)"
} > $OUT/litters-mutation.txt 2>&1
tail -5 $OUT/litters-mutation.txt
