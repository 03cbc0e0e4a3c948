# compute-sanitizer on a reduced allocator storm (tests/allocator's gpu_sanitizer_storm:
# thousands of threads allocating and freeing through the DynaSOAr heap for a few rounds, then
# the heap checks). Sourced by run.sh (step, row, $HERE, $LOG).
#
# What each tool can find in our kernels (seen with compute-sanitizer 2025.3.1 on an H200, on
# hand-written PTX kernels with each kind of bug, and on this storm, where all four report none):
#
# - memcheck (run): out-of-bounds and misaligned accesses to global and local memory (a slot,
#   block or bitmap index past its buffer, a misaligned atomic on a computed address), and the
#   hardware exceptions a kernel raises (illegal address or instruction, a trap from a device
#   panic).
# - initcheck (not run): reads of global memory that nothing wrote (no kernel store, copy or
#   memset). The runtime zeroes every buffer it allocates (a memset, which counts as a write) and
#   the PTX's global variables all have initialisers, so every byte a kernel can reach counts as
#   initialised: reads of a freed object's stale fields or of fields a constructor skipped look
#   initialised too. It found the read of a never-written cuMemAlloc buffer, and nothing in the
#   storm. It becomes useful with an allocation that is not zeroed (say a debug option of the
#   runtime to skip the zeroing, so that reads before the init kernel's writes show).
# - synccheck (only where the PTX has block barriers): block barriers (bar.sync, __syncthreads)
#   reached by divergent threads. It reported nothing for shfl.sync, vote.sync or bar.warp.sync
#   whose masks name lanes that wait at another instruction or leave out the calling lane, so
#   our warp collectives (arch::shfl_u32, ballot, WarpGroup) are beyond it; our kernels have no
#   block barriers, so it has nothing to check unless some kernel gains one.
# - racecheck (only where the PTX uses shared memory): hazards on shared memory, and nothing
#   else (not global memory, where all our data lives); our kernels use no shared memory.
#
# The PTX the binaries embed is in $HERE/ptx (gpu-bundle.sh copies it); without it, synccheck
# and racecheck run anyway.
SANITIZER=$(command -v compute-sanitizer || true)
[[ -z $SANITIZER && -x /usr/local/cuda/bin/compute-sanitizer ]] && SANITIZER=/usr/local/cuda/bin/compute-sanitizer
if [[ -z $SANITIZER ]]; then
  echo "=== sanitizer: compute-sanitizer is neither on PATH nor in /usr/local/cuda/bin" >> "$LOG"
  row "sanitizer (compute-sanitizer not found)" 1 0
else
  ptx=("$HERE"/ptx/*.s)
  uses() { # extended regex: whether the embedded PTX matches it (true when there is no PTX)
    [[ ! -f ${ptx[0]} ]] || grep -qE "$1" "${ptx[@]}"
  }
  tools=(memcheck)
  if uses '\<(bar|barrier)\.(sync|red|arrive|cta)\>'; then
    tools+=(synccheck)
  else
    echo "=== sanitizer synccheck: not run, the PTX has no block barriers (bar.sync, barrier.*)" >> "$LOG"
  fi
  if uses '\.shared\>'; then
    tools+=(racecheck)
  else
    echo "=== sanitizer racecheck: not run, the PTX uses no shared memory (.shared)" >> "$LOG"
  fi
  for tool in "${tools[@]}"; do
    step "sanitizer $tool (reduced storm)" \
      "$SANITIZER" --tool "$tool" --error-exitcode 3 \
      "$HERE/tests/allocator" gpu_sanitizer_storm --exact --test-threads=1
  done
fi
