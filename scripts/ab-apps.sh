#!/usr/bin/env bash
# A/B of the apps between the builds that scripts/gpu-ab.sh packed (gpu-bundle/extra/ab), on
# the GPU machine: per round and app, each side in turn (so drift hits both alike), each app
# at its default size on DynaSOAr's heap. Apps named in COMPARE also run their SOA and AOS
# baselines (`--compare`, which fails the run on a wrong result); ALLOC runs one app on one
# general allocator ("app:allocator") per side. Logs and the `app=` lines go under $OUT.
#
#     ROUNDS=2 COMPARE="wa-tor traffic" ALLOC="wa-tor:bitmap" bash scripts/ab-apps.sh
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/ab-out}; mkdir -p "$OUT"
AB=/tmp/ab
bash gpu-bundle/extra/ab/run-ab.sh 'true' > /dev/null   # unpacks every side into $AB
SIDES=${SIDES:-$(ls "$AB")}
APPS=${APPS:-"nbody collision wa-tor game-of-life sugarscape structure traffic generation barnes-hut"}
export DYNASOAR_REQUIRE_GPU=1 DYNASOAR_DATA=$PWD/gpu-bundle/data
LINES=$OUT/ab-lines.txt; : > "$LINES"
{
  echo "# machine: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  for side in $SIDES; do echo "# side $side: $(cat "$AB/$side/commit" 2>/dev/null || ls "$AB/$side/cubin")"; done
} | tee "$OUT/ab-header.txt"
fails=0
run() { # side, app, log name, args...
  local side=$1 app=$2 log=$3; shift 3
  DYNASOAR_CUBIN_DIR=$AB/$side/cubin timeout 540 "$AB/$side/bin/$app" --backend cuda --no-progress "$@" \
    > "$OUT/$log" 2>&1
  local rc=$?
  [[ $rc -eq 0 ]] || { fails=$((fails + 1)); echo "FAIL rc=$rc: $side $app $*"; tail -3 "$OUT/$log"; }
  grep -h '^app=' "$OUT/$log" | sed "s/^/side=$side /" >> "$LINES"
}
for round in $(seq 1 "${ROUNDS:-1}"); do
  for app in $APPS; do
    extra=(); [[ " ${COMPARE:-} " == *" $app "* ]] && extra=(--compare)
    for side in $SIDES; do run "$side" "$app" "$side-$app-r$round.txt" "${extra[@]}"; done
  done
done
for pair in ${ALLOC:-}; do
  for side in $SIDES; do run "$side" "${pair%%:*}" "$side-${pair%%:*}-${pair#*:}.txt" --allocator "${pair#*:}"; done
done
echo "# side app allocator total_ms fingerprint/checksum"
awk '{s=$1; a=""; al=""; t=""; f=""; for(i=1;i<=NF;i++){split($i,kv,"="); if(kv[1]=="app")a=kv[2]; if(kv[1]=="allocator")al=kv[2]; if(kv[1]=="total_us")t=kv[2]/1000; if(kv[1]=="fingerprint"||(kv[1]=="checksum"&&f==""))f=kv[2]} printf "%-10s %-13s %-10s %10.1f %s\n", s, a, al, t, f}' "$LINES" | sed 's/^side=//'
echo "# failures: $fails"
exit $((fails > 0))
