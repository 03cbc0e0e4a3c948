# Field access (issue 4): parallel_do over 16M one-float objects vs a device copy.
if [[ -x "$HERE/bin/field-access" ]]; then
  step "bench field-access" bash -c \
    "'$HERE/bin/field-access' --backend cuda | tee '$OUT/field-access.txt' | grep '^bench=' >> '$BENCH'"
  [[ -f "$OUT/field-access.txt" ]] && { echo; sed -n '/us per pass/,$p' "$OUT/field-access.txt"; } >> "$SUMMARY.tables"
fi
