#!/usr/bin/env bash
# Call 1 (2026-11-28, fourth session). The bundle of df54966 (base: collision's SOA baseline on
# 8 threads per body; DYNASOAR_PROFILE prints the heap's occupancy per class) and, with the same
# binaries, models cubins of device-only variants assembled under the bundle's digest
# (scripts/cubin-variant.py --as 60bf0a6262beeeda):
#   open: a leader asking for half a block or more waits at the cap on openings like any other
#         unless it takes a whole block (allocator/mod.rs, search_or_open);
#   full: a dense walk visits a part whose every position is taken without bit tests
#         (heap/listed.rs, for_each_allocated_in);
#   both: the two together.
# 1. Occupancy after creation (n-body, collision: 10 steps, DYNASOAR_PROFILE=1), base and open.
# 2. n-body and collision --compare on base (SOA now 8 threads per body in both).
# 3. n-body DSL on every side, order base open full both both full open base.
# 4. Collision DSL base open open base; the allocating apps base open open base; Barnes-Hut once.
# 5. GPU tests of n-body, collision, allocator and dsl on base; allocator and apps on open.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B
[[ -x $B/bin/traffic ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_DATA=$B/data
[[ -d $B/data ]] || export DYNASOAR_DATA=$PWD/gpu-bundle/data
dir() { case $1 in base) echo $B/cubin ;; *) echo $PWD/gpu-bundle/extra/$1 ;; esac; }
side() { local s=$1; shift; echo "=== $s $*"
  DYNASOAR_CUBIN_DIR=$(dir $s) timeout ${LIMIT:-120} "$B/bin/$1" --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in base open; do for app in nbody collision; do echo "=== $s $app occupancy"
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$(dir $s) timeout 60 $B/bin/$app --backend cuda --no-progress --steps 10 2>&1 | grep -A4 "heap occupancy"
  done; done; } > $OUT/occupancy.txt 2>&1
cat $OUT/occupancy.txt
{ for app in nbody collision; do echo "=== base $app --compare"
    DYNASOAR_CUBIN_DIR=$B/cubin timeout 150 $B/bin/$app --backend cuda --no-progress --compare 2>&1 | tail -8
  done; } > $OUT/compare-df54966.txt 2>&1
cat $OUT/compare-df54966.txt
{ for s in base open full both both full open base; do side $s nbody; done; } > $OUT/nbody-ab.txt 2>&1
grep -E "^===|total_us" $OUT/nbody-ab.txt | sed -E 's/(total_us=[0-9]+).*(checksum=[-0-9.e]+).*/\1 \2/' | cut -c1-160
{ for s in base open open base; do side $s collision; done
  for s in base open open base; do
    for app in game-of-life wa-tor traffic generation sugarscape structure; do side $s $app; done
  done
  for s in base open; do LIMIT=60 side $s barnes-hut; done
} > $OUT/open-ab.txt 2>&1
grep -E "^===|total_us" $OUT/open-ab.txt | sed -E 's/(total_us=[0-9]+).*(fingerprint=[0-9a-f]+|checksum=[-0-9.e]+).*/\1 \2/' | cut -c1-160
for t in nbody collision allocator dsl reduce; do
  echo "=== test $t (base)"; DYNASOAR_REQUIRE_GPU=1 DYNASOAR_CUBIN_DIR=$B/cubin timeout 150 $B/tests/$t 2>&1 | tail -3
done > $OUT/tests.txt 2>&1
for t in allocator dsl nbody collision game_of_life wator generation; do
  echo "=== test $t (open)"; DYNASOAR_REQUIRE_GPU=1 DYNASOAR_CUBIN_DIR=$(dir open) timeout 150 $B/tests/$t 2>&1 | tail -3
done >> $OUT/tests.txt 2>&1
grep -E "^===|test result|panicked|FAIL" $OUT/tests.txt
