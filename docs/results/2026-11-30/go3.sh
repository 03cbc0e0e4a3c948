#!/usr/bin/env bash
# Call 3: n-body's force loop on a ranked list folded in pairs (`lanes = 8, pairs`) instead of
# the dense walk, the list built for full blocks too (variant-nbpairs.diff; scripts/gpu-quick.sh
# nbody) against the bundle of 50e5a50 (main's n-body device and host code), order base new new
# base; then the variant once with --compare and once profiled.
set -u
N=/tmp/dynasoar-bundle; mkdir -p $N; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
Q=/tmp/quick; mkdir -p $Q; xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
run() { local b=$N/bin d=$N/cubin; [[ $1 == new ]] && { b=$Q/bin; d=$Q/cubin; }
  printf 'nbody %s ' $1; DYNASOAR_CUBIN_DIR=$d $b/nbody --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base = bundle $(cat gpu-bundle/COMMIT) (models PTX 1187f8f9f7e64f07); new = 262e0c6 with variant-nbpairs.diff (scripts/gpu-quick.sh nbody, models PTX $(ls $Q/cubin | cut -c1-16))"
  echo "command: bash docs/results/2026-11-30/go3.sh"
  for s in base new new base; do run $s; done
  echo "--- new, --compare"
  DYNASOAR_CUBIN_DIR=$Q/cubin $Q/bin/nbody --backend cuda --no-progress --compare 2>&1 | tail -12
  echo "--- new, DYNASOAR_PROFILE=1"
  DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$Q/cubin $Q/bin/nbody --backend cuda --no-progress 2>&1 | grep -v "^\s*$" | head -14
} > $OUT/nbpairs-ab.txt 2>&1
cat $OUT/nbpairs-ab.txt
