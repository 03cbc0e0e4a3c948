#!/usr/bin/env bash
# Call 6 (2026-11-28, second session): the register cap of Wa-Tor's and the Game of Life's
# heaps (80 in examples/apps/build.rs, measured before the last-block tables and the cap on
# block openings) against 64, 72, 96 and none: the bundle of 8930652's binaries with its models
# PTX (cdad7039c0d8c823) assembled by scripts/cubin-variant.py --cap OceanHeap__=N --cap
# GolHeap__=N (gpu-bundle/extra/capN; cap0: no cap). Order base 64 72 96 0, then reversed.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B
[[ -x $B/bin/traffic ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_DATA=$B/data
[[ -d $B/data ]] || export DYNASOAR_DATA=$PWD/gpu-bundle/data
side() { local s=$1; shift; echo "=== $s $*"
  case $s in base) C=$B/cubin ;; *) C=$PWD/gpu-bundle/extra/$s ;; esac
  DYNASOAR_CUBIN_DIR=$C timeout 60 "$B/bin/$1" --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in base cap64 cap72 cap96 cap0 cap0 cap96 cap72 cap64 base; do
    side $s wa-tor; side $s game-of-life
  done
} > $OUT/caps-ab.txt 2>&1
grep -E "^===|total_us" $OUT/caps-ab.txt | sed -E 's/.*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2/' | paste - - | cut -c1-120
