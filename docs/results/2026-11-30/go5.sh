#!/usr/bin/env bash
# Call 6: the plain do-all loop without its one-entry lookahead in kernels of methods that
# create objects (variant-nola.diff: the next list entry loaded after the visit, so that it is
# not held across the allocation), as a models cubin for the bundle of 490bfc7
# (scripts/cubin-variant.py --as dcee76d9e6df6165), order base new new base.
set -u
N=/tmp/dynasoar-bundle; mkdir -p $N; [[ -d $N/bin ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
export DYNASOAR_DATA=gpu-bundle/data
run() { local d=$N/cubin; [[ $2 == new ]] && d=gpu-bundle/extra/nola
  printf '%s %s ' $1 $2; DYNASOAR_CUBIN_DIR=$d $N/bin/$1 --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (models PTX dcee76d9e6df6165) against a cubin of 490bfc7 with variant-nola.diff"
  echo "command: bash docs/results/2026-11-30/go5.sh"
  for a in wa-tor game-of-life traffic structure generation sugarscape; do for s in base new new base; do run $a $s; done; done
} > $OUT/nola-ab.txt 2>&1
cat $OUT/nola-ab.txt
