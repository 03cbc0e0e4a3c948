#!/usr/bin/env bash
# Call 4 (2026-11-28, fourth session). The bundle of db034f5 (base) against byblock: a sparse
# device_reduce walk (not `dense`) splits the class's blocks among the lanes (lane k visits
# every slot of the blocks whose index is k mod L) instead of each block's slots
# (variant-byblock.diff, PTX 550173081a540ae4 assembled under the bundle's digest
# 94c6a29ffcec441f; GPU only, so the CPU backend's order differs: a timing experiment).
# Collision DSL, order base byblock byblock base; per-kernel times of byblock.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B
[[ -x $B/bin/traffic ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_DATA=$B/data
[[ -d $B/data ]] || export DYNASOAR_DATA=$PWD/gpu-bundle/data
dir() { case $1 in base) echo $B/cubin ;; *) echo $PWD/gpu-bundle/extra/$1 ;; esac; }
side() { local s=$1; shift; echo "=== $s $*"
  DYNASOAR_CUBIN_DIR=$(dir $s) timeout 120 "$B/bin/$1" --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in base byblock byblock base; do side $s collision; done; } > $OUT/byblock-ab.txt 2>&1
grep -E "^===|total_us" $OUT/byblock-ab.txt | sed -E 's/(total_us=[0-9]+).*(checksum=[-0-9.e]+).*/\1 \2/'
DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$(dir byblock) timeout 60 $B/bin/collision --backend cuda --no-progress \
  > $OUT/collision-profile-byblock.txt 2>&1
head -6 $OUT/collision-profile-byblock.txt
