#!/usr/bin/env bash
# Call 1 (2026-12-03, twenty-eighth session): the GPU suite and all nine apps with --compare on
# the bundle of the bulk-placement change (parallel_new's block-full k goes to block
# first_block + k where it is free), and the n-body test's line on GPU against CPU bodies.
set -u
SAVE=$OUT
C=$(cat gpu-bundle/COMMIT)
OUT=/tmp/t timeout 330 bash gpu-bundle/run.sh tests > /tmp/tests.log 2>&1; echo "tests rc=$?"
cp /tmp/t/summary.txt $SAVE/gpu-tests-${C/+/-}.txt; grep -v PASS /tmp/t/summary.txt | tail -6
grep -B2 -A20 "panicked" /tmp/tests.log | head -60
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $C"
  echo "command: bash gpu-bundle/run.sh tests (the nbody test binary's output)"
  grep -rh -B3 -A3 "GPU and CPU bodies\|bulk_creation\|gpu_gives_the_same" /tmp/t /tmp/tests.log 2>/dev/null | head -60
} > $SAVE/nbody-tests-${C/+/-}.txt; cat $SAVE/nbody-tests-${C/+/-}.txt
OUT=/tmp/a timeout 250 bash gpu-bundle/run.sh apps > /tmp/apps.log 2>&1; echo "apps rc=$?"
cp /tmp/a/summary.txt $SAVE/gpu-apps-${C/+/-}.txt
tail -30 /tmp/a/summary.txt
