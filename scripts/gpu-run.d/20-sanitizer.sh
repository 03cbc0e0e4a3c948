# compute-sanitizer on a reduced allocator storm (memcheck: out-of-bounds and misaligned
# accesses; racecheck: shared-memory hazards, which our kernels must not have).
if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    step "sanitizer $tool (reduced storm)" \
      compute-sanitizer --tool "$tool" --error-exitcode 3 \
      "$HERE/tests/allocator" gpu_sanitizer_storm --exact --test-threads=1
  done
fi
