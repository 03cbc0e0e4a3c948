#!/usr/bin/env bash
# Call 5 (2026-11-28): register caps on Barnes-Hut's tree kernels. The bundle of f0b0f94 (models
# PTX aa8e7f69bde163e3) with its cubin (base) and with cubins of the working tree's device code
# (PTX 76b57ce28ace1c40: the handle decode without its 0-means-64 case, measured alone in call 1)
# whose BodyNode::insert (154 registers uncapped) is capped at 64, 80, 96 (i64, i80, i96), and
# i80 with TreeNode::summarize and BodyNode::update capped at 40 (all). Full runs, order base
# i64 i80 i96 all, then reversed; then one run of base, i80 and all with DYNASOAR_PROFILE=1.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
B=/tmp/bundle; mkdir -p $B
[[ -x $B/bin/barnes-hut ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_DATA=$PWD/gpu-bundle/data
cubin() { case $1 in base) echo $B/cubin ;; *) echo $PWD/gpu-bundle/extra/$1 ;; esac; }
side() { local s=$1; shift; echo "=== $s $*"
  DYNASOAR_CUBIN_DIR=$(cubin $s) "$B/bin/barnes-hut" --backend cuda --no-progress "$@" 2>&1; }
{ for s in base i64 i80 i96 all all i96 i80 i64 base; do side $s; done
  for s in base i80 all; do DYNASOAR_PROFILE=1 side $s; done; } > $OUT/bh-caps.txt 2>&1
grep -E "^===|total_us|compute_force|insert|summarize|update" $OUT/bh-caps.txt | sed -E 's/(total_us=[0-9]+).*/\1/' | cut -c1-150
