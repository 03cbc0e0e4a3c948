#!/usr/bin/env bash
# Call 1 (2026-11-29, fifth session), bundle of 7b639fd (models PTX 3edbce6ed92d9c01).
# 1. n-body's DSL and SOA baseline at 8,000-24,000 bodies, 1,000 steps: does the ratio grow
#    with the bodies' footprint in L1?
# 2. The dense walk reading a block's header words only where the class's active bitmap says
#    the block has room ('hdr'; a full block's slots are all its objects), at the cap of 48 and
#    of 56, against main at 48 and 56 (order main hdr hdr56 main56 main56 hdr56 hdr main).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B /tmp/v
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/hdr.tar.xz | tar xf - -C /tmp/v
dir() { case $1 in main) echo $B/cubin ;; *) echo /tmp/v/$1 ;; esac; }
nb() { local s=$1; shift; echo "=== $s $*"; DYNASOAR_CUBIN_DIR=$(dir $s) timeout 60 $B/bin/nbody --backend cuda --no-progress "$@" 2>&1 | grep -E "^app=|rror"; }
{ for n in 8000 12000 16000 20000 24000; do for i in dynasoar soa dynasoar soa; do nb main --bodies $n --steps 1000 --impl $i; done; done; } > $OUT/nbody-sizes.txt 2>&1
grep -E "^app=" $OUT/nbody-sizes.txt | sed -E 's/^app=nbody backend=cuda allocator=([a-z]+) size=([0-9]+).*(total_us=[0-9]+).*/\1 \2 \3/'
{ for s in main hdr hdr56 main56 main56 hdr56 hdr main; do nb $s; done; } > $OUT/hdr-ab.txt 2>&1
grep -E "^===|^app=" $OUT/hdr-ab.txt | sed -E 's/^(app=[a-z-]+).*(total_us=[0-9]+).*(checksum=[0-9.]+).*/\1 \2 \3/' | paste - -
