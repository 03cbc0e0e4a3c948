#!/usr/bin/env bash
# Call 3 (2026-11-28, second session): every app at its default size with --compare (and the
# per-step overhead at tiny sizes) on the bundle of 8930652.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
OUT=$OUT/apps timeout 560 bash gpu-bundle/run.sh apps > $OUT/gpu-apps.txt 2>&1
tail -14 $OUT/gpu-apps.txt
cd $OUT && tar czf apps.tgz apps && rm -rf apps
