#!/usr/bin/env bash
# Call 3 (2026-11-29, second session). n-body's compute_force on 8 lanes, dense (main: the
# bundle of c280da6) against 32 lanes (n32: `lanes = 32`, its blocks walked by rank; n32d:
# `lanes = 32, dense`, two slot positions a lane per block), nbody.rs of c280da6 otherwise, built
# by scripts/gpu-quick.sh nbody. Order main n32 n32d n32d n32 main.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B /tmp/n32 /tmp/n32d
[[ -x $B/bin/nbody ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
for v in n32 n32d; do xz -dc gpu-bundle/extra/$v.tar.xz | tar xf - -C /tmp/$v; done
bin() { case $1 in main) echo $B/bin ;; *) echo /tmp/$1/bin ;; esac; }
dir() { case $1 in main) echo $B/cubin ;; *) echo /tmp/$1/cubin ;; esac; }
side() { local s=$1; shift; echo "=== $s $*"
  DYNASOAR_CUBIN_DIR=$(dir $s) timeout ${LIMIT:-120} "$(bin $s)/$1" --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in main n32 n32d n32d n32 main; do side $s nbody; done; } > $OUT/nbody-lanes.txt 2>&1
cut -c1-220 $OUT/nbody-lanes.txt
