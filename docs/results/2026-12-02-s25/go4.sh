#!/usr/bin/env bash
# Call 4 (2026-12-02, twenty-fifth session): the non-coherent loads of call 3 in n-body's and
# collision's force kernels, DSL and SOA baseline (`ncall`, ptx-global-loads.py --space nc on the
# four entries), and the same with the DSL n-body kernel's 64-bit position loads split into two
# 32-bit loads each (`nc2`: what a per-field load without the layout's alignment would give),
# against the bundle's cubin (`base`), in the same binaries of 31f8e3b.
set -u
SAVE=$OUT
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-base; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
declare -A DIR=([base]=$B/cubin [ncall]=$PWD/gpu-bundle/extra/ncall [nc2]=$PWD/gpu-bundle/extra/nc2)
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (models cubin 74351f504e77762e); ncall and nc2: the same name, variant PTX"
  echo "command: bash docs/results/2026-12-02-s25/go4.sh ($1)"; }
run() { local app=$1 side=$2 t=$3; shift 3
  printf '%s %s %s ' $app $side "$*"; DYNASOAR_CUBIN_DIR=${DIR[$side]} timeout $t $B/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|momentum=[^ ]*\|checksum=[^ ]*\|fingerprint=[^ ]*\|bodies=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -1 /tmp/run.log | cut -c1-160)"; echo; }
{ hdr "APP --backend cuda --no-progress --impl IMPL, n-body order base ncall nc2 nc2 ncall base, collision base ncall ncall base"
  for s in base ncall nc2 nc2 ncall base; do run nbody $s 20 --impl dynasoar; done
  for impl in dynasoar soa; do for s in base ncall ncall base; do run collision $s 20 --impl $impl; done; done
} > $SAVE/nc-loads-ab.txt 2>&1
cat $SAVE/nc-loads-ab.txt
