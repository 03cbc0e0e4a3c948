#!/usr/bin/env bash
# Call 5 (2026-11-30, seventeenth session): searching around a full note first (`near`: the
# working tree's allocator on main 081b4d7, a warp's last-block note keeps a block that filled
# up, flagged, and the next search looks at the active bitmap's bottom container around it
# before searching from the top). The bundle of 081b4d7 (base) against the same binaries with
# the variant's models cubin (scripts/cubin-variant.py --as); and go3.sh's timing build of
# traffic's `make_new` on either allocator (tb: base, tn: near; variant-timing.diff).
# Order base near near base.
set -u
export DYNASOAR_DATA=$PWD/gpu-bundle/data
B=/tmp/b-new; rm -rf $B; mkdir -p $B; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
d=/tmp/c-near; rm -rf $d; cp -r $B/cubin $d; cp gpu-bundle/extra/near/*.cubin $d/
for t in tb tn; do T=/tmp/$t; rm -rf $T; mkdir -p $T; cp gpu-bundle/extra/$t/*.cubin $T/; xz -dc gpu-bundle/extra/$t/traffic.xz > $T/traffic; chmod +x $T/traffic; done
dir() { if [[ $1 == base ]]; then echo $B/cubin; else echo /tmp/c-$1; fi; }
hdr() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  echo "commit: bundle $(cat gpu-bundle/COMMIT) (PTX for sm_90), the variant's models cubin of it; timing builds tb/tn (go5.sh's header)"
  echo "command: bash docs/results/2026-11-30-s17/go5.sh ($1)"; }
{ hdr "timing builds: traffic --backend cuda --no-progress, order tb tn tn tb"
  for t in tb tn tn tb; do printf '%s ' $t; DYNASOAR_CUBIN_DIR=/tmp/$t /tmp/$t/traffic --backend cuda --no-progress 2>&1 | grep -E 'instr|^app=' | grep -o 'mean [0-9]*\|hist.*\|total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; echo; done
} > $OUT/near-timing.txt 2>&1
cat $OUT/near-timing.txt
run() { local app=$1 side=$2; shift 2
  printf '%s %s ' $app $side; DYNASOAR_CUBIN_DIR=$(dir $side) $B/bin/$app --backend cuda --no-progress "$@" 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[0-9a-f]*' | tr '\n' ' '; echo; }
{ hdr "APP --backend cuda --no-progress, order base near near base"
  for a in traffic game-of-life wa-tor generation sugarscape; do for s in base near near base; do run $a $s; done; done
} > $OUT/near-ab.txt 2>&1
cat $OUT/near-ab.txt
{ hdr "DYNASOAR_PROFILE=1 APP --backend cuda --no-progress, base then near"
  for a in traffic game-of-life wa-tor; do for s in base near; do
    echo "=== $a $s"; DYNASOAR_PROFILE=1 DYNASOAR_CUBIN_DIR=$(dir $s) $B/bin/$a --backend cuda --no-progress 2>&1 | grep -v '^device time' | head -14
  done; done
} > $OUT/near-profile.txt 2>&1
grep -E '===|create_car|update' $OUT/near-profile.txt | cut -c1-120
