#!/usr/bin/env bash
# Call 6 (2026-11-29, fourth session). The streaming loop's prefetch as one bulk copy into L2
# (cp.async.bulk.prefetch.L2, 128 bytes: the warp's 32 slots of the field) by lane 0 of each warp,
# D rounds ahead (variant-bulkdist.diff; models cubins assembled under the bundle's digest
# 604641a9616de2cf from PTX raised to .version 8.0 / .target sm_90): b2, b4, b8 = D 2, 4, 8
# instead of the per-lane prefetch one round ahead; b4l = D 4 and the per-lane prefetch one round
# ahead. Only classes whose warps cover one block position a round (N a multiple of 32) change.
# field-access of acc37e1 (order main b2 b4 b8 b4l b4l b8 b4 b2 main), then Sugarscape and the
# Game of Life (order main b4 b4l b4l b4 main).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B /tmp/v
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/bd.tar.xz | tar xf - -C /tmp/v
xz -dc gpu-bundle/extra/field-access-acc37e1.xz > /tmp/v/field-access-acc37e1; chmod +x /tmp/v/field-access-acc37e1
dir() { case $1 in main) echo $B/cubin ;; *) echo /tmp/v/$1 ;; esac; }
fa() { echo "=== $1 $2"; DYNASOAR_CUBIN_DIR=$(dir $1) timeout 60 $2 --backend cuda 2>&1 | grep -E "^bench=|rror|WRONG"; }
{ for s in main b2 b4 b8 b4l b4l b8 b4 b2 main; do fa $s /tmp/v/field-access-acc37e1; done; } > $OUT/bd-field.txt 2>&1
grep -E "^===|loop=default" $OUT/bd-field.txt | sed -E 's/.*(parallel_do_us=[0-9.]+).*(method_us=[0-9.]+).*(copy_us=[0-9.]+) (array_us=[0-9.]+).*(ratio_vs_copy=[0-9.]+).*(ok=[a-z]+).*/\1 \2 \3 \4 \5 \6/' | paste - -
app() { local s=$1; shift; echo "=== $s $*"; DYNASOAR_DATA=gpu-bundle/data DYNASOAR_CUBIN_DIR=$(dir $s) timeout 40 $B/bin/$1 --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in main b4 b4l b4l b4 main; do app $s sugarscape; app $s game-of-life; done; } > $OUT/bd-apps.txt 2>&1
grep -E "^===|^app=" $OUT/bd-apps.txt | sed -E 's/^(app=[a-z-]+).*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2 \3/' | paste - -
