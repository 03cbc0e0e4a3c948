#!/usr/bin/env bash
# Call 7 (the review's): the GPU suite on the bundle of 928f148 (main's models PTX,
# 77fb1a8ed878b1ec; later commits are docs and a doc comment).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p /tmp/t
OUT=/tmp/t bash gpu-bundle/run.sh tests > /tmp/t/stdout.txt 2>&1; echo "tests rc=$?"
cp /tmp/t/summary.txt $OUT/gpu-tests.txt
tail -45 $OUT/gpu-tests.txt
