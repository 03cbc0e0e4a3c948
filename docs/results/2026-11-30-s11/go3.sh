#!/usr/bin/env bash
# Call 3: (a) pdl.cu on the legacy default stream; (b) the bundle of d18b296 (PTX for sm_90, every
# entry point waits for the grids before it) with DYNASOAR_DEPENDENT_LAUNCH=0 (off) and unset
# (on: programmatic dependent launches), seven apps, order off on on off; (c) the GPU suite.
set -u
cd gpu-bundle/pdl && nvcc -O3 -arch=sm_90 -o pdl pdl.cu && cd ../..
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: d18b296 (docs/results/2026-11-30-s11/pdl.cu, nvcc -O3 -arch=sm_90)"
  echo "command: bash docs/results/2026-11-30-s11/go3.sh"
  for n in 5000000 1000000 200000; do gpu-bundle/pdl/pdl $n legacy; done
} > $OUT/pdl-legacy.txt 2>&1
cat $OUT/pdl-legacy.txt
N=/tmp/dynasoar-bundle; mkdir -p $N; [[ -d $N/bin ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
export DYNASOAR_DATA=gpu-bundle/data
run() { local v=1; [[ $2 == off ]] && v=0
  printf '%s %s ' $1 $2; DYNASOAR_DEPENDENT_LAUNCH=$v DYNASOAR_CUBIN_DIR=$N/cubin $N/bin/$1 --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90), DYNASOAR_DEPENDENT_LAUNCH=0 (off) against =1 (on)"
  echo "command: bash docs/results/2026-11-30-s11/go3.sh"
  for a in game-of-life wa-tor traffic structure generation sugarscape nbody; do for s in off on on off; do run $a $s; done; done
  DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$N/cubin $N/bin/traffic --backend cuda --no-progress 2>&1 | grep "device time per kernel"
} > $OUT/pdl-ab.txt 2>&1
cat $OUT/pdl-ab.txt
OUT=$OUT/t bash gpu-bundle/run.sh tests > /dev/null 2>&1; echo "tests rc=$?"
grep -E "FAIL|steps" $OUT/t/summary.txt | tail -5
