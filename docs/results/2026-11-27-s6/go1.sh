#!/usr/bin/env bash
# Call 1 (2026-11-27, sixth session): per-kernel profiles of the apps furthest from their
# hand-written baselines, and the dense-walk A/B for n-body (cubin swap).
set -u
B=/tmp/dynasoar-bundle; mkdir -p $B
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
V=/tmp/variants; mkdir -p $V; xz -dc gpu-bundle/extra/variants.tar.xz | tar xf - -C $V
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
DIG=4c4a129351995a21
ls $B/cubin | head -20 > $OUT/cubins.txt
# sides: base = bundle's own cubin; dense = variant cubin under the same digest
mkdir -p /tmp/side-dense; cp -r $B/cubin/. /tmp/side-dense/; cp $V/dense.sm_90.cubin /tmp/side-dense/$DIG.sm_90.cubin
run_side() { # side app args...
  local side=$1; shift; echo "=== $* $side"
  if [[ $side == base ]]; then DYNASOAR_CUBIN_DIR=$B/cubin "$B/bin/$@" --backend cuda --no-progress 2>&1
  else DYNASOAR_CUBIN_DIR=/tmp/side-dense "$B/bin/$@" --backend cuda --no-progress 2>&1; fi
}
{
  for s in base dense dense base; do run_side $s nbody; done
  for s in base dense; do run_side $s collision; done
} > $OUT/dense-ab.txt 2>&1
{ run_side dense nbody --compare; } > $OUT/nbody-compare-dense.txt 2>&1
# profiles (base device code), DSL only, every kernel timed
for app in wa-tor traffic structure game-of-life sugarscape; do
  echo "=== $app"; DYNASOAR_CUBIN_DIR=$B/cubin DYNASOAR_PROFILE=1 $B/bin/$app --backend cuda --no-progress 2>&1
done > $OUT/apps-profile.txt 2>&1
for app in wa-tor traffic structure game-of-life; do
  echo "=== $app"; DYNASOAR_CUBIN_DIR=$B/cubin timeout 300 $B/bin/$app --backend cuda --compare --no-progress 2>&1
done > $OUT/apps-compare.txt 2>&1
ls -la $OUT
