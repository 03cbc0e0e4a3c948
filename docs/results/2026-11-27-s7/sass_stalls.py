#!/usr/bin/env python3
"""Top SASS instructions by warp-stall samples from `ncu --page source --csv --print-source sass`."""
import csv, sys, collections, re
path = sys.argv[1]
top = int(sys.argv[2]) if len(sys.argv) > 2 else 40
text = open(path, errors="replace").read().splitlines()
# ncu may print several kernels one after another, each with its own header line.
blocks, cur = [], []
for line in text:
    if line.startswith('"Address"') or line.startswith('"#"') or ('"Source"' in line and '"Address"' in line):
        if cur: blocks.append(cur)
        cur = [line]
    elif cur:
        cur.append(line)
    else:
        print("pre:", line[:200])
if cur: blocks.append(cur)
for bi, b in enumerate(blocks):
    rows = list(csv.reader(b))
    head = rows[0]
    def col(*keys):
        for i, h in enumerate(head):
            if all(k.lower() in h.lower() for k in keys): return i
        return None
    src = col("Source"); allc = col("Warp Stall Sampling (All"); ex = col("Instructions Executed")
    addr = col("Address")
    print(f"== block {bi}: {len(rows)-1} instructions; columns: src={src} all={allc} exec={ex}")
    if src is None or allc is None:
        print("   header:", head[:30]); continue
    data = []
    for r in rows[1:]:
        if len(r) <= max(src, allc): continue
        try: s = float(r[allc] or 0)
        except ValueError: s = 0
        try: e = float(r[ex] or 0) if ex is not None else 0
        except ValueError: e = 0
        data.append((s, e, r[addr] if addr is not None else "", r[src]))
    tot = sum(d[0] for d in data) or 1
    print(f"   total stall samples {tot:.0f}")
    ops = collections.Counter()
    for s, e, a, t in data:
        op = re.sub(r"^@!?U?P\w+\s+", "", t.strip()).split(" ")[0]
        ops[op.split(".")[0]] += s
    print("   by opcode:", ", ".join(f"{o} {100*v/tot:.1f}%" for o, v in ops.most_common(14)))
    for s, e, a, t in sorted(data, key=lambda d: -d[0])[:top]:
        print(f"   {100*s/tot:5.1f}% exec {e:10.0f} {a:>6} {t.strip()[:110]}")
