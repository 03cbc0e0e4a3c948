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

std::thread_local! {
    static COORDS: Cell<LaunchCoords> = const {
        Cell::new(LaunchCoords { block_idx: 0, thread_idx: 0, block_dim: 1, grid_dim: 1 })
    };
}

/// Run `f` as the emulated GPU thread `coords` (used by the CPU backend's grid emulation).
pub fn with_launch_coords<R>(coords: LaunchCoords, f: impl FnOnce() -> R) -> R {
    let saved = COORDS.with(|c| c.replace(coords));
    let result = f();
    COORDS.with(|c| c.set(saved));
    result
}

#[inline(always)]
fn coords() -> LaunchCoords {
    COORDS.with(|c| c.get())
}

#[inline(always)]
pub fn thread_idx() -> u32 {
    coords().thread_idx
}

#[inline(always)]
pub fn block_idx() -> u32 {
    coords().block_idx
}

#[inline(always)]
pub fn block_dim() -> u32 {
    coords().block_dim
}

#[inline(always)]
pub fn grid_dim() -> u32 {
    coords().grid_dim
}

/// The CPU stand-in for the multiprocessor id: the emulated thread block, as blocks are what the
/// CPU backend spreads over cores.
#[inline(always)]
pub fn sm_id() -> u32 {
    coords().block_idx
}

/// The CPU stand-in for the warp slot: 0, as each emulated block runs its threads one after
/// another on one OS thread, so its block index alone tells concurrent threads apart.
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

/// A monotonic nanosecond count (the CPU stand-in for the cycle counter). Constant under loom,
/// whose executions must be reproducible.
#[cfg(loom)]
pub fn clock64() -> u64 {
    0
}

/// A monotonic nanosecond count (the CPU stand-in for the cycle counter).
#[cfg(not(loom))]
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
