# Linux Scalability (issue 3's benchmark): k = 1..1024 allocations per thread, 64 x 256 threads.
if [[ -x "$HERE/bin/linux-scalability" ]]; then
  step "bench linux-scalability" bash -c \
    "timeout 420 '$HERE/bin/linux-scalability' --backend cuda | tee '$OUT/linux-scalability.txt' | grep '^bench=' >> '$BENCH'"
  [[ -f "$OUT/linux-scalability.txt" ]] && sed -n '/^ *k |/,$p' "$OUT/linux-scalability.txt" >> "$SUMMARY.tables"
fi
