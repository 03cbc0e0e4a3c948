#!/usr/bin/env bash
# Call 4 (2026-11-28, third session): register caps for generation's kernels (uncapped: its two
# updates take 128 registers, 16 warps per multiprocessor). The bundle of 8930652 (base)
# against the same binaries with the models cubin assembled with `.maxnreg` 96, 104 and 112 on
# every GenerationHeap entry (scripts/cubin-variant.py --cap GenerationHeap__=N). Generation
# only, order base 96 104 112 112 104 96 base, then per-kernel times under base and the fastest.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B
[[ -x $B/bin/traffic ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_DATA=$B/data
[[ -d $B/data ]] || export DYNASOAR_DATA=$PWD/gpu-bundle/data
dir() { case $1 in base) echo $B/cubin ;; *) echo $PWD/gpu-bundle/extra/gen$1 ;; esac; }
side() { local s=$1; shift; echo "=== $s $*"
  DYNASOAR_CUBIN_DIR=$(dir $s) timeout 60 "$B/bin/$1" --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in base 96 104 112 112 104 96 base; do side $s generation; done
} > $OUT/generation-caps-ab.txt 2>&1
grep -E "^===|total_us" $OUT/generation-caps-ab.txt | sed -E 's/(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2/' | cut -c1-160
for s in base 96 104 112; do echo "=== $s generation (profile)"
  DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$(dir $s) timeout 60 $B/bin/generation --backend cuda --no-progress 2>&1 | grep -E "update|prepare|kernel  |^app="
done > $OUT/generation-caps-profile.txt 2>&1
cut -c1-110 $OUT/generation-caps-profile.txt
