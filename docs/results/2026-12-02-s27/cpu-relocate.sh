#!/usr/bin/env bash
# CPU side of the relocation bound (2026-12-02, twenty-seventh session): branch relocate-bound's
# wa-tor on the CPU backend, one worker, 1024 x 1024, 40 steps, per-launch means.
set -u
B=./target/release/wa-tor
A="--backend cpu --cpu-threads 1 --width 1024 --height 1024 --steps 40 --no-progress"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores (development VM, shared with builds); no GPU"
echo "commit: branch relocate-bound on main 3897f2c (docs/results/2026-12-02-s27/variant-relocate.diff)"
echo "command: bash docs/results/2026-12-02-s27/cpu-relocate.sh (WATOR_RELOCATE=R WATOR_ORDER=1 DYNASOAR_PROFILE=1 wa-tor $A)"
for r in 0 10 0 10; do
  echo "== R=$r"
  WATOR_RELOCATE=$r WATOR_ORDER=1 DYNASOAR_PROFILE=1 $B $A 2>&1 | grep -E "^order|^dynasoar_do|^app=" | tr -s ' '
done
