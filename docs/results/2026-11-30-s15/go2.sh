#!/usr/bin/env bash
# Call 2 (2026-11-30, fifteenth session): on the bundle of main (one launch for a class's
# subclasses, and the settings test mended): all nine apps with --compare and the
# launch-overhead runs, then the GPU suite.
set -u
OUT=/tmp/a bash gpu-bundle/run.sh apps > /tmp/apps.log 2>&1; echo "apps rc=$?"
cp /tmp/a/summary.txt $OUT/gpu-apps.txt; tail -50 /tmp/a/summary.txt
OUT=/tmp/t bash gpu-bundle/run.sh tests > /tmp/tests.log 2>&1; echo "tests rc=$?"
cp /tmp/t/summary.txt $OUT/gpu-tests.txt; grep -v PASS /tmp/t/summary.txt | tail -8
for f in /tmp/t/*.log; do grep -l "FAIL\|panicked" $f 2>/dev/null; done | head -5 | while read f; do cp $f $OUT/; done
