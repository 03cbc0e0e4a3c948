#!/usr/bin/env bash
# Call 5 (2026-11-27, seventh session): the last-block table's key, on 5a49450's bundle:
# cur = per (multiprocessor, warp slot), as landed; key3 = per multiprocessor and group of 8
# warp slots (models PTX c8f52e46e7888085); key6 = per multiprocessor (ed6cbffe9f4b77b3);
# nolast = no table (DYNASOAR_ALLOCATOR_VARIANT=nolast). Variants by their models cubin.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
N=/tmp/bundle-new; mkdir -p $N; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
export DYNASOAR_DATA=$PWD/gpu-bundle/data
for k in key3 key6; do mkdir -p /tmp/cubin-$k; cp $N/cubin/* /tmp/cubin-$k/; cp gpu-bundle/extra/$k/*.cubin /tmp/cubin-$k/; done
side() { local s=$1; shift; echo "=== $1 $s"
  case $s in
    cur) DYNASOAR_CUBIN_DIR=$N/cubin "$N/bin/$@" --backend cuda --no-progress 2>&1 ;;
    key3|key6) DYNASOAR_CUBIN_DIR=/tmp/cubin-$s "$N/bin/$@" --backend cuda --no-progress 2>&1 ;;
    nolast) DYNASOAR_ALLOCATOR_VARIANT=nolast DYNASOAR_CUBIN_DIR=$N/cubin "$N/bin/$@" --backend cuda --no-progress 2>&1 ;;
  esac; }
APPS="wa-tor game-of-life traffic generation sugarscape"
{ for app in $APPS; do for s in cur key3 key6 nolast; do side $s $app; done; done
  for app in $APPS; do for s in nolast key6 key3 cur; do side $s $app; done; done
  for s in cur key3 key6 nolast; do side $s barnes-hut; done
} > $OUT/key-ab.txt 2>&1
grep -E "^===|total_us" $OUT/key-ab.txt | sed -E 's/.*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+|checksum=[-0-9.e]+).*/\1 \2/' | paste - -
