#!/usr/bin/env bash
# Call 1 (2026-12-02, twenty-sixth session): `device_reduce` reading the folded fields through
# the read-only path (`Class::load_unchanging`, `ld.global.nc`) and the ranked list's entries
# too (`field`: the models PTX of the working tree built for sm_90, assembled under the
# bundle's digest), against the bundle's cubin (`base`), in the same binaries of 31f8e3b.
set -u
SAVE=$OUT
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-base; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
declare -A DIR=([base]=$B/cubin [field]=$PWD/gpu-bundle/extra/field)
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (models cubin 74351f504e77762e); field: the same name, the working tree's models PTX (device code of the commit that adds load_unchanging)"
  echo "command: bash docs/results/2026-12-02-s26/go1.sh ($1)"; }
run() { local app=$1 side=$2 t=$3; shift 3
  printf '%s %s %s ' $app $side "$*"; DYNASOAR_CUBIN_DIR=${DIR[$side]} timeout $t $B/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|momentum=[^ ]*\|checksum=[^ ]*\|fingerprint=[^ ]*\|bodies=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -1 /tmp/run.log | cut -c1-160)"; echo; }
{ hdr "APP --backend cuda --no-progress --impl IMPL; DSL order base field field base base field, SOA base field"
  for s in base field field base base field; do run nbody $s 20 --impl dynasoar; done
  for s in base field; do run nbody $s 20 --impl soa; done
  for s in base field field base base field; do run collision $s 20 --impl dynasoar; done
  for s in base field; do run collision $s 20 --impl soa; done
} > $SAVE/field-loads-ab.txt 2>&1
cat $SAVE/field-loads-ab.txt
