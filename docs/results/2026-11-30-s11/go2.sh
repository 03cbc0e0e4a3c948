#!/usr/bin/env bash
# Call 2: programmatic dependent launch on a chain of short dependent kernels (pdl.cu, CUDA C++,
# compiled here with nvcc), and per-kernel device times of five apps on the bundle of 00ab946.
set -u
cd gpu-bundle/pdl && nvcc -O3 -arch=sm_90 -o pdl pdl.cu && cd ../..
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: 3ed3753 (gpu-bundle/pdl/pdl.cu, nvcc -O3 -arch=sm_90; nvcc $(nvcc --version | grep -o 'release [0-9.]*'))"
  echo "command: bash docs/results/2026-11-30-s11/go2.sh"
  for n in 5000000 1000000 200000; do gpu-bundle/pdl/pdl $n; done
} > $OUT/pdl.txt 2>&1
cat $OUT/pdl.txt
N=/tmp/dynasoar-bundle; mkdir -p $N; [[ -d $N/bin ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
export DYNASOAR_DATA=gpu-bundle/data
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (models PTX b1ba0509205cff59)"
  echo "command: bash docs/results/2026-11-30-s11/go2.sh (DYNASOAR_PROFILE=1 APP --backend cuda --no-progress)"
  for a in game-of-life structure traffic wa-tor generation sugarscape; do echo "=== $a"
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$N/cubin $N/bin/$a --backend cuda --no-progress 2>&1 | grep -v "^\s*$" | grep -E "^(kernel|enumerate|dynasoar|rank|app=)" | head -24
  done; } > $OUT/profiles-00ab946.txt 2>&1
tail -30 $OUT/profiles-00ab946.txt
