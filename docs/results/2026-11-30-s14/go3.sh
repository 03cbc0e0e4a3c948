#!/usr/bin/env bash
# Call 3 (2026-11-30, fourteenth session): all nine apps with --compare and the launch-overhead
# runs on the bundle of main 289237a (device code and host as main since).
set -u
OUT=/tmp/a bash gpu-bundle/run.sh apps > /dev/null 2>&1; echo "apps rc=$?"
cp /tmp/a/summary.txt $OUT/gpu-apps-summary.txt 2>/dev/null
grep -E "FAIL|steps|x  " /tmp/a/summary.txt | tail -14
