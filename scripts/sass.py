#!/usr/bin/env python3
"""The SASS of kernels of a PTX build, without a GPU: the machine code the device runs, to see
where a kernel spills (`STL`/`LDL`), fences (`MEMBAR`, `CCTL.IVALL`) or waits.

    scripts/sass.py create_car                       # kernels of the models' PTX matching it
    scripts/sass.py --ptx VARIANT.s __GolHeap__ --counts

Assembles the PTX with ptxas (`-arch=sm_90 -O3`, keeping its `.maxnreg` caps, as the apps run
it) and disassembles the entries whose names contain the pattern with NVIDIA's nvdisasm, which
it fetches from PyPI into .tools/nvdisasm the first time (the wheel of CUDA 13.2, the earliest
13.x on PyPI; it reads ptxas 13.0's cubins). `--counts` prints, per kernel, its instructions,
its local-memory stores and loads (spills), its fences (`MEMBAR`) and its L1 invalidations
(`CCTL.IVALL`, which acquire operations compile to) instead of the code. Exits 1 if no entry
matched.
"""
import argparse
import glob
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_PTX = ROOT / "target/dynasoar-ptx/dynasoar-models/nvptx64-nvidia-cuda/release/deps/dynasoar_models.s"
PTXAS = ROOT / ".tools/ptxas/nvidia/cu13/bin/ptxas"
NVDISASM = ROOT / ".tools/nvdisasm/nvidia/cu13/bin/nvdisasm"
NVDISASM_WHEEL = "nvidia-cuda-nvdisasm==13.2.86"


def nvdisasm() -> pathlib.Path:
    """nvdisasm, fetched from its PyPI wheel on first use."""
    if NVDISASM.exists():
        return NVDISASM
    dest = NVDISASM.parents[3]
    wheel_dir = dest / "wheel"
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
         "--platform", "manylinux2014_x86_64", "--python-version", "3.11", NVDISASM_WHEEL, "-d", str(wheel_dir)],
        check=True,
    )
    with zipfile.ZipFile(glob.glob(str(wheel_dir / "*.whl"))[0]) as z:
        z.extract("nvidia/cu13/bin/nvdisasm", dest)
    os.chmod(NVDISASM, 0o755)
    for f in wheel_dir.iterdir():
        f.unlink()
    wheel_dir.rmdir()
    return NVDISASM


def functions(sass: str) -> dict[str, list[str]]:
    """Function name -> its lines, from nvdisasm's output."""
    out: dict[str, list[str]] = {}
    name = None
    for line in sass.splitlines():
        m = re.match(r"\.text\.(\S+):$", line)
        if m:
            name = m.group(1)
            out[name] = []
        elif name is not None and line.startswith("\t.section"):
            name = None
        elif name is not None:
            out[name].append(line)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pattern", help="part of the kernels' names")
    ap.add_argument("--ptx", default=str(DEFAULT_PTX), help="the PTX to assemble")
    ap.add_argument("--counts", action="store_true", help="instructions and spill accesses per kernel only")
    args = ap.parse_args()
    if not PTXAS.exists():
        sys.exit(f"no ptxas at {PTXAS}: run scripts/install-ptxas.sh")
    with tempfile.TemporaryDirectory() as tmp:
        cubin = pathlib.Path(tmp) / "k.cubin"
        subprocess.run([str(PTXAS), "-arch=sm_90", "-O3", args.ptx, "-o", str(cubin)], check=True)
        sass = subprocess.run([str(nvdisasm()), "-c", str(cubin)], check=True, capture_output=True, text=True).stdout
    found = {name: lines for name, lines in functions(sass).items() if args.pattern in name}
    if not found:
        print(f"no kernel or function matches {args.pattern!r}", file=sys.stderr)
        return 1
    for name, lines in sorted(found.items()):
        code = [line for line in lines if re.search(r"/\*[0-9a-f]{4,}\*/", line)]
        if args.counts:
            def count(op: str) -> int:
                return sum(1 for line in code if re.search(rf"\b{op}(\.\S+)?[\s;]", line))

            print(
                f"{name:60} {len(code):6} instructions, {count('STL'):4} STL, {count('LDL'):4} LDL, "
                f"{count('MEMBAR'):3} MEMBAR, {sum(1 for line in code if 'CCTL.IVALL' in line):3} CCTL.IVALL"
            )
        else:
            print(f".text.{name}:")
            print("\n".join(code))
    return 0


if __name__ == "__main__":
    sys.exit(main())
