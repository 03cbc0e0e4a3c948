#!/usr/bin/env bash
# Call 4: one inlined reserve_in for the last-block note and the search (the note is the search
# loop's first candidate; variant-uni.diff), on the bundle of eaa937d with a models cubin of the
# variant's PTX (scripts/cubin-variant.py --as c3bc34593586d83b), order base uni uni base.
set -u
N=/tmp/dynasoar-bundle; mkdir -p $N; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
for v in uni; do mkdir -p /tmp/$v && cp $N/cubin/* /tmp/$v/ && cp gpu-bundle/extra/$v/*.cubin /tmp/$v/; done
export DYNASOAR_DATA=gpu-bundle/data
run() { local d=$N/cubin; [[ $2 != base ]] && d=/tmp/$2
  printf '%s %s ' $1 $2; DYNASOAR_CUBIN_DIR=$d $N/bin/$1 --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base = bundle $(cat gpu-bundle/COMMIT) (models PTX c3bc34593586d83b); uni = its binaries with the variant's models cubin (PTX 594728868782adc2)"
  echo "command: bash docs/results/2026-11-29-s9/go4.sh"
  for a in game-of-life wa-tor traffic sugarscape generation; do for s in base uni uni base; do run $a $s; done; done
  for s in base uni; do run barnes-hut $s; done
} > $OUT/uni-ab.txt 2>&1
cat $OUT/uni-ab.txt
