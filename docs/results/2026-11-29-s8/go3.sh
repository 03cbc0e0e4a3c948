#!/usr/bin/env bash
# Call 3: a reservation that finds its block reused by another class gives its slots back with
# one AND (and the active bit where it had filled the block) instead of a full free
# (variant-rollback.diff): rb1 = that, at the apps' caps; rb2 = that, with Wa-Tor's and the Game
# of Life's allocating kernels capped at 64 instead of 80. On the bundle's binaries with either
# models cubin.
set -u
B=/tmp/b; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
for v in rb1 rb2; do mkdir -p /tmp/$v && cp $B/cubin/* /tmp/$v/ && cp gpu-bundle/extra/$v/085ce1dd88b7bb65.sm_90.cubin /tmp/$v/; done
export DYNASOAR_DATA=gpu-bundle/data
L=$OUT/rollback-ab.txt
run() { # app side
  local d=$B/cubin; [[ $2 != base ]] && d=/tmp/$2
  printf '%s %s ' $1 $2; DYNASOAR_CUBIN_DIR=$d $B/bin/$1 --backend cuda --no-progress 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*\|checksum=[0-9.e+-]*' | tr '\n' ' '; echo
}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; echo "commit: base = bundle $(cat gpu-bundle/COMMIT) (models PTX 085ce1dd88b7bb65); rb1, rb2 = its binaries with the models cubin of variant-rollback.diff (PTX 29f8f936dec14766; rb2 with .maxnreg 64 on GolHeap Alive/Candidate::update and OceanHeap Fish/Shark::update)"
  echo "command: bash docs/results/2026-11-29-s8/go3.sh"
  for app in game-of-life wa-tor; do for s in base rb1 rb2 rb2 rb1 base; do run $app $s; done; done
  for app in traffic generation sugarscape structure; do for s in base rb1 rb1 base; do run $app $s; done; done
  for s in base rb1; do run barnes-hut $s; done
} > $L 2>&1
cat $L
