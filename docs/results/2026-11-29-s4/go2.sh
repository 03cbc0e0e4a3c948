#!/usr/bin/env bash
# Call 2 (2026-11-29, fourth session). (a) field-access of acc37e1 (the passes timed in a
# runtime that records no events) against the bundle's field-access of 60bdddb (events around
# every launch), same cubin. (b) The streaming loop's prefetch (variant-bulkpf.diff, models
# cubins assembled under the bundle's digest 604641a9616de2cf from PTX whose header was raised
# to .version 8.0 / .target sm_90 for cp.async.bulk): bulk1 = lane 0 of a warp prefetches the
# next round's 32 slots of the field with one cp.async.bulk.prefetch.L2 (128 bytes for a 4-byte
# field); bulkchunk = each lane prefetches its entry of the next chunk (32 rounds ahead) that
# way and no per-round prefetch; nopf = no prefetch; main = per-lane prefetch.L2 one round
# ahead. Only classes whose warps cover one block position a round (N a multiple of 32) change.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B /tmp/v
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/pf.tar.xz | tar xf - -C /tmp/v
xz -dc gpu-bundle/extra/field-access-acc37e1.xz > /tmp/v/field-access-acc37e1; chmod +x /tmp/v/field-access-acc37e1
dir() { case $1 in main) echo $B/cubin ;; *) echo /tmp/v/$1 ;; esac; }
fa() { echo "=== $1 $2"; DYNASOAR_CUBIN_DIR=$(dir $1) timeout 60 $2 --backend cuda 2>&1 | grep -E "^bench=|rror|WRONG"; }
{ for s in main main; do fa $s $B/bin/field-access; fa $s /tmp/v/field-access-acc37e1; done; } > $OUT/fa-method.txt 2>&1
grep -E "^===|^bench" $OUT/fa-method.txt | sed -E 's/.*(loop=[a-z]+).*(parallel_do_us=[0-9.]+).*(method_us=[0-9.]+).*(copy_us=[0-9.]+) (array_us=[0-9.]+).*(ratio_vs_copy=[0-9.]+).*/\1 \2 \3 \4 \5 \6/'
{ for s in main bulk1 bulkchunk nopf nopf bulkchunk bulk1 main; do fa $s /tmp/v/field-access-acc37e1; done; } > $OUT/pf-field.txt 2>&1
grep -E "^===|loop=default" $OUT/pf-field.txt | sed -E 's/.*(parallel_do_us=[0-9.]+).*(method_us=[0-9.]+).*(copy_us=[0-9.]+) (array_us=[0-9.]+).*(ratio_vs_copy=[0-9.]+).*/\1 \2 \3 \4 \5/' | paste - -
app() { local s=$1; shift; echo "=== $s $*"; DYNASOAR_DATA=gpu-bundle/data DYNASOAR_CUBIN_DIR=$(dir $s) timeout 40 $B/bin/$1 --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in main bulk1 bulkchunk nopf nopf bulkchunk bulk1 main; do app $s sugarscape; app $s game-of-life; done; } > $OUT/pf-apps.txt 2>&1
grep -E "^===|^app=" $OUT/pf-apps.txt | sed -E 's/^(app=[a-z-]+).*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2 \3/' | paste - -
