#!/usr/bin/env bash
# Call 9 (2026-11-29, seventh session): the DSL test binary (tests/tests/dsl.rs) of b87956f (the
# review's mend of the grid tuner, host only) on the GPU, with the cubins of the full
# bundle of 2fb8a66 (the device code is unchanged since: same PTX digests); DYNASOAR_REQUIRE_GPU=1,
# so no test skips.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
D=/tmp/dsl; rm -rf $D; mkdir -p $D; xz -dc gpu-bundle/extra/dsl.tar.xz | tar xf - -C $D bin
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $D cubin
DYNASOAR_CUBIN_DIR=$D/cubin DYNASOAR_REQUIRE_GPU=1 timeout 240 $D/bin/dsl --test-threads=1 --nocapture > $OUT/gpu-dsl-b87956f.txt 2>&1
rc=$?; echo "rc=$rc" | tee -a $OUT/gpu-dsl-b87956f.txt
grep -E "^test |test result|every_grid" $OUT/gpu-dsl-b87956f.txt | cut -c1-200 | tail -45
exit $rc
