#!/usr/bin/env bash
# Call 3: all nine apps with --compare on the bundle of eaa937d (the same bundle as call 2).
mkdir -p /tmp/a && OUT=/tmp/a bash gpu-bundle/run.sh apps > /tmp/a/stdout.txt 2>&1; echo rc=$?; cp /tmp/a/summary.txt $OUT/gpu-apps.txt; tail -60 $OUT/gpu-apps.txt | head -45
