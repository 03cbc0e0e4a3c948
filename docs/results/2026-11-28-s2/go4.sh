#!/usr/bin/env bash
# Call 4 (2026-11-28, second session): frees without a fence. The bundle of 8930652 (base)
# against the same binaries with the working tree's models cubin (relfree: the bitmap write
# that frees a slot is a release, `atom.release.gpu`, in place of `fence.acq_rel.gpu` and a
# relaxed AND; PTX f57d2f0d47b31c15, assembled under the bundle's digest by
# scripts/cubin-variant.py --as cdad7039c0d8c823). The apps that free objects, DSL only, order
# base relfree relfree base; then collision and Barnes-Hut once per side; then the GPU tests
# of the allocator, the DSL and the freeing apps on relfree.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B
[[ -x $B/bin/traffic ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_DATA=$B/data
[[ -d $B/data ]] || export DYNASOAR_DATA=$PWD/gpu-bundle/data
V=$PWD/gpu-bundle/extra/relfree
ls $B/cubin $V
side() { local s=$1; shift; echo "=== $s $*"
  case $s in base) C=$B/cubin ;; relfree) C=$V ;; esac
  DYNASOAR_CUBIN_DIR=$C timeout 120 "$B/bin/$1" --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in base relfree relfree base; do
    for app in game-of-life wa-tor structure traffic sugarscape generation; do side $s $app; done
  done
  for s in base relfree; do side $s collision; side $s barnes-hut; done
} > $OUT/relfree-ab.txt 2>&1
grep -E "^===|total_us" $OUT/relfree-ab.txt | sed -E 's/(total_us=[0-9]+).*(fingerprint=[0-9a-f]+|checksum=[-0-9.e]+).*/\1 \2/' | cut -c1-160
for t in allocator dsl game_of_life structure wator traffic sugarscape generation collision barnes_hut; do
  echo "=== test $t (relfree)"; DYNASOAR_REQUIRE_GPU=1 DYNASOAR_CUBIN_DIR=$V timeout 120 $B/tests/$t 2>&1 | tail -3
done > $OUT/relfree-tests.txt 2>&1
grep -E "^===|test result" $OUT/relfree-tests.txt
