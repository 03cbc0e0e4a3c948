//! Thread, warp and memory-model primitives, one API for both targets.
//!
//! On `nvptx64` these are PTX special registers, warp collectives (`vote`, `shfl`, `activemask`)
//! and `.gpu`-scoped atomics written with `asm!` (Rust's own atomics get
//! `.sys` scope for loads and CAS on nvptx, which we never want on hot paths).
//!
//! On the host the same functions describe one emulated GPU thread: the CPU backend sets the
//! thread's launch coordinates before calling a kernel, and a warp has exactly one lane, so every
//! warp collective degenerates to its single-lane meaning (`activemask() == 1`, a ballot returns
//! the lane's own predicate, a shuffle returns the lane's own value). Code written against this
//! module therefore needs no `cfg` of its own.
//!
//! Rules for code built on this module (independent thread scheduling, Volta and later):
//! - never assume that the lanes of a warp run in lockstep: pass a mask obtained from
//!   [`activemask`] at the collective to every `*_sync` operation;
//! - every retry loop backs off with [`Backoff`] so that other threads make progress;
//! - shared mutable state is read and written only through [`atomic`] types, never with plain
//!   loads (an L1-cached plain load can return a stale value forever).

pub mod atomic;
mod bits;
mod warp;

#[cfg(target_arch = "nvptx64")]
mod nvptx;
#[cfg(target_arch = "nvptx64")]
use nvptx as imp;

#[cfg(not(target_arch = "nvptx64"))]
mod host;
#[cfg(not(target_arch = "nvptx64"))]
use host as imp;

#[cfg(not(target_arch = "nvptx64"))]
pub use host::{LaunchCoords, NO_HINT, place_hint, run_blocks, set_place_hint, with_launch_coords};
#[cfg(target_arch = "nvptx64")]
pub(crate) use nvptx::report_panic_and_trap;
#[cfg(target_arch = "nvptx64")]
pub use nvptx::wait_for_prior_grids;

pub use bits::{clear_lowest_set_bits, lowest_set_bits, nth_set_bit, ones_from, rotate_find};
pub use imp::{
    WARP_SIZE, activemask, ballot, block_dim, block_idx, clock64, fence, grid_dim, lane_id, lanemask_lt,
    match_any, nanosleep, prefetch_l2, shfl_u32, sm_id, thread_idx, trap, warp_slot,
};
pub use warp::WarpGroup;

/// Index of this thread in the whole (one-dimensional) grid.
#[inline(always)]
pub fn global_thread_id() -> usize {
    block_idx() as usize * block_dim() as usize + thread_idx() as usize
}

/// Number of threads in the whole (one-dimensional) grid.
#[inline(always)]
pub fn global_thread_count() -> usize {
    grid_dim() as usize * block_dim() as usize
}

/// Index of this thread's warp in the whole grid (used to seed bitmap rotation).
#[inline(always)]
pub fn global_warp_id() -> usize {
    global_thread_id() / WARP_SIZE as usize
}

/// Shuffle a `u64` from lane `src` of `mask` (two 32-bit shuffles).
#[inline(always)]
pub fn shfl_u64(mask: u32, value: u64, src: u32) -> u64 {
    let lo = shfl_u32(mask, value as u32, src) as u64;
    let hi = shfl_u32(mask, (value >> 32) as u32, src) as u64;
    (hi << 32) | lo
}

/// Exponential back-off for retry loops.
///
/// On the GPU this sleeps the calling thread with `nanosleep` (sm_70+), which lets the other
/// threads of its warp and of its multiprocessor run; on the host it yields the OS thread.
///
/// Two uses: [`snooze`](Self::snooze) when waiting for another thread to finish something
/// (sleep at once), [`retry`](Self::retry) after losing a race to a thread that made progress
/// (retry at once a few times, as the paper's loops do, and sleep only if losing persists).
pub struct Backoff {
    ns: u32,
    free_retries: u32,
}

impl Backoff {
    const START_NS: u32 = 32;
    const MAX_NS: u32 = 2048;
    /// Lost races retried without sleeping.
    const FREE_RETRIES: u32 = 4;

    #[inline(always)]
    pub const fn new() -> Self {
        Backoff { ns: Self::START_NS, free_retries: Self::FREE_RETRIES }
    }

    /// Wait a little, twice as long as last time (up to a cap).
    #[inline(always)]
    pub fn snooze(&mut self) {
        nanosleep(self.ns);
        if self.ns < Self::MAX_NS {
            self.ns *= 2;
        }
    }

    /// After a lost race: go again at once the first few times, then snooze.
    #[inline(always)]
    pub fn retry(&mut self) {
        if self.free_retries > 0 {
            self.free_retries -= 1;
            // Still let loom schedule the winner: a model must never spin without yielding.
            #[cfg(loom)]
            loom::thread::yield_now();
        } else {
            self.snooze();
        }
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new()
    }
}
