#!/usr/bin/env bash
# Call 1: (a) the frees' release write (atom.release.gpu AND, no fence.acq_rel before it) as a
# models cubin for the bundle of 00ab946 ("rel"), and, as an upper bound only, the same with the
# reservation's acquire OR made relaxed ("ub": not a correct allocator, timing only), against the
# bundle's own cubin, order base rel ub ub rel base; (b) the GPU suite on the bundle of 00ab946.
set -u
N=/tmp/dynasoar-bundle; mkdir -p $N; [[ -d $N/bin ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
export DYNASOAR_DATA=gpu-bundle/data
run() { local d=$N/cubin; [[ $2 != base ]] && d=gpu-bundle/extra/$2
  printf '%s %s ' $1 $2; DYNASOAR_CUBIN_DIR=$d $N/bin/$1 --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (models PTX b1ba0509205cff59) against cubins of its working tree with the release write (rel) and rel with a relaxed reservation (ub)"
  echo "command: bash docs/results/2026-11-30-s11/go1.sh"
  for a in game-of-life wa-tor traffic structure generation sugarscape; do for s in base rel ub ub rel base; do run $a $s; done; done
} > $OUT/rel-ab.txt 2>&1
cat $OUT/rel-ab.txt
OUT=$OUT/t bash gpu-bundle/run.sh tests > /dev/null 2>&1; echo "tests rc=$?"
grep -E "FAIL|steps" $OUT/t/summary.txt | tail -5
