#!/usr/bin/env bash
# Runner of the GPU bundle (copied to gpu-bundle/run.sh by scripts/gpu-bundle.sh). Runs on a
# machine with CUDA and no Rust toolchain.
#
#     bash gpu-bundle/run.sh [all|tests|storms|bench|apps|allocbench|figures|enumeration]
#
# tests: every test binary but the allocator storms (GPU tests required) and the app checks;
# storms: the general allocators' storm tests (tests/malloc); bench: sanitizer,
# microbenchmarks; apps: the apps at their default sizes with their baselines; allocbench:
# `dynasoar-bench` synthetic tests, register counts and workloads (about 7 minutes); figures:
# `dynasoar-bench apps`, the paper's Figures 10-12, every run checked against its SOA baseline
# (at most 8.5 minutes, see run.d/70-figures.sh; BENCH_FULL=1 for the papers' sizes), results under $OUT/bench;
# enumeration: `dynasoar-bench enumeration`, the paper's Figure 13(b) (flat and hierarchical
# enumeration against heap size and fill, every listing checked), results under
# $OUT/bench/enumeration. Each part fits one device call (10 minutes); `all` runs them in turn.
set -uo pipefail
MODE=${1:-all}
SRC=$(cd "$(dirname "$0")" && pwd)
# Unpack the payload (binaries) next to the scripts, in a writable place.
HERE=${BUNDLE_DIR:-/tmp/dynasoar-bundle}
# xz where the machine has it, else Python's lzma (the same format).
unpack() {
  if command -v xz >/dev/null; then
    xz -dc "$1" | tar xf - -C "$2"
  else
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1], "r:xz").extractall(sys.argv[2])' "$1" "$2"
  fi
}
rm -rf "$HERE" && mkdir -p "$HERE" && cp -r "$SRC"/. "$HERE"/ && unpack "$HERE/payload.tar.xz" "$HERE" || {
  echo "run.sh: cannot unpack $SRC/payload.tar.xz into $HERE" >&2; exit 1; }
OUT=${OUT:-$HERE/out}
mkdir -p "$OUT"
LOG="$OUT/gpu-suite.log"
SUMMARY="$OUT/summary.txt"
BENCH="$OUT/bench.jsonl"
: > "$LOG"; : > "$SUMMARY"; : > "$BENCH"; : > "$SUMMARY.tables"
export DYNASOAR_REQUIRE_GPU=1
export DYNASOAR_DATA="$HERE/data"
# Prebuilt sm_90 cubins of the embedded PTX (see gpu-bundle.sh): no JIT on H100/H200.
export DYNASOAR_CUBIN_DIR="$HERE/cubin"
# Tests that run a binary of the workspace find it here (cargo's paths are not on this machine).
export DYNASOAR_BIN_DIR="$HERE/bin"

rows=()
row() { # name, exit status, milliseconds: one line of the summary table (status in $STATUS)
  STATUS=PASS; [[ $2 -ne 0 ]] && STATUS="FAIL(rc=$2)"
  rows+=("$(printf '%-46s %-12s %7d.%01ds' "$1" "$STATUS" $(($3 / 1000)) $(($3 % 1000 / 100)))")
}
step() { # name, command...
  local name=$1; shift
  local t0=$(date +%s%N)
  echo "=== $name: $*" >> "$LOG"
  "$@" >> "$LOG" 2>&1
  local rc=$?
  local dt=$(( ($(date +%s%N) - t0) / 1000000 ))
  row "$name" $rc $dt
  echo "=== $name: $STATUS in ${dt} ms" >> "$LOG"
  return $rc
}

{
  echo "machine: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
  echo "mode: $MODE   date: $(date -u +%FT%TZ)   commit: $(cat "$SRC/COMMIT" 2>/dev/null || echo unknown)"
  echo "command: bash gpu-bundle/run.sh $MODE"
} | tee -a "$LOG" >> "$SUMMARY"

want() { [[ $MODE == all || $MODE == "$1" ]]; }

# 1. Every test binary but the allocator storms, GPU tests required, and the smoke app.
if want tests; then
  # TESTS=glob picks test binaries (e.g. TESTS='dsl'), TEST_ARGS adds arguments (e.g.
  # '--skip every_allocator'); each binary gets TEST_TIMEOUT seconds, so one hang cannot eat
  # the whole device call. Nothing else runs on the GPU meanwhile: tests that time themselves
  # or size pools for a whole GPU fail when they share it.
  for t in "$HERE"/tests/${TESTS:-*}; do
    [[ $(basename "$t") == malloc ]] && continue
    # The ptx test only assembles PTX with ptxas (no GPU needed), which CI does too; here it
    # took 167 s of a 600 s device call. TESTS=ptx still runs it.
    [[ $(basename "$t") == ptx && -z ${TESTS:-} ]] && continue
    # shellcheck disable=SC2086 # TEST_ARGS is a list of words
    step "test $(basename "$t")" timeout "${TEST_TIMEOUT:-240}" "$t" --test-threads=1 ${TEST_ARGS:-}
  done
  if [[ -x "$HERE/bin/smoke" ]]; then
    step "app smoke (cuda)" bash -c "'$HERE/bin/smoke' --backend cuda --len 16777216 | tee -a '$BENCH'"
  fi
fi

# 2. The general allocators' storms (tests/malloc), a device call of their own: CUDA's malloc
# and the page-based virtualized Ouroboros take minutes each, so they run in three concurrent
# parts, each with its own log (round times shown) and time limit (MALLOC_TIMEOUT).
if want storms && [[ -x "$HERE/tests/malloc" ]]; then
  malloc_parts=()
  part() { # name, filter arguments...
    local name=$1; shift
    ( s=$(date +%s%N); timeout "${MALLOC_TIMEOUT:-540}" "$HERE/tests/malloc" "$@" --test-threads=1 \
        --nocapture > "$OUT/test-malloc-$name.log" 2>&1
      echo "$? $(( ($(date +%s%N) - s) / 1000000 ))" > "$OUT/test-malloc-$name.rc" ) &
    malloc_parts+=("$name")
  }
  part system system::
  part ouro-p ouro_va_p ouro_vl_p
  part rest --skip system:: --skip ouro_va_p --skip ouro_vl_p
  wait
  for name in "${malloc_parts[@]}"; do
    read -r rc ms < "$OUT/test-malloc-$name.rc"
    cat "$OUT/test-malloc-$name.log" >> "$LOG"
    row "test malloc ($name)" "$rc" "$ms"
  done
fi

# 3. Further steps live in run.d/NN-name.sh: below 50 they belong to `bench`, from 50 on to
# `apps`; NN-allocbench.sh, NN-figures.sh and NN-enumeration.sh belong to `allocbench`,
# `figures` and `enumeration` (each its own device call).
for extra in "$HERE"/run.d/*.sh; do
  n=$(basename "$extra" | cut -c1-2)
  if [[ $extra == *-allocbench.sh ]]; then
    want allocbench && source "$extra"
  elif [[ $extra == *-figures.sh ]]; then
    want figures && source "$extra"
  elif [[ $extra == *-enumeration.sh ]]; then
    want enumeration && source "$extra"
  elif { [[ $n < 50 ]] && want bench; } || { [[ ! $n < 50 ]] && want apps; }; then
    source "$extra"
  fi
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
