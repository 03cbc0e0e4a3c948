#!/usr/bin/env python3
"""Assemble a variant of an embedded PTX build with other register caps, for A/B runs.

The runtime loads `$DYNASOAR_CUBIN_DIR/<FNV-1a of the embedded PTX>.sm_90.cubin` when it
exists (dynasoar-host backend/cuda.rs). This writes a cubin under that same name, assembled from
the PTX with `.maxnreg` set on the entries whose names contain a pattern, so the same binaries
run with other caps on the device (no rebuild), by pointing DYNASOAR_CUBIN_DIR at `--out`:

    scripts/cubin-variant.py --out gpu-bundle/extra/cap40 \\
        --cap TrafficHeap__Car__prepare=40 --cap TrafficHeap__Car__advance=40

`--cap PATTERN=0` removes a cap. The chosen caps then belong in the app's build.rs
(`PtxBuilder::max_registers_for`), measured.

`--as DIGEST` names the cubin after another PTX's digest: the binaries that embed that PTX (a
bundle's, `cubin/DIGEST.sm_90.cubin` there) then run the `--ptx` given, e.g. a device-code change
of the working tree built with `cargo build --release -p dynasoar-examples --bin nbody`, against
their own cubin in one call, without a bundle of the change (the host code must be the same):

    scripts/cubin-variant.py --as 9e56cb84b2890ea0 --out gpu-bundle/extra/variant

The `--ptx` must be built for the same architecture as the binaries' (the bundle's is sm_90,
`DYNASOAR_GPU_ARCH=sm_90`): the runtime launches the entry points whose embedded PTX waits for
the grids before it (`griddepcontrol.wait`, builds for sm_90 on) as dependent launches, and in a
cubin without those waits a kernel could run before the one it depends on has finished. So with
`--as` the script refuses a `--ptx` without those waits, unless `--without-waits` says that the
binaries will run with `DYNASOAR_DEPENDENT_LAUNCH=0`.
"""
import argparse
import pathlib
import re
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from ptx_digest import fnv1a  # noqa: E402  (the runtime's cubin name, shared with the shell scripts)

DEFAULT_PTX = "target/dynasoar-ptx/dynasoar-models/nvptx64-nvidia-cuda/release/deps/dynasoar_models.s"
DEFAULT_PTXAS = ".tools/ptxas/nvidia/cu13/bin/ptxas"


def recap(ptx: str, caps: list[tuple[str, int]]) -> tuple[str, list[str]]:
    """The PTX with `.maxnreg` of every matching entry set (or removed for 0), and the entries
    changed."""
    entry = re.compile(r"(\.visible \.entry (\w+)\((?:[^)]*)\)\n)(\.maxnreg \d+\n)?")
    changed = []

    def one(m: re.Match) -> str:
        name = m.group(2)
        for pattern, n in caps:
            if pattern in name:
                changed.append(f"{name}={n}")
                return m.group(1) + (f".maxnreg {n}\n" if n else "")
        return m.group(0)

    return entry.sub(one, ptx), changed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ptx", default=DEFAULT_PTX, help="the PTX the binaries embed")
    ap.add_argument("--out", required=True, help="cubin folder to write")
    ap.add_argument("--cap", action="append", default=[], metavar="PATTERN=N", help="cap entries containing PATTERN")
    ap.add_argument("--ptxas", default=DEFAULT_PTXAS)
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--as", dest="as_digest", metavar="DIGEST", help="name the cubin after this PTX digest (16 hex digits)")
    ap.add_argument("--without-waits", action="store_true",
                    help="with --as: accept a PTX whose entry points do not wait for the grids before them")
    args = ap.parse_args()
    if args.as_digest is not None and not re.fullmatch(r"[0-9a-f]{16}", args.as_digest):
        ap.error(f"--as {args.as_digest!r}: expected the 16 hex digits of a cubin's name")
    if not args.cap and args.as_digest is None:
        ap.error("nothing to change: give --cap PATTERN=N, or --as DIGEST")

    caps = []
    for c in args.cap:
        pattern, sep, n = c.rpartition("=")
        if not sep or not pattern or not n.isdigit():
            ap.error(f"--cap {c!r}: expected PATTERN=N")
        caps.append((pattern, int(n)))
    raw = pathlib.Path(args.ptx).read_bytes()
    if args.as_digest is not None and b"griddepcontrol.wait" not in raw and not args.without_waits:
        ap.error(f"--ptx {args.ptx}: its entry points do not wait for the grids before them (a build for "
                 "an older GPU than sm_90), and binaries built for sm_90 launch their kernels as dependent "
                 "launches: build it with DYNASOAR_GPU_ARCH=sm_90, or give --without-waits and run the "
                 "binaries with DYNASOAR_DEPENDENT_LAUNCH=0")
    ptx, changed = recap(raw.decode(), caps)
    if caps and not changed:
        print(f"cubin-variant: no entry matches {[p for p, _ in caps]}", file=sys.stderr)
        return 1
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    variant = out / "variant.ptx"
    variant.write_text(ptx)
    name = args.as_digest or f"{fnv1a(raw):016x}"
    cubin = out / f"{name}.{args.arch}.cubin"
    done = subprocess.run(
        [args.ptxas, "-v", f"-arch={args.arch}", "-O3", str(variant), "-o", str(cubin)],
        check=True,
        capture_output=True,
        text=True,
    )
    variant.unlink()
    print(cubin if args.as_digest is None else f"{cubin} (assembled from {args.ptx}, PTX {fnv1a(raw):016x})")
    # What each changed entry got: registers and spills (ptxas -v prints them after its name).
    names = {c.split("=")[0] for c in changed}
    current = None
    for line in done.stderr.splitlines():
        m = re.search(r"(?:entry function '|Function properties for )(\w+)", line)
        if m:
            current = m.group(1)
        elif current in names and ("Used" in line or "spill" in line):
            print(f"  {current}: {line.split(':', 1)[-1].strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
