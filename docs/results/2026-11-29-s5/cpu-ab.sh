#!/usr/bin/env bash
# CPU backend checks (2026-11-29, fifth session), on the development machine, one worker thread:
# Wa-Tor and the Game of Life at 2048 x 2048 for 20 steps, 'base' (4449e2b's binaries),
# 'plain' (variant-plainrmw.diff) and 'thp' (base with GLIBC_TUNABLES=glibc.malloc.hugetlb=1:
# the heap and buffers in transparent huge pages, checked in /proc/PID/smaps_rollup), against
# sequential Rust; rounds interleave the sides. A fingerprint unlike the sequential one fails.
# usage: cpu-ab.sh BASE_DIR PLAIN_DIR ROUNDS
set -u
B=$1 P=$2 R=${3:-3}
S="--width 2048 --height 2048 --steps 20"; G="--pattern random:2048x2048 --steps 20"
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; $(uname -sr); THP $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
line() { grep -m1 '^app=' | sed -E 's/.*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2/'; }
ws=$($B/sequential wa-tor $S --sequential-only 2>/dev/null | line); gs=$($B/sequential game-of-life $G --sequential-only 2>/dev/null | line)
echo "sequential wa-tor $ws"; echo "sequential game-of-life $gs"
fail=0
check() { [[ ${2##*fingerprint=} == "${3##*fingerprint=}" ]] || { echo "WRONG: $1"; fail=1; }; }
for r in $(seq 1 $R); do
  for side in base plain thp; do
    d=$B; env=""; [[ $side == plain ]] && d=$P; [[ $side == thp ]] && env="GLIBC_TUNABLES=glibc.malloc.hugetlb=1"
    w=$(env $env $d/wa-tor $S --no-progress --backend cpu --cpu-threads 1 2>/dev/null | line); echo "r$r $side wa-tor $w"; check "$side wa-tor" "$w" "$ws"
    g=$(env $env $d/game-of-life $G --no-progress --backend cpu --cpu-threads 1 2>/dev/null | line); echo "r$r $side game-of-life $g"; check "$side gol" "$g" "$gs"
  done
done
exit $fail
