#!/usr/bin/env bash
# Call 8 (2026-11-29, fifth session), bundle of 7b639fd: the allocator's back-off.
# b1: Backoff::MAX_NS 2048 -> 256 (variant-b1.diff); b2: FREE_RETRIES 4 -> 64 (variant-b2.diff);
# models cubins under the bundle's digest. The allocating apps, order main b1 b2 b2 b1 main;
# then traffic profiled on each (create_car's time).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B /tmp/v
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/bo.tar.xz | tar xf - -C /tmp/v
dir() { case $1 in main) echo $B/cubin ;; *) echo /tmp/v/$1 ;; esac; }
app() { local s=$1 a=$2; shift 2; echo "=== $s $a $*"; DYNASOAR_DATA=gpu-bundle/data DYNASOAR_CUBIN_DIR=$(dir $s) timeout 60 $B/bin/$a --backend cuda --no-progress "$@" 2>&1 | grep -E "^app=|rror|create_car|Car__|share"; }
{ for a in traffic wa-tor game-of-life generation sugarscape structure; do for s in main b1 b2 b2 b1 main; do app $s $a; done; done
  for s in main b1 b2; do DYNASOAR_PROFILE=1 app $s traffic; done; } > $OUT/backoff-ab.txt 2>&1
grep -E "^===|^app=" $OUT/backoff-ab.txt | sed -E 's/^(app=[a-z-]+).*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2 \3/' | paste - - | head -36
grep -E "^===|create_car" $OUT/backoff-ab.txt | tail -6
