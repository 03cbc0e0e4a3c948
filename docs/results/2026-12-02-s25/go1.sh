#!/usr/bin/env bash
# Call 1 (2026-12-02, twenty-fifth session): a branch-free correctly rounded square root.
# (1) sqrt-exhaustive.cu: the same PTX sequence against sqrt.rn.f32 for all 2^32 inputs;
# (2) n-body and collision, DSL and SOA baseline, main's cubin (base) against the variant's
#     (new, gpu-bundle/extra/sqrt, the same binaries), order base new new base.
set -u
SAVE=$OUT
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-base; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
declare -A DIR=([base]=$B/cubin [new]=$PWD/gpu-bundle/extra/sqrt)
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (cubin $(ls $B/cubin | tr '\n' ' ')); new: gpu-bundle/extra/sqrt/$(ls gpu-bundle/extra/sqrt) assembled from the models' PTX with docs/results/2026-12-02-s25/variant-sqrt.diff applied"
  echo "command: bash docs/results/2026-12-02-s25/go1.sh ($1)"; }
run() { local app=$1 side=$2 t=$3; shift 3
  printf '%s %s %s ' $app $side "$*"; DYNASOAR_CUBIN_DIR=${DIR[$side]} timeout $t $B/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -1 /tmp/run.log | cut -c1-160)"; echo; }
{ hdr "nvcc -O3 -arch=sm_90 sqrt-exhaustive.cu"
  nvcc -O3 -arch=sm_90 docs/results/2026-12-02-s25/sqrt-exhaustive.cu -o /tmp/sqrt-exhaustive && /tmp/sqrt-exhaustive; echo "rc=$?"
} > $SAVE/sqrt-exhaustive.txt 2>&1
cat $SAVE/sqrt-exhaustive.txt
{ hdr "APP --backend cuda --no-progress --impl IMPL, order base new new base"
  for a in nbody:20 collision:20; do for impl in dynasoar soa; do
    for s in base new new base; do run ${a%%:*} $s ${a##*:} --impl $impl; done; done; done
} > $SAVE/sqrt-ab.txt 2>&1
cat $SAVE/sqrt-ab.txt
