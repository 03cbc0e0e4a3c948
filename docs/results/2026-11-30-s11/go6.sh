#!/usr/bin/env bash
# Call 6: the bundle of d18b296, DYNASOAR_DEPENDENT_LAUNCH=0 (off) against unset (on), order off
# on on off: Barnes-Hut and collision (direct launches), and generation, Sugarscape and structure
# with --graph (each step replayed as a captured CUDA graph).
set -u
N=/tmp/dynasoar-bundle; mkdir -p $N; [[ -d $N/bin ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
export DYNASOAR_DATA=gpu-bundle/data
run() { local v=1; [[ $2 == off ]] && v=0
  printf '%s %s %s ' $1 "$3" $2; DYNASOAR_DEPENDENT_LAUNCH=$v DYNASOAR_CUBIN_DIR=$N/cubin $N/bin/$1 --backend cuda --no-progress $3 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90), DYNASOAR_DEPENDENT_LAUNCH=0 (off) against =1 (on)"
  echo "command: bash docs/results/2026-11-30-s11/go6.sh"
  for a in barnes-hut collision; do for s in off on on off; do run $a $s ""; done; done
  for a in generation sugarscape structure; do for s in off on on off; do run $a $s --graph; done; done
} > $OUT/pdl-ab2.txt 2>&1
cat $OUT/pdl-ab2.txt
