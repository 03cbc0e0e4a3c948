# dynasoar-bench enumeration: the DynaSOAr paper's Figure 13(b), DynaSOAr's flat and
# hierarchical (Alg. 5) enumerations against heap size (64 MiB to 8 GiB) and fill (0, 1, 10,
# 50 and 95% of the blocks in use, filled by an allocator storm), for the storm's Small and
# Huge classes, 15 timed enumerations each (CUDA events), the median reported. Every listing
# is checked (its count against the class's blocks, the hierarchical one against the flat
# one): a difference fails the step. Results under $OUT/bench/enumeration. A device call of
# its own (mode `enumeration`, also in `all`); it is sized to take well under 120 s, which a
# first run on the GPU has to confirm. BENCH_ENUM_ARGS replaces the default arguments (e.g.
# "--heap-mib 64,1024 --fills 0,50 --runs 5").
if [[ -x "$HERE/bin/dynasoar-bench" ]]; then
  B="$HERE/bin/dynasoar-bench"
  BD="$OUT/bench"
  mkdir -p "$BD/enumeration"
  step "dynasoar-bench enumeration" bash -c \
    "timeout ${ENUM_LIMIT:-300} '$B' enumeration --backend cuda --quiet --out '$BD/enumeration' ${BENCH_ENUM_ARGS:-} > '$BD/enumeration.jsonl'"
  {
    f="$BD/enumeration.jsonl"
    if [[ -s $f ]]; then
      counts=$(grep -o '"status":"[a-z]*"' "$f" | sort | uniq -c | awk '{printf "%s %s, ", $2, $1}' | tr -d '"' | sed 's/status://g; s/, $//')
      echo "dynasoar-bench enumeration: $(grep -c '^{' "$f") records${counts:+ ($counts)}"
      [[ -s "$BD/enumeration/enumeration-summary.txt" ]] && cat "$BD/enumeration/enumeration-summary.txt"
    else
      echo "dynasoar-bench enumeration: no output"
    fi
  } >> "$SUMMARY.tables"
fi
