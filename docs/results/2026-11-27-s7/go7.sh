#!/usr/bin/env bash
# Call 7 (2026-11-27, seventh session, after the review): the GPU suite on the reviewed
# device code (bundle of a5b78e8: the heap's keyed tables through one pair of helpers), and
# the three shortest allocating apps once each.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT | tee $OUT/commit.txt
OUT=$OUT/suite bash gpu-bundle/run.sh tests > $OUT/gpu-tests.txt 2>&1
tail -3 $OUT/gpu-tests.txt
N=/tmp/dynasoar-bundle; mkdir -p $N; [[ -x $N/bin/traffic ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
export DYNASOAR_CUBIN_DIR=$N/cubin DYNASOAR_DATA=$PWD/gpu-bundle/data
for app in wa-tor game-of-life traffic; do echo "=== $app"; $N/bin/$app --backend cuda --no-progress 2>&1; done > $OUT/apps.txt
grep -E "^===|total_us" $OUT/apps.txt | sed -E 's/.*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2/' | paste - -
cd $OUT && tar czf suite.tgz suite && rm -rf suite
