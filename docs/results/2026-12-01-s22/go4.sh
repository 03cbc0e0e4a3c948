#!/usr/bin/env bash
# Call 4 (2026-12-01, twenty-second session): all nine apps with --compare on the bundle of the
# change (frees that do not wait for their blocks' bitmaps).
set -u
SAVE=$OUT
OUT=/tmp/a timeout 280 bash gpu-bundle/run.sh apps > /tmp/apps.log 2>&1; echo "apps rc=$?"
C=$(cat gpu-bundle/COMMIT)
cp /tmp/a/summary.txt $SAVE/gpu-apps-$C.txt
tail -30 /tmp/a/summary.txt
