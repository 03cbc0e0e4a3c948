#!/usr/bin/env bash
# Call 7 (2026-11-29, fourth session). The streaming loop with each warp group on consecutive
# list positions (variant-blocked.diff: where a warp covers one position a round, group `lead`
# takes positions lead * R .. (lead + 1) * R, R = blocks / groups rounded up, instead of every
# `step`-th position, so that a chunk's 32 entries are one coalesced load), models cubins
# assembled under the bundle's digest 604641a9616de2cf: blk (with the per-lane prefetch one
# round ahead), blkn (no prefetch). field-access of acc37e1, order main blk blkn blkn blk main;
# then Sugarscape and the Game of Life, same order.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B /tmp/v
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/blk.tar.xz | tar xf - -C /tmp/v
xz -dc gpu-bundle/extra/field-access-acc37e1.xz > /tmp/v/field-access-acc37e1; chmod +x /tmp/v/field-access-acc37e1
dir() { case $1 in main) echo $B/cubin ;; *) echo /tmp/v/$1 ;; esac; }
fa() { echo "=== $1 $2"; DYNASOAR_CUBIN_DIR=$(dir $1) timeout 60 $2 --backend cuda 2>&1 | grep -E "^bench=|rror|WRONG"; }
{ for s in main blk blkn blkn blk main; do fa $s /tmp/v/field-access-acc37e1; done; } > $OUT/blk-field.txt 2>&1
grep -E "^===|loop=default" $OUT/blk-field.txt | sed -E 's/.*(parallel_do_us=[0-9.]+).*(method_us=[0-9.]+).*(copy_us=[0-9.]+) (array_us=[0-9.]+).*(ratio_vs_copy=[0-9.]+).*(ok=[a-z]+).*/\1 \2 \3 \4 \5 \6/' | paste - -
app() { local s=$1; shift; echo "=== $s $*"; DYNASOAR_DATA=gpu-bundle/data DYNASOAR_CUBIN_DIR=$(dir $s) timeout 40 $B/bin/$1 --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in main blk blkn blkn blk main; do app $s sugarscape; app $s game-of-life; done; } > $OUT/blk-apps.txt 2>&1
grep -E "^===|^app=" $OUT/blk-apps.txt | sed -E 's/^(app=[a-z-]+).*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2 \3/' | paste - -
