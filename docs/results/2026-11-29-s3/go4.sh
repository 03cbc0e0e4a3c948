#!/usr/bin/env bash
# Call 6 (2026-11-29, third session): SASS of n-body's force kernels (DSL and SOA baseline) from
# the bundle of 60bdddb's models cubin, and n-body's per-kernel times (DYNASOAR_PROFILE=1).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
C=$B/cubin/604641a9616de2cf.sm_90.cubin
for k in dynasoar_do__NbodyHeap__Body__compute_force nbody_soa_force; do
  cuobjdump -sass -fun $k $C > $OUT/sass-$k.txt 2>&1 || nvdisasm -fun $(cuobjdump -elf $C | grep -m1 $k) $C > $OUT/sass-$k.txt 2>&1
  wc -l $OUT/sass-$k.txt
done
DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$B/cubin timeout 60 $B/bin/nbody --backend cuda --no-progress > $OUT/nbody-profile-60bdddb.txt 2>&1
grep -E "launches|Body|app=|enumer|rank" $OUT/nbody-profile-60bdddb.txt | cut -c1-160
