//! FDGMalloc (Widmer et al. 2013, `004_...`): warp-level heaps of superblocks, a voting leader
//! doing the work for its warp, bump allocation inside the current superblock, no `free` of
//! one allocation.
//!
//! # The paper (sections 3.1-3.4, 4)
//! Every warp obtains a *warp header* (its heap) holding the current superblock and a list of
//! all superblocks it took from CUDA's allocator. A request is rounded to 16 bytes; the lanes
//! asking together vote a worker, compute a prefix sum of their sizes, and the worker bumps the
//! current superblock's pointer once for all of them (a new superblock when it does not fit).
//! Requests larger than a superblock go to CUDA's allocator. Memory is given back only all at
//! once (`tidyUp`/`end`: the lists are walked and everything freed).
//!
//! # Our implementation
//! - Superblocks (32 KiB, the paper's size) are carved from the region's pool with one global
//!   counter instead of CUDA's allocator; requests above a superblock are relayed to
//!   [`SystemMalloc`] as in the paper.
//! - Warps are ephemeral across kernel launches, and the paper's explicit `Warp::start()` has
//!   no counterpart in a plain `malloc`: the heaps are a fixed array in the region, and a warp
//!   uses heap `global_warp_id() % heaps`. A heap outlives the launch (the paper's third
//!   garbage-collection strategy: memory stays available to later kernels), so the warp of the
//!   same id in the next launch continues in the same superblock.
//! - Under independent thread scheduling the lanes calling `malloc` together are
//!   `WarpGroup::current()`, not necessarily the whole warp, and two diverged groups of one
//!   warp (or two warps sharing a heap, or, on the CPU, the 32 one-lane "warps" of one warp id)
//!   may use a heap at the same time. So the heap's state (current superblock and bytes used)
//!   is one atomic word, advanced by the group's leader with a compare-and-swap: the paper's
//!   unsynchronised pointer register only works warp-synchronously with one group per heap.
//!   A leader that needs a new superblock installs it with the same compare-and-swap; when it
//!   loses that race and no longer needs it, it parks the superblock in the heap's spare slot
//!   for the next refill (if the slot is taken, that superblock is lost until the reset).
//! - When the group's total does not fit one superblock (many lanes with large requests), each
//!   lane allocates alone instead of relaying the whole group to CUDA's allocator: memory
//!   from the region is what users of this allocator size.
//! - No superblock list is kept: the only tidy-up is the host's reset of the whole region
//!   (`MallocHeap::reset`, which zeroes and re-initialises it), the paper's first strategy.
//!
//! # Limits
//! `free` of one allocation is a no-op ([`FreeSupport::Leaks`]), except for relayed pointers
//! (outside the region), which go back to CUDA's allocator. A reset does not free relayed
//! memory. The tail of a superblock that a request did not fit is wasted, as in the paper.

use super::system::SystemMalloc;
use super::{Caps, DeviceMalloc, FreeSupport, MallocKind, Region, round_up};
use dynasoar_device::arch::{self, Backoff, WarpGroup, atomic::Atomic64};

/// Bytes of a superblock (the paper's 32 KiB); larger requests are relayed.
const SUPERBLOCK_BYTES: u64 = 32 << 10;
/// The paper's minimum allocation block: every request is rounded to it.
const BLOCK_BYTES: u64 = 16;
/// Bytes of a heap's metadata (state and spare words), padded so that the heaps of different
/// warps do not share a 64-byte sector.
const HEAP_BYTES: u64 = 64;
/// Most heaps (more than the warps of a full H200 launch of 65,536 threads).
const MAX_HEAPS: u64 = 8192;
/// Superblocks per heap, at least, when sizing the number of heaps for a region.
const SUPERBLOCKS_PER_HEAP: u64 = 8;
/// Offset of the heaps in the body (the global superblock counter comes first, alone).
const HEAPS_OFFSET: u64 = 256;

/// Where everything lies in a region's body (a pure function of its size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    heaps: u64,
    pool_offset: u64,
    superblocks: u64,
}

impl Layout {
    #[inline(always)]
    fn of(body_bytes: u64) -> Layout {
        let heaps = (body_bytes / SUPERBLOCK_BYTES / SUPERBLOCKS_PER_HEAP).clamp(1, MAX_HEAPS);
        let pool_offset = round_up(HEAPS_OFFSET + heaps * HEAP_BYTES, 256);
        let superblocks = body_bytes.saturating_sub(pool_offset) / SUPERBLOCK_BYTES;
        Layout { heaps, pool_offset, superblocks }
    }
}

/// A heap's state word: `(superblock + 1) << 32 | bytes used`, 0 before its first superblock.
#[inline(always)]
fn state(superblock: u64, used: u64) -> u64 {
    ((superblock + 1) << 32) | used
}

/// FDGMalloc over a region.
#[derive(Clone, Copy, Debug)]
pub struct FdgMalloc {
    region: Region,
    layout: Layout,
}

