#!/usr/bin/env bash
# Call 7 (2026-11-28): Barnes-Hut's walk stack with 4-byte entries. The bundle of b087602 (models
# PTX bc925f9ec7ef4f2a) with its cubin (base) and with a cubin of the working tree's models
# (PTX 79918f4618c1ca55: the DSL walk pushes each handle packed into 32 bits relative to the
# root's block, 320 bytes of stack instead of 640; packed). Full runs base packed packed base,
# then one run of each with DYNASOAR_PROFILE=1.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
B=/tmp/bundle; mkdir -p $B
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_DATA=$PWD/gpu-bundle/data
cubin() { case $1 in base) echo $B/cubin ;; *) echo $PWD/gpu-bundle/extra/$1 ;; esac; }
side() { local s=$1; shift; echo "=== $s $*"
  DYNASOAR_CUBIN_DIR=$(cubin $s) "$B/bin/barnes-hut" --backend cuda --no-progress "$@" 2>&1; }
{ for s in base packed packed base; do side $s; done
  for s in base packed; do DYNASOAR_PROFILE=1 side $s; done; } > $OUT/bh-packed-stack.txt 2>&1
grep -E "^===|total_us|compute_force|insert|summarize" $OUT/bh-packed-stack.txt | sed -E 's/(total_us=[0-9]+).*(checksum=[-0-9.]+)/\1 \2/' | cut -c1-170
