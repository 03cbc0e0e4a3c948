#!/usr/bin/env bash
# Call 7 (2026-11-27, eighth session): the cap of 8 blocks opening at once (ecf88c9) against
# a5b78e8 (cap 128), each on its own bundle: the allocating apps (two rounds, the second in
# reverse order), Barnes-Hut at its default size (the new side with --compare), Linux
# Scalability coalesced and not (nocoal), then the GPU suite on the new bundle.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
echo "base $(cat gpu-bundle-base/COMMIT) new $(cat gpu-bundle/COMMIT)" | tee $OUT/commits.txt
A=/tmp/bundle-base; N=/tmp/bundle-new; mkdir -p $A $N
xz -dc gpu-bundle-base/payload.tar.xz | tar xf - -C $A
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
ls $A/cubin $N/cubin | tee $OUT/cubins.txt
export DYNASOAR_DATA=$PWD/gpu-bundle/data
side() { local s=$1; shift; echo "=== $* $s"
  case $s in base) D=$A ;; new) D=$N ;; esac
  DYNASOAR_CUBIN_DIR=$D/cubin "$D/bin/$1" --backend cuda --no-progress "${@:2}" 2>&1; }
APPS="traffic game-of-life wa-tor generation sugarscape structure"
{ for app in $APPS; do for s in base new; do side $s $app; done; done
  for app in $APPS; do for s in new base; do side $s $app; done; done
  side base barnes-hut; side new barnes-hut --compare
} > $OUT/cap-ab.txt 2>&1
grep -E "^===|total_us" $OUT/cap-ab.txt | sed -E 's/.*(total_us=[0-9]+).*(tree_node_blocks=[0-9]+).*(checksum=[-0-9.]+).*/\1 \2 \3/; s/.*(total_us=[0-9]+).*(fingerprint=[0-9a-f]+).*/\1 \2/' | paste - - | tee $OUT/cap-summary.txt
grep -E "^(app|baseline|compare)" $OUT/cap-ab.txt | grep -i barnes | cut -c1-300 | tail -4
{ for s in base new new base; do echo "=== linux-scalability $s"
    case $s in base) D=$A ;; new) D=$N ;; esac
    DYNASOAR_CUBIN_DIR=$D/cubin timeout 100 $D/bin/linux-scalability --backend cuda --no-cuda-malloc --k 1,16,256 --reps 3 2>&1
  done; } > $OUT/ls-cap.txt 2>&1
grep -E "^===|^bench=" $OUT/ls-cap.txt | sed -E "s/bench=linux-scalability backend=cuda //; s/alloc_ms.*(ns_per_alloc=[0-9.]+ ns_per_free=[0-9.]+).*/\1/"
OUT=$OUT/suite timeout 300 bash gpu-bundle/run.sh tests > $OUT/gpu-tests.txt 2>&1
tail -3 $OUT/gpu-tests.txt
cd $OUT && tar czf suite.tgz suite && rm -rf suite
