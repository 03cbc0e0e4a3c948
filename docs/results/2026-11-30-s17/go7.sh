#!/usr/bin/env bash
# Call 7 (2026-11-30, seventeenth session): all nine apps with --compare and the launch-overhead
# runs on the bundle of 805f0c4 (device and host code; docs uncommitted).
set -u
OUT_SAVE=$OUT
OUT=/tmp/a bash gpu-bundle/run.sh apps > /tmp/apps.log 2>&1; echo "apps rc=$?"
cp /tmp/a/summary.txt $OUT_SAVE/gpu-apps-805f0c4.txt
tail -40 /tmp/a/summary.txt
