#!/usr/bin/env bash
# Call 3 (2026-11-27, seventh session): Barnes-Hut with the last-block tables (slower in call
# 2), the order reversed, the nolast variant, and per-kernel profiles; n-body and collision.
# Sides as in go2.sh.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
A=/tmp/bundle-base; N=/tmp/bundle-new; mkdir -p $A $N
xz -dc gpu-bundle-base/payload.tar.xz | tar xf - -C $A
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
Q=/tmp/cubin-acq; mkdir -p $Q; cp $N/cubin/* $Q/; cp gpu-bundle/extra/acq/*.cubin $Q/
side() { local s=$1; shift; echo "=== $1 $s"
  case $s in
    base) DYNASOAR_CUBIN_DIR=$A/cubin "$A/bin/$@" --backend cuda --no-progress 2>&1 ;;
    new) DYNASOAR_CUBIN_DIR=$N/cubin "$N/bin/$@" --backend cuda --no-progress 2>&1 ;;
    acq) DYNASOAR_CUBIN_DIR=$Q "$N/bin/$@" --backend cuda --no-progress 2>&1 ;;
    nolast) DYNASOAR_ALLOCATOR_VARIANT=nolast DYNASOAR_CUBIN_DIR=$N/cubin "$N/bin/$@" --backend cuda --no-progress 2>&1 ;;
  esac; }
{ for s in acq new base nolast; do side $s barnes-hut; done
  for s in base acq; do DYNASOAR_PROFILE=1 side $s barnes-hut --steps 1000; done
  DYNASOAR_PROFILE=1 DYNASOAR_ALLOCATOR_VARIANT=nolast side acq barnes-hut --steps 1000
  for s in base acq acq base; do side $s nbody; side $s collision; done
} > $OUT/call3.txt 2>&1
grep -E "^===|total_us" $OUT/call3.txt | sed -E 's/.*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+|checksum=[-0-9.e]+).*/\1 \2/' | paste - - 
grep -E "^===|BodyNode__compute|BodyNode__insert|TreeNode__summarize|enumerate" $OUT/call3.txt | head -40
