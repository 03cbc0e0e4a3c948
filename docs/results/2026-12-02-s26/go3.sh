#!/usr/bin/env bash
# Call 3 (2026-12-02, twenty-sixth session): n-body's force loads as LLVM loads that the back
# end emits as ld.global.nc (`field2`: the `ldg` intrinsic instead of call 1's `asm!`), against
# base (the bundle's cubin), ncall (every generic load of the force entries as ld.global.nc) and
# fieldrest2 (field2 with the entries' other generic loads as ld.global.nc too); then ncu of one
# force launch of base, field2 and ncall. Same binaries of 31f8e3b, cubins under its digest.
set -u
SAVE=$OUT
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-base; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
E=$PWD/gpu-bundle/extra
declare -A DIR=([base]=$B/cubin [field2]=$E/field2 [ncall]=$E/ncall [fieldrest2]=$E/fieldrest2)
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (models cubin 74351f504e77762e); other sides: the same name, variant PTX (see go3.sh)"
  echo "command: bash docs/results/2026-12-02-s26/go3.sh ($1)"; }
run() { local app=$1 side=$2 t=$3; shift 3
  printf '%s %s %s ' $app $side "$*"; DYNASOAR_CUBIN_DIR=${DIR[$side]} timeout $t $B/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  grep '^app=' /tmp/run.log | grep -o 'total_us=[0-9]*\|momentum=[^ ]*\|checksum=[^ ]*\|fingerprint=[^ ]*\|bodies=[^ ]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -1 /tmp/run.log | cut -c1-160)"; echo; }
{ hdr "nbody --backend cuda --no-progress --impl dynasoar; two rounds, the second in reverse order"
  for s in base field2 ncall fieldrest2 fieldrest2 ncall field2 base; do run nbody $s 20 --impl dynasoar; done
} > $SAVE/nbody-ldg.txt 2>&1
cat $SAVE/nbody-ldg.txt
for s in base field2 ncall; do
  { hdr "ncu --kernel-name regex:Body__compute_force\$ --launch-skip 3 --launch-count 1 --section SpeedOfLight --section WarpStateStats --section InstructionStats --section Occupancy nbody --backend cuda --no-progress --impl dynasoar --steps 6 ($s)"
    DYNASOAR_CUBIN_DIR=${DIR[$s]} timeout 120 ncu --kernel-name 'regex:Body__compute_force$' --launch-skip 3 --launch-count 1 --section SpeedOfLight --section WarpStateStats --section InstructionStats --section Occupancy $B/bin/nbody --backend cuda --no-progress --impl dynasoar --steps 6
  } > $SAVE/ncu-$s.txt 2>&1
  grep -E "Duration|Executed Instructions |Registers Per|Achieved Occupancy|Warp Cycles Per Issued" $SAVE/ncu-$s.txt | sed "s/^/$s: /"
done
