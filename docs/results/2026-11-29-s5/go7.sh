#!/usr/bin/env bash
# Call 7 (2026-11-29, fifth session), bundle of 7b639fd's cubin: the flat enumeration's grid.
# Binaries of d384f64 with variant-xeg.diff (the enumeration's threads capped at $XEG; unset:
# main's grid, one thread per heap block up to whole waves). An enumeration of a class that
# did not change only carries its count over, so its cost is its launch and grid.
# structure, traffic, Wa-Tor, Game of Life; order main c132 c33 c33 c132 main (c132: 33,792
# threads = 132 blocks of 256; c33: 8,448 = 33 blocks). Then structure profiled with each.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/xeg.tar.xz | tar xf - -C /tmp
export DYNASOAR_CUBIN_DIR=$B/cubin DYNASOAR_DATA=gpu-bundle/data
cap() { case $1 in main) echo "";; c132) echo 33792;; c33) echo 8448;; esac; }
app() { local s=$1 a=$2; shift 2; echo "=== $s $a $*"; XEG=$(cap $s) timeout 60 /tmp/xeg/$a --backend cuda --no-progress "$@" 2>&1 | grep -E "^app=|rror|enumerate|share"; }
{ for a in structure traffic wa-tor game-of-life; do for s in main c132 c33 c33 c132 main; do app $s $a; done; done
  for s in main c132 c33; do DYNASOAR_PROFILE=1 app $s structure; done; } > $OUT/xeg-ab.txt 2>&1
grep -E "^===|^app=" $OUT/xeg-ab.txt | sed -E 's/^(app=[a-z-]+).*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2 \3/' | paste - - | head -24
grep -E "^===|enumerate" $OUT/xeg-ab.txt | tail -20
