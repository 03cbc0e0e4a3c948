#!/usr/bin/env bash
# Call 5 (2026-11-28, fourth session). The bundle of db034f5 (base: n-body's compute_force and
# collision's compute_force and prepare_merge capped at 48 registers) against the same PTX with
# those three kernels capped at 40, 56 and 64 (scripts/cubin-variant.py --as 94c6a29ffcec441f
# --cap ...=N): with full blocks since db034f5, is 48 still the cap? n-body and collision DSL,
# order base c40 c56 c64 c64 c56 c40 base.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B
[[ -x $B/bin/traffic ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_DATA=$B/data
[[ -d $B/data ]] || export DYNASOAR_DATA=$PWD/gpu-bundle/data
dir() { case $1 in base) echo $B/cubin ;; *) echo $PWD/gpu-bundle/extra/$1 ;; esac; }
side() { local s=$1; shift; echo "=== $s $*"
  DYNASOAR_CUBIN_DIR=$(dir $s) timeout 120 "$B/bin/$1" --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in base c40 c56 c64 c64 c56 c40 base; do side $s nbody; side $s collision; done; } > $OUT/caps-ab.txt 2>&1
grep -E "^===|total_us" $OUT/caps-ab.txt | sed -E 's/(total_us=[0-9]+).*(checksum=[-0-9.e]+).*/\1 \2/'
