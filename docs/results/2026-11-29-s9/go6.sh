#!/usr/bin/env bash
# Call 8: the GPU suite and all nine apps with --compare on the bundle of 50e5a50 (the six apps
# with classes of several sizes on #[blocks(uniform)]).
set -u
mkdir -p /tmp/t /tmp/a
OUT=/tmp/t bash gpu-bundle/run.sh tests > /tmp/t/stdout.txt 2>&1; echo "tests rc=$?"
cp /tmp/t/summary.txt $OUT/gpu-tests.txt
OUT=/tmp/a bash gpu-bundle/run.sh apps > /tmp/a/stdout.txt 2>&1; echo "apps rc=$?"
cp /tmp/a/summary.txt $OUT/gpu-apps.txt
tail -40 $OUT/gpu-tests.txt | grep -E "FAIL|steps"; grep -A12 "^app  " $OUT/gpu-apps.txt; grep -E "FAIL|steps" $OUT/gpu-apps.txt
