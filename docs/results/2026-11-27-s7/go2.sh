#!/usr/bin/env bash
# Call 2 (2026-11-27, seventh session): the last-block tables, A/B of the allocating apps in
# one call: base = main's bundle (gpu-bundle-base, d71481a), new = this commit's bundle with
# the default allocator, nolast = the same bundle with DYNASOAR_ALLOCATOR_VARIANT=nolast.
# acq = the new bundle with its models cubin assembled from the same source plus an acquire
# reservation (atom.acquire.gpu) in place of the fence after it (models PTX 4569a0390a6e50d1).
# Two rounds, the second in reverse order. Then the GPU suite on the new bundle.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
echo "base $(cat gpu-bundle-base/COMMIT) new $(cat gpu-bundle/COMMIT)" | tee $OUT/commits.txt
A=/tmp/bundle-base; N=/tmp/bundle-new; mkdir -p $A $N
xz -dc gpu-bundle-base/payload.tar.xz | tar xf - -C $A
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
export DYNASOAR_DATA=$PWD/gpu-bundle/data
Q=/tmp/cubin-acq; mkdir -p $Q; cp $N/cubin/* $Q/; cp gpu-bundle/extra/acq/*.cubin $Q/
md5sum $N/cubin/* $Q/* > $OUT/cubins.txt
side() { local s=$1; shift; echo "=== $1 $s"
  case $s in
    base) DYNASOAR_CUBIN_DIR=$A/cubin "$A/bin/$@" --backend cuda --no-progress 2>&1 ;;
    new) DYNASOAR_CUBIN_DIR=$N/cubin "$N/bin/$@" --backend cuda --no-progress 2>&1 ;;
    acq) DYNASOAR_CUBIN_DIR=$Q "$N/bin/$@" --backend cuda --no-progress 2>&1 ;;
    nolast) DYNASOAR_ALLOCATOR_VARIANT=nolast DYNASOAR_CUBIN_DIR=$N/cubin "$N/bin/$@" --backend cuda --no-progress 2>&1 ;;
  esac; }
APPS="wa-tor game-of-life traffic generation structure sugarscape"
{ for app in $APPS; do for s in base new nolast acq; do side $s $app; done; done
  for app in $APPS; do for s in acq nolast new base; do side $s $app; done; done
  for s in base new acq; do side $s barnes-hut; done
} > $OUT/last-block-ab.txt 2>&1
grep -E "^===|total_us" $OUT/last-block-ab.txt | sed -E 's/.*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2/' | paste - - > $OUT/last-block-summary.txt
cat $OUT/last-block-summary.txt
OUT=$OUT/suite bash gpu-bundle/run.sh tests > $OUT/gpu-tests.txt 2>&1
tail -3 $OUT/gpu-tests.txt
cd $OUT && tar czf suite.tgz suite && rm -rf suite
