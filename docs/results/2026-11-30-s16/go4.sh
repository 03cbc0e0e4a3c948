#!/usr/bin/env bash
# Call 4 (2026-11-30, sixteenth session): register caps of the Game of Life's updates after
# make_new_each (Alive::update now holds the whole allocator inline): the bundle of main 081b4d7
# (base: the apps' cap of 64 for the heap) against the same binaries with a models cubin whose
# Alive::update is capped at 56, 72, 80 or not at all (a56, a72, a80, a0), or whose
# Candidate::update is capped at 72 (c72): scripts/cubin-variant.py --ptx <the bundle's models
# PTX> --cap PATTERN=N. Order: base, each variant, each variant again in reverse, base.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-new; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
for v in a56 a72 a80 a0 c72; do d=/tmp/cap-$v; rm -rf $d; cp -r $B/cubin $d; cp gpu-bundle/extra/$v/*.cubin $d/; done
run() { local side=$1 d=$B/cubin; [[ $side != base ]] && d=/tmp/cap-$side
  printf '%s ' $side; DYNASOAR_CUBIN_DIR=$d $B/bin/game-of-life --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; echo; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90), variant cubins of its models PTX"
  echo "command: bash docs/results/2026-11-30-s16/go4.sh (game-of-life --backend cuda --no-progress)"
  for s in base a56 a72 a80 a0 c72 c72 a0 a80 a72 a56 base; do run $s; done
} > $OUT/gol-caps-ab.txt 2>&1
cat $OUT/gol-caps-ab.txt
