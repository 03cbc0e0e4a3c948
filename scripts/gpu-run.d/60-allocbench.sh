# dynasoar-bench (issue 8): the survey's synthetic tests, malloc/free register counts and the
# graph / kd-tree workloads, results under $OUT/bench/{synthetic,registers,workloads}; the
# paper's Figures 10-12 are 70-figures.sh (mode `figures`, a device call of their own).
# The default sizes fit about 7 minutes on one H100/H200 (each part has its own `timeout`, so
# a slow allocator costs its part, not the session); BENCH_FULL=1 runs the papers' sizes
# (hours: one device call is not enough). BENCH_SYNTHETIC_ARGS / BENCH_WORKLOADS_ARGS replace
# the default arguments of each part.
if [[ -x "$HERE/bin/dynasoar-bench" ]]; then
  B="$HERE/bin/dynasoar-bench"
  BD="$OUT/bench"
  mkdir -p "$BD/synthetic" "$BD/registers" "$BD/workloads"
  if [[ ${BENCH_FULL:-0} == 1 ]]; then
    syn_default="" syn_limit=86400
    wl_default="--graph-vertices 65536,262144,1048576 --kd-prims 16384,65536,262144 --runs 5" wl_limit=86400
  else
    # A fraction of the survey's sweep: both thread counts, scaling up to 2^16 threads.
    syn_default="--threads 10000,100000 --max-threads-log2 16 --runs 3 --heap-mib 1024 --oom-heap-mib 512 --frag-rounds 20"
    # On an H200 on 2026-11-26 these did not finish in 150 s (300 of 308 records written).
    syn_limit=240
    # The graph (64Ki vertices) and kd-tree (16Ki triangles) workloads: on an H200 the graph
    # tests of 64Ki and 256Ki vertices alone took about 150 s over the 21 allocators.
    wl_default="--graph-vertices 65536 --kd-prims 16384" wl_limit=180
  fi
  step "dynasoar-bench synthetic" bash -c \
    "timeout $syn_limit '$B' synthetic --backend cuda --quiet --out '$BD/synthetic' ${BENCH_SYNTHETIC_ARGS:-$syn_default} > '$BD/synthetic.jsonl'"
  step "dynasoar-bench registers" bash -c \
    "timeout 60 '$B' registers --out '$BD/registers' > '$BD/registers.jsonl'"
  step "dynasoar-bench workloads" bash -c \
    "timeout $wl_limit '$B' workloads --backend cuda --quiet --out '$BD/workloads' ${BENCH_WORKLOADS_ARGS:-$wl_default} > '$BD/workloads.jsonl'"
  # The short summary: measurements by status per part and the register table.
  {
    echo "dynasoar-bench (files in $BD):"
    for part in synthetic registers workloads; do
      f="$BD/$part.jsonl"
      [[ -s $f ]] || { echo "  $part: no output"; continue; }
      counts=$(grep -o '"status":"[a-z]*"' "$f" | sort | uniq -c | awk '{printf "%s %s, ", $2, $1}' | tr -d '"' | sed 's/status://g; s/, $//')
      echo "  $part: $(grep -c '^{' "$f") records${counts:+ ($counts)}"
    done
    [[ -s "$BD/registers.jsonl" ]] && sed -n '/^$/,$p' "$BD/registers.jsonl" | head -40
  } >> "$SUMMARY.tables"
fi
