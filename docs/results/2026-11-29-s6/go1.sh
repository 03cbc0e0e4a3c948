#!/usr/bin/env bash
# Call 1 (2026-11-29, sixth session), bundle of the fast-math commit.
# 1. n-body at the default size (20,000 bodies, 3,000 steps) with exact and with fast math
#    (`--fast-math`: math::fast's approximate sqrt and division in the forces), each with
#    --compare (DSL, SOA and AOS baselines; fails if their checksums differ), then DSL and SOA
#    alternating, exact and fast, against the bundle of 60bdddb's DSL run ('prev', exact
#    forces with the same PTX but for register numbering), and the fast kernel capped at 40
#    registers instead of 48 ('cap40').
# 2. n-body by size (8,000-24,000 bodies, 1,000 steps), DSL and SOA, fast math.
# 3. The GPU suite (`run.sh tests`, DYNASOAR_REQUIRE_GPU=1).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B /tmp/prev /tmp/v
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/prev-nbody.tar.xz | tar xf - -C /tmp/prev
xz -dc gpu-bundle/extra/cap40.tar.xz | tar xf - -C /tmp/v
run() { # side, then nbody's arguments
  local s=$1 bin=$B/bin/nbody cub=$B/cubin; shift
  case $s in prev) bin=/tmp/prev/nbody; cub=/tmp/prev/cubin ;; cap40) cub=/tmp/v/cap40 ;; esac
  echo "=== $s $*"; DYNASOAR_CUBIN_DIR=$cub timeout 120 $bin --backend cuda --no-progress "$@" 2>&1 | grep -E "^app=|rror|differ"
}
{ run new --compare; run new --compare --fast-math; } > $OUT/nbody-compare.txt 2>&1
grep -E "^app=" $OUT/nbody-compare.txt | sed -E 's/ (enum_us|momentum)=[^ ]*//g'
{ for s in prev new fast soa soafast cap40 cap40 soafast soa fast new prev; do
    case $s in
      prev|new) run $s ;; fast) run new --fast-math ;; cap40) run cap40 --fast-math ;;
      soa) run new --impl soa ;; soafast) run new --impl soa --fast-math ;;
    esac
  done; } > $OUT/fast-ab.txt 2>&1
grep -E "^===|^app=" $OUT/fast-ab.txt | sed -E 's/^(app=[a-z-]+).*(allocator=[a-z]+).*(total_us=[0-9]+).*(checksum=[0-9.]+).*/\1 \2 \3 \4/' | paste - -
{ for n in 8000 12000 16000 20000 24000; do for i in dynasoar soa dynasoar soa; do run new --bodies $n --steps 1000 --impl $i --fast-math; done; done; } > $OUT/nbody-fast-sizes.txt 2>&1
grep -E "^app=" $OUT/nbody-fast-sizes.txt | sed -E 's/^app=([a-z-]+) backend=cuda allocator=([a-z]+) size=([0-9]+).*(total_us=[0-9]+).*/\1 \2 \3 \4/'
mkdir -p /tmp/tests-out; OUT=/tmp/tests-out bash gpu-bundle/run.sh tests > $OUT/gpu-tests.txt 2>&1; echo "tests rc=$?"
tail -45 $OUT/gpu-tests.txt
tar -C /tmp/tests-out -cJf $OUT/tests-logs.tar.xz . 2>/dev/null; ls $OUT
