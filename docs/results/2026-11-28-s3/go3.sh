#!/usr/bin/env bash
# Call 3 (2026-11-28, third session): the note's guessed slot. The bundle of 8930652 (base)
# against the same binaries with the working tree's models cubin (guess: the last-block note
# also holds a slot that was free when it was written, and a lone lane's leader reserves it
# with its OR without loading the block's bitmap first; every retry of a reservation chooses
# from the bitmap its OR returned instead of loading it; PTX 564ce86c0460c03f, assembled under
# the bundle's digest by scripts/cubin-variant.py --as cdad7039c0d8c823). DSL only, order base
# guess guess base; Barnes-Hut once per side; per-kernel times of the Game of Life and Wa-Tor;
# the GPU tests of the allocator and the apps on guess.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B
[[ -x $B/bin/traffic ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_DATA=$B/data
[[ -d $B/data ]] || export DYNASOAR_DATA=$PWD/gpu-bundle/data
dir() { case $1 in base) echo $B/cubin ;; *) echo $PWD/gpu-bundle/extra/$1 ;; esac; }
side() { local s=$1; shift; echo "=== $s $*"
  DYNASOAR_CUBIN_DIR=$(dir $s) timeout ${LIMIT:-120} "$B/bin/$1" --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in base guess guess base; do
    for app in game-of-life wa-tor traffic generation sugarscape structure; do side $s $app; done
  done
  for s in base guess; do LIMIT=60 side $s barnes-hut; done
} > $OUT/guess-ab.txt 2>&1
grep -E "^===|total_us" $OUT/guess-ab.txt | sed -E 's/(total_us=[0-9]+).*(fingerprint=[0-9a-f]+|checksum=[-0-9.e]+).*/\1 \2/' | cut -c1-160
for s in base guess; do for app in game-of-life wa-tor; do echo "=== $s $app (profile)"
  DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$(dir $s) timeout 60 $B/bin/$app --backend cuda --no-progress 2>&1 | grep -E "update|kernel  |^app="
done; done > $OUT/guess-profile.txt 2>&1
cut -c1-110 $OUT/guess-profile.txt
for t in allocator dsl game_of_life structure wator traffic sugarscape generation barnes_hut; do
  echo "=== test $t (guess)"; DYNASOAR_REQUIRE_GPU=1 DYNASOAR_CUBIN_DIR=$(dir guess) timeout 150 $B/tests/$t 2>&1 | tail -4
done > $OUT/guess-tests.txt 2>&1
grep -E "^===|test result|panicked|FAIL" $OUT/guess-tests.txt
