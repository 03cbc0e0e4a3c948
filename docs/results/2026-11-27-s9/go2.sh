#!/usr/bin/env bash
# Call 2 (2026-11-27, ninth session): the bundle of e20ae1d (field groups; Barnes-Hut's walk
# reads two records per tree node) against a variant whose TreeNode keeps a copy of its centre
# of mass and mass in its walk record (one 64-byte record per tree node;
# variant-treenode-record.diff, packed by scripts/gpu-quick.sh as extra/quick/quick-com.tar.xz):
# Barnes-Hut 1,000 steps with per-kernel times, then full runs, order new com com new. Then
# the GPU suite on the bundle.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
N=/tmp/bundle-new; C=/tmp/com; mkdir -p $N $C
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
xz -dc gpu-bundle/extra/quick/quick-com.tar.xz | tar xf - -C $C
echo "new $(cat gpu-bundle/COMMIT) cubins: $(ls $N/cubin | tr '\n' ' ') com cubin: $(ls $C/cubin)" | tee $OUT/sides.txt
export DYNASOAR_DATA=$PWD/gpu-bundle/data
side() { local s=$1; shift; echo "=== $s $*"
  case $s in new) D=$N ;; com) D=$C ;; esac
  DYNASOAR_CUBIN_DIR=$D/cubin "$D/bin/barnes-hut" --backend cuda --no-progress "$@" 2>&1; }
{ for s in new com; do DYNASOAR_PROFILE=1 side $s --steps 1000; done
  side new; side com; side com; side new
} > $OUT/treenode-record-ab.txt 2>&1
grep -E "^===|total_us|compute_force" $OUT/treenode-record-ab.txt | cut -c1-200
OUT=$OUT/suite timeout 320 bash gpu-bundle/run.sh tests > $OUT/gpu-tests.txt 2>&1
tail -3 $OUT/gpu-tests.txt
cd $OUT && tar czf suite.tgz suite && rm -rf suite
