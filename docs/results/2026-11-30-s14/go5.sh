#!/usr/bin/env bash
# Call 5 (2026-11-30, fourteenth session): the GPU suite on the bundle of main 289237a (device
# code and host as main since), after the review of the whole change since 5ec3ff4.
set -u
OUT=/tmp/t bash gpu-bundle/run.sh tests > /dev/null 2>&1; echo "tests rc=$?"
cp /tmp/t/summary.txt $OUT/gpu-tests-summary.txt 2>/dev/null
grep -E "FAIL|steps" /tmp/t/summary.txt | tail -8
