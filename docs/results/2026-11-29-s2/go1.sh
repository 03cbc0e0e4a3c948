#!/usr/bin/env bash
# Call 1 (2026-11-29, second session). Collision's two device_reduce methods on 8 lanes (main:
# the bundle of 48a1f64, models PTX 30b5bf8f1d8ddaaf, as main's f4e5bcd) against 16 and 32
# lanes (v16, v32: collision.rs with `lanes = 16` / `lanes = 32` on compute_force and
# prepare_merge, built by scripts/gpu-quick.sh collision on f4e5bcd).
# 1. Full runs, order main v16 v32 v32 v16 main.
# 2. Per-kernel times (DYNASOAR_PROFILE=1) of each.
# 3. The body count and time after 50, 100, 200, 400, 800 and 1200 steps (main).
# 4. --compare on v16 and v32 (the SOA and AOS baselines' results checked against each).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; mkdir -p $B /tmp/v16 /tmp/v32
[[ -x $B/bin/nbody ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
for v in v16 v32; do xz -dc gpu-bundle/extra/$v.tar.xz | tar xf - -C /tmp/$v; done
export DYNASOAR_DATA=$PWD/gpu-bundle/data
bin() { case $1 in main) echo $B/bin ;; *) echo /tmp/$1/bin ;; esac; }
dir() { case $1 in main) echo $B/cubin ;; *) echo /tmp/$1/cubin ;; esac; }
side() { local s=$1; shift; echo "=== $s $*"
  DYNASOAR_CUBIN_DIR=$(dir $s) timeout ${LIMIT:-120} "$(bin $s)/$1" --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in main v16 v32 v32 v16 main; do side $s collision; done; } > $OUT/lanes-ab.txt 2>&1
cat $OUT/lanes-ab.txt | cut -c1-240
{ for s in main v16 v32; do echo "=== $s collision DYNASOAR_PROFILE=1"
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$(dir $s) timeout 60 $(bin $s)/collision --backend cuda --no-progress 2>&1
  done; } > $OUT/lanes-profile.txt 2>&1
grep -E "^===|compute_force|prepare_merge|rank " $OUT/lanes-profile.txt
{ for n in 50 100 200 400 800 1200; do side main collision --steps $n; done; } > $OUT/trajectory.txt 2>&1
cat $OUT/trajectory.txt | cut -c1-240
{ for s in v16 v32; do echo "=== $s collision --compare"
    DYNASOAR_CUBIN_DIR=$(dir $s) timeout 150 $(bin $s)/collision --backend cuda --no-progress --compare 2>&1 | tail -8
  done; } > $OUT/lanes-compare.txt 2>&1
cat $OUT/lanes-compare.txt
