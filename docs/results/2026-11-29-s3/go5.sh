#!/usr/bin/env bash
# Call 7 (2026-11-29, third session). n-body's dense walk loading the next block's objects (its
# header words) before the last position of this block instead of at the next block's start
# (ahead7: variant-ahead7.diff, the models cubin assembled under the bundle's digest
# 604641a9616de2cf) against the bundle of 60bdddb (main). Order main ahead7 ahead7 main main ahead7.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B /tmp/v
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/ahead7.tar.xz | tar xf - -C /tmp/v
dir() { case $1 in main) echo $B/cubin ;; *) echo /tmp/v/$1 ;; esac; }
side() { local s=$1; shift; echo "=== $s $*"
  DYNASOAR_CUBIN_DIR=$(dir $s) timeout ${LIMIT:-60} $B/bin/$1 --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in main ahead7 ahead7 main main ahead7; do side $s nbody; done; } > $OUT/ahead7-ab.txt 2>&1
grep -E "^===|^app=" $OUT/ahead7-ab.txt | sed -E 's/^(app=[a-z-]+).*(total_us=[0-9]+).* (checksum=[^ ]+).*/\1 \2 \3/' | paste - -
