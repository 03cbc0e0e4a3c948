# SMMO apps at the paper's default sizes, each with its SOA and AOS baselines in the same run
# (issues "SMMO apps I" and "II"; all nine take about 5 minutes on an H200). Set APPS to choose, APP_ARGS_<app> for extra arguments.
APPS=${APPS:-"nbody collision wa-tor game-of-life sugarscape structure traffic generation barnes-hut"}
for app in $APPS; do
  [[ -x "$HERE/bin/$app" ]] || continue
  var="APP_ARGS_${app//-/_}"
  step "app $app (--compare)" bash -c \
    "timeout 540 '$HERE/bin/$app' --backend cuda --compare --no-progress ${!var:-} 2>&1 | tee '$OUT/app-$app.txt'; test \${PIPESTATUS[0]} -eq 0"
  grep -h '^app=' "$OUT/app-$app.txt" >> "$BENCH" 2>/dev/null
done
if command -v python3 >/dev/null && [[ -s "$BENCH" ]]; then
  python3 "$HERE/apps_table.py" "$BENCH" >> "$SUMMARY.tables"
fi
