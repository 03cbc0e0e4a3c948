#!/usr/bin/env bash
# Call 4: the GPU suite on the bundle of 6bc0a39 (the host's listing loops through one helper).
set -u
OUT=/tmp/t bash gpu-bundle/run.sh tests > /dev/null 2>&1; echo "tests rc=$?"
cp /tmp/t/summary.txt $OUT/gpu-tests-summary.txt 2>/dev/null
grep -E "FAIL|steps" /tmp/t/summary.txt | tail -8
