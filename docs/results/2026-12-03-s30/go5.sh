#!/usr/bin/env bash
# Call 5 (2026-12-03, thirtieth session): all nine apps with --compare on the bundle of 88c6a9f.
set -u
SAVE=$OUT
C=$(cat gpu-bundle/COMMIT); C=${C/+/-}
OUT=/tmp/a timeout 560 bash gpu-bundle/run.sh apps > /tmp/apps.log 2>&1; echo "apps rc=$?"
cp /tmp/a/summary.txt $SAVE/gpu-apps-$C.txt
tail -30 /tmp/a/summary.txt | head -16
