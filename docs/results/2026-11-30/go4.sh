#!/usr/bin/env bash
# Call 4: the GPU suite and all nine apps with --compare on the bundle of main (blocks of 128
# threads where more threads reside; Wa-Tor's heap at 72 registers, generation's
# Alive::update at 96, traffic's Car::advance at 56); then lower caps on three kernels with the
# bundle's binaries (cubin gpu-bundle/extra/c3: generation's updates at 80, traffic's
# Car::advance at 48, Barnes-Hut's BodyNode::insert at 72; order base c3 c3 base), and the SASS
# of traffic's create_car for a later look.
# Two calls: `go4.sh suite` (call 4) and `go4.sh caps` (call 5).
set -u
if [[ ${1:-} == suite ]]; then
mkdir -p /tmp/t /tmp/a
OUT=/tmp/t bash gpu-bundle/run.sh tests > /tmp/t/stdout.txt 2>&1; echo "tests rc=$?"
cp /tmp/t/summary.txt $OUT/gpu-tests.txt
OUT=/tmp/a bash gpu-bundle/run.sh apps > /tmp/a/stdout.txt 2>&1; echo "apps rc=$?"
cp /tmp/a/summary.txt $OUT/gpu-apps.txt
tail -40 $OUT/gpu-tests.txt | grep -E "FAIL|steps"; grep -A12 "^app  " $OUT/gpu-apps.txt; grep -E "FAIL|steps" $OUT/gpu-apps.txt
exit 0
fi
N=/tmp/dynasoar-bundle; mkdir -p $N; [[ -d $N/bin ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
N=/tmp/dynasoar-bundle
export DYNASOAR_DATA=gpu-bundle/data
run() { local d=$N/cubin; [[ $2 == c3 ]] && d=gpu-bundle/extra/c3
  printf '%s %s ' $1 $2; DYNASOAR_CUBIN_DIR=$d $N/bin/$1 --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (models PTX dcee76d9e6df6165); c3 = the same PTX with three kernels capped lower (scripts/cubin-variant.py)"
  echo "command: bash docs/results/2026-11-30/go4.sh"
  for a in generation traffic; do for s in base c3 c3 base; do run $a $s; done; done
  for s in base c3; do run barnes-hut $s; done
} > $OUT/caps3-ab.txt 2>&1
cat $OUT/caps3-ab.txt
cuobjdump -sass -fun dynasoar_do__TrafficHeap__ProducerCell__create_car $N/cubin/*.cubin > $OUT/create-car-sass.txt 2>&1; wc -l $OUT/create-car-sass.txt
