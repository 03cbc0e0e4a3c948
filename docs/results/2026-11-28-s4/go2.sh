#!/usr/bin/env bash
# Call 2 (2026-11-28, fourth session). The bundle of df54966 (base) against the same binaries
# with the models cubin of the working tree's bulk creation (bulk: the parallel_new kernel opens
# whole blocks for its objects, ObjectStore::open_block; PTX 94c6a29ffcec441f, assembled under
# the bundle's digest 60bf0a6262beeeda by scripts/cubin-variant.py --as).
# 1. Occupancy at the end of short runs of every app (DYNASOAR_PROFILE=1), base and bulk.
# 2. n-body and collision --compare on bulk (the baselines' times in the same processes).
# 3. DSL runs, order base bulk bulk base: n-body, collision, the grid apps; Barnes-Hut once each.
# 4. GPU tests on bulk: dsl, rules (out of memory in parallel_new), allocator, apps.
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
{ for s in base bulk; do
    for a in "nbody --steps 10" "collision --steps 10" "game-of-life --steps 1" "wa-tor --steps 1" \
             "traffic --steps 1" "generation --steps 1" "sugarscape --steps 1" "structure --steps 1" \
             "barnes-hut --steps 1"; do
      echo "=== $s $a"
      DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$(dir $s) timeout 60 $B/bin/$a --backend cuda --no-progress 2>&1 \
        | sed -n '/heap occupancy/,$p' | grep -v "^app="
    done
  done; } > $OUT/occupancy-bulk.txt 2>&1
cat $OUT/occupancy-bulk.txt
{ for app in nbody collision; do echo "=== bulk $app --compare"
    DYNASOAR_CUBIN_DIR=$(dir bulk) timeout 150 $B/bin/$app --backend cuda --no-progress --compare 2>&1 | tail -8
  done; } > $OUT/compare-bulk.txt 2>&1
cat $OUT/compare-bulk.txt
{ for s in base bulk bulk base; do
    for app in nbody collision game-of-life wa-tor traffic generation sugarscape structure; do side $s $app; done
  done
  for s in base bulk; do LIMIT=60 side $s barnes-hut; done
} > $OUT/bulk-ab.txt 2>&1
grep -E "^===|total_us" $OUT/bulk-ab.txt | sed -E 's/(total_us=[0-9]+).*(fingerprint=[0-9a-f]+|checksum=[-0-9.e]+).*/\1 \2/' | cut -c1-160
for t in dsl rules allocator nbody collision game_of_life wator traffic; do
  echo "=== test $t (bulk)"; DYNASOAR_REQUIRE_GPU=1 DYNASOAR_CUBIN_DIR=$(dir bulk) timeout 150 $B/tests/$t 2>&1 | grep -E "^test .*FAIL|panicked|test result" | head -8
done > $OUT/tests-bulk.txt 2>&1
cat $OUT/tests-bulk.txt
