#!/usr/bin/env bash
# Call 4 (2026-12-03, thirtieth session): the GPU suite on the bundle of 88c6a9f (register caps:
# the Game of Life's heap 72, generation's updates 80; ByIndex::index_of without its offset test).
set -u
SAVE=$OUT
C=$(cat gpu-bundle/COMMIT); C=${C/+/-}
OUT=/tmp/t timeout 560 bash gpu-bundle/run.sh tests > /tmp/tests.log 2>&1; echo "tests rc=$?"
cp /tmp/t/summary.txt $SAVE/gpu-tests-$C.txt; grep -v PASS /tmp/t/summary.txt | tail -6
grep -B2 -A20 "panicked" /tmp/tests.log | head -40
