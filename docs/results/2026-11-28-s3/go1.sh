#!/usr/bin/env bash
# Call 1 (2026-11-28, third session): stocks. The bundle of 8930652 (base) against the same
# binaries with the working tree's models cubin (stock: leaders keep slots of one block in
# their warp slot's last-block entry and small groups take theirs with one atomic; PTX
# fd25256406eaa5da, assembled under the bundle's digest by scripts/cubin-variant.py --as
# cdad7039c0d8c823). The allocating apps, DSL only, order base stock stock base; then the
# GPU tests of the allocator and the apps on stock.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B
[[ -x $B/bin/traffic ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_DATA=$B/data
[[ -d $B/data ]] || export DYNASOAR_DATA=$PWD/gpu-bundle/data
V=$PWD/gpu-bundle/extra/stock
ls $B/cubin $V
side() { local s=$1; shift; echo "=== $s $*"
  case $s in base) C=$B/cubin ;; stock) C=$V ;; esac
  DYNASOAR_CUBIN_DIR=$C timeout 120 "$B/bin/$1" --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in base stock stock base; do
    for app in game-of-life wa-tor structure traffic sugarscape generation; do side $s $app; done
  done
  for s in base stock; do side $s barnes-hut; done
} > $OUT/stock-ab.txt 2>&1
grep -E "^===|total_us" $OUT/stock-ab.txt | sed -E 's/(total_us=[0-9]+).*(fingerprint=[0-9a-f]+|checksum=[-0-9.e]+).*/\1 \2/' | cut -c1-160
for t in allocator dsl game_of_life structure wator traffic sugarscape generation barnes_hut; do
  echo "=== test $t (stock)"; DYNASOAR_REQUIRE_GPU=1 DYNASOAR_CUBIN_DIR=$V timeout 150 $B/tests/$t 2>&1 | tail -4
done > $OUT/stock-tests.txt 2>&1
grep -E "^===|test result|panicked|FAIL" $OUT/stock-tests.txt
