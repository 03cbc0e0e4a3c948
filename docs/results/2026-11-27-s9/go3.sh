#!/usr/bin/env bash
# Call 3 (2026-11-27, ninth session): Barnes-Hut of 1acc0fa (position and mass moved into the
# subclasses: one 64-byte walk record per tree node; barnes-hut and the barnes_hut test binary
# packed by scripts/gpu-quick.sh) against the bundle of e20ae1d: 1,000 steps with per-kernel
# times, full runs order e20 new new e20 (the second new run with --compare), the Barnes-Hut
# GPU tests on the new code; then every app at its default size with --compare on the bundle
# of e20ae1d (whose models PTX differs from 1acc0fa's in Barnes-Hut's kernels only).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
N=/tmp/bundle-new; Q=/tmp/quick; mkdir -p $N $Q
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
echo "e20 $(cat gpu-bundle/COMMIT) cubins: $(ls $N/cubin | tr '\n' ' ') new cubin: $(ls $Q/cubin)" | tee $OUT/sides.txt
export DYNASOAR_DATA=$PWD/gpu-bundle/data
side() { local s=$1; shift; echo "=== $s $*"
  case $s in e20) D=$N ;; new) D=$Q ;; esac
  DYNASOAR_CUBIN_DIR=$D/cubin "$D/bin/barnes-hut" --backend cuda --no-progress "$@" 2>&1; }
{ for s in e20 new; do DYNASOAR_PROFILE=1 side $s --steps 1000; done
  side e20; side new; side new --compare; side e20
} > $OUT/walk-record-ab.txt 2>&1
grep -E "^===|total_us|compute_force" $OUT/walk-record-ab.txt | cut -c1-200
DYNASOAR_REQUIRE_GPU=1 DYNASOAR_CUBIN_DIR=$Q/cubin timeout 120 $Q/bin/barnes_hut_test > $OUT/bh-gpu-tests-1acc0fa.txt 2>&1
tail -3 $OUT/bh-gpu-tests-1acc0fa.txt
OUT=$OUT/apps timeout 400 bash gpu-bundle/run.sh apps > $OUT/gpu-apps.txt 2>&1
tail -40 $OUT/gpu-apps.txt
cd $OUT && tar czf apps.tgz apps && rm -rf apps
