#!/usr/bin/env bash
# Call 9 (2026-11-29, fourth session): all nine apps at their default sizes with their
# baselines (run.sh apps) on the bundle of 7b639fd.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
OUT=$OUT/apps timeout 420 bash gpu-bundle/run.sh apps > /dev/null 2>&1; echo "apps rc=$?"
tail -30 $OUT/apps/summary.txt
cat $OUT/apps/summary.txt.tables 2>/dev/null | tail -20
