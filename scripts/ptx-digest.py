#!/usr/bin/env python3
"""The digest under which the runtime looks up a prebuilt cubin of PTX (FNV-1a, 64 bits, as
`dynasoar-host`'s CUDA backend computes it): scripts/ptx-digest.py FILE.s"""
import sys

h = 0xCBF29CE484222325
for b in open(sys.argv[1], "rb").read():
    h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
print(f"{h:016x}")
