#!/usr/bin/env bash
# Call 3 (2026-12-03, twenty-ninth session): all nine apps with --compare on the bundle of the
# ByIndex change; and Wa-Tor on the CPU backend of this machine (no GPU used), 2048 x 2048 for
# 20 steps, main's binary (base) against the bundle's (new), 1 and 16 workers, order base new
# new base, with the sequential version's time and fingerprint.
set -u
SAVE=$OUT
C=$(cat gpu-bundle/COMMIT); C=${C/+/-}
OUT=/tmp/a timeout 300 bash gpu-bundle/run.sh apps > /tmp/apps.log 2>&1; echo "apps rc=$?"
cp /tmp/a/summary.txt $SAVE/gpu-apps-$C.txt
tail -30 /tmp/a/summary.txt | head -14
N=/tmp/b-new; [[ -x $N/bin/wa-tor ]] || { mkdir -p $N; xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $N; }
B=/tmp/b-base; [[ -x $B/bin/wa-tor ]] || { mkdir -p $B; xz -dc gpu-bundle/extra/base.tar.xz | tar xf - -C $B; }
{ echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2) x $(nproc) (the GPU machine; no GPU used)"
  echo "commit: new = bundle $(cat gpu-bundle/COMMIT); base = main 71c67a3 (wa-tor of the bundle of 217b252)"
  echo "command: bash docs/results/2026-12-03-s29/go4.sh (wa-tor --backend cpu --cpu-threads T --width 2048 --height 2048 --steps 20 --no-progress --impl dynasoar; sequential wa-tor --width 2048 --height 2048 --steps 20 --sequential-only)"
  for r in 1 2; do printf 'sequential '; timeout 60 $N/bin/sequential wa-tor --width 2048 --height 2048 --steps 20 --sequential-only 2>&1 | grep -m1 '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[^ ]*' | tr '\n' ' '; echo; done
  for t in 1 16; do for s in base new new base; do bin=$B/bin/wa-tor; [[ $s == new ]] && bin=$N/bin/wa-tor
    printf '%s threads=%s ' $s $t; timeout 60 $bin --backend cpu --cpu-threads $t --width 2048 --height 2048 --steps 20 --no-progress --impl dynasoar 2>&1 | grep '^app=' | grep -o 'total_us=[0-9]*\|fingerprint=[^ ]*' | tr '\n' ' '; echo; done; done
} > $SAVE/wator-cpu-ab.txt 2>&1
cat $SAVE/wator-cpu-ab.txt
