# dynasoar-bench apps: the DynaSOAr paper's Figures 10-12 (every app on DynaSOAr, every general
# allocator and its SOA baseline; the largest size within a heap; Wa-Tor per step), every run
# checked against its SOA baseline (a wrong result fails the step), results under
# $OUT/bench/apps. A device call of its own: on an H200 on 2026-11-26 the default plan did not
# finish in 330 s, most of it in slow allocators' Game of Life runs killed by the per-run limit.
# BENCH_FULL=1 runs the paper's sizes (hours); BENCH_APPS_ARGS replaces the default arguments.
if [[ -x "$HERE/bin/dynasoar-bench" ]]; then
  B="$HERE/bin/dynasoar-bench"
  BD="$OUT/bench"
  mkdir -p "$BD/apps"
  if [[ ${BENCH_FULL:-0} == 1 ]]; then
    apps_default="--full" apps_limit=86400
  else
    # Every app on every allocator for 20 steps; Figure 11 on Wa-Tor in a 256 MiB heap; a run
    # is killed (status timeout) after 15 s.
    apps_default="--steps 20 --fig11-apps wa-tor --fig11-probes 6 --heap-mib 256 --timeout-s 15"
    apps_limit=560
  fi
  step "dynasoar-bench apps" bash -c \
    "timeout $apps_limit '$B' apps --backend cuda --quiet --out '$BD/apps' ${BENCH_APPS_ARGS:-$apps_default} > '$BD/apps.jsonl'"
  {
    f="$BD/apps.jsonl"
    if [[ -s $f ]]; then
      counts=$(grep -o '"status":"[a-z]*"' "$f" | sort | uniq -c | awk '{printf "%s %s, ", $2, $1}' | tr -d '"' | sed 's/status://g; s/, $//')
      echo "dynasoar-bench apps: $(grep -c '^{' "$f") records${counts:+ ($counts)}"
      grep -h 'largest size that ran' "$f" \
        | sed -E 's/.*"allocator":"([^"]*)".*"size":([0-9]+).*"app":"([^"]*)".*/  fig11 \3 \1: \2/'
      [[ -s "$BD/apps/apps-summary.txt" ]] && cat "$BD/apps/apps-summary.txt"
    else
      echo "dynasoar-bench apps: no output"
    fi
  } >> "$SUMMARY.tables"
fi
