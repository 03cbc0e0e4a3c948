#!/usr/bin/env bash
# Build everything the GPU suite needs on this machine (which has Rust but no GPU) and collect
# it, with a runner, in gpu-bundle/ (git-ignored). The device machine (CUDA, no Rust) then runs:
#
#     bash gpu-bundle/run.sh [all|tests|storms|bench|apps|allocbench|figures|enumeration]
#
# which runs every test binary with DYNASOAR_REQUIRE_GPU=1 (a missing GPU fails instead of
# skipping), the app checks and the benchmarks, writes full logs under $OUT (or gpu-bundle/out)
# and prints a summary table last.
set -euo pipefail
cd "$(dirname "$0")/.."
BUNDLE=${BUNDLE:-gpu-bundle}
# The benchmark data (the Game of Life archive): run.sh points DYNASOAR_DATA at it, and the GPU
# tests that read it fail without it (DYNASOAR_REQUIRE_GPU=1), so a bundle without it is no use.
DATA=../shared/data
if [[ ! -f $DATA/game-of-life/turing_machines.tar.gz ]]; then
  echo "gpu-bundle: no $DATA/game-of-life/turing_machines.tar.gz (the project's shared data," >&2
  echo "gpu-bundle: expected beside this checkout, $(cd .. && pwd)/shared); cannot bundle the data" >&2
  exit 1
fi
rm -rf "$BUNDLE"
mkdir -p "$BUNDLE/bin" "$BUNDLE/tests" "$BUNDLE/ptx" target
# The bundle is for an H100 or H200 (its cubins are for sm_90): its PTX targets sm_90, whose
# entry points wait for the grids before them, so that the kernels run as programmatic
# dependent launches (`DYNASOAR_DEPENDENT_LAUNCH=0` on the device turns that off).
export DYNASOAR_GPU_ARCH=${DYNASOAR_GPU_ARCH:-sm_90}

echo "== building test binaries (release)" >&2
trap 'echo "gpu-bundle: build failed; see target/gpu-bundle-build.log" >&2' ERR
cargo test --release --workspace --no-run --message-format=json 2>target/gpu-bundle-build.log \
  | python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("profile", {}).get("test") and m.get("executable"):
        kind = m["target"]["kind"][0]
        pkg = m["package_id"].split("#")[0].rsplit("/", 1)[-1]
        name = m["target"]["name"] if kind == "test" else pkg + "-" + kind
        print(name, m["executable"])
' > target/gpu-bundle-tests.txt
# trybuild's compile-fail suite needs cargo, and loom's models need `--cfg loom`: both run in
# CI, not on the device machine.
grep -v -E '^(compile_fail|loom|dynasoar-macros-proc-macro) ' target/gpu-bundle-tests.txt | while read -r name exe; do
  cp "$exe" "$BUNDLE/tests/$name"
done

echo "== building app binaries (release)" >&2
cargo build --release --workspace --bins 2>&1 | tail -n 1 >&2
for exe in target/release/*; do
  if [[ -f "$exe" && -x "$exe" && ! "$exe" =~ \.(d|so|rlib)$ ]]; then
    cp "$exe" "$BUNDLE/bin/"
  fi
done
strip "$BUNDLE"/tests/* "$BUNDLE"/bin/* 2>/dev/null || true
# Test binaries without tests (crates' empty unit-test harnesses) are left out.
for t in "$BUNDLE"/tests/*; do
  if "$t" --list 2>/dev/null | grep -q '^0 tests'; then rm "$t"; fi
done

# The PTX of each build, named after the build (three of them write dynasoar_models.s): the
# sanitizer step (run.d/20-sanitizer.sh) looks in it for shared memory and block barriers.
for ptx in target/dynasoar-ptx/*/nvptx64-nvidia-cuda/release/deps/*.s; do
  [[ -f $ptx ]] || { echo "gpu-bundle: the build left no PTX in target/dynasoar-ptx" >&2; exit 1; }
  build=${ptx#target/dynasoar-ptx/}
  cp "$ptx" "$BUNDLE/ptx/${build%%/*}.s"
done
# Cubins for sm_90 named by the FNV-1a digest of the PTX the binaries embed: with
# DYNASOAR_CUBIN_DIR set, the runtime loads (or links) these instead of having the driver compile
# 5 MB of PTX in every process (tens of seconds on a cold machine).
mkdir -p "$BUNDLE/cubin"
PTXAS=${PTXAS:-.tools/ptxas/nvidia/cu13/bin/ptxas}
if [[ -x $PTXAS ]]; then
  echo "== assembling cubins for sm_90" >&2
  for ptx in target/dynasoar-ptx/*/nvptx64-nvidia-cuda/release/deps/*.s; do
    digest=$(python3 scripts/ptx_digest.py "$ptx")
    # The runtime compiles the AOS builds (`-aos`, BitmapAlloc's too) as relocatable code and
    # the others as one program
    # (host backend/cuda_link.rs says why); the cubins match, the runtime tells them apart.
    reloc=(); [[ $ptx == *-aos/* ]] && reloc=(-c)
    "$PTXAS" "${reloc[@]}" -arch=sm_90 -O3 "$ptx" -o "$BUNDLE/cubin/$digest.sm_90.cubin" &
  done
  wait
else
  echo "== no ptxas at $PTXAS (scripts/install-ptxas.sh): the device will JIT the PTX" >&2
fi
cp -r "$DATA" "$BUNDLE/data"
# Every binary embeds the models' PTX (three builds, ~12 MB of text): gzip's 32 KiB window cannot
# see that the binaries repeat it (94 MB), xz with a dictionary larger than one binary can
# (about 7 MB), far below the 64 MiB a device call may carry. run.sh unpacks it there.
echo "== packing (xz, a few minutes)" >&2
tar cf - -C "$BUNDLE" bin tests ptx cubin | xz -6 --lzma2=preset=6,dict=256MiB > "$BUNDLE/payload.tar.xz"
rm -rf "$BUNDLE/bin" "$BUNDLE/tests" "$BUNDLE/ptx" "$BUNDLE/cubin"
cp scripts/gpu-run.sh "$BUNDLE/run.sh"
cp -r scripts/gpu-run.d "$BUNDLE/run.d"
cp scripts/apps_table.py "$BUNDLE/"
# The commit the bundle was built from (with "+changes" for a dirty tree), which run.sh prints
# in the first lines of every summary and log, as results files need.
echo "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!gpu-bundle' || echo +changes)" > "$BUNDLE/COMMIT"
du -sh "$BUNDLE" >&2
echo "bundle ready: run 'bash $BUNDLE/run.sh' on the GPU machine (carry $BUNDLE)" >&2
