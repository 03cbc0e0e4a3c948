#!/usr/bin/env bash
# Call 5: the GPU suite on the bundle of a567b50 (after the review's host-only mends).
set -u
OUT=/tmp/t bash gpu-bundle/run.sh tests > /dev/null 2>&1; echo "tests rc=$?"
cp /tmp/t/summary.txt $OUT/gpu-tests-summary.txt 2>/dev/null
grep -E "FAIL|steps" /tmp/t/summary.txt | tail -8
