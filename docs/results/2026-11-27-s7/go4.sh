#!/usr/bin/env bash
# Call 4 (2026-11-27, seventh session): the final device code (bundle of 5a49450): the GPU
# suite, then every app with --compare and the per-step overhead at tiny sizes.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT | tee $OUT/commit.txt
OUT=$OUT/suite bash gpu-bundle/run.sh tests > $OUT/gpu-tests.txt 2>&1
tail -3 $OUT/gpu-tests.txt
OUT=$OUT/apps bash gpu-bundle/run.sh apps > $OUT/gpu-apps.txt 2>&1
tail -40 $OUT/gpu-apps.txt
cd $OUT && tar czf runs.tgz suite apps && rm -rf suite apps
