#!/usr/bin/env bash
# Call 4: register caps of allocating kernels (cubin variants of 3089de4's models PTX
# b9463cd61096e923, the same binaries): traffic and Sugarscape, three rounds interleaved.
set -u
B=/tmp/dynasoar-bundle
[[ -x $B/bin/traffic ]] || { mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B; }
V=/tmp/variants4; rm -rf $V; mkdir -p $V; xz -dc gpu-bundle/extra/variants4.tar.xz | tar xf - -C $V
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
for v in T48 A48 C48 M80 M64; do mkdir -p /tmp/side-$v; cp -r $B/cubin/. /tmp/side-$v/; cp $V/$v/*.cubin /tmp/side-$v/; done
side() { local s=$1; shift; echo "=== $* $s"
  if [[ $s == base ]]; then DYNASOAR_CUBIN_DIR=$B/cubin "$B/bin/$@" --backend cuda --no-progress 2>&1
  else DYNASOAR_CUBIN_DIR=/tmp/side-$s "$B/bin/$@" --backend cuda --no-progress 2>&1; fi; }
{ for r in 1 2 3; do for s in base T48 A48 C48; do side $s traffic; done; done
  for r in 1 2 3; do for s in base M80 M64; do side $s sugarscape; done; done
} > $OUT/caps4-ab.txt 2>&1
grep -E "^===|total_us" $OUT/caps4-ab.txt | sed -E 's/.*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2/' | paste - - > $OUT/caps4-summary.txt
cat $OUT/caps4-summary.txt
