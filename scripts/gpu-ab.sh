#!/usr/bin/env bash
# An A/B payload: release binaries BIN... of this checkout ("new") and of other commits (each
# built in a worktree ../dynasoar-ab-NAME with its own target directory), each with the sm_90
# cubin of the models' PTX it embeds, packed into gpu-bundle/extra/ab/ab.tar.xz. On the GPU
# machine, with gpu-bundle carried:
#
#     bash gpu-bundle/extra/ab/run-ab.sh 'CMD'      # CMD uses $BIN; runs once per side
#
# e.g. bash gpu-bundle/extra/ab/run-ab.sh '$BIN/traffic --backend cuda --compare'.
#
#     AB_SIDES="base:HEAD~2 mid:HEAD" scripts/gpu-ab.sh traffic field-access
#
# AB_SIDES defaults to "base:HEAD"; the working tree is always the side "new".
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -gt 0 ]] || { echo 'usage: [AB_SIDES="name:commit ..."] scripts/gpu-ab.sh BIN...' >&2; exit 2; }
SIDES=${AB_SIDES:-base:HEAD}
PTXAS=${PTXAS:-.tools/ptxas/nvidia/cu13/bin/ptxas}
[[ -x $PTXAS ]] || { echo "no ptxas at $PTXAS: run scripts/install-ptxas.sh" >&2; exit 1; }
PTXAS=$(realpath "$PTXAS")
here=$PWD
# Built for sm_90, as the bundle is (its kernels run as dependent launches; see gpu-bundle.sh).
export DYNASOAR_GPU_ARCH=${DYNASOAR_GPU_ARCH:-sm_90}
args=(); for b in "$@"; do args+=(--bin "$b"); done
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
pack() { # side, source dir, target dir
  local side=$1 src=$2 tgt=$3
  (cd "$src" && CARGO_TARGET_DIR=$tgt cargo build --release -p dynasoar-examples "${args[@]}" >&2)
  mkdir -p "$work/$side/bin" "$work/$side/cubin"
  local ptx digest
  ptx=$(ls "$tgt"/dynasoar-ptx/dynasoar-models/nvptx64-nvidia-cuda/release/deps/*.s)
  digest=$(python3 "$here/scripts/ptx_digest.py" "$ptx")
  "$PTXAS" -arch=sm_90 -O3 "$ptx" -o "$work/$side/cubin/$digest.sm_90.cubin" &
  for b in "${@:4}"; do strip -o "$work/$side/bin/$b" "$tgt/release/$b"; done
  echo "$side: $(git -C "$src" rev-parse --short HEAD)$(git -C "$src" diff --quiet || echo +changes) cubin $digest" >&2
}
names=()
for side in $SIDES; do
  name=${side%%:*}
  # Resolved here: in the side's worktree, HEAD would name that worktree's own commit.
  commit=$(git rev-parse --verify "${side#*:}^{commit}")
  tree=$here/../dynasoar-ab-$name
  if [[ ! -d $tree ]]; then git worktree add --detach "$tree" "$commit" >&2; fi
  git -C "$tree" checkout --detach --quiet "$commit"
  pack "$name" "$tree" "$here/../dynasoar-ab-target-$name" "$@"
  names+=("$name")
done
pack new "$here" "$here/target" "$@"
names+=(new)
wait
mkdir -p gpu-bundle/extra/ab
tar cf - -C "$work" "${names[@]}" | xz -6 --lzma2=preset=6,dict=256MiB > gpu-bundle/extra/ab/ab.tar.xz
cat > gpu-bundle/extra/ab/run-ab.sh <<'EOF'
#!/usr/bin/env bash
# Runs CMD (which names binaries as $BIN/...) with each build in turn.
set -uo pipefail
AB=/tmp/ab; rm -rf $AB; mkdir -p $AB
xz -dc "$(dirname "$0")/ab.tar.xz" | tar xf - -C $AB
export DYNASOAR_REQUIRE_GPU=1
for side in ${SIDES:-$(ls $AB)}; do
  echo "=== $side"
  BIN=$AB/$side/bin DYNASOAR_CUBIN_DIR=$AB/$side/cubin bash -c "BIN=$AB/$side/bin; $1"
done
EOF
du -h gpu-bundle/extra/ab/ab.tar.xz >&2
