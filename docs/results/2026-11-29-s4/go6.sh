#!/usr/bin/env bash
# Call 8 (2026-11-29, fourth session), on the bundle of 7b639fd (the streaming loop's consecutive
# positions, d51f06e's Device split, acc37e1's field-access): the GPU suite (run.sh tests), then
# field-access twice, then Sugarscape, the Game of Life and generation (the apps with kernels
# the default choice streams over classes of 64 objects per block) against the bundle of
# 60bdddb (gpu-bundle-prev), order new old old new.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT gpu-bundle-prev/COMMIT
OUT=$OUT/suite timeout 330 bash gpu-bundle/run.sh tests > /dev/null 2>&1; echo "suite rc=$?"
tail -45 $OUT/suite/summary.txt
N=/tmp/dynasoar-bundle; O=/tmp/old; rm -rf $O; mkdir -p $O
xz -dc gpu-bundle-prev/payload.tar.xz | tar xf - -C $O
for i in 1 2; do DYNASOAR_CUBIN_DIR=$N/cubin timeout 60 $N/bin/field-access --backend cuda; done > $OUT/field-access-7b639fd.txt 2>&1
grep -E "^bench=" $OUT/field-access-7b639fd.txt | sed -E 's/.*(loop=[a-z]+).*(parallel_do_us=[0-9.]+).*(method_us=[0-9.]+).*(copy_us=[0-9.]+) (array_us=[0-9.]+).*(ratio_vs_copy=[0-9.]+).*(ok=[a-z]+).*/\1 \2 \3 \4 \5 \6 \7/'
app() { local b=$1; shift; echo "=== $b $*"; DYNASOAR_DATA=gpu-bundle/data DYNASOAR_CUBIN_DIR=$b/cubin timeout 40 $b/bin/$1 --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for b in $N $O $O $N; do app $b sugarscape; app $b game-of-life; app $b generation; done; } > $OUT/streamed-apps-ab.txt 2>&1
grep -E "^===|^app=" $OUT/streamed-apps-ab.txt | sed -E 's/^(app=[a-z-]+).*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2 \3/' | paste - -
