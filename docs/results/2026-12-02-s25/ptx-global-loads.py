#!/usr/bin/env python3
"""Variant PTX for the A/B of call 3: in the entries named, generic loads and stores (`ld.b32`,
`ld.v2.b64`, `st.b32`, ...) name the `.global` state space (`--space global`) or loads go
through the non-coherent path (`--space nc`: `ld.global.nc`). The two n-body force entries hold
no local memory and no `cvta`-free address of another space, so every generic access in them
addresses global memory (kernel parameters' structs, the heap, the baselines' arrays).

    ptx-global-loads.py IN.s OUT.s --space global ENTRY...
"""
import argparse
import re

ap = argparse.ArgumentParser()
ap.add_argument("ptx_in")
ap.add_argument("ptx_out")
ap.add_argument("--space", choices=["global", "nc"], required=True)
ap.add_argument("entries", nargs="+")
a = ap.parse_args()
text = open(a.ptx_in).read()
for e in a.entries:
    start = text.index(f".entry {e}(")
    end = text.index("\n}\n", start)
    body = text[start:end]
    ld = "ld.global.nc." if a.space == "nc" else "ld.global."
    body, n1 = re.subn(r"(\s)ld\.(b32|b64|v2\.b32|v2\.b64|v4\.b32)\s", lambda m: f"{m.group(1)}{ld}{m.group(2)} ", body)
    body, n2 = re.subn(r"(\s)st\.(b32|b64|v2\.b32|v2\.b64)\s", lambda m: f"{m.group(1)}st.global.{m.group(2)} ", body)
    if n1 == 0:
        raise SystemExit(f"no generic load in {e}")
    print(f"{e}: {n1} loads, {n2} stores")
    text = text[:start] + body + text[end:]
open(a.ptx_out, "w").write(text)
