#!/usr/bin/env bash
# Call 5 (2026-11-28, third session): step graphs at the apps' default sizes. The bundle of
# 8930652, every app's DSL version without and with --graph (the step captured once as a CUDA
# graph and replayed, Runtime::capture / replay), order direct graph graph direct.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B
[[ -x $B/bin/traffic ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_DATA=$B/data DYNASOAR_CUBIN_DIR=$B/cubin
[[ -d $B/data ]] || export DYNASOAR_DATA=$PWD/gpu-bundle/data
side() { local s=$1 app=$2; echo "=== $s $app"
  local flag=""; [[ $s == graph ]] && flag=--graph
  timeout 60 "$B/bin/$app" --backend cuda --no-progress $flag 2>&1 | grep -E "^app=|rror"; }
{ for s in direct graph graph direct; do
    for app in game-of-life wa-tor generation structure traffic sugarscape nbody collision barnes-hut; do side $s $app; done
  done
} > $OUT/graph-default-sizes.txt 2>&1
grep -E "^===|total_us" $OUT/graph-default-sizes.txt | sed -E 's/(total_us=[0-9]+).*(fingerprint=[0-9a-f]+|checksum=[-0-9.e]+).*/\1 \2/' | cut -c1-150
