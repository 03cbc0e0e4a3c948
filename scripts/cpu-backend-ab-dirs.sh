#!/usr/bin/env bash
# The CPU backend against plain sequential Rust (issue 27), A/B of two builds on this machine
# without a GPU bundle (see scripts/cpu-backend-ab.sh for the bundle's form): two directories
# of built binaries (base, new), each with game-of-life, wa-tor and sequential (base's
# sequential is the reference); rounds interleave the sides, and the side that goes first
# alternates; every fingerprint is checked against the sequential version's. Appends to LOG,
# with a median table (total_us, the steps without setup, and /usr/bin/time's user+sys).
#
#     SIZE=2048 STEPS=20 ROUNDS=3 THREADS="1 2" scripts/cpu-backend-ab-dirs.sh BASE_DIR NEW_DIR LOG
set -uo pipefail
BASE=$1 NEW=$2 LOG=$3
SIZE=${SIZE:-1024} STEPS=${STEPS:-10} ROUNDS=${ROUNDS:-3} THREADS=${THREADS:-"1 2"}
SEQ_WATOR="--width $SIZE --height $SIZE --steps $STEPS"
SEQ_GOL="--pattern random:${SIZE}x$SIZE --steps $STEPS"
TIMES=$(mktemp); trap 'rm -f "$TIMES"' EXIT
fp() { sed -n 's/.*fingerprint=\([0-9a-f]*\).*/\1/p'; }
want_w=$("$BASE/sequential" wa-tor $SEQ_WATOR --sequential-only | grep -m1 '^app=' | fp)
want_g=$("$BASE/sequential" game-of-life $SEQ_GOL --sequential-only | grep -m1 '^app=' | fp)
echo "# sequential fingerprints: wa-tor $want_w, game-of-life $want_g (size $SIZE, steps $STEPS)" >> "$LOG"
FAILED=0
run() { # label expected cmd...
  local label=$1 want=$2; shift 2
  local line t
  line=$( { /usr/bin/time -f "TIME user=%U sys=%S wall=%e" "$@" 2>"$TIMES"; } | grep -m1 '^app=')
  t=$(grep TIME "$TIMES")
  echo "$label load=$(cut -d' ' -f1 /proc/loadavg) $line $t" >> "$LOG"
  local got; got=$(echo "$line" | fp)
  if [[ -z $line || $got != "$want" ]]; then echo "WRONG: $label got '$got' want '$want'" | tee -a "$LOG"; FAILED=1; fi
}
for t in $THREADS; do
  for r in $(seq 1 "$ROUNDS"); do
    run "t$t r$r sequential wa-tor" "$want_w" "$BASE/sequential" wa-tor $SEQ_WATOR --sequential-only
    run "t$t r$r sequential game-of-life" "$want_g" "$BASE/sequential" game-of-life $SEQ_GOL --sequential-only
    # alternate which side goes first from round to round
    if (( r % 2 )); then sides="base new"; else sides="new base"; fi
    for side in $sides; do
      d=$BASE; [[ $side == new ]] && d=$NEW
      run "t$t r$r $side wa-tor" "$want_w" "$d/wa-tor" $SEQ_WATOR --no-progress --backend cpu --cpu-threads "$t"
      run "t$t r$r $side game-of-life" "$want_g" "$d/game-of-life" $SEQ_GOL --no-progress --backend cpu --cpu-threads "$t"
    done
  done
done
python3 - "$LOG" <<'PY' | tee -a "$LOG"
import sys, re, collections
runs = collections.defaultdict(list); user = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r"t(\d+) r\d+ (\S+) (\S+) load=\S+ app=.*total_us=(\d+).*TIME user=(\S+) sys=(\S+)", line)
    if m:
        runs[(int(m[1]), m[2], m[3])].append(int(m[4]) / 1e6); user[(int(m[1]), m[2], m[3])].append(float(m[5]) + float(m[6]))
med = lambda v: sorted(v)[len(v) // 2]
print("\nthreads side        app             median total_us (s)   runs                      median user+sys (s)")
for k in sorted(runs):
    t, side, app = k
    print(f"{t:7} {side:11} {app:14} {med(runs[k]):9.3f}   {', '.join(f'{x:.3f}' for x in runs[k]):32} {med(user[k]):7.2f}")
PY
exit $FAILED
