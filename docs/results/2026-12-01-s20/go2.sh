#!/usr/bin/env bash
# Call 2 (2026-12-01, twentieth session): the GPU suite and all nine apps with --compare on
# the bundle of main (frees that keep their emptied blocks).
set -u
SAVE=$OUT
OUT=/tmp/t timeout 330 bash gpu-bundle/run.sh tests > /tmp/tests.log 2>&1; echo "tests rc=$?"
C=$(cat gpu-bundle/COMMIT)
cp /tmp/t/summary.txt $SAVE/gpu-tests-$C.txt; grep -v PASS /tmp/t/summary.txt | tail -6
OUT=/tmp/a timeout 250 bash gpu-bundle/run.sh apps > /tmp/apps.log 2>&1; echo "apps rc=$?"
cp /tmp/a/summary.txt $SAVE/gpu-apps-$C.txt
tail -30 /tmp/a/summary.txt
