//! AWMalloc, "AtomicWrapMalloc" (Vinkler & Havran, `000_...` section 4.1, Alg. 2):
//! AtomicMalloc's single atomic add on an offset into the pool, wrapping around to the pool's
//! start when the offset runs past its end.
//!
//! # The algorithm
//! Every request adds its size to the shared offset `head` and takes the range it skipped over.
//! A request whose range starts past the pool's end has overshot it: it tries to put `head`
//! back to the start of the pool with a compare-and-swap, from the value it (or a request that
//! overshot after it) left there, and takes the first bytes of the pool itself if that succeeds.
//! When another request wrapped first, it adds again (Alg. 2, lines 4-13). Nothing waits for
//! anything: every failed compare-and-swap means another request moved `head`.
//!
//! # Its defined behaviour: old allocations are overwritten
//! After a wrap, requests are served from memory that older allocations may still use
//! ([`FreeSupport::Wraps`]). The paper accepts this: the allocator is meant for allocations
//! that live briefly, with a pool large enough that they are dead before `head` comes round
//! again.
//!
//! # Departures from the paper
//! - **Out of memory** (the default, parameter 0): the paper's AWMalloc never fails and ignores
//!   `free`, so a pool smaller than what is in use at once is silently overwritten. Here every
//!   block starts with a 16-byte header holding its size, `free` gives the size back to a
//!   count of bytes in use (`live`), and a request that would take `live` past the pool's size
//!   fails with null. Where blocks are freed in about the order they were allocated (the
//!   paper's use), or all together before the pool is used up, no live block is ever
//!   overwritten; a block that outlives the rest by a whole lap of the pool still is (and its
//!   `free` then finds its header overwritten and raises [`errors::INVALID_FREE`], its size
//!   staying counted). The count costs one more atomic add per `malloc` and per `free`, on a
//!   second shared word.
//! - **The paper's allocator exactly** (parameter 1): no header, `free` does nothing, a
//!   request never fails; after a wrap, whatever was there is overwritten.
//! - **No wasted tail**: a range that starts before the pool's end may run past it, into a
//!   slack area of the largest block after the pool, where the paper leaves the pool's tail
//!   unused for that lap. So the bytes between the last block of a lap and the pool's end
//!   never need accounting: a lap always covers the whole pool.
//! - Sizes are rounded up to 16 bytes, so every block is 16-byte aligned.
//!
//! # Limits
//! Requests up to [`MAX_SIZE`] bytes (64 KiB), because the slack after the pool must hold the
//! largest block. `head` and `live` are 64-bit byte counts, so any region size works.

use super::{Caps, DeviceMalloc, FreeSupport, HEADER_BYTES, MallocKind, Region, errors, round_up};
use dynasoar_device::arch::{self, Backoff, atomic::Atomic64};

/// Alignment of every block and granule of every size.
const ALIGN: u64 = 16;
/// The size header in front of every block (default mode only).
const BLOCK_HEADER: u64 = 16;
/// Largest request, in bytes.
pub const MAX_SIZE: u32 = 64 << 10;
/// Bytes after the pool that a block starting before its end may run into.
const SLACK: u64 = MAX_SIZE as u64 + BLOCK_HEADER;
/// `head` and `live` each on their own 128-byte line, then the pool.
const HEAD_OFFSET: u64 = 0;
const LIVE_OFFSET: u64 = 128;
const POOL_OFFSET: u64 = 256;
/// The smallest pool a region is laid out with.
const MIN_POOL: u64 = 64 << 10;
/// High half of a block header, telling a live header from anything else.
const HEADER_MAGIC: u64 = 0xA3C5_9E11;

/// [`Region::param`] asking for the paper's AWMalloc exactly (no header, `free` ignored,
/// requests never fail).
pub const PARAM_PAPER: u64 = 1;

/// AWMalloc over a region.
#[derive(Clone, Copy, Debug)]
pub struct AwMalloc {
    region: Region,
    /// Bytes of the pool (a multiple of 16); blocks start below this offset.
    pool_bytes: u64,
    /// Whether frees are counted (the default) or ignored (the paper's).
    counted: bool,
}

impl AwMalloc {
    /// The pool's size for a body of `body_bytes` bytes.
    #[inline(always)]
    fn pool_bytes_for(body_bytes: u64) -> u64 {
        body_bytes.saturating_sub(POOL_OFFSET + SLACK) & !(ALIGN - 1)
    }

    #[inline(always)]
    fn head(&self) -> &Atomic64 {
        // SAFETY: a word of the metadata line, only accessed atomically.
        unsafe { self.region.atomic64(HEAD_OFFSET) }
    }

