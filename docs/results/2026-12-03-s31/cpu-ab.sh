#!/usr/bin/env bash
# The Game of Life on the CPU backend, one worker: the grid of packed handles (new, ad921b0:
# release binary of target/) against the grid of handles (base, 02f6729: the binary that
# scripts/gpu-ab.sh built in ../dynasoar-ab-target-base), utm.pgm for 100 steps, in the order
# base new new base, twice. Run on the development machine.
set -u
export DYNASOAR_DATA=${DYNASOAR_DATA:-$PWD/gpu-bundle/data}
echo "machine: development machine ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, no GPU)"
echo "commit: base 02f6729, new $(git rev-parse --short HEAD) (code of 2f4d695)"
echo "command: bash docs/results/2026-12-03-s31/cpu-ab.sh (game-of-life --backend cpu --cpu-threads 1 --no-progress --impl dynasoar --steps 100)"
for r in 0 1; do for s in base new new base; do
  B=target/release/game-of-life; [[ $s == base ]] && B=../dynasoar-ab-target-base/release/game-of-life
  printf '%s ' $s; timeout 300 $B --backend cpu --cpu-threads 1 --no-progress --impl dynasoar --steps 100 2>&1 \
    | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[^ ]*' | tr '\n' ' '; echo
done; done
