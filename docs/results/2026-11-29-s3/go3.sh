#!/usr/bin/env bash
# Call 4 (2026-11-29, third session). The bundle of 60bdddb (main: collision's compute_force with
# `pairs`) against (a) the same binaries with a models cubin without `pairs` on compute_force
# (nopairs, assembled under the bundle's digest 604641a9616de2cf) and (b) the bundle of c280da6
# (old, the previous main's binaries and cubin). Collision order main nopairs old old nopairs main;
# n-body and Wa-Tor main old old main (their kernels' PTX moved a little with the refactor);
# per-kernel times of collision on main and nopairs; --compare of collision and n-body on main;
# then the GPU suite (run.sh tests).
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
cat gpu-bundle/COMMIT
B=/tmp/dynasoar-bundle; O=/tmp/dynasoar-old; mkdir -p $B $O /tmp/v
xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
xz -dc gpu-bundle/extra/old-c280da6.tar.xz | tar xf - -C $O
xz -dc gpu-bundle/extra/nopairs.tar.xz | tar xf - -C /tmp/v
side() { local s=$1; shift; echo "=== $s $*"
  case $s in main) bin=$B/bin; cub=$B/cubin ;; nopairs) bin=$B/bin; cub=/tmp/v/nopairs ;; old) bin=$O/bin; cub=$O/cubin ;; esac
  DYNASOAR_CUBIN_DIR=$cub timeout ${LIMIT:-60} $bin/$1 --backend cuda --no-progress "${@:2}" 2>&1 | grep -E "^app=|rror"; }
{ for s in main nopairs old old nopairs main; do side $s collision; done
  for s in main old old main; do side $s nbody; side $s wa-tor; done; } > $OUT/pairs-ab.txt 2>&1
grep -E "^===|^app=" $OUT/pairs-ab.txt | sed -E 's/^(app=[a-z-]+).*(total_us=[0-9]+).* (checksum=[^ ]+).*/\1 \2 \3/' | paste - - 
{ for s in main nopairs; do echo "=== $s collision DYNASOAR_PROFILE=1"
    DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$([[ $s == main ]] && echo $B/cubin || echo /tmp/v/nopairs) timeout 60 $B/bin/collision --backend cuda --no-progress 2>&1
  done; } > $OUT/pairs-profile.txt 2>&1
grep -E "^===|compute_force|prepare_merge" $OUT/pairs-profile.txt | cut -c1-160
{ for a in collision nbody; do echo "=== main $a --compare"; DYNASOAR_CUBIN_DIR=$B/cubin timeout 120 $B/bin/$a --backend cuda --no-progress --compare 2>&1; done; } > $OUT/compare-60bdddb.txt 2>&1
grep -E "^===|^app=" $OUT/compare-60bdddb.txt | cut -c1-200
OUT=$OUT/suite bash gpu-bundle/run.sh tests > /dev/null 2>&1; echo "suite rc=$?"
cat $OUT/suite/summary.txt | tail -45
