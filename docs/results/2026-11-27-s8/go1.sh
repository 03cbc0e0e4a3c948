#!/usr/bin/env bash
# Call 1 (2026-11-27, eighth session): how Barnes-Hut's tree-node density evolves over a run,
# with the default search and with first-fit (noshift, noshift+nolast); a5b78e8's bundle.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
N=/tmp/bundle; mkdir -p $N; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
export DYNASOAR_CUBIN_DIR=$N/cubin
B=$N/bin/barnes-hut
{ for v in default noshift noshift+nolast; do for steps in 1 30 300 1000; do
    echo "=== barnes-hut --steps $steps $v"
    if [ $steps = 1000 ]; then export DYNASOAR_PROFILE=1; else unset DYNASOAR_PROFILE; fi
    DYNASOAR_ALLOCATOR_VARIANT=$v $B --backend cuda --no-progress --steps $steps 2>&1
  done; done
} > $OUT/bh-density-time.txt 2>&1
grep -E "^===|total_us" $OUT/bh-density-time.txt | sed -E 's/.*(total_us=[0-9]+).*(nodes=[0-9]+).*(tree_node_blocks=[0-9]+ tree_node_slots=[0-9]+).*(checksum=[-0-9.]+).*/\1 \2 \3 \4/' | paste - -
grep -iE "compute_force|insert|summarize" $OUT/bh-density-time.txt | head -30
