#!/usr/bin/env bash
# The CPU backend against plain sequential Rust (issue 27), A/B of two builds on one machine:
# Wa-Tor and the Game of Life at 2048 x 2048 for 20 steps (SIZE, STEPS), the DSL version on the CPU backend with
# T worker threads, and `sequential`'s one-core versions of the same rules. Needs the A/B payload
# of `scripts/gpu-ab.sh wa-tor game-of-life sequential` (sides under $AB after unpacking);
# runs anywhere, no GPU used.
#
#     AB_SIDES=base:<commit> scripts/gpu-ab.sh wa-tor game-of-life sequential
#     OUT=... ROUNDS=3 THREADS="1 2 4 16" bash scripts/cpu-backend-ab.sh gpu-bundle/extra/ab/ab.tar.xz
#
# Every run prints the app's result line (total_us: the steps without setup, fingerprint);
# rounds interleave the sides; the first thread count runs ROUNDS rounds, the others one. A
# fingerprint that differs from the sequential version's fails the script.
set -uo pipefail
PAYLOAD=${1:?usage: cpu-backend-ab.sh AB_PAYLOAD}
OUT=${OUT:-/tmp/cpu-ab-out}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-"1 2 4 16"}
AB=/tmp/cpu-ab
rm -rf "$AB" && mkdir -p "$AB" "$OUT"
xz -dc "$PAYLOAD" | tar xf - -C "$AB"
LOG="$OUT/cpu-backend-ab.txt"
{
  echo "# CPU backend A/B (scripts/cpu-backend-ab.sh): sides $(ls "$AB" | tr '\n' ' ')"
  echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores; $(uname -sr); date $(date -u +%FT%TZ)"
  echo "# rounds $ROUNDS at the first thread count of: $THREADS"
} > "$LOG"
SIZE=${SIZE:-2048} STEPS=${STEPS:-20}
SEQ_WATOR="--width $SIZE --height $SIZE --steps $STEPS"
SEQ_GOL="--pattern random:${SIZE}x$SIZE --steps $STEPS"
WATOR="$SEQ_WATOR --no-progress"
GOL="$SEQ_GOL --no-progress"
declare -A want
run() { # label, expected fingerprint or "", command...
  local label=$1 expect=$2; shift 2
  local line
  line=$("$@" 2>/dev/null | grep -m1 '^app=' || true)
  echo "$label $line" >> "$LOG"
  local fp=${line##*fingerprint=}; fp=${fp%% *}
  if [[ -z $line || ( -n $expect && $fp != "$expect" ) ]]; then
    echo "WRONG: $label got '${fp:-nothing}', expected '$expect'" | tee -a "$LOG"; FAILED=1
  fi
}
FAILED=0
seq_bin=$(ls -d "$AB"/*/bin | tail -1)
fp() { "$@" 2>/dev/null | grep -m1 '^app=' | sed 's/.*fingerprint=\([0-9a-f]*\).*/\1/'; }
want[wator]=$(fp "$seq_bin/sequential" wa-tor $SEQ_WATOR --sequential-only)
want[gol]=$(fp "$seq_bin/sequential" game-of-life $SEQ_GOL --sequential-only)
echo "# sequential fingerprints: wa-tor ${want[wator]}, game-of-life ${want[gol]}" >> "$LOG"
first=1
for t in $THREADS; do
  rounds=$ROUNDS; [[ $first == 1 ]] || rounds=1; first=0
  for r in $(seq 1 "$rounds"); do
    run "t$t r$r sequential wa-tor" "${want[wator]}" "$seq_bin/sequential" wa-tor $SEQ_WATOR --sequential-only
    run "t$t r$r sequential game-of-life" "${want[gol]}" "$seq_bin/sequential" game-of-life $SEQ_GOL --sequential-only
    for side in $(ls "$AB"); do
      b="$AB/$side/bin"
      run "t$t r$r $side wa-tor" "${want[wator]}" "$b/wa-tor" $WATOR --backend cpu --cpu-threads "$t"
      run "t$t r$r $side game-of-life" "${want[gol]}" "$b/game-of-life" $GOL --backend cpu --cpu-threads "$t"
    done
  done
done
# Medians per label (over rounds), seconds.
python3 - "$LOG" <<'PY' | tee -a "$LOG"
import sys, re, collections
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r"t(\d+) r\d+ (\S+) (\S+) app=.*total_us=(\d+)", line)
    if m:
        runs[(int(m[1]), m[2], m[3])].append(int(m[4]) / 1e6)
print("\nthreads side          app            median s   runs")
for (t, side, app), v in sorted(runs.items()):
    s = sorted(v)
    print(f"{t:7} {side:13} {app:14} {s[len(s) // 2]:9.3f}   {', '.join(f'{x:.3f}' for x in v)}")
PY
exit $FAILED
