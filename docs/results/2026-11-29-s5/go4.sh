#!/usr/bin/env bash
# Call 4 (2026-11-29, fifth session), bundle of 7b639fd (models cubin 3edbce6ed92d9c01, used by
# both sides): n-body's force kernel (a do-all with 8 lanes) launched in thread blocks of 256
# (main), 128, 64 or 512 threads. 'nbody-xlt' is main's nbody with the lanes grid's block size
# read from XLT (an experiment build, not landed). 1,000 steps at 8,000-24,000 bodies.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/nbody-xlt.xz > /tmp/nbody-xlt; chmod +x /tmp/nbody-xlt
export DYNASOAR_CUBIN_DIR=$B/cubin
nb() { local t=$1; shift; echo "=== $t $*"; XLT=$t timeout 60 /tmp/nbody-xlt --backend cuda --no-progress "$@" 2>&1 | grep -E "^app=|rror"; }
{ for n in 8000 16000 20000 24000; do for t in 256 128 64 512 512 64 128 256; do nb $t --bodies $n --steps 1000; done; done; } > $OUT/cta-ab.txt 2>&1
grep -E "^===|^app=" $OUT/cta-ab.txt | sed -E 's/^(app=[a-z-]+).*(total_us=[0-9]+).*(checksum=[0-9.]+).*/\1 \2 \3/' | paste - -
