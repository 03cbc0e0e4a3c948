#!/usr/bin/env bash
# Call 9 (2026-11-29, fifth session), bundle of 7b639fd: the leaders open a new block after losing the race for active blocks L times in a row.
# l2, l8: DEFAULT_LOSSES_BEFORE_NEW_BLOCK 0 (never, the paper's loop) -> 2, 8 (variant-l2.diff, variant-l8.diff);
# models cubins under the bundle's digest. The allocating apps, order main l2 l8 l8 l2 main;
# then traffic profiled on each (create_car's time).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B /tmp/v
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/losses.tar.xz | tar xf - -C /tmp/v
dir() { case $1 in main) echo $B/cubin ;; *) echo /tmp/v/$1 ;; esac; }
app() { local s=$1 a=$2; shift 2; echo "=== $s $a $*"; DYNASOAR_DATA=gpu-bundle/data DYNASOAR_CUBIN_DIR=$(dir $s) timeout 60 $B/bin/$a --backend cuda --no-progress "$@" 2>&1 | grep -E "^app=|rror|create_car|Car__|share"; }
{ for a in traffic wa-tor game-of-life generation sugarscape structure; do for s in main l2 l8 l8 l2 main; do app $s $a; done; done
  for s in main l2 l8; do DYNASOAR_PROFILE=1 app $s traffic; done; } > $OUT/losses-ab.txt 2>&1
grep -E "^===|^app=" $OUT/losses-ab.txt | sed -E 's/^(app=[a-z-]+).*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2 \3/' | paste - - | head -36
grep -E "^===|create_car" $OUT/losses-ab.txt | tail -6
