#!/usr/bin/env bash
# Call 6 (2026-11-27, eighth session): lower caps on the blocks being opened at once for
# leaders that take less than half a block, with the paper's misses (open at once) or with
# missed searches retried (unbounded). a5b78e8's binaries with models cubins: base (a5b78e8,
# 9e56cb84b2890ea0, cap 128), e8 / e4 / e2 (cap 8, 4, 2: cb3f7bed436bbd90, 604f71dad37d11e0,
# f51da7d5edf4bbb8), e8m / e4m (cap 8, 4 and misses retried: 620a937fb77db077,
# 5e4668da1cb8cc57). One round.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
N=/tmp/bundle; mkdir -p $N; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
export DYNASOAR_DATA=$PWD/gpu-bundle/data
for v in e8 e4 e2 e8m e4m; do mkdir -p /tmp/c-$v; cp gpu-bundle/extra/$v/*.cubin /tmp/c-$v/; done
md5sum $N/cubin/* /tmp/c-*/* > $OUT/cubins.txt
side() { local s=$1; shift; echo "=== $* $s"
  local dir=$N/cubin; [ $s != base ] && dir=/tmp/c-$s
  DYNASOAR_CUBIN_DIR=$dir "$N/bin/$1" --backend cuda --no-progress "${@:2}" 2>&1; }
{ for s in base e8 e4 e2 e8m e4m; do for app in traffic game-of-life wa-tor generation; do side $s $app; done; side $s barnes-hut --steps 1000; done
} > $OUT/caps-ab.txt 2>&1
grep -E "^===|total_us" $OUT/caps-ab.txt | sed -E 's/.*(total_us=[0-9]+).*(tree_node_blocks=[0-9]+).*(checksum=[-0-9.]+).*/\1 \2 \3/; s/.*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2/' | paste - - | tee $OUT/caps-summary.txt
