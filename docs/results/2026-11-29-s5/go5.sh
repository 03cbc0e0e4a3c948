#!/usr/bin/env bash
# Call 5 (2026-11-29, fifth session), bundle of 7b639fd: 'bar' (variant-bar.diff: a CTA barrier
# before each block of the dense walk, so that a thread block's warps walk the bodies together
# and share what L1 holds) against main; n-body, 1,000 steps at 8,000-24,000 bodies, and at the
# default size; order main bar bar main. Plus bar with 512-thread blocks (XLT=512, nbody-xlt).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B /tmp/v
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/bar.tar.xz | tar xf - -C /tmp/v
xz -dc gpu-bundle/extra/nbody-xlt.xz > /tmp/nbody-xlt; chmod +x /tmp/nbody-xlt
dir() { case $1 in main) echo $B/cubin ;; *) echo /tmp/v/$1 ;; esac; }
nb() { local s=$1 t=$2; shift 2; echo "=== $s $t $*"; XLT=$t DYNASOAR_CUBIN_DIR=$(dir $s) timeout 60 /tmp/nbody-xlt --backend cuda --no-progress "$@" 2>&1 | grep -E "^app=|rror"; }
{ for n in 8000 16000 20000 24000; do for s in main bar bar main; do nb $s 256 --bodies $n --steps 1000; done; nb bar 512 --bodies $n --steps 1000; done
  for s in main bar bar main; do nb $s 256; done; } > $OUT/bar-ab.txt 2>&1
grep -E "^===|^app=" $OUT/bar-ab.txt | sed -E 's/^(app=[a-z-]+).*(total_us=[0-9]+).*(checksum=[0-9.]+).*/\1 \2 \3/' | paste - -
