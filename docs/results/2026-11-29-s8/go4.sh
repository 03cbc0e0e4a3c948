#!/usr/bin/env bash
# Call 4: the GPU suite on the bundle of the give-back, then its apps against the bundle of
# 2fb8a66 (main before it; gpu-bundle/extra/old), order old new new old, and traffic's
# create_car capped at 80 and 96 instead of 64 (cc80, cc96: the new bundle's binaries with a
# models cubin assembled from the same PTX with that cap).
set -u
mkdir -p /tmp/t
OUT=/tmp/t bash gpu-bundle/run.sh tests > /tmp/t/stdout.txt 2>&1; echo "tests rc=$?"
cp /tmp/t/summary.txt $OUT/gpu-tests.txt
grep -E "storm|out_of_memory|rolled|stranded" /tmp/t/gpu-suite.log | head -30 > $OUT/tests-storms.txt
xz -c /tmp/t/gpu-suite.log > $OUT/gpu-suite.log.xz
N=/tmp/dynasoar-bundle; O=/tmp/old; mkdir -p $O && xz -dc gpu-bundle/extra/old/payload.tar.xz | tar xf - -C $O
for v in cc80 cc96; do mkdir -p /tmp/$v && cp $N/cubin/* /tmp/$v/ && cp gpu-bundle/extra/$v/*.cubin /tmp/$v/; done
export DYNASOAR_DATA=gpu-bundle/data
L=$OUT/give-back-ab.txt
run() { # app side
  local b=$N/bin d=$N/cubin
  case $2 in old) b=$O/bin; d=$O/cubin;; cc80|cc96) d=/tmp/$2;; esac
  printf '%s %s ' $1 $2; DYNASOAR_CUBIN_DIR=$d $b/$1 --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo
}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: new = bundle $(cat gpu-bundle/COMMIT); old = bundle $(cat gpu-bundle/extra/old/COMMIT) (models PTX 085ce1dd88b7bb65); cc80/cc96 = new with create_car capped at 80/96"
  echo "command: bash docs/results/2026-11-29-s8/go4.sh"
  for app in game-of-life wa-tor sugarscape generation structure; do for s in old new new old; do run $app $s; done; done
  for s in old new cc80 cc96 cc96 cc80 new old; do run traffic $s; done
  for s in old new; do run barnes-hut $s; done
} > $L 2>&1
cat $L; echo; tail -45 $OUT/gpu-tests.txt
