# Launch overhead (issue 27): each app at a tiny size, where a step's kernels have almost no
# work and its time is the runtime's per-step cost (launches, enumerations, the host's
# checks); with --compare the hand-written SOA baseline runs in the same process, so the
# difference per step is what the library adds; a second run of the DSL version does not time
# its enumerations (--no-enum-timing), as a program that does not profile. Per-step microseconds
# go to the summary.
OVERHEAD_RUNS=(
  "wa-tor --width 64 --height 64 --steps 2000"
  "game-of-life --pattern random:64x64 --steps 2000"
  "generation --pattern random:64x64 --steps 2000"
  "traffic --intersections 64 --steps 2000"
  "structure --nodes 256 --springs 512 --steps 2000"
)
: > "$OUT/launch-overhead.txt"
for run in "${OVERHEAD_RUNS[@]}"; do
  set -- $run
  app=$1; shift
  [[ -x "$HERE/bin/$app" ]] || continue
  step "overhead $app" bash -c \
    "timeout 120 '$HERE/bin/$app' --backend cuda --compare --no-progress $* 2>&1 | tee -a '$OUT/launch-overhead.txt'; test \${PIPESTATUS[0]} -eq 0"
  # The DSL version again without timing its enumerations (a pair of CUDA events per
  # parallel_do's listing), as a program that does not profile runs.
  step "overhead $app (no enumeration timing)" bash -c \
    "timeout 120 '$HERE/bin/$app' --backend cuda --no-enum-timing --no-progress $* 2>&1 | tee -a '$OUT/launch-overhead.txt'; test \${PIPESTATUS[0]} -eq 0"
done
if command -v python3 >/dev/null; then
  python3 - "$OUT/launch-overhead.txt" >> "$SUMMARY.tables" <<'PY'
import sys
rows = []
for line in open(sys.argv[1]):
    if not line.startswith("app="):
        continue
    f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    steps = int(f.get("iters", f.get("steps", "0")) or 0)
    if steps and "total_us" in f:
        impl = f.get("allocator", "?")
        # The DSL version times its enumerations unless --no-enum-timing (then enum_us=0).
        if impl == "dynasoar" and f.get("enum_us") == "0":
            impl = "dynasoar, untimed"
        rows.append((f["app"], impl, f.get("size", "?"), steps, int(f["total_us"]) / steps))
print("\nPer-step time at tiny sizes (launch overhead), microseconds per step")
print(f"{'app':14} {'impl':18} {'size':>10} {'steps':>6} {'us/step':>9}")
for app, impl, size, steps, us in rows:
    print(f"{app:14} {impl:18} {size:>10} {steps:>6} {us:9.1f}")
PY
fi
