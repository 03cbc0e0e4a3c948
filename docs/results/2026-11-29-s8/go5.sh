#!/usr/bin/env bash
# Call 5: every app at its default size with --compare on the bundle of 928f148 (the give-back,
# the Game of Life's heap capped at 64, traffic's create_car at 80).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p /tmp/a
OUT=/tmp/a bash gpu-bundle/run.sh apps > /tmp/a/stdout.txt 2>&1; echo "apps rc=$?"
cp /tmp/a/summary.txt $OUT/apps-summary.txt
xz -c /tmp/a/gpu-suite.log > $OUT/apps-suite.log.xz
tail -60 $OUT/apps-summary.txt
