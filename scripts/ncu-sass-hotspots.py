#!/usr/bin/env python3
"""The SASS instructions where a kernel's warps stall most, from an ncu report's source page.

On the GPU machine:
    ncu --set full --import-source no -k ls_alloc --launch-skip 2 --launch-count 1 -o rep BIN ARGS
    ncu -i rep.ncu-rep --page source --print-source sass --csv > ls_alloc-sass.csv
Here (or there):
    scripts/ncu-sass-hotspots.py ls_alloc-sass.csv [--top 40] [--range A B]

Prints, in program order, the `--top` instructions with the most stall samples: index, share of
all samples, times executed, average active threads, the instruction and its two main stall
reasons. Our PTX has no line information, so this is how to see which round trip of an
allocation costs what (executed counts tell loops apart: e.g. levels of a bitmap search).
`--range A B` prints instructions A..B instead, to read the code around a hot spot.
"""
import argparse
import csv
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--range", type=int, nargs=2, metavar=("A", "B"))
    args = ap.parse_args()
    rows = list(csv.reader(open(args.csv)))
    try:
        at = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    except StopIteration:
        sys.exit(f"{args.csv}: no 'Address' header (is it ncu's --page source --csv output?)")
    head, data = rows[at], rows[at + 1 :]
    # A report of several launches holds one section per launch (each with its own "Kernel
    # Name" and header rows): this reads the first.
    end = next((i for i, r in enumerate(data) if r and r[0] in ("Kernel Name", "Address")), len(data))
    data = data[:end]
    samples = head.index("Warp Stall Sampling (All Samples)")
    executed = head.index("Instructions Executed")
    threads = head.index("Avg. Threads Executed")
    stalls = [i for i, k in enumerate(head) if k.startswith("stall_") and "Not Issued" not in k]

    def num(x):
        return float(x or 0)

    total = sum(num(r[samples]) for r in data) or 1.0
    print(f"{len(data)} instructions, {total:.0f} stall samples, "
          f"{sum(num(r[executed]) for r in data):.0f} warp instructions executed")
    if args.range:
        chosen = range(max(0, args.range[0]), min(len(data), args.range[1]))
    else:
        chosen = sorted(sorted(range(len(data)), key=lambda i: -num(data[i][samples]))[: args.top])
    for i in chosen:
        r = data[i]
        reasons = sorted(((num(r[j]), head[j][6:]) for j in stalls), reverse=True)[:2]
        why = ", ".join(f"{name} {n:.0f}" for n, name in reasons if n > 0)
        print(f"{i:5d} {100 * num(r[samples]) / total:5.1f}% ex={num(r[executed]):10.0f} "
              f"thr={r[threads]:>5} {r[1][:64]:64s} {why}")


if __name__ == "__main__":
    main()
