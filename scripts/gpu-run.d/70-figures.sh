# dynasoar-bench apps: the DynaSOAr paper's Figures 10-12 as the paper defines them, every run
# checked against its app's SOA baseline (a wrong result fails the step), results under
# $OUT/bench/apps:
# - Figure 10: every app on DynaSOAr, 15 general allocators and both baselines (SOA, AOS), 20
#   steps; the run without enumeration, the enumeration apart;
# - Figure 12 (before 11, which takes the time left): Wa-Tor at the paper's 2048 x 2560 for 500
#   steps on DynaSOAr and five allocators, (b) the sweep of oceans in a 512 MiB heap, (d)
#   DynaSOAr's default, NoCoal and NoShift in a 4 GiB heap (NoShift does not fit the app's
#   default heap; it took 27 s on an H200);
# - Figure 11: every app on DynaSOAr and the paper's three allocators, the largest size within one
#   heap per app (4 x the AOS baseline's memory at its Figure 10 size), relative to the AOS
#   baseline's (whose memory is measured on the CPU), six searches at a time.
# Figure 10 leaves out the allocators that took most of the time on an H200 (xmalloc, circular,
# circular-fused and the three page-based Ouroboros: 174 of 326 s, mostly timeouts); add them
# with BENCH_APPS_ARGS. A run is killed after 8 s (status timeout; the variants after 120 s); no
# run starts after 470 s (`--budget-s`: the rest are `skipped` and every file is still written),
# and the step stops at 500 s. This plan took 327 s on an H200 (2026-11-26, a calibration run:
# docs/results/figures-calibration.md): Figure 10 163 s, Figure 12 78 s, Figure 11 86 s.
# BENCH_FULL=1 runs the paper's sizes (hours); BENCH_APPS_ARGS replaces the default arguments.
if [[ -x "$HERE/bin/dynasoar-bench" ]]; then
  B="$HERE/bin/dynasoar-bench"
  BD="$OUT/bench"
  mkdir -p "$BD/apps"
  if [[ ${BENCH_FULL:-0} == 1 ]]; then
    apps_default="--full --jobs 6" apps_limit=86400
  else
    fig10=cuda,atomic,aw,bitmap,scatter,halloc,fdg,circular-multi,circular-fused-multi,buddy,ouro-s-c,ouro-va-c,ouro-vl-c,kma,bulk
    apps_default="--allocators $fig10 --steps 20 --fig12-steps 500 \
      --fig11-allocators bitmap,scatter,halloc --fig12-allocators bitmap,scatter,halloc,buddy,kma \
      --sweep-allocators bitmap,scatter,halloc --jobs 6 --timeout-s 8 --budget-s 470"
    apps_limit=500
  fi
  step "dynasoar-bench apps (figures 10-12)" bash -c \
    "timeout $apps_limit '$B' apps --backend cuda --quiet --out '$BD/apps' ${BENCH_APPS_ARGS:-$apps_default} > '$BD/apps.jsonl'"
  {
    f="$BD/apps.jsonl"
    if [[ -s $f ]]; then
      counts=$(grep -o '"status":"[a-z]*"' "$f" | sort | uniq -c | awk '{printf "%s %s, ", $2, $1}' | tr -d '"' | sed 's/status://g; s/, $//')
      echo "dynasoar-bench apps: $(grep -c '^{' "$f") records${counts:+ ($counts)}"
      # The summary (apps-summary.txt) has Figure 10's, 11's and 12's tables, and every wrong run.
      [[ -s "$BD/apps/apps-summary.txt" ]] && sed -n '/^Figure 10/,$p' "$BD/apps/apps-summary.txt"
    else
      echo "dynasoar-bench apps: no output"
    fi
  } >> "$SUMMARY.tables"
fi
