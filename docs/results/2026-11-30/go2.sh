#!/usr/bin/env bash
# Call 2: lower register caps on single kernels, now that do-alls run in blocks of 128 threads
# where more threads then reside (binaries of call 1, DYNASOAR_XBT unset: the choice as main
# makes it). Cubins from the models PTX 0c5f7e7ec515c447 (Wa-Tor's heap at 72), named for the
# binaries' PTX 1187f8f9f7e64f07 (scripts/cubin-variant.py --as): base0c5 with the apps' caps,
# caps2 also with generation's Alive::update at 96, structure's Spring::compute_force at 72,
# traffic's Car::advance at 56 and Sugarscape's Male::mate at 72. Order base caps2 caps2 base.
set -u
Q=/tmp/quick; mkdir -p $Q; xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
export DYNASOAR_DATA=gpu-bundle/data
unset DYNASOAR_XBT
run() { printf '%s %s ' $1 $2
  DYNASOAR_CUBIN_DIR=gpu-bundle/extra/$2 $Q/bin/$1 --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: 7ca8e92 with variant-xbt.diff (binaries of call 1, models PTX 1187f8f9f7e64f07); cubins of the models PTX 0c5f7e7ec515c447: base0c5 (the apps' caps), caps2 (four single kernels capped lower)"
  echo "command: bash docs/results/2026-11-30/go2.sh"
  for a in generation structure traffic sugarscape; do for s in base0c5 caps2 caps2 base0c5; do run $a $s; done; done
  for s in base0c5 caps2 caps2 base0c5; do run wa-tor $s; done
} > $OUT/caps2-ab.txt 2>&1
cat $OUT/caps2-ab.txt
