#!/usr/bin/env bash
# Call 4: all nine apps with --compare on the bundle of d18b296 (dependent launches on).
set -u
OUT=$OUT/a bash gpu-bundle/run.sh apps > /dev/null 2>&1; echo "apps rc=$?"
tail -30 $OUT/a/summary.txt
