#!/usr/bin/env bash
# Call 2: the allocator loading a class's change flags before the reservation (variant-flags.diff)
# against main, on the bundle's binaries with either models cubin, order base variant variant base.
set -u
B=/tmp/b; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
mkdir -p /tmp/var && cp $B/cubin/* /tmp/var/ && cp gpu-bundle/extra/flags/085ce1dd88b7bb65.sm_90.cubin /tmp/var/
export DYNASOAR_DATA=gpu-bundle/data
L=$OUT/flags-ab.txt
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; echo "commit: base = bundle $(cat gpu-bundle/COMMIT) (models PTX 085ce1dd88b7bb65); variant = its binaries with the models cubin of variant-flags.diff (PTX b0773bb8e4642994)"
  echo "command: bash docs/results/2026-11-29-s8/go2.sh"
  for app in game-of-life wa-tor traffic generation sugarscape structure; do
    for side in base variant variant base; do
      d=$B/cubin; [[ $side == variant ]] && d=/tmp/var
      printf '%s %s ' $app $side; DYNASOAR_CUBIN_DIR=$d $B/bin/$app --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; echo
    done
  done
} > $L 2>&1
cat $L
