#!/usr/bin/env python3
"""The digest under which the runtime looks up a prebuilt cubin of PTX (FNV-1a, 64 bits, as
`dynasoar-host`'s CUDA backend computes it): scripts/ptx_digest.py FILE.s

Also imported by scripts/cubin-variant.py (`fnv1a`)."""
import sys


def fnv1a(data: bytes) -> int:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


if __name__ == "__main__":
    print(f"{fnv1a(open(sys.argv[1], 'rb').read()):016x}")
