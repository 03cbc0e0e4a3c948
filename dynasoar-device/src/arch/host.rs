//! Host implementations: one emulated GPU thread per call, warps of one lane.

use core::cell::Cell;

/// Lanes per warp on the CPU backend: every emulated thread is its own warp.
pub const WARP_SIZE: u32 = 1;

/// Launch coordinates of the emulated thread running on this OS thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LaunchCoords {
    pub block_idx: u32,
    pub thread_idx: u32,
    pub block_dim: u32,
    pub grid_dim: u32,
}

/// What the emulated thread on this OS thread sees: its coordinates, and the multiprocessor
/// it runs on. One cell per value, so that the CPU backend's loop over a block's threads writes
/// only `thread_idx` per thread (a store to thread-local memory), and each query reads one
/// word.
struct Emulated {
    thread_idx: Cell<u32>,
    block_idx: Cell<u32>,
    block_dim: Cell<u32>,
    grid_dim: Cell<u32>,
    /// [`sm_id`]: the worker thread of the CPU backend ([`run_blocks`]), or the block index
    /// ([`with_launch_coords`]).
    sm: Cell<u32>,
    /// [`place_hint`]: where this OS thread's allocations should look first.
    place: Cell<u64>,
}

std::thread_local! {
    static EMULATED: Emulated = const {
        Emulated {
            thread_idx: Cell::new(0),
            block_idx: Cell::new(0),
            block_dim: Cell::new(1),
            grid_dim: Cell::new(1),
            sm: Cell::new(0),
            place: Cell::new(NO_HINT),
        }
    };
}

/// The emulated thread's state as it was, put back when dropped (also when device code
/// panics), so that nested and later emulations on this OS thread start from it.
struct Restore([u32; 5]);

impl Restore {
    fn save() -> Self {
        EMULATED.with(|e| {
            Restore([e.thread_idx.get(), e.block_idx.get(), e.block_dim.get(), e.grid_dim.get(), e.sm.get()])
        })
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        let [thread_idx, block_idx, block_dim, grid_dim, sm] = self.0;
        set(thread_idx, block_idx, block_dim, grid_dim, sm);
    }
}

#[inline(always)]
fn set(thread_idx: u32, block_idx: u32, block_dim: u32, grid_dim: u32, sm: u32) {
    EMULATED.with(|e| {
        e.thread_idx.set(thread_idx);
        e.block_idx.set(block_idx);
        e.block_dim.set(block_dim);
        e.grid_dim.set(grid_dim);
        e.sm.set(sm);
    });
}

/// Run `f` as the emulated GPU thread `coords`, on the multiprocessor of its block index (for
/// tests that emulate threads of several multiprocessors on OS threads of their own).
pub fn with_launch_coords<R>(coords: LaunchCoords, f: impl FnOnce() -> R) -> R {
    let _restore = Restore::save();
    set(coords.thread_idx, coords.block_idx, coords.block_dim, coords.grid_dim, coords.block_idx);
    f()
}

/// Run the thread blocks `blocks` of a grid of `grid_dim` blocks of `block_dim` threads on
/// this OS thread, as multiprocessor `sm` (the CPU backend's grid emulation): `f` once per
/// emulated thread, block after block, thread after thread, with that thread's coordinates
/// set. Per thread only its index is written; the block's coordinates once per block.
#[inline]
pub fn run_blocks(
    blocks: core::ops::Range<u32>,
    block_dim: u32,
    grid_dim: u32,
    sm: u32,
    mut f: impl FnMut(),
) {
    let _restore = Restore::save();
    EMULATED.with(|e| {
        e.block_dim.set(block_dim);
        e.grid_dim.set(grid_dim);
        e.sm.set(sm);
        for block_idx in blocks {
            e.block_idx.set(block_idx);
            for thread_idx in 0..block_dim {
                e.thread_idx.set(thread_idx);
                f();
            }
        }
    });
}

/// [`place_hint`] when nothing was noted.
pub const NO_HINT: u64 = u64::MAX;

