#!/usr/bin/env bash
# Calls 5 and 7: every class 64 objects a block (the block size from the allocator's largest class
# instead of its smallest; variant-blocks64.diff), binaries and cubin of the variant
# (scripts/gpu-quick.sh, gpu-bundle/extra/quick) against the bundle of eaa937d, order base new
# new base; then one profiled run (DYNASOAR_PROFILE=1) of Wa-Tor and structure on each side.
set -u
N=/tmp/dynasoar-bundle; mkdir -p $N; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N
Q=/tmp/quick; mkdir -p $Q; xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
export DYNASOAR_DATA=gpu-bundle/data
run() { local b=$N/bin d=$N/cubin; [[ $2 == new ]] && { b=$Q/bin; d=$Q/cubin; }
  printf '%s %s ' $1 $2; DYNASOAR_CUBIN_DIR=$d $b/$1 --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: base = bundle $(cat gpu-bundle/COMMIT) (models PTX c3bc34593586d83b); new = eaa937d with variant-blocks64.diff (scripts/gpu-quick.sh, models PTX a1e8aa4298e1132a)"
  echo "command: bash docs/results/2026-11-29-s9/go5.sh"
  for a in wa-tor structure traffic sugarscape generation; do for s in base new new base; do run $a $s; done; done
  for s in base new; do run barnes-hut $s; done
} > $OUT/blocks64-ab.txt 2>&1
cat $OUT/blocks64-ab.txt
{ for a in wa-tor structure; do for s in base new; do
    b=$N/bin d=$N/cubin; [[ $s == new ]] && { b=$Q/bin; d=$Q/cubin; }
    echo "=== $a $s"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$d $b/$a --backend cuda --no-progress 2>&1 | grep -v "^\s*$" | head -40
  done; done; } > $OUT/blocks64-profile.txt 2>&1
grep -E "^===|decide|update|compute_force|enumerate|^app=" $OUT/blocks64-profile.txt | cut -c1-110
