#!/usr/bin/env bash
# Call 2 (2026-12-02, twenty-fifth session): the GPU suite and all nine apps with --compare on
# the bundle of main (31f8e3b: the device and host code of 5576d14, the twenty-second session's
# last commit, which no GPU run had covered; 31f8e3b changed a build script only).
set -u
SAVE=$OUT
C=$(cat gpu-bundle/COMMIT)
OUT=/tmp/t timeout 330 bash gpu-bundle/run.sh tests > /tmp/tests.log 2>&1; echo "tests rc=$?"
cp /tmp/t/summary.txt $SAVE/gpu-tests-$C.txt; grep -v PASS /tmp/t/summary.txt | tail -6
grep -B2 -A20 "panicked" /tmp/tests.log | head -60
OUT=/tmp/a timeout 250 bash gpu-bundle/run.sh apps > /tmp/apps.log 2>&1; echo "apps rc=$?"
cp /tmp/a/summary.txt $SAVE/gpu-apps-$C.txt
tail -30 /tmp/a/summary.txt
