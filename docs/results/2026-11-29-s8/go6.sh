#!/usr/bin/env bash
# Call 6: register caps after the give-back, on the bundle of 928f148 with models cubins of the
# same PTX and other caps (scripts/cubin-variant.py --as 77fb1a8ed878b1ec): g48 = the Game of
# Life's updates at 48 (64 in main), s64 = Sugarscape's Male::mate at 64 (80), b64 = Barnes-Hut's
# BodyNode::insert at 64 (80).
set -u
B=/tmp/b; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
for v in g48 s64 b64; do mkdir -p /tmp/$v && cp $B/cubin/* /tmp/$v/ && cp gpu-bundle/extra/$v/*.cubin /tmp/$v/; done
export DYNASOAR_DATA=gpu-bundle/data
run() { local d=$B/cubin; [[ $2 != base ]] && d=/tmp/$2
  printf '%s %s ' $1 $2; DYNASOAR_CUBIN_DIR=$d $B/bin/$1 --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base = bundle $(cat gpu-bundle/COMMIT) (models PTX 77fb1a8ed878b1ec); g48, s64, b64 = its binaries with other caps"
  echo "command: bash docs/results/2026-11-29-s8/go6.sh"
  for s in base g48 g48 base; do run game-of-life $s; done
  for s in base s64 s64 base; do run sugarscape $s; done
  for s in base b64; do run barnes-hut $s; done
} > $OUT/caps-ab.txt 2>&1
cat $OUT/caps-ab.txt
