#!/usr/bin/env bash
# Call 8 (2026-11-30, seventeenth session): (1) the allocator's paths on 805f0c4, as go4.sh did
# on 081b4d7 (a diagnostic build, variant-diag2.diff: counters also for notes flagged full and
# for the searches next to a note that found a block or none); (2) after a lost reservation,
# the next search looks next to the lost block first (lost: the bundle of 805f0c4's binaries
# with that models cubin, variant-lost.diff) against the bundle of 805f0c4 (base), order base
# lost lost base, and traffic profiled.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
D=/tmp/d2; rm -rf $D; mkdir -p $D; cp gpu-bundle/extra/diag2/*.cubin $D/; xz -dc gpu-bundle/extra/diag2/traffic.xz > $D/traffic; chmod +x $D/traffic
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: diagnostic build of 805f0c4 (PTX for sm_90; variant-diag2.diff)"
  echo "command: bash docs/results/2026-11-30-s17/go8.sh (traffic --backend cuda --no-progress [--steps N])"
  for steps in 12000 1000; do
    echo "=== steps $steps"; DYNASOAR_CUBIN_DIR=$D $D/traffic --backend cuda --no-progress --steps $steps 2>&1 | grep -E 'instr|diag|^app=' | cut -c1-400
  done
} > $OUT/make-new-paths-805f0c4.txt 2>&1
cat $OUT/make-new-paths-805f0c4.txt
B=/tmp/b-new; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
L=/tmp/c-lost; rm -rf $L; cp -r $B/cubin $L; cp gpu-bundle/extra/lost/*.cubin $L/
cub() { if [[ $1 == base ]]; then echo $B/cubin; else echo /tmp/c-$1; fi; }
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (device and host code of 805f0c4), lost: its binaries with a variant models cubin (PTX for sm_90)"
  echo "command: bash docs/results/2026-11-30-s17/go8.sh ($1)"; }
run() { local app=$1 side=$2; shift 2
  printf '%s %s ' $app $side; DYNASOAR_CUBIN_DIR=$(cub $side) $B/bin/$app --backend cuda --no-progress "$@" 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; echo; }
{ hdr "APP --backend cuda --no-progress, order base lost lost base"
  for a in traffic game-of-life generation wa-tor sugarscape; do for s in base lost lost base; do run $a $s; done; done
  for s in base lost; do echo "=== traffic profile $s"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$(cub $s) $B/bin/traffic --backend cuda --no-progress 2>&1 | grep -E 'create_car|Car__'; done
} > $OUT/lost-ab.txt 2>&1
cat $OUT/lost-ab.txt
