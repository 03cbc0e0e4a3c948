#!/usr/bin/env bash
# Call 4: the CPU backend on the GPU machine's 16 cores (no GPU used): Wa-Tor and the Game of
# Life at 2048 x 2048 for 20 steps on 1, 2, 4, 8 and 16 workers against the plain sequential
# version, the bundle of a567b50 (main's code), rounds interleaved; every fingerprint checked
# against the sequential version's.
set -u
B=/tmp/b-old; mkdir -p $B; [[ -d $B/bin ]] || xz -dc gpu-bundle/old/payload.tar.xz | tar xf - -C $B
W="--width 2048 --height 2048 --steps 20"; G="--pattern random:2048x2048 --steps 20"
fp() { sed -n 's/.*fingerprint=\([0-9a-f]*\).*/\1/p'; }
{ echo "# machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs online, $(free -g | awk '/Mem:/ {print $2}') GiB (the GPU machine; no GPU used)"
  echo "# commit: bundle $(cat gpu-bundle/old/COMMIT) (release binaries)"
  echo "# command: bash docs/results/2026-11-30-s13/go4.sh (sequential wa-tor|game-of-life ... --sequential-only; APP ... --backend cpu --cpu-threads T --no-progress)"
  want_w=$($B/bin/sequential wa-tor $W --sequential-only | grep -m1 '^app=' | fp)
  want_g=$($B/bin/sequential game-of-life $G --sequential-only | grep -m1 '^app=' | fp)
  echo "# sequential fingerprints: wa-tor $want_w, game-of-life $want_g"
  for r in 1 2; do
    for t in 1 2 4 8 16; do
      echo "r$r seq wa-tor $($B/bin/sequential wa-tor $W --sequential-only | grep -m1 '^app=')"
      echo "r$r seq game-of-life $($B/bin/sequential game-of-life $G --sequential-only | grep -m1 '^app=')"
      l=$($B/bin/wa-tor $W --backend cpu --cpu-threads $t --no-progress 2>&1 | grep -m1 '^app='); echo "r$r t$t wa-tor $l"
      [[ $(echo "$l" | fp) == $want_w ]] || echo "WRONG fingerprint: wa-tor t$t"
      l=$($B/bin/game-of-life $G --backend cpu --cpu-threads $t --no-progress 2>&1 | grep -m1 '^app='); echo "r$r t$t game-of-life $l"
      [[ $(echo "$l" | fp) == $want_g ]] || echo "WRONG fingerprint: game-of-life t$t"
    done
  done
} > $OUT/cpu-scaling-16core.txt 2>&1
python3 - $OUT/cpu-scaling-16core.txt <<'PY' | tee -a $OUT/cpu-scaling-16core.txt
import re, sys, collections
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r"r\d (\S+) (\S+) app=.*total_us=(\d+)", line)
    if m: d[(m[1], m[2])].append(int(m[3]) / 1e6)
print("\nworkers   app            runs (s, total_us)      min / sequential min")
for app in ("wa-tor", "game-of-life"):
    s = min(d[("seq", app)])
    print(f"{'seq':8}  {app:13}  {', '.join(f'{x:.3f}' for x in d[('seq', app)][:2]):22}  1.00")
    for t in (1, 2, 4, 8, 16):
        v = d[(f"t{t}", app)]
        print(f"{t:<8}  {app:13}  {', '.join(f'{x:.3f}' for x in v):22}  {min(v) / s:.2f}")
PY
grep -c WRONG $OUT/cpu-scaling-16core.txt
