#!/usr/bin/env bash
# Call 6 (2026-11-29, fifth session), bundle of 7b639fd: the do-all loop choice per app since the
# streaming loop takes consecutive positions per warp group (7b639fd): DYNASOAR_DO_ALL=auto (the
# default), streaming (every method) and plain, Wa-Tor, the Game of Life, traffic, structure,
# Sugarscape, generation at default sizes; order auto streaming plain plain streaming auto.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_CUBIN_DIR=$B/cubin DYNASOAR_DATA=gpu-bundle/data
app() { local m=$1 a=$2; echo "=== $m $a"; DYNASOAR_DO_ALL=$m timeout 60 $B/bin/$a --backend cuda --no-progress 2>&1 | grep -E "^app=|rror"; }
{ for a in wa-tor game-of-life traffic structure sugarscape generation; do for m in auto streaming plain plain streaming auto; do app $m $a; done; done; } > $OUT/loops-ab.txt 2>&1
grep -E "^===|^app=" $OUT/loops-ab.txt | sed -E 's/^(app=[a-z-]+).*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2 \3/' | paste - -
