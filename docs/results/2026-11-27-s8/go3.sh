#!/usr/bin/env bash
# Call 3 (2026-11-27, eighth session): how many missed searches a leader retries before it
# opens a block. base = a5b78e8's bundle (models PTX 9e56cb84b2890ea0); the same binaries with
# models cubins assembled from the working tree with MISSES_BEFORE_NEW_BLOCK = unbounded
# (miss, PTX 60373ca0ba00a55f), 1 (m1, 67b9f6b8c24b7cbe) and 4 (m4, 40ed6c978e902f41).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
N=/tmp/bundle; mkdir -p $N; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
export DYNASOAR_DATA=$PWD/gpu-bundle/data
for v in miss m1 m4; do mkdir -p /tmp/c-$v; cp gpu-bundle/extra/$v/*.cubin /tmp/c-$v/; done
md5sum $N/cubin/* /tmp/c-*/* > $OUT/cubins.txt
side() { local s=$1; shift; echo "=== $* $s"
  local dir=$N/cubin; [ $s != base ] && dir=/tmp/c-$s
  DYNASOAR_CUBIN_DIR=$dir "$N/bin/$1" --backend cuda --no-progress "${@:2}" 2>&1; }
SIDES="base miss m1 m4"; REV="m4 m1 miss base"
{ for s in $SIDES; do DYNASOAR_PROFILE=1 side $s traffic; done
  for s in $SIDES; do DYNASOAR_PROFILE=1 side $s barnes-hut --steps 1000; done
} > $OUT/profiles.txt 2>&1
grep -E "^===|total_us" $OUT/profiles.txt | sed -E 's/.*(total_us=[0-9]+).*/\1/' | paste - -
APPS="traffic game-of-life wa-tor generation sugarscape structure"
{ for app in $APPS; do for s in $SIDES; do side $s $app; done; done
  for app in $APPS; do for s in $REV; do side $s $app; done; done
  for s in m1 m4; do side $s barnes-hut; done
} > $OUT/misses-ab.txt 2>&1
grep -E "^===|total_us" $OUT/misses-ab.txt | sed -E 's/.*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+|checksum=[-0-9.]+).*/\1 \2/' | paste - - | tee $OUT/misses-summary.txt
