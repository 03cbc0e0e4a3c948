#!/usr/bin/env bash
# Call 3: the GPU suite on 3089de4 (bundle of that commit), n-body and collision --compare on it,
# and register caps on traffic's and structure's heaps (cubin variants of the same PTX).
set -u
B=/tmp/dynasoar-bundle; rm -rf $B; mkdir -p $B
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
V=/tmp/variants; rm -rf $V; mkdir -p $V; xz -dc gpu-bundle/extra/variants.tar.xz | tar xf - -C $V
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
ls $B/cubin > $OUT/cubins.txt
OUT=$OUT/suite bash gpu-bundle/run.sh tests > $OUT/gpu-tests.txt 2>&1
export DYNASOAR_DATA=$PWD/gpu-bundle/data
{ $B/bin/nbody --backend cuda --compare --no-progress; } > $OUT/nbody-compare.txt 2>&1
{ $B/bin/collision --backend cuda --compare --no-progress; } > $OUT/collision-compare.txt 2>&1
for v in traffic48 traffic56 structure64 structure56; do
  mkdir -p /tmp/side-$v; cp -r $B/cubin/. /tmp/side-$v/; cp $V/$v/*.cubin /tmp/side-$v/
done
side() { local s=$1; shift; echo "=== $* $s"
  if [[ $s == base ]]; then DYNASOAR_CUBIN_DIR=$B/cubin "$B/bin/$@" --backend cuda --no-progress 2>&1
  else DYNASOAR_CUBIN_DIR=/tmp/side-$s "$B/bin/$@" --backend cuda --no-progress 2>&1; fi; }
{ for s in base traffic48 traffic56 traffic56 traffic48 base; do side $s traffic; done
  for s in base structure64 structure56 structure56 structure64 base; do side $s structure; done
} > $OUT/caps-ab.txt 2>&1
grep -E "^===|total_us" $OUT/caps-ab.txt | sed -E 's/.*(total_us=[0-9]+).*/\1/' | paste - - > $OUT/caps-summary.txt
tail -30 $OUT/gpu-tests.txt; cat $OUT/caps-summary.txt; grep -h "^dynasoar\|^soa\|^aos" $OUT/*-compare.txt
