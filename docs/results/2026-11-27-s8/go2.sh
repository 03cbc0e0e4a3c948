#!/usr/bin/env bash
# Call 2 (2026-11-27, eighth session): a search that misses (a set bit above an emptied
# container) searches again instead of opening a block. base = a5b78e8's bundle (models PTX
# 9e56cb84b2890ea0); miss = the same binaries with the models cubin assembled from the
# working tree's PTX 60373ca0ba00a55f (extra/miss). Barnes-Hut's tree-node density and time,
# then the allocating apps, two rounds, the second in reverse order.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
N=/tmp/bundle; mkdir -p $N; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
export DYNASOAR_DATA=$PWD/gpu-bundle/data
Q=/tmp/cubin-miss; mkdir -p $Q; cp gpu-bundle/extra/miss/*.cubin $Q/
md5sum $N/cubin/* $Q/* > $OUT/cubins.txt
side() { local s=$1; shift; echo "=== $* $s"
  case $s in
    base) DYNASOAR_CUBIN_DIR=$N/cubin "$N/bin/$1" --backend cuda --no-progress "${@:2}" 2>&1 ;;
    miss) DYNASOAR_CUBIN_DIR=$Q "$N/bin/$1" --backend cuda --no-progress "${@:2}" 2>&1 ;;
  esac; }
{ for steps in 1 30 300 1000; do for s in base miss; do side $s barnes-hut --steps $steps; done; done
  for s in miss base; do DYNASOAR_PROFILE=1 side $s barnes-hut --steps 1000; done
} > $OUT/bh-miss.txt 2>&1
grep -E "^===|total_us" $OUT/bh-miss.txt | sed -E 's/.*(total_us=[0-9]+).*(nodes=[0-9]+).*(tree_node_blocks=[0-9]+ tree_node_slots=[0-9]+).*(checksum=[-0-9.]+).*/\1 \2 \3 \4/' | paste - -
grep -E "compute_force" $OUT/bh-miss.txt
APPS="wa-tor game-of-life traffic generation structure sugarscape"
{ for app in $APPS; do for s in base miss; do side $s $app; done; done
  for app in $APPS; do for s in miss base; do side $s $app; done; done
  for s in base miss miss base; do side $s barnes-hut; done
} > $OUT/miss-ab.txt 2>&1
grep -E "^===|total_us" $OUT/miss-ab.txt | sed -E 's/.*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+|checksum=[-0-9.]+).*/\1 \2/' | paste - - | tee $OUT/miss-summary.txt
