#!/usr/bin/env bash
# Call 7: the plain do-all loop with its header loads issued together and its first list entry
# loaded with the count of listed blocks (variant-early.diff; generation's Candidate::update
# capped at 96, as it had 96 registers before), as a models cubin for the bundle of 490bfc7
# (scripts/cubin-variant.py --as dcee76d9e6df6165), order base new new base.
set -u
N=/tmp/dynasoar-bundle; mkdir -p $N; [[ -d $N/bin ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
export DYNASOAR_DATA=gpu-bundle/data
run() { local d=$N/cubin; [[ $2 == new ]] && d=gpu-bundle/extra/early
  printf '%s %s ' $1 $2; DYNASOAR_CUBIN_DIR=$d $N/bin/$1 --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (models PTX dcee76d9e6df6165) against a cubin of 490bfc7 with variant-early.diff (Candidate::update at 96)"
  echo "command: bash docs/results/2026-11-30/go6.sh"
  for a in traffic structure wa-tor game-of-life generation sugarscape nbody; do for s in base new new base; do run $a $s; done; done
} > $OUT/early-ab.txt 2>&1
cat $OUT/early-ab.txt
{ for s in base new; do d=$N/cubin; [[ $s == new ]] && d=gpu-bundle/extra/early
    echo "=== traffic $s"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$d $N/bin/traffic --backend cuda --no-progress 2>&1 | grep -v "^\s*$" | head -12
  done; } > $OUT/early-profile.txt 2>&1
cat $OUT/early-profile.txt
