#!/usr/bin/env bash
# Call 1 (2026-11-30, nineteenth session): the kernels' preferred shared-memory carve-out
# (DYNASOAR_CARVEOUT, percent of the largest shared memory, set on every function the runtime
# loads; unset = the driver's choice). Quick payload of main's code plus the knob (cubin equal
# to the bundle's), DSL and SOA baselines, several carve-outs, in mirrored orders.
set -u
Q=/tmp/quick; rm -rf $Q; mkdir -p $Q; xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
export DYNASOAR_DATA=$PWD/gpu-bundle/data DYNASOAR_CUBIN_DIR=$Q/cubin
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: 582da07's device code (cubin $(ls $Q/cubin)), host with the DYNASOAR_CARVEOUT knob (uncommitted variant)"
  echo "command: bash docs/results/2026-11-30-s19/go1.sh ($1)"; }
run() { local app=$1 c=$2 t=$3; shift 3
  printf '%s carve=%s %s ' $app $c "$*"
  if [[ $c == u ]]; then unset DYNASOAR_CARVEOUT; else export DYNASOAR_CARVEOUT=$c; fi
  timeout $t $Q/bin/$app --backend cuda --no-progress "$@" > /tmp/run.log 2>&1; rc=$?
  unset DYNASOAR_CARVEOUT
  grep '^app=' /tmp/run.log | grep -o 'impl=[a-z]*\|total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; [[ $rc != 0 ]] && printf 'rc=%s %s' $rc "$(tail -1 /tmp/run.log | cut -c1-160)"; echo; }
{ hdr "APP --backend cuda --no-progress [--impl I], carve-outs in mirrored order"
  for i in dynasoar soa; do for c in u 0 1 10 100 100 10 1 0 u; do run nbody $c 20 --impl $i; done; done
  for a in game-of-life wa-tor traffic structure sugarscape collision; do
    for i in dynasoar soa; do for c in u 0 1 1 0 u; do run $a $c 20 --impl $i; done; done; done
} > $OUT/carve-ab.txt 2>&1
cat $OUT/carve-ab.txt
{ hdr "ncu, one launch of n-body's force kernels, 5 steps"
  for c in u 0 1 10; do for k in compute_force nbody_soa_force; do
    i=dynasoar; [[ $k == nbody_soa_force ]] && i=soa
    echo "=== carve=$c $k"
    if [[ $c != u ]]; then export DYNASOAR_CARVEOUT=$c; fi
    timeout 60 ncu -k regex:$k --launch-skip 2 --launch-count 1 --metrics launch__shared_mem_config_size,l1tex__t_sector_hit_rate.pct,gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active $Q/bin/nbody --backend cuda --no-progress --steps 5 --impl $i 2>&1 | grep -E 'launch__|l1tex__|gpu__time|sm__warps'
    unset DYNASOAR_CARVEOUT
  done; done
} > $OUT/carve-ncu.txt 2>&1
cat $OUT/carve-ncu.txt
