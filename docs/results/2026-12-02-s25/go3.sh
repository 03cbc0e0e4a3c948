#!/usr/bin/env bash
# Call 3 (2026-12-02, twenty-fifth session): n-body's force kernels (the DSL's and the SOA
# baseline's) with their generic loads and stores naming the global state space (`global`), or
# their loads through the non-coherent path (`nc`), against the bundle's cubin (`base`), in the
# same binaries of 31f8e3b; cubins from ptx-global-loads.py and scripts/cubin-variant.py --as.
set -u
SAVE=$OUT
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-base; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
declare -A DIR=([base]=$B/cubin [global]=$PWD/gpu-bundle/extra/global [nc]=$PWD/gpu-bundle/extra/nc)
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (models cubin 74351f504e77762e); global: $(ls gpu-bundle/extra/global), nc: $(ls gpu-bundle/extra/nc) (same name, variant PTX)"
  echo "command: bash docs/results/2026-12-02-s25/go3.sh ($1)"; }
run() { local app=$1 side=$2 t=$3; shift 3
  printf '%s %s %s ' $app $side "$*"; DYNASOAR_CUBIN_DIR=${DIR[$side]} timeout $t $B/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|momentum=[^ ]*\|checksum=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -1 /tmp/run.log | cut -c1-160)"; echo; }
{ hdr "nbody --backend cuda --no-progress --impl IMPL, order base global nc nc global base"
  for impl in dynasoar soa; do for s in base global nc nc global base; do run nbody $s 20 --impl $impl; done; done
} > $SAVE/global-loads-ab.txt 2>&1
cat $SAVE/global-loads-ab.txt
