#!/usr/bin/env bash
# Call 5 (2026-11-29, seventh session): the full bundle of 2fb8a66 (its COMMIT file says
# "2fb8a66+changes": a doc comment, committed as 5419ae6): the GPU suite, then every app at its
# default size with --compare (the do-all grids under DoAllWaves::Auto, the default). The two
# summaries and the apps' lines are packed into one file each (the copy-back's file limit).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
mkdir -p /tmp/t /tmp/a
OUT=/tmp/t bash gpu-bundle/run.sh tests > /tmp/t/stdout.txt 2>&1; echo "tests rc=$?"
cp /tmp/t/summary.txt $OUT/tests-summary.txt
grep -E "every_grid_of_the_plain_loop|the_plain_loop_grid" /tmp/t/gpu-suite.log | head -20 > $OUT/tests-grid.txt
OUT=/tmp/a bash gpu-bundle/run.sh apps > /tmp/a/stdout.txt 2>&1; echo "apps rc=$?"
cp /tmp/a/summary.txt $OUT/apps-summary.txt
tar -C /tmp -cJf $OUT/logs.tar.xz t/gpu-suite.log a/gpu-suite.log t/stdout.txt a/stdout.txt 2>/dev/null
tail -45 $OUT/tests-summary.txt; tail -60 $OUT/apps-summary.txt
