#!/usr/bin/env bash
# Call 2 (2026-11-28): where Barnes-Hut's time goes over a whole run, DSL (bundle of f0b0f94,
# device code of 1acc0fa) against the AOS baseline: every kernel launch of 2,000 steps timed by
# Nsight Compute (gpu__time_duration only, clocks not locked), summed per kernel; then the force
# walk of both at step 3,501 with the sections of call 1.
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $OUT/card.txt
B=/tmp/bundle; mkdir -p $B
[[ -x $B/bin/barnes-hut ]] || xz -dc gpu-bundle/payload.tar.xz | tar xf - -C $B
export DYNASOAR_DATA=$PWD/gpu-bundle/data DYNASOAR_CUBIN_DIR=$B/cubin
times() { local name=$1; shift
  echo "=== $name: ncu --metrics gpu__time_duration.sum --clock-control none --cache-control none barnes-hut $*"
  timeout 280 ncu --metrics gpu__time_duration.sum --clock-control none --cache-control none --csv \
    "$B/bin/barnes-hut" --backend cuda --no-progress "$@" > $OUT/times-$name.csv 2> $OUT/times-$name.err
  echo "rc=$?"; grep -E "app=" $OUT/times-$name.csv $OUT/times-$name.err | cut -c1-200
  python3 - $OUT/times-$name.csv <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
h = rows[0]; k = h.index("Kernel Name"); v = h.index("Metric Value"); u = h.index("Metric Unit")
tot = collections.defaultdict(lambda: [0, 0.0]); steps = collections.defaultdict(list)
for r in rows[1:]:
    x = float(r[v].replace(",", "")); x = x / 1000 if r[u] == "nsecond" else x if r[u] == "usecond" else x * 1000
    tot[r[k]][0] += 1; tot[r[k]][1] += x; steps[r[k]].append(x)
all_us = sum(t[1] for t in tot.values())
for name, (n, us) in sorted(tot.items(), key=lambda t: -t[1][1]):
    s = steps[name]; q = len(s) // 4
    print(f"{name[:70]:70} launches {n:6} total {us/1000:10.1f} ms  {100*us/all_us:5.1f}%  quarters(ms) " +
          " ".join(f"{sum(s[i*q:(i+1)*q])/1000:8.1f}" for i in range(4)))
print(f"{'all':70} {all_us/1000:.1f} ms")
PY
}
times dsl --steps 2000
times aos --steps 2000 --impl aos
S="--section SpeedOfLight --section Occupancy --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section InstructionStats"
prof() { local name=$1 re=$2 skip=$3; shift 3
  echo "=== $name: ncu -k regex:'$re' --launch-skip $skip --launch-count 1 barnes-hut --steps 3502 $*"
  timeout 200 ncu $S -k "regex:$re" --launch-skip $skip --launch-count 1 "$B/bin/barnes-hut" --backend cuda --no-progress --steps 3502 "$@" 2>&1; }
prof dsl 'BodyNode__compute_force' 3500 > $OUT/ncu-bh-dsl-3501.txt 2>&1
prof aos 'barnes_hut_aos_force' 3500 --impl aos > $OUT/ncu-bh-aos-3501.txt 2>&1
for f in $OUT/ncu-bh-*.txt; do echo "## $f"; grep -E "Duration|L1/TEX Hit|L2 Hit|Achieved Occupancy|Executed Instructions  |Memory Throughput  " $f; done | cut -c1-120
