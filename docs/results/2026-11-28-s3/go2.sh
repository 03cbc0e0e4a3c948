#!/usr/bin/env bash
# Call 2 (2026-11-28, third session): two variants of stocks, each keeping the block as a note
# when its reservation got no slot for the stock (an empty stock): v2a stocks slots of active
# blocks and of the blocks it opens (PTX b77e7b1581919fed), v2b only of the blocks it opens
# (PTX 1beaaac734d65b72); both assembled under the bundle's digest (scripts/cubin-variant.py
# --as cdad7039c0d8c823) and run by the bundle of 8930652 (base). DSL only, order base v2a v2b
# v2b v2a base; Barnes-Hut once per side (60 s limit); per-kernel times of the Game of Life.
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
{ for s in base v2a v2b v2b v2a base; do
    for app in game-of-life wa-tor traffic generation sugarscape structure; do side $s $app; done
  done
  for s in base v2a v2b; do LIMIT=60 side $s barnes-hut; done
} > $OUT/stock-v2-ab.txt 2>&1
grep -E "^===|total_us" $OUT/stock-v2-ab.txt | sed -E 's/(total_us=[0-9]+).*(fingerprint=[0-9a-f]+|checksum=[-0-9.e]+).*/\1 \2/' | cut -c1-160
for s in base v2a v2b; do echo "=== $s game-of-life (profile)"
  DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$(dir $s) timeout 60 $B/bin/game-of-life --backend cuda --no-progress 2>&1 | head -14
done > $OUT/stock-v2-gol-profile.txt 2>&1
cat $OUT/stock-v2-gol-profile.txt | cut -c1-150
