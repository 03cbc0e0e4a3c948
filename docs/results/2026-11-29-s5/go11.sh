#!/usr/bin/env bash
# Call 11 (2026-11-29, fifth session): do-alls over a kept list sized to its objects.
# 'new': the apps and GPU test binaries built from the working tree of f2ec247 plus the change
# (host code only: the PTX digests are the bundle's, so both sides run the bundle's cubins);
# 'main': the GPU bundle of 7b639fd's binaries. (1) apps, order main new new main;
# (2) the GPU tests dsl, graph, reduce, nbody, traffic, wator, game_of_life, structure of 'new'.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/lg.tar.xz | tar xf - -C /tmp
export DYNASOAR_CUBIN_DIR=$B/cubin DYNASOAR_DATA=$PWD/gpu-bundle/data
bin() { case $1 in main) echo $B/bin ;; new) echo /tmp/lg/bin ;; esac; }
app() { local s=$1 a=$2; echo "=== $s $a"; timeout 60 $(bin $s)/$a --backend cuda --no-progress 2>&1 | grep -E "^app=|rror"; }
{ for a in traffic wa-tor game-of-life structure sugarscape generation nbody; do for s in main new new main; do app $s $a; done; done; } > $OUT/sized-ab.txt 2>&1
grep -E "^===|^app=" $OUT/sized-ab.txt | sed -E 's/^(app=[a-z-]+).*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+|checksum=[0-9.]+).*/\1 \2 \3/' | paste - -
export DYNASOAR_REQUIRE_GPU=1 DYNASOAR_BIN_DIR=/tmp/lg/bin
{ for t in dsl graph traffic wator nbody reduce game_of_life structure; do
    echo "=== test $t"; timeout 80 /tmp/lg/tests/$t --test-threads=1 > /tmp/t.log 2>&1; rc=$?
    grep -E "^test result|FAILED|panicked|^test .* \.\.\. (FAILED|ignored)" /tmp/t.log; echo "rc=$rc"
  done; } > $OUT/sized-tests.txt 2>&1
grep -E "^===|^test result|FAILED" $OUT/sized-tests.txt
