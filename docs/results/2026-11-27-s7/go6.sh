#!/usr/bin/env bash
# Call 6 (2026-11-27, seventh session): how densely Barnes-Hut's tree nodes lie with and
# without the last-block tables: the app of this commit's tree (prints the TreeNode blocks and
# slots at the end) with 5a49450's models cubin; default and nolast, two rounds, 1,000 and
# 4,000 steps.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
N=/tmp/bundle-new; mkdir -p $N; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
export DYNASOAR_CUBIN_DIR=$N/cubin
B=gpu-bundle/extra/bh/barnes-hut
{ for steps in 1000 4000; do for v in default nolast nolast default; do
    echo "=== barnes-hut --steps $steps $v"; DYNASOAR_ALLOCATOR_VARIANT=$v $B --backend cuda --no-progress --steps $steps 2>&1
  done; done
} > $OUT/bh-density.txt 2>&1
grep -E "^===|total_us" $OUT/bh-density.txt | sed -E 's/.*(total_us=[0-9]+).*(nodes=[0-9]+).*(tree_node_blocks=[0-9]+ tree_node_slots=[0-9]+).*(checksum=[-0-9.]+).*/\1 \2 \3 \4/' | paste - -