    #[inline(always)]
    fn live(&self) -> &Atomic64 {
        // SAFETY: as for `head`.
        unsafe { self.region.atomic64(LIVE_OFFSET) }
    }

    /// The header word of the block at pool offset `start`.
    ///
    /// # Safety
    /// `start` is a multiple of 16 below the pool's end.
    #[inline(always)]
    unsafe fn block_header(&self, start: u64) -> &Atomic64 {
        // SAFETY: the caller's contract; the word lies in the pool (or its slack) and is only
        // accessed atomically by the allocator.
        unsafe { self.region.atomic64(POOL_OFFSET + start) }
    }

    /// Alg. 2: the pool offset of a fresh range of `block` bytes (starting before the pool's
    /// end; it may run into the slack).
    #[inline(always)]
    fn claim(&self, block: u64) -> u64 {
        let head = self.head();
        let pool = self.pool_bytes;
        let mut backoff = Backoff::new();
        let mut start = head.fetch_add(block);
        loop {
            if start < pool {
                return start;
            }
            // Past the end. Whoever finds `head` where the last overshooting add left it puts
            // it back to the pool's start, keeping the first `block` bytes for itself.
            let mut expected = start + block;
            loop {
                match head.compare_exchange(expected, block) {
                    Ok(_) => return 0,
                    // More requests overshot after this one: wrap from where they left it.
                    Err(actual) if actual >= pool => {
                        expected = actual;
                        backoff.retry();
                    }
                    // Another request wrapped: add again, from the pool's start.
                    Err(_) => break,
                }
            }
            backoff.retry();
            start = head.fetch_add(block);
        }
    }
}

// SAFETY: every pointer lies in the pool or its slack, 16-byte aligned, and (with counting)
// a range is handed out again only after a whole lap of the pool, which the count of live
// bytes lets happen only once as many bytes were freed; as documented, a block that outlives
// a lap may be handed out again (`FreeSupport::Wraps`).
unsafe impl DeviceMalloc for AwMalloc {
    const KIND: MallocKind = MallocKind::AtomicWrap;
    const CAPS: Caps = Caps {
        max_size: MAX_SIZE,
        align: ALIGN as u32,
        free: FreeSupport::Wraps,
        min_region_bytes: HEADER_BYTES + POOL_OFFSET + SLACK + MIN_POOL,
        relays_above: u32::MAX,
    };

    unsafe fn init(region: Region, _phase: u32) {
        if arch::global_thread_id() == 0 {
            // SAFETY: attached to the region being initialised; nothing else runs.
            let m = unsafe { Self::attach(region) };
            m.head().store(0);
            m.live().store(0);
        }
    }

    #[inline(always)]
    unsafe fn attach(region: Region) -> Self {
        AwMalloc {
            region,
            pool_bytes: Self::pool_bytes_for(region.body_bytes()),
            counted: region.param() != PARAM_PAPER,
        }
    }

    #[inline(always)]
    fn malloc(&self, size: u32) -> *mut u8 {
        let data = round_up(size as u64, ALIGN);
        if !self.counted {
            let start = self.claim(data);
            return self.region.body().wrapping_add((POOL_OFFSET + start) as usize);
        }
        let block = data + BLOCK_HEADER;
        let live = self.live();
        if live.fetch_add(block) + block > self.pool_bytes {
            live.fetch_sub(block);
            return core::ptr::null_mut();
        }
        // Acquire: the frees that made room (release fence, then `live` decreased) happen
        // before this thread writes into the memory they gave back.
        arch::fence();
        let start = self.claim(block);
        // SAFETY: `claim` returned a 16-byte multiple below the pool's end.
        unsafe { self.block_header(start) }.store((HEADER_MAGIC << 32) | block);
        self.region.body().wrapping_add((POOL_OFFSET + start + BLOCK_HEADER) as usize)
    }

