#!/usr/bin/env bash
# CPU backend (2026-12-01, twentieth session), development machine, one worker thread: the Game
# of Life and Wa-Tor at 2048 x 2048 for 20 steps, 'base' (82a88c1's binaries: main before frees
# that keep their emptied blocks) against 'new' (ed916d6's), rounds interleaving the sides,
# against sequential Rust. A fingerprint unlike the sequential one fails.
# usage: cpu-keep-ab.sh BASE_DIR NEW_DIR ROUNDS
set -u
B=$1 N=$2 R=${3:-3}
S="--width 2048 --height 2048 --steps 20"; G="--pattern random:2048x2048 --steps 20"
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; $(uname -sr)"
line() { grep -m1 '^app=' | sed -E 's/.*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2/'; }
ws=$($B/sequential wa-tor $S --sequential-only 2>/dev/null | line); gs=$($B/sequential game-of-life $G --sequential-only 2>/dev/null | line)
echo "sequential wa-tor $ws"; echo "sequential game-of-life $gs"
fail=0
check() { [[ ${2##*fingerprint=} == "${3##*fingerprint=}" ]] || { echo "WRONG: $1"; fail=1; }; }
for r in $(seq 1 $R); do
  for side in base new; do
    d=$B; [[ $side == new ]] && d=$N
    g=$($d/game-of-life $G --no-progress --backend cpu --cpu-threads 1 2>/dev/null | line); echo "r$r $side game-of-life $g"; check "$side gol" "$g" "$gs"
    w=$($d/wa-tor $S --no-progress --backend cpu --cpu-threads 1 2>/dev/null | line); echo "r$r $side wa-tor $w"; check "$side wa-tor" "$w" "$ws"
  done
done
exit $fail
