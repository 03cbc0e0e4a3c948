#!/usr/bin/env python3
"""Registers and spills of each kernel of a PTX build, as ptxas reports them, or how two builds
differ: the probe of a device-code change before it goes to the GPU.

    scripts/ptxas-spills.py BASE.s                  # every entry of one build
    scripts/ptxas-spills.py BASE.s VARIANT.s        # the entries whose figures differ
    scripts/ptxas-spills.py BASE.s VARIANT.s --match __GolHeap__ --match create_car

Each input is a PTX file (assembled here with `ptxas -arch=sm_90 -O3 -v`, keeping its
`.maxnreg` caps, so the figures are those of the kernels as the apps run them) or a saved
`ptxas -v` log (`.log`). Per entry: registers, then the bytes of spill stores in the kernel's
own body and in the functions it calls (`Heap::allocate` is one, out of line: its spills are
listed under each kernel that calls it). Exits 1 if no entry matched.
"""
import argparse
import pathlib
import re
import subprocess
import sys

DEFAULT_PTXAS = pathlib.Path(__file__).resolve().parent.parent / ".tools/ptxas/nvidia/cu13/bin/ptxas"


def ptxas_log(path: pathlib.Path, ptxas: str) -> str:
    """The `ptxas -v` report of `path` (read as is if it is a log)."""
    if path.suffix == ".log":
        return path.read_text()
    done = subprocess.run(
        [ptxas, "-arch=sm_90", "-O3", "-v", str(path), "-o", "/dev/null"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"ptxas failed on {path}:\n{done.stderr[-2000:]}")
    return done.stderr


def figures(log: str) -> dict[str, tuple[int, int, int]]:
    """Entry -> (registers, spill stores of its body, spill stores of the functions it calls)."""
    out: dict[str, list[int]] = {}
    entry = function = None
    for line in log.splitlines():
        if m := re.search(r"Compiling entry function '(\S+)'", line):
            entry = m.group(1)
            out[entry] = [0, 0, 0]
        elif m := re.search(r"Function properties for (\S+)", line):
            function = m.group(1)
        elif entry and (m := re.search(r"(\d+) bytes spill stores", line)):
            out[entry][1 if function == entry else 2] += int(m.group(1))
        elif entry and (m := re.search(r"Used (\d+) registers", line)):
            out[entry][0] = int(m.group(1))
    return {k: tuple(v) for k, v in out.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base", type=pathlib.Path, help="PTX (or ptxas -v log) of the base")
    ap.add_argument("variant", type=pathlib.Path, nargs="?", help="PTX (or log) to compare with")
    ap.add_argument("--match", action="append", default=[], help="only entries containing this (repeatable)")
    ap.add_argument("--ptxas", default=str(DEFAULT_PTXAS), help="ptxas to run (default: the project's)")
    args = ap.parse_args()

    base = figures(ptxas_log(args.base, args.ptxas))
    variant = figures(ptxas_log(args.variant, args.ptxas)) if args.variant else None
    wanted = [k for k in sorted(base) if not args.match or any(m in k for m in args.match)]
    if variant is not None:
        wanted = [k for k in wanted if base[k] != variant.get(k)]
    if not wanted:
        print("no entry matched" if variant is None else "no matching entry differs")
        return 1
    show = lambda f: "-" if f is None else f"{f[0]} regs, {f[1]} / {f[2]} B"
    width = max(len(k) for k in wanted)
    print(f"{'entry':{width}}  {'base: registers, spills body / callees':40}" + ("  variant" if variant else ""))
    for k in wanted:
        print(f"{k:{width}}  {show(base[k]):40}" + (f"  {show(variant.get(k))}" if variant is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