    #[inline(always)]
    unsafe fn free(&self, ptr: *mut u8) {
        let header_bytes = if self.counted { BLOCK_HEADER } else { 0 };
        let offset = (ptr as u64).wrapping_sub(self.region.body_addr() + POOL_OFFSET);
        let start = offset.wrapping_sub(header_bytes);
        if !offset.is_multiple_of(ALIGN) || offset < header_bytes || start >= self.pool_bytes {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        if !self.counted {
            return;
        }
        // SAFETY: `start` is a 16-byte multiple below the pool's end (checked above).
        let header = unsafe { self.block_header(start) };
        let word = header.load();
        let block = word & 0xFFFF_FFFF;
        let plausible =
            word >> 32 == HEADER_MAGIC && block > BLOCK_HEADER && block <= SLACK && block % ALIGN == 0;
        // Clearing the header makes a second free of the same block detectable.
        if !plausible || header.compare_exchange(word, 0).is_err() {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        // Release: this block's last uses happen before its bytes count as free.
        arch::fence();
        self.live().fetch_sub(block);
    }
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    extern crate alloc;
    extern crate std;
    use alloc::vec::Vec;
    use std::sync::Mutex;

    use super::*;
    use crate::malloc::check::check_allocations;
    use crate::malloc::testing::{HostRegion, StormConfig, run_grid};

    const REGION: u64 = 1 << 20;

    fn pool_of(region: &HostRegion) -> (u64, u64) {
        let start = region.region().body_addr() + POOL_OFFSET;
        (start, AwMalloc::pool_bytes_for(region.region().body_bytes()))
    }

    #[test]
    fn blocks_are_aligned_and_rounded_with_a_header() {
        let region = HostRegion::new(MallocKind::AtomicWrap, REGION, 0);
        let m = region.typed::<AwMalloc>();
        let (pool, _) = pool_of(&region);
        let a = m.malloc(1) as u64;
        let b = m.malloc(16) as u64;
        let c = m.malloc(17) as u64;
        let d = m.malloc(MAX_SIZE) as u64;
        assert_eq!(a, pool + 16, "the first block starts after its header");
        assert_eq!(b - a, 32);
        assert_eq!(c - b, 32);
        assert_eq!(d - c, 48);
        for p in [a, b, c, d] {
            assert_eq!(p % 16, 0);
        }
        assert_eq!(m.live().load(), 32 + 32 + 48 + MAX_SIZE as u64 + 16);
        for p in [a, b, c, d] {
            unsafe { m.free(p as *mut u8) };
        }
        assert_eq!(m.live().load(), 0);
        assert_eq!(region.errors(), 0);
    }

    #[test]
    fn out_of_memory_returns_null_and_recovers_after_frees() {
        let region = HostRegion::new(MallocKind::AtomicWrap, REGION, 0);
        let m = region.typed::<AwMalloc>();
        let (pool_start, pool) = pool_of(&region);
        let mut blocks = Vec::new();
        loop {
            let p = m.malloc(1000);
            if p.is_null() {
                break;
            }
            blocks.push(p as u64);
        }
        // 1008 data bytes and the header per block, all of the pool that fits.
        assert_eq!(blocks.len() as u64, pool / 1024);
        assert!(m.malloc(1000).is_null(), "still full");
        assert!(
            check_allocations(
                &blocks.iter().map(|&p| (p, 1000)).collect::<Vec<_>>(),
                16,
                Some((pool_start, pool_start + pool))
            )
            .is_ok()
        );
        // Freeing the oldest block makes room. The pool's tail is shorter than a block, so the
        // next one starts there and runs into the slack; the one after that wraps to the
        // start, where the freed blocks were.
        assert!(pool % 1024 != 0, "this test wants a tail shorter than a block");
        unsafe { m.free(blocks[0] as *mut u8) };
        let tail = m.malloc(1000) as u64;
        assert_eq!(tail, pool_start + blocks.len() as u64 * 1024 + 16);
        assert!(m.malloc(1000).is_null(), "full again");
        unsafe { m.free(blocks[1] as *mut u8) };
        let wrapped = m.malloc(1000) as u64;
        assert_eq!(wrapped, pool_start + 16, "wrapped to the start of the pool");
        assert_eq!(region.errors(), 0);
    }

    #[test]
    fn wraps_around_without_overlap_when_blocks_die_in_order() {
        // A sliding window of live blocks, freed oldest first, through ten laps of the pool.
        let region = HostRegion::new(MallocKind::AtomicWrap, REGION, 0);
        let m = region.typed::<AwMalloc>();
        let (pool_start, pool) = pool_of(&region);
        let mut window: std::collections::VecDeque<(u64, u64)> = Default::default();
        let mut wraps = 0;
        let mut last = 0;
        let mut rng = dynasoar_device::rand::Rng::new(7, 0);
        let mut allocated = 0u64;
        while allocated < 10 * pool {
            let size = 1 + (rng.next_u64() % 4000) as u32;
            let p = loop {
                let p = m.malloc(size) as u64;
                if p != 0 {
                    break p;
                }
                let (old, _) = window.pop_front().expect("an empty pool serves a small request");
                unsafe { m.free(old as *mut u8) };
            };
            if p < last {
                wraps += 1;
            }
            last = p;
            allocated += size as u64;
            window.push_back((p, size as u64));
            let live: Vec<_> = window.iter().copied().collect();
            check_allocations(&live, 16, Some((pool_start, pool_start + pool + SLACK)))
                .unwrap_or_else(|e| panic!("after {allocated} bytes: {e}"));
        }
        assert!(wraps >= 9, "{wraps} wraps in ten laps");
        assert_eq!(region.errors(), 0);
    }

    #[test]
    fn bad_and_double_frees_are_reported() {
        let region = HostRegion::new(MallocKind::AtomicWrap, REGION, 0);
        let m = region.typed::<AwMalloc>();
        let p = m.malloc(64);
        unsafe { m.free(p) };
        assert_eq!(region.errors(), 0);
        unsafe { m.free(p) };
        assert_eq!(region.errors(), errors::INVALID_FREE, "double free");
        let region = HostRegion::new(MallocKind::AtomicWrap, REGION, 0);
        let m = region.typed::<AwMalloc>();
        let mut outside = 0u64;
        unsafe { m.free(&mut outside as *mut u64 as *mut u8) };
        assert_eq!(region.errors(), errors::INVALID_FREE, "pointer outside the pool");
        let region = HostRegion::new(MallocKind::AtomicWrap, REGION, 0);
        let m = region.typed::<AwMalloc>();
        let p = m.malloc(64);
        unsafe { m.free(p.wrapping_add(16)) };
        assert_eq!(region.errors(), errors::INVALID_FREE, "pointer into a block");
    }

    #[test]
    fn the_papers_mode_never_fails_and_overwrites_after_a_wrap() {
        let region = HostRegion::new(MallocKind::AtomicWrap, REGION, PARAM_PAPER);
        let m = region.typed::<AwMalloc>();
        let (pool_start, pool) = pool_of(&region);
        let first = m.malloc(100) as u64;
        assert_eq!(first, pool_start, "no header");
        let mut last = first;
        let mut wrapped = None;
        for _ in 0..2 * pool / 112 {
            let p = m.malloc(100) as u64;
            assert_ne!(p, 0, "the paper's AWMalloc never fails");
            if p < last {
                wrapped.get_or_insert(p);
            }
            last = p;
        }
        assert_eq!(wrapped, Some(pool_start), "the wrap reuses the first block's memory");
        unsafe { m.free(first as *mut u8) };
        assert_eq!(region.errors(), 0, "free is accepted and ignored");
    }

    #[test]
    fn concurrent_rounds_never_overlap_and_wrap() {
        // Rounds of allocate-all, check, free-all through a pool a few rounds deep, so the
        // allocator wraps several times while threads race on `head`.
        let region = HostRegion::new(MallocKind::AtomicWrap, REGION, 0);
        let m = region.typed::<AwMalloc>();
        let (pool_start, pool) = pool_of(&region);
        let mut wraps = 0;
        let mut last_min = u64::MAX;
        for round in 0..24 {
            let blocks = Mutex::new(Vec::new());
            run_grid(16, |t| {
                let mut rng = dynasoar_device::rand::Rng::new(round, t as u64);
                let mut mine = Vec::new();
                for _ in 0..64 {
                    let size = 1 + (rng.next_u64() % 256) as u32;
                    let p = m.malloc(size);
                    assert!(!p.is_null(), "a pool of several rounds' demand");
                    // SAFETY: the block is this thread's, `size` bytes.
                    unsafe { core::ptr::write_bytes(p, t as u8, size as usize) };
                    mine.push((p as u64, size as u64));
                }
                blocks.lock().unwrap().extend(mine);
            });
            let blocks = blocks.into_inner().unwrap();
            check_allocations(&blocks, 16, Some((pool_start, pool_start + pool + SLACK)))
                .unwrap_or_else(|e| panic!("round {round}: {e}"));
            let min = blocks.iter().map(|b| b.0).min().unwrap();
            if min < last_min && round > 0 {
                wraps += 1;
            }
            last_min = min;
            run_grid(16, |t| {
                for &(p, _) in blocks.iter().skip(t as usize).step_by(16) {
                    unsafe { m.free(p as *mut u8) };
                }
            });
            assert_eq!(m.live().load(), 0);
        }
        assert!(wraps >= 2, "{wraps} wraps");
        assert_eq!(region.errors(), 0);
    }

    #[test]
    fn storm() {
        let region = HostRegion::new(MallocKind::AtomicWrap, 4 << 20, 0);
        let report = region.storm(StormConfig { threads: 8, per_thread: 200, sizes: (1, 512), rounds: 12 });
        assert_eq!(report.failed, 0);
        assert_eq!(region.typed::<AwMalloc>().live().load(), 0, "every byte was given back");
        assert_eq!(region.errors(), 0);
    }
}
