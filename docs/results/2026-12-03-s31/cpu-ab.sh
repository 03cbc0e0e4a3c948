#!/usr/bin/env bash
# The Game of Life on the CPU backend, one worker: the grid of packed handles (new, HEAD:
# release binary of target/) against base, the binary that scripts/gpu-ab.sh last built in
# ../dynasoar-ab-target-base (02f6729, the grid of handles, for cpu-gol-packed-ab.txt; cf2f8fc,
# the packed grid with prepares of unknown effects, for cpu-gol-effects-ab.txt), utm.pgm for 100
# steps, in the order base new new base, twice. Run on the development machine.
set -u
export DYNASOAR_DATA=${DYNASOAR_DATA:-$PWD/gpu-bundle/data}
echo "machine: development machine ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, no GPU)"
echo "commit: base $(git -C ../dynasoar-ab-base rev-parse --short HEAD), new $(git rev-parse --short HEAD)${NOTE:+ ($NOTE)}"
echo "command: bash docs/results/2026-12-03-s31/cpu-ab.sh (game-of-life --backend cpu --cpu-threads 1 --no-progress --impl dynasoar --steps 100)"
for r in 0 1; do for s in base new new base; do
  B=target/release/game-of-life; [[ $s == base ]] && B=../dynasoar-ab-target-base/release/game-of-life
  printf '%s ' $s; timeout 300 $B --backend cpu --cpu-threads 1 --no-progress --impl dynasoar --steps 100 2>&1 \
    | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[^ ]*' | tr '\n' ' '; echo
done; done
