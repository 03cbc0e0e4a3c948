#!/usr/bin/env bash
# Call 4 (2026-11-27, ninth session): the bundle of f0b0f94 (device code of 1acc0fa) against a
# variant whose BodyNode record holds `id` too (16 bytes instead of 12, so that no record
# straddles two 32-byte sectors; variant-body-record.diff; barnes-hut and the barnes_hut test
# binary packed by scripts/gpu-quick.sh): Barnes-Hut 1,000 steps with per-kernel times, full
# runs order base var var base; the Barnes-Hut GPU tests on the variant; then the GPU suite on
# the bundle.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
N=/tmp/bundle-new; Q=/tmp/quick; mkdir -p $N $Q
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
echo "base $(cat gpu-bundle/COMMIT) cubins: $(ls $N/cubin | tr '\n' ' ') var cubin: $(ls $Q/cubin)" | tee $OUT/sides.txt
export DYNASOAR_DATA=$PWD/gpu-bundle/data
side() { local s=$1; shift; echo "=== $s $*"
  case $s in base) D=$N ;; var) D=$Q ;; esac
  DYNASOAR_CUBIN_DIR=$D/cubin "$D/bin/barnes-hut" --backend cuda --no-progress "$@" 2>&1; }
{ for s in base var; do DYNASOAR_PROFILE=1 side $s --steps 1000; done
  side base; side var; side var; side base
} > $OUT/body-record-ab.txt 2>&1
grep -E "^===|total_us|compute_force" $OUT/body-record-ab.txt | cut -c1-200
DYNASOAR_REQUIRE_GPU=1 DYNASOAR_CUBIN_DIR=$Q/cubin timeout 120 $Q/bin/barnes_hut_test > $OUT/bh-gpu-tests-var.txt 2>&1
grep -E "^test |test result" $OUT/bh-gpu-tests-var.txt
OUT=$OUT/suite timeout 330 bash gpu-bundle/run.sh tests > $OUT/gpu-tests.txt 2>&1
tail -3 $OUT/gpu-tests.txt
cd $OUT && tar czf suite.tgz suite && rm -rf suite
