#!/usr/bin/env bash
# Runner of the GPU bundle (copied to gpu-bundle/run.sh by scripts/gpu-bundle.sh). Runs on a
# machine with CUDA and no Rust toolchain. Usage: bash gpu-bundle/run.sh [quick|full]
set -uo pipefail
MODE=${1:-quick}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$HERE/out}
mkdir -p "$OUT"
LOG="$OUT/gpu-suite.log"
SUMMARY="$OUT/summary.txt"
BENCH="$OUT/bench.jsonl"
: > "$LOG"; : > "$SUMMARY"; : > "$BENCH"; : > "$SUMMARY.tables"
export DYNASOAR_REQUIRE_GPU=1
export DYNASOAR_DATA="$HERE/data"

rows=()
step() { # name, command...
  local name=$1; shift
  local t0=$(date +%s%N)
  echo "=== $name: $*" >> "$LOG"
  "$@" >> "$LOG" 2>&1
  local rc=$?
  local dt=$(( ($(date +%s%N) - t0) / 1000000 ))
  local status=PASS; [[ $rc -ne 0 ]] && status="FAIL(rc=$rc)"
  rows+=("$(printf '%-46s %-12s %7d.%01ds' "$name" "$status" $((dt / 1000)) $((dt % 1000 / 100)))")
  echo "=== $name: $status in ${dt} ms" >> "$LOG"
  return $rc
}

{
  echo "machine: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
  echo "mode: $MODE   date: $(date -u +%FT%TZ)"
} | tee -a "$LOG" >> "$SUMMARY"

# 1. Every test binary, GPU tests required.
for t in "$HERE"/tests/*; do
  step "test $(basename "$t")" "$t" --test-threads=1
done

# 2. Apps: correctness checks against the CPU backend and the app's own checks.
if [[ -x "$HERE/bin/smoke" ]]; then
  step "app smoke (cuda)" bash -c "'$HERE/bin/smoke' --backend cuda --len 16777216 | tee -a '$BENCH'"
fi

# 3. Extra steps (benchmarks, sanitizer) live in run.d/*.sh, sourced in order.
for extra in "$HERE"/run.d/*.sh; do
  [[ -f "$extra" ]] && source "$extra"
done

{
  echo
  printf '%-46s %-12s %9s\n' "step" "status" "time"
  printf '%s\n' "${rows[@]}"
  fails=$(printf '%s\n' "${rows[@]}" | grep -c FAIL)
  echo "steps: ${#rows[@]}, failed: $fails"
  if [[ -s "$SUMMARY.tables" ]]; then echo; cat "$SUMMARY.tables"; fi
} >> "$SUMMARY"
cat "$SUMMARY"
