#!/usr/bin/env bash
# Call 5 (2026-11-27, eighth session): policies for a leader whose search of the active bitmap
# found nothing. a5b78e8's binaries with models cubins: base (a5b78e8, 9e56cb84b2890ea0: open a
# block at once, the paper's), miss (retry missed searches, unbounded, 60373ca0ba00a55f), m4
# (retry at most 4 misses, 40ed6c978e902f41), d (a missed search picks another bit one level up,
# up to 3 times, then opens; ca0883f2e491304c), e8 / e32 (paper's misses, at most 8 / 32 blocks
# opening at once instead of 128; cb3f7bed436bbd90, 5c0fa69f3f8186c0). Two rounds, reversed.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
N=/tmp/bundle; mkdir -p $N; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
export DYNASOAR_DATA=$PWD/gpu-bundle/data
for v in miss m4 d e8 e32; do mkdir -p /tmp/c-$v; cp gpu-bundle/extra/$v/*.cubin /tmp/c-$v/; done
md5sum $N/cubin/* /tmp/c-*/* > $OUT/cubins.txt
side() { local s=$1; shift; echo "=== $* $s"
  local dir=$N/cubin; [ $s != base ] && dir=/tmp/c-$s
  DYNASOAR_CUBIN_DIR=$dir "$N/bin/$1" --backend cuda --no-progress "${@:2}" 2>&1; }
SIDES="base miss m4 d e8 e32"; REV="e32 e8 d m4 miss base"
{ for s in $SIDES; do for app in traffic game-of-life wa-tor generation; do side $s $app; done; side $s barnes-hut --steps 1000; done
  for s in $REV; do for app in traffic game-of-life wa-tor generation; do side $s $app; done; side $s barnes-hut --steps 1000; done
} > $OUT/policies-ab.txt 2>&1
grep -E "^===|total_us" $OUT/policies-ab.txt | sed -E 's/.*(total_us=[0-9]+).*(tree_node_blocks=[0-9]+).*(checksum=[-0-9.]+).*/\1 \2 \3/; s/.*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2/' | paste - - | tee $OUT/policies-summary.txt
