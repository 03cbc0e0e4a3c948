#!/usr/bin/env bash
# Call 7: n-body's dense force kernel under other register caps (cubin variants of the final
# PTX 8bc102c422ecf345, same binaries) and on 16 lanes (its own binary and cubin), two rounds.
set -u
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
V=/tmp/variants7; rm -rf $V; mkdir -p $V; xz -dc gpu-bundle/extra/variants7.tar.xz | tar xf - -C $V
Q=/tmp/quick16; rm -rf $Q; mkdir -p $Q; xz -dc $V/l16/quick.tar.xz | tar xf - -C $Q
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
for v in cap40 cap56 cap64; do mkdir -p /tmp/side-$v; cp -r $B/cubin/. /tmp/side-$v/; cp $V/$v/*.cubin /tmp/side-$v/; done
side() { local s=$1; echo "=== nbody $s"
  case $s in
    base) DYNASOAR_CUBIN_DIR=$B/cubin $B/bin/nbody --backend cuda --no-progress 2>&1 ;;
    l16) DYNASOAR_CUBIN_DIR=$Q/cubin $Q/bin/nbody --backend cuda --no-progress 2>&1 ;;
    *) DYNASOAR_CUBIN_DIR=/tmp/side-$s $B/bin/nbody --backend cuda --no-progress 2>&1 ;;
  esac; }
{ for r in 1 2; do for s in base cap40 cap56 cap64 l16; do side $s; done; done; } > $OUT/nbody-variants.txt 2>&1
grep -E "^===|total_us" $OUT/nbody-variants.txt | sed -E 's/.*(total_us=[0-9]+).*(checksum=[0-9.]+).*/\1 \2/' | paste - -
