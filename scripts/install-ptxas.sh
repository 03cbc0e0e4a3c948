#!/usr/bin/env bash
# Installs NVIDIA's ptxas (CUDA 13.0) from its PyPI wheel into .tools/ptxas, so PTX can be
# assembled and register-counted without a GPU or a CUDA toolkit.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=.tools/ptxas
PTXAS=$DEST/nvidia/cu13/bin/ptxas
if [[ -x "$PTXAS" ]]; then exit 0; fi
mkdir -p "$DEST"
python3 -m pip download --quiet --no-deps --only-binary=:all: \
  --platform manylinux2014_x86_64 --python-version 3.11 \
  nvidia-cuda-nvcc==13.0.88 -d "$DEST/wheel"
python3 - "$DEST" <<'PY'
import sys, zipfile, glob, os
dest = sys.argv[1]
whl = glob.glob(os.path.join(dest, "wheel", "*.whl"))[0]
with zipfile.ZipFile(whl) as z:
    z.extract("nvidia/cu13/bin/ptxas", dest)
os.chmod(os.path.join(dest, "nvidia/cu13/bin/ptxas"), 0o755)
PY
rm -rf "$DEST/wheel"
"$PTXAS" --version | tail -n 1