impl FdgMalloc {
    /// Superblocks taken from the pool so far (may run past the pool's end: then it is empty).
    #[inline(always)]
    fn superblocks_taken(&self) -> &Atomic64 {
        // SAFETY: the body's first word, only accessed atomically.
        unsafe { self.region.atomic64(0) }
    }

    /// Heap `heap`'s state word (see [`state`]).
    #[inline(always)]
    fn heap_state(&self, heap: u64) -> &Atomic64 {
        // SAFETY: `heap < layout.heaps`, so the word lies in the heap array, before the pool;
        // only accessed atomically.
        unsafe { self.region.atomic64(HEAPS_OFFSET + heap * HEAP_BYTES) }
    }

    /// Heap `heap`'s spare superblock (+ 1; 0: none).
    #[inline(always)]
    fn heap_spare(&self, heap: u64) -> &Atomic64 {
        // SAFETY: as for `heap_state`, the next word.
        unsafe { self.region.atomic64(HEAPS_OFFSET + heap * HEAP_BYTES + 8) }
    }

    /// The calling warp's heap.
    #[inline(always)]
    fn my_heap(&self) -> u64 {
        // `layout.heaps >= 1`.
        arch::global_warp_id() as u64 % self.layout.heaps
    }

    /// A superblock nobody uses: the heap's spare, else a fresh one from the pool.
    #[inline(always)]
    fn take_superblock(&self, heap: u64) -> Option<u64> {
        let spare = self.heap_spare(heap).swap(0);
        if spare != 0 {
            return Some(spare - 1);
        }
        // Read first so that a drained pool's counter stops growing.
        if self.superblocks_taken().load() >= self.layout.superblocks {
            return None;
        }
        let taken = self.superblocks_taken().fetch_add(1);
        (taken < self.layout.superblocks).then_some(taken)
    }

    /// `bytes` (a multiple of 16, at most a superblock) from heap `heap`: the offset into the
    /// pool, or `None` when the pool is exhausted.
    fn bump(&self, heap: u64, bytes: u64) -> Option<u64> {
        let heap_state = self.heap_state(heap);
        let mut fresh: Option<u64> = None;
        let mut backoff = Backoff::new();
        let result = loop {
            let current = heap_state.load();
            let (superblock, used) = ((current >> 32).wrapping_sub(1), current & 0xffff_ffff);
            if current != 0 && used + bytes <= SUPERBLOCK_BYTES {
                if heap_state.compare_exchange(current, current + bytes).is_ok() {
                    break Some(superblock * SUPERBLOCK_BYTES + used);
                }
                backoff.retry();
                continue;
            }
            let next = match fresh {
                Some(next) => next,
                None => match self.take_superblock(heap) {
                    Some(next) => next,
                    None => break None,
                },
            };
            fresh = Some(next);
            if heap_state.compare_exchange(current, state(next, bytes)).is_ok() {
                fresh = None;
                break Some(next * SUPERBLOCK_BYTES);
            }
            // Another group of this heap moved it on; its superblock may have room for us.
            backoff.retry();
        };
        if let Some(unused) = fresh {
            // Lost only when the spare slot is taken already (two lost races at once).
            let _ = self.heap_spare(heap).compare_exchange(0, unused + 1);
        }
        result
    }

    #[inline(always)]
    fn pointer(&self, pool_offset: u64) -> *mut u8 {
        self.region.body().wrapping_add((self.layout.pool_offset + pool_offset) as usize)
    }
}

// SAFETY: the heap's state word hands out each byte range of a superblock once (a
// compare-and-swap from `used` to `used + total`, or the install of a superblock taken by one
// thread from the counter or the spare slot), and the leader gives each lane of its group a
// disjoint sub-range `[below, below + size)` of the group's range. Offsets are multiples of 16
// from a 256-byte-aligned pool. Relayed requests get CUDA's memory.
unsafe impl DeviceMalloc for FdgMalloc {
    const KIND: MallocKind = MallocKind::Fdg;
    const CAPS: Caps = Caps {
        max_size: u32::MAX,
        align: BLOCK_BYTES as u32,
        free: FreeSupport::Leaks,
        min_region_bytes: super::HEADER_BYTES + 512 + 2 * SUPERBLOCK_BYTES,
        relays_above: SUPERBLOCK_BYTES as u32,
    };

    unsafe fn init(region: Region, _phase: u32) {
        // SAFETY: the region being initialised; nothing else runs.
        let m = unsafe { Self::attach(region) };
        let (me, threads) = (arch::global_thread_id() as u64, arch::global_thread_count() as u64);
        if me == 0 {
            m.superblocks_taken().store(0);
        }
        let mut heap = me;
        while heap < m.layout.heaps {
            m.heap_state(heap).store(0);
            m.heap_spare(heap).store(0);
            heap += threads.max(1);
        }
    }

    #[inline(always)]
    unsafe fn attach(region: Region) -> Self {
        FdgMalloc { region, layout: Layout::of(region.body_bytes()) }
    }

