#!/usr/bin/env bash
# Call 2: the GPU suite on the bundle of eaa937d (a skipped lane raises SKIPPED_LANE instead of
# searching again), then its apps against the bundle of 928f148 (main before it;
# gpu-bundle/extra/old), order old new new old.
set -u
mkdir -p /tmp/t
OUT=/tmp/t bash gpu-bundle/run.sh tests > /tmp/t/stdout.txt 2>&1; echo "tests rc=$?"
cp /tmp/t/summary.txt $OUT/gpu-tests.txt
xz -c /tmp/t/gpu-suite.log > $OUT/gpu-suite.log.xz
N=/tmp/dynasoar-bundle; O=/tmp/old; mkdir -p $O && xz -dc gpu-bundle/extra/old/payload.tar.xz | tar xf - -C $O
export DYNASOAR_DATA=gpu-bundle/data
L=$OUT/nofb-bundle-ab.txt
run() { # app side
  local b=$N/bin d=$N/cubin
  [[ $2 == old ]] && { b=$O/bin; d=$O/cubin; }
  printf '%s %s ' $1 $2; DYNASOAR_CUBIN_DIR=$d $b/$1 --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo
}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: new = bundle $(cat gpu-bundle/COMMIT) (models PTX c3bc34593586d83b); old = bundle $(cat gpu-bundle/extra/old/COMMIT) (models PTX 77fb1a8ed878b1ec)"
  echo "command: bash docs/results/2026-11-29-s9/go2.sh"
  for app in game-of-life wa-tor traffic sugarscape generation; do for s in old new new old; do run $app $s; done; done
} > $L 2>&1
cat $L; echo; tail -45 $OUT/gpu-tests.txt
