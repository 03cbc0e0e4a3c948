#!/usr/bin/env bash
# Call 3 (2026-11-28): how far ahead the streaming do-all loop prefetches. The bundle of f0b0f94
# (models PTX aa8e7f69bde163e3) runs its own cubin (base: one round ahead) and cubins of the
# working tree's device code (handle decode without the 0-means-64 case) with PREFETCH_ROUNDS
# 1, 2, 4, 8 (d1: 46301a9317dba7ce, d2: 42eef554130ee278, d4: 6aa891aed4c2b2e4, d8:
# 641af0d787d558ac). field-access (x += 1.0 over 16M objects, 20 reps, default loop = streaming)
# in the order base d1 d2 d4 d8 d8 d4 d2 d1 base; then the apps with streaming kernels (Game of
# Life, Sugarscape, generation) base d1 d2 d4 d8, and once more reversed. (The call ran twice: the
# first passed field-access an option it does not take; its app runs are the ones kept.)
[[ ${ONLY_FIELD_ACCESS:-0} == 1 ]] && SKIP_APPS=1
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
B=/tmp/bundle; mkdir -p $B
[[ -x $B/bin/field-access ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_DATA=$PWD/gpu-bundle/data
cubin() { case $1 in base) echo $B/cubin ;; *) echo $PWD/gpu-bundle/extra/$1 ;; esac; }
side() { local s=$1 app=$2; shift 2; echo "=== $s $app $*"
  DYNASOAR_CUBIN_DIR=$(cubin $s) "$B/bin/$app" --backend cuda "$@" 2>&1; }
{ for s in base d1 d2 d4 d8 d8 d4 d2 d1 base; do side $s field-access; done; } > $OUT/prefetch-field-access.txt 2>&1
grep -E "^===|default|streaming|plain|copy|array" $OUT/prefetch-field-access.txt | cut -c1-180
[[ ${SKIP_APPS:-0} == 1 ]] && exit 0
{ for s in base d1 d2 d4 d8 d8 d4 d2 d1 base; do
    for app in game-of-life sugarscape generation; do side $s $app --no-progress; done; done; } > $OUT/prefetch-apps.txt 2>&1
grep -E "^===|total_us" $OUT/prefetch-apps.txt | sed -E 's/(total_us=[0-9]+).*/\1/' | paste - - | cut -c1-200
