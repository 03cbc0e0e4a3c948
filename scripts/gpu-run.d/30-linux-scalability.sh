# Linux Scalability (issue 3's benchmark): k = 1..1024 allocations per thread, 64 x 256 threads;
# then again with the runs of blocks released after every round (each round starts cold).
if [[ -x "$HERE/bin/linux-scalability" ]]; then
  step "bench linux-scalability" bash -c \
    "timeout 420 '$HERE/bin/linux-scalability' --backend cuda | tee '$OUT/linux-scalability.txt' | grep '^bench=' >> '$BENCH'"
  [[ -f "$OUT/linux-scalability.txt" ]] && sed -n '/^ *k |/,$p' "$OUT/linux-scalability.txt" >> "$SUMMARY.tables"
  step "bench linux-scalability (cold runs)" bash -c \
    "timeout 120 '$HERE/bin/linux-scalability' --backend cuda --cold-runs --no-cuda-malloc | tee '$OUT/linux-scalability-cold.txt' | grep '^bench=' >> '$BENCH'"
  [[ -f "$OUT/linux-scalability-cold.txt" ]] && sed -n '/^ *k |/,$p' "$OUT/linux-scalability-cold.txt" >> "$SUMMARY.tables"
fi