    fn malloc(&self, size: u32) -> *mut u8 {
        if size as u64 > SUPERBLOCK_BYTES {
            return SystemMalloc.malloc(size);
        }
        let bytes = round_up(size as u64, BLOCK_BYTES) as u32;
        let heap = self.my_heap();
        // The lanes here now (relayed ones left above) are the group the leader serves.
        let group = WarpGroup::current();
        let (below, total) = group.exclusive_sum(bytes);
        if total as u64 > SUPERBLOCK_BYTES {
            return match self.bump(heap, bytes as u64) {
                Some(offset) => self.pointer(offset),
                None => core::ptr::null_mut(),
            };
        }
        let mut base = u64::MAX;
        if group.is_leader() {
            base = self.bump(heap, total as u64).unwrap_or(u64::MAX);
        }
        let base = group.broadcast_u64(base);
        if base == u64::MAX {
            return core::ptr::null_mut();
        }
        self.pointer(base + below as u64)
    }

    #[inline(always)]
    unsafe fn free(&self, ptr: *mut u8) {
        if !self.region.contains(ptr) {
            // SAFETY: outside the region, so relayed to CUDA's allocator by `malloc`.
            unsafe { SystemMalloc.free(ptr) };
        }
    }
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::*;
    use crate::malloc::testing::{HostRegion, StormConfig, run_grid};
    use std::sync::Mutex;
    use std::vec::Vec;

    #[test]
    fn bumps_in_sixteen_byte_blocks_and_moves_to_a_new_superblock() {
        let region = HostRegion::new(MallocKind::Fdg, 1 << 20, 0);
        let m = region.typed::<FdgMalloc>();
        let (a, b, c) = (m.malloc(1) as u64, m.malloc(16) as u64, m.malloc(17) as u64);
        assert_eq!(a % 16, 0);
        assert_eq!((b - a, c - b), (16, 16));
        let d = m.malloc(32) as u64;
        assert_eq!(d - c, 32);
        // A superblock-sized request does not fit the rest: it starts a new superblock.
        let e = m.malloc(SUPERBLOCK_BYTES as u32) as u64;
        assert_eq!(e - a, SUPERBLOCK_BYTES);
        assert_eq!(region.errors(), 0);
    }

    #[test]
    fn out_of_memory_returns_null_and_keeps_failing() {
        let bytes = FdgMalloc::CAPS.min_region_bytes;
        let region = HostRegion::new(MallocKind::Fdg, bytes, 0);
        let m = region.typed::<FdgMalloc>();
        let layout = Layout::of(region.region().body_bytes());
        assert_eq!(layout.superblocks, 2);
        let (lo, hi) = region.bounds();
        for _ in 0..2 {
            let p = m.malloc(SUPERBLOCK_BYTES as u32) as u64;
            assert!(p >= lo && p + SUPERBLOCK_BYTES <= hi);
        }
        assert!(m.malloc(16).is_null());
        // `free` does not give memory back.
        unsafe { m.free((lo + layout.pool_offset) as *mut u8) };
        assert!(m.malloc(16).is_null());
    }

    #[test]
    fn relays_requests_above_a_superblock() {
        let region = HostRegion::new(MallocKind::Fdg, 1 << 20, 0);
        let m = region.typed::<FdgMalloc>();
        let p = m.malloc(SUPERBLOCK_BYTES as u32 + 1);
        assert!(!p.is_null());
        assert!(!region.region().contains(p));
        // SAFETY: the relayed block is ours and that large.
        unsafe { p.add(SUPERBLOCK_BYTES as usize).write(7) };
        unsafe { m.free(p) };
        assert_eq!(region.errors(), 0);
    }

    #[test]
    fn warps_sharing_a_heap_get_disjoint_blocks() {
        // 64 one-lane CPU "warps" of two warp ids race on two heaps.
        let region = HostRegion::new(MallocKind::Fdg, 4 << 20, 0);
        let m = region.typed::<FdgMalloc>();
        let seen = Mutex::new(Vec::new());
        run_grid(64, |_| {
            let mine: Vec<u64> = (0..200).map(|i| m.malloc(16 + (i % 5) * 16) as u64).collect();
            seen.lock().unwrap().extend(mine);
        });
        let mut seen = seen.into_inner().unwrap();
        assert!(seen.iter().all(|&p| p != 0 && p % 16 == 0));
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 64 * 200);
    }

    #[test]
    fn storm_leaks_but_never_overlaps() {
        let region = HostRegion::new(MallocKind::Fdg, 8 << 20, 0);
        let report = region.storm(StormConfig { threads: 32, per_thread: 64, sizes: (1, 512), rounds: 3 });
        assert_eq!(report.failed, 0);
        assert_eq!(report.checked, 3 * 32 * 64);
        assert_eq!(region.errors(), 0);
    }

    #[test]
    fn layout_fits_the_body() {
        for body in [256 << 10, 1 << 20, 3 << 30, 100 << 30] {
            let l = Layout::of(body);
            assert!(l.heaps >= 1 && l.heaps <= MAX_HEAPS);
            assert!(l.pool_offset + l.superblocks * SUPERBLOCK_BYTES <= body);
            assert_eq!(l.pool_offset % 256, 0);
        }
    }
}