/// Where the allocator should look first for this OS thread's next allocation: a block index
/// of the heap, or [`NO_HINT`]. The CPU backend's do-all loop notes the block whose objects
/// it visits, and the allocator the block it last allocated in, so that a worker places new
/// objects next to the objects that created them (see `allocator::warp_seed`).
#[inline(always)]
pub fn place_hint() -> u64 {
    EMULATED.with(|e| e.place.get())
}

/// Note where this OS thread's next allocation should look first (see [`place_hint`]).
#[inline(always)]
pub fn set_place_hint(block: u64) {
    EMULATED.with(|e| e.place.set(block));
}

#[inline(always)]
pub fn thread_idx() -> u32 {
    EMULATED.with(|e| e.thread_idx.get())
}

#[inline(always)]
pub fn block_idx() -> u32 {
    EMULATED.with(|e| e.block_idx.get())
}

#[inline(always)]
pub fn block_dim() -> u32 {
    EMULATED.with(|e| e.block_dim.get())
}

#[inline(always)]
pub fn grid_dim() -> u32 {
    EMULATED.with(|e| e.grid_dim.get())
}

/// The CPU stand-in for the multiprocessor id: the CPU backend's worker thread running the
/// emulated thread (threads of one worker never run at the same time, as warps of one
/// multiprocessor share it), below its thread count; under [`with_launch_coords`], the block
/// index.
#[inline(always)]
pub fn sm_id() -> u32 {
    EMULATED.with(|e| e.sm.get())
}

/// The CPU stand-in for the warp slot: 0, as each worker runs its emulated threads one after
/// another, so its multiprocessor id alone tells concurrent threads apart.
#[inline(always)]
pub fn warp_slot() -> u32 {
    0
}

#[inline(always)]
pub fn lane_id() -> u32 {
    0
}

#[inline(always)]
pub fn lanemask_lt() -> u32 {
    0
}

#[inline(always)]
pub fn activemask() -> u32 {
    1
}

#[inline(always)]
pub fn ballot(mask: u32, pred: bool) -> u32 {
    mask & pred as u32
}

#[inline(always)]
pub fn match_any(mask: u32, _key: u32) -> u32 {
    mask & 1
}

#[inline(always)]
pub fn shfl_u32(_mask: u32, value: u32, _src: u32) -> u32 {
    value
}

/// The CPU has no use for an L2 hint: nothing to do.
#[inline(always)]
pub fn prefetch_l2(_addr: u64) {}

#[inline(always)]
pub fn fence() {
    // Acquire-release, like the GPU's `fence.acq_rel.gpu`, so that loom checks the algorithms
    // under the same ordering the GPU gives them.
    #[cfg(loom)]
    loom::sync::atomic::fence(core::sync::atomic::Ordering::AcqRel);
    #[cfg(not(loom))]
    core::sync::atomic::fence(core::sync::atomic::Ordering::AcqRel);
}

/// Give other threads a chance to run (the CPU stand-in for `nanosleep`).
#[inline(always)]
pub fn nanosleep(_ns: u32) {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    std::thread::yield_now();
}

/// A monotonic tick count (the CPU stand-in for the cycle counter). Constant under loom,
/// whose executions must be reproducible.
#[cfg(loom)]
pub fn clock64() -> u64 {
    0
}

/// A monotonic tick count, the CPU stand-in for the cycle counter: on x86-64 the time-stamp
/// counter (ticks at a constant rate of a few GHz, like the GPU's clock; `rdtsc` took 12 ns
/// on the 2-core AMD EPYC of docs/results/2026-11-26-perf/cpu-backend.txt, where
/// `Instant::elapsed` took 29 ns, paid by every allocation's search seed), elsewhere
/// nanoseconds.
#[cfg(all(not(loom), target_arch = "x86_64"))]
#[inline(always)]
pub fn clock64() -> u64 {
    // SAFETY: `rdtsc` is part of x86-64 and reads a counter; it has no preconditions.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// A monotonic tick count, the CPU stand-in for the cycle counter: nanoseconds here (the
/// time-stamp counter on x86-64).
#[cfg(all(not(loom), not(target_arch = "x86_64")))]
pub fn clock64() -> u64 {
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Abort the emulated kernel: the CPU backend turns the panic into a kernel error.
#[cold]
pub fn trap() -> ! {
    panic!("device code trapped")
}
