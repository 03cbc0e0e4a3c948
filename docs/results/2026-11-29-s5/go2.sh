#!/usr/bin/env bash
# Call 2 (2026-11-29, fifth session), bundle of 7b639fd (models PTX 3edbce6ed92d9c01).
# Upper bound of the dense walk's header loads: 'nohdr' (a models cubin whose dense walk reads
# no block header and takes every slot as an object; right only where every block is full)
# against main, n-body at 8,000, 16,000 and 19,968 bodies (125, 250 and 312 full blocks of 64),
# 1,000 steps; order main nohdr nohdr main. Plus the SOA baseline at each size.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B /tmp/v
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/nohdr.tar.xz | tar xf - -C /tmp/v
dir() { case $1 in main) echo $B/cubin ;; *) echo /tmp/v/$1 ;; esac; }
nb() { local s=$1; shift; echo "=== $s $*"; DYNASOAR_CUBIN_DIR=$(dir $s) timeout 60 $B/bin/nbody --backend cuda --no-progress "$@" 2>&1 | grep -E "^app=|rror"; }
{ for n in 8000 16000 19968; do for s in main nohdr nohdr main; do nb $s --bodies $n --steps 1000; done; nb main --bodies $n --steps 1000 --impl soa; done; } > $OUT/nohdr-ab.txt 2>&1
grep -E "^===|^app=" $OUT/nohdr-ab.txt | sed -E 's/^(app=[a-z-]+).*(total_us=[0-9]+).*(checksum=[0-9.]+).*/\1 \2 \3/' | paste - -
