#!/usr/bin/env bash
# A small GPU payload for A/B runs: release binaries BIN... and the sm_90 cubin of the models'
# PTX they embed, packed into gpu-bundle/extra/quick/quick.tar.xz (about 3 MB, 3 minutes; the
# full bundle takes 12). On the GPU machine, with the bundle carried:
#
#     Q=/tmp/quick; mkdir -p $Q; xz -dc gpu-bundle/extra/quick/quick.tar.xz | tar xf - -C $Q
#     DYNASOAR_CUBIN_DIR=$Q/cubin DYNASOAR_REQUIRE_GPU=1 $Q/bin/linux-scalability --backend cuda
#
# and the bundle's own binaries (run.sh none unpacks them) are the other side of the A/B.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -gt 0 ]] || { echo "usage: scripts/gpu-quick.sh BIN..." >&2; exit 2; }
PTXAS=${PTXAS:-.tools/ptxas/nvidia/cu13/bin/ptxas}
[[ -x $PTXAS ]] || { echo "no ptxas at $PTXAS: run scripts/install-ptxas.sh" >&2; exit 1; }
# Built for sm_90, as the bundle is (its kernels run as dependent launches; see gpu-bundle.sh).
export DYNASOAR_GPU_ARCH=${DYNASOAR_GPU_ARCH:-sm_90}
args=(); for b in "$@"; do args+=(--bin "$b"); done
cargo build --release -p dynasoar-examples "${args[@]}" >&2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/cubin"
ptx=$(ls target/dynasoar-ptx/dynasoar-models/nvptx64-nvidia-cuda/release/deps/*.s)
digest=$(python3 scripts/ptx_digest.py "$ptx")
"$PTXAS" -arch=sm_90 -O3 "$ptx" -o "$work/cubin/$digest.sm_90.cubin"
for b in "$@"; do strip -o "$work/bin/$b" "target/release/$b"; done
mkdir -p gpu-bundle/extra/quick
tar cf - -C "$work" bin cubin | xz -6 > gpu-bundle/extra/quick/quick.tar.xz
echo "gpu-bundle/extra/quick/quick.tar.xz: $* with cubin $digest" >&2
