#!/usr/bin/env bash
# Call 5: call 4 again (all nine apps with --compare on the bundle of d18b296), returning only the
# summary and Wa-Tor's file (call 4's summary did not come back: too many files under $OUT).
set -u
mkdir -p /tmp/a
OUT=/tmp/a bash gpu-bundle/run.sh apps > /dev/null 2>&1; echo "apps rc=$?"
cp /tmp/a/summary.txt $OUT/gpu-apps-d18b296.txt; cp /tmp/a/app-wa-tor.txt $OUT/
grep -E "steps|FAIL" $OUT/gpu-apps-d18b296.txt; grep -h "ratio_vs_soa" /tmp/a/app-*.txt | grep -o "app=[a-z-]*\|total_us=[0-9]*\|ratio_vs_soa=[0-9.]*" | paste - - - -d' '
