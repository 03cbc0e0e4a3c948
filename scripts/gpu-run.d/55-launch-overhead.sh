# Launch overhead (issue 27): each app at a tiny size, where a step's kernels have almost no
# work and its time is the runtime's per-step cost (launches, enumerations, the host's
# checks); with --compare the hand-written SOA baseline runs in the same process, so the
# difference per step is what the library adds; a second run of the DSL version times its
# enumerations (--enum-timing), which costs a pair of CUDA events per listing, and a third
# replays its step from a step graph (--graph: a CUDA graph, one driver call per step instead
# of one per launch). Per-step microseconds go to the summary.
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
  # The DSL version again with its enumerations timed (a pair of CUDA events per listing,
  # what the apps report as enum_us with --enum-timing).
  step "overhead $app (enumeration timed)" bash -c \
    "timeout 120 '$HERE/bin/$app' --backend cuda --enum-timing --no-progress $* 2>&1 | tee -a '$OUT/launch-overhead.txt'; test \${PIPESTATUS[0]} -eq 0"
  # And with the step replayed from a step graph, checked against the baselines (--compare).
  step "overhead $app (step graph)" bash -c \
    "timeout 120 '$HERE/bin/$app' --backend cuda --graph --compare --no-progress $* 2>&1 | tee -a '$OUT/launch-overhead.txt'; test \${PIPESTATUS[0]} -eq 0"
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
        # The DSL version times its enumerations with --enum-timing (else enum_us=0).
        if impl == "dynasoar" and f.get("enum_us", "0") != "0":
            impl = "dynasoar, enum timed"
        if impl == "dynasoar" and f.get("graph") == "on":
            impl = "dynasoar, graph"
        rows.append((f["app"], impl, f.get("size", "?"), steps, int(f["total_us"]) / steps))
print("\nPer-step time at tiny sizes (launch overhead), microseconds per step")
print(f"{'app':14} {'impl':18} {'size':>10} {'steps':>6} {'us/step':>9}")
for app, impl, size, steps, us in rows:
    print(f"{app:14} {impl:18} {size:>10} {steps:>6} {us:9.1f}")
PY
fi
