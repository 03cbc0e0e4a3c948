#!/usr/bin/env python3
"""Per-kernel launches, mean and total device time from `ncu --metrics gpu__time_duration.sum
--csv` outputs (go4.sh's kt-*.csv): python3 kernel_times.py FILE.csv ..."""
import csv,sys,collections,io
def load(p):
    lines=[l for l in open(p) if l.startswith('"')]
    r=list(csv.reader(io.StringIO(''.join(lines))))
    h=r[0]; K=h.index("Kernel Name"); V=h.index("Metric Value"); U=h.index("Metric Unit")
    d=collections.defaultdict(list)
    for row in r[1:]:
        v=float(row[V].replace(',','')); u=row[U]
        us = v/1000 if u in ("nsecond","ns") else (v if u in ("usecond","us") else v*1000 if u in ("msecond","ms") else v)
        d[row[K]].append(us)
    return d
for name in sys.argv[1:]:
    d=load(name)
    tot=sum(sum(v) for v in d.values())
    print(f"== {name}: {sum(len(v) for v in d.values())} launches, {tot:.1f} us in all")
    for k,v in sorted(d.items(), key=lambda kv:-sum(kv[1])):
        print(f"  {k[:60]:60s} {len(v):5d} x {sum(v)/len(v):8.2f} us = {sum(v):9.1f} us ({100*sum(v)/tot:4.1f}%)")
