#!/usr/bin/env bash
# Call 4 (2026-11-30, eighteenth session): all nine apps with --compare and the launch-overhead
# runs on the bundle of 582da07 (frees in launches that create nothing without the fence).
set -u
OUT_SAVE=$OUT
OUT=/tmp/a timeout 400 bash gpu-bundle/run.sh apps > /tmp/apps.log 2>&1; echo "apps rc=$?"
cp /tmp/a/summary.txt $OUT_SAVE/gpu-apps-582da07.txt
tail -40 /tmp/a/summary.txt
