#!/usr/bin/env bash
# Call 2 (2026-11-29, sixth session), bundle of the collision fast-math commit.
# 1. collision at the default size with exact and with fast math (`--fast-math`), each with
#    --compare (DSL, SOA and AOS baselines; fails if they differ), then DSL and SOA alternating,
#    exact and fast, and one profiled run of each (DYNASOAR_PROFILE=1, per-kernel times).
# 2. The GPU suite (`run.sh tests`, DYNASOAR_REQUIRE_GPU=1).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
run() { echo "=== $*"; DYNASOAR_CUBIN_DIR=$B/cubin timeout 150 $B/bin/collision --backend cuda --no-progress "$@" 2>&1 | grep -E "^app=|rror|differ"; }
{ run --compare; run --compare --fast-math; } > $OUT/collision-compare.txt 2>&1
grep -E "^app=" $OUT/collision-compare.txt | sed -E 's/ (enum_us|momentum)=[^ ]*//g'
{ for s in new fast soa soafast soafast soa fast new; do
    case $s in new) run ;; fast) run --fast-math ;; soa) run --impl soa ;; soafast) run --impl soa --fast-math ;; esac
  done; } > $OUT/collision-fast-ab.txt 2>&1
grep -E "^===|^app=" $OUT/collision-fast-ab.txt | sed -E 's/^(app=[a-z-]+).*(allocator=[a-z]+).*(total_us=[0-9]+).*/\1 \2 \3/' | paste - -
{ for f in "" --fast-math; do echo "=== DYNASOAR_PROFILE=1 $f"
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$B/cubin timeout 60 $B/bin/collision --backend cuda --no-progress $f 2>&1 | grep -E "compute_force|prepare_merge|^app="
  done; } > $OUT/collision-fast-profile.txt 2>&1
cat $OUT/collision-fast-profile.txt
mkdir -p /tmp/tests-out; OUT=/tmp/tests-out bash gpu-bundle/run.sh tests > $OUT/gpu-tests.txt 2>&1; echo "tests rc=$?"
tail -42 $OUT/gpu-tests.txt
tar -C /tmp/tests-out -cJf $OUT/tests-logs.tar.xz . 2>/dev/null; ls $OUT
