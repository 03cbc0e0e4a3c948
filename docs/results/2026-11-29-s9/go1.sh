#!/usr/bin/env bash
# Call 1: the allocator without its coalescing-miss fallback (a lane that its warp's hand-out
# skipped no longer searches again on its own: a second inlined copy of the search in every
# allocating kernel), on the bundle of 928f148 with a models cubin of the variant's PTX
# (scripts/cubin-variant.py --as 77fb1a8ed878b1ec): nofb = the variant with main's caps,
# nofb-g80 = the same with the Game of Life's heap at 80 registers (64 in main).
set -u
B=/tmp/b; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
for v in nofb nofb-g80; do mkdir -p /tmp/$v && cp $B/cubin/* /tmp/$v/ && cp gpu-bundle/extra/$v/*.cubin /tmp/$v/; done
export DYNASOAR_DATA=gpu-bundle/data
run() { local d=$B/cubin; [[ $2 != base ]] && d=/tmp/$2
  printf '%s %s ' $1 $2; DYNASOAR_CUBIN_DIR=$d $B/bin/$1 --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base = bundle $(cat gpu-bundle/COMMIT) (models PTX 77fb1a8ed878b1ec); nofb, nofb-g80 = its binaries with the variant's models cubin (PTX 093e4d6e86a5a406)"
  echo "command: bash docs/results/2026-11-29-s9/go1.sh"
  for s in base nofb nofb-g80 nofb-g80 nofb base; do run game-of-life $s; done
  for a in wa-tor traffic sugarscape generation; do for s in base nofb nofb base; do run $a $s; done; done
  for s in base nofb; do run barnes-hut $s; done
} > $OUT/nofb-ab.txt 2>&1
cat $OUT/nofb-ab.txt
