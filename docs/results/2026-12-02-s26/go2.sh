#!/usr/bin/env bash
# Call 2 (2026-12-02, twenty-sixth session): why call 1's `field` cubin ran n-body slower.
# Sides, all in the same binaries of 31f8e3b under the bundle's digest: base (the bundle's
# cubin), field (call 1's), ncall (last session's variant: every generic load of the two n-body
# force entries of the bundle's PTX as ld.global.nc), fieldrest (field's PTX with the force
# entries' remaining generic loads as ld.global.nc too: no spills at the cap of 48), field56
# (field's PTX with the force kernel capped at 56 registers instead of 48).
set -u
SAVE=$OUT
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-base; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
E=$PWD/gpu-bundle/extra
declare -A DIR=([base]=$B/cubin [field]=$E/field [ncall]=$E/ncall [fieldrest]=$E/fieldrest [field56]=$E/field56)
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (models cubin 74351f504e77762e); other sides: the same name, variant PTX (see go2.sh)"
  echo "command: bash docs/results/2026-12-02-s26/go2.sh ($1)"; }
run() { local app=$1 side=$2 t=$3; shift 3
  printf '%s %s %s ' $app $side "$*"; DYNASOAR_CUBIN_DIR=${DIR[$side]} timeout $t $B/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|momentum=[^ ]*\|checksum=[^ ]*\|fingerprint=[^ ]*\|bodies=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -1 /tmp/run.log | cut -c1-160)"; echo; }
{ hdr "nbody --backend cuda --no-progress --impl dynasoar; two rounds, the second in reverse order"
  for s in base field ncall fieldrest field56 field56 fieldrest ncall field base; do run nbody $s 20 --impl dynasoar; done
} > $SAVE/nbody-variants.txt 2>&1
cat $SAVE/nbody-variants.txt
