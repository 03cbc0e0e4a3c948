//! The 3L allocator's non-blocking parallel buddy system (`001_...`, Lin, Lin & Lee, IWCSE
//! 2013, section 3).
//!
//! The paper's buddy memory has one free list per level `k` (blocks of `2^k` bytes). `Allocate`
//! takes a block from the first level large enough for the request and, when that level is
//! empty, performs *pair-creation*: it takes a block one level up and splits it into two buddies
//! (recursively, up to the largest level). `Free` returns the block to its level (found in a
//! *level table*) and, when its buddy (`address XOR size`) is free too, removes both and frees
//! their parent one level up, recursively.
//!
//! How we implement it:
//! - **Free lists.** A level's free list is a lock-free hierarchical bitmap ([`dynasoar_device::bitmap`])
//!   with one bit per block of that level (set: the block is free at this level). Taking a block
//!   is finding and clearing a set bit ([`Bitmap::clear_any`], searched with a per-warp rotation
//!   so concurrent requests spread out); whoever's atomic AND cleared the bit owns the block.
//! - **Pair-creation.** When every search at a level comes back empty, the thread climbs one
//!   level and tries again; with a block of level `j` in hand it walks back down, keeping the
//!   lower half at each level and publishing the upper half (its buddy) as free there.
//! - **Merging.** Buddies `2i` and `2i + 1` always share one 64-bit container of their level's
//!   bitmap, so the paper's steps 1-5 of `Free` (store A, look for B, remove min(A, B), remove
//!   max(A, B)) become one compare-and-swap on that container: if B's bit is set, clear it
//!   (both halves are now ours: free the parent one level up), otherwise set A's bit. Two
//!   buddies can therefore never both sit free at one level: the pool is exactly as coalesced
//!   as the live blocks allow, whatever the interleaving.
//! - **Level table.** Four bits per 16-byte unit of the pool hold `level + 1` of the allocation
//!   starting there (0: none). `free` swaps the entry to 0 with one atomic AND, which finds the
//!   level and detects double frees and pointers that no allocation starts at
//!   ([`errors::INVALID_FREE`]).
//! - **Several trees.** The pool is the body minus the metadata. It is cut into top blocks of
//!   [`MAX_BLOCK`] bytes (fewer for small regions: the largest power of two that fits); what is
//!   left (less than one top block) is cut by its binary digits into one block each of smaller
//!   levels, placed after the top blocks in decreasing size. Such a block's buddy would extend
//!   past the pool, so it is never free and the block never merges: the whole pool is used.
//!
//! Departures from the paper:
//! - **No signal queues.** The paper's free lists are circular queues of slots: an allocating
//!   thread books a slot with an atomic add and then *waits* for another thread to send an
//!   address (or "overflow") into it, and pair-creation pairs "odd" and "even" threads so that
//!   one splits a parent for both. The waiting makes a thread's progress depend on others being
//!   scheduled (under independent thread scheduling a waiting lane may starve the lane that
//!   would signal it), and an out-of-memory condition needs an extra overflow signal to release
//!   every waiter. Here no thread waits for a signal: each thread takes (or fails to take) a
//!   block with its own atomic, and does its own pair-creation, publishing the spare half for
//!   others, which is what the paper's "odd" thread hands to its "even" partner. The only waits
//!   are the hierarchical bitmap's, for a summary bit another thread is about to flip (as in
//!   DynaSOAr's own allocator), each with [`Backoff`].
//! - **Merge in one atomic** instead of two CAS plus a retry (see above): a strengthening.
//! - **Out of memory.** A request fails (null) after [`SEARCH_PASSES`] climbs from its level to
//!   the top found nothing; under heavy contention a split in flight can make a pass miss its
//!   halves, which is why there are several passes.
//!
//! Limits: requests are rounded up to a power of two of at least [`MIN_BLOCK`] bytes (internal
//! fragmentation up to half a block), at most [`MAX_BLOCK`] bytes (and no larger than the
//! region's top block); every pointer is 16-byte aligned (a block of `2^k` bytes is also
//! `2^k`-aligned relative to the pool start). No relay to CUDA's allocator. Metadata takes
//! about 5% of the body (the level table 1/32, the bitmaps about 1/64).

use super::{Caps, DeviceMalloc, FreeSupport, HEADER_BYTES, MallocKind, Region, errors, round_up};
use dynasoar_device::arch::{self, Backoff, atomic::Atomic64};
use dynasoar_device::bitmap::{Bitmap, BitmapGeometry, init_container, next_seed};

/// log2 of the smallest block.
const MIN_SHIFT: u32 = 4;
/// log2 of the largest block (a top block of a tree).
const MAX_SHIFT: u32 = 18;
/// Smallest block, in bytes (also the alignment of every block).
pub const MIN_BLOCK: u32 = 1 << MIN_SHIFT;
/// Largest block and largest request, in bytes.
pub const MAX_BLOCK: u32 = 1 << MAX_SHIFT;
/// Levels of the buddy system: level `i` holds blocks of `2^(MIN_SHIFT + i)` bytes. The level
/// table stores `level + 1` in four bits, so there are at most 15.
const LEVELS: usize = (MAX_SHIFT - MIN_SHIFT + 1) as usize;
const _: () = assert!(LEVELS <= 15);
/// Level-table entries per 32-bit word (four bits each).
const ENTRIES_PER_WORD: u64 = 8;
/// Bytes at the start of the body reserved for [`Layout`].
const LAYOUT_BYTES: u64 = 2048;
/// The level table, the bitmaps and the pool start on boundaries of this many bytes.
const SECTION_ALIGN: u64 = 256;
/// Largest pool (the bitmap of the smallest blocks must stay within 2^36 bits).
const MAX_POOL_BYTES: u64 = 1 << (6 * dynasoar_device::bitmap::MAX_LEVELS as u32 + MIN_SHIFT);
/// Searches of one level's bitmap before climbing to the next (the top level gets more).
const LEVEL_ATTEMPTS: u32 = 2;
const TOP_ATTEMPTS: u32 = 8;
/// Climbs from the requested level to the top before a request fails.
pub const SEARCH_PASSES: u32 = 4;

/// Where everything lies in the body. Written once at initialisation (by thread 0; every
/// initialising thread computes the same one with [`Layout::plan`]) and never changed
/// afterwards, so `malloc` and `free` read it with plain loads.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct Layout {
    /// Bytes of the pool, a multiple of [`MIN_BLOCK`] (0: the region holds no pool).
    pool_bytes: u64,
    /// Body offset of the pool.
    pool_offset: u64,
    /// Body offset of the level table (`pool_bytes / 16` four-bit entries in 32-bit words).
    table_offset: u64,
    /// The largest level in use (its blocks are the top blocks of the trees).
    top: u64,
    /// Body offset of the containers of each level's free-block bitmap.
    containers_offset: [u64; LEVELS],
    /// Each level's free-block bitmap: one bit per block of that level that starts in the pool.
    free_blocks: [BitmapGeometry; LEVELS],
}

const _: () = assert!(core::mem::size_of::<Layout>() as u64 <= LAYOUT_BYTES);

/// The geometry of a bitmap of one bit, for levels a layout does not use.
const ONE_BIT: BitmapGeometry = match BitmapGeometry::new(1) {
    Some(geometry) => geometry,
    None => panic!("a bitmap of one bit exists"),
};

const EMPTY_LAYOUT: Layout = Layout {
    pool_bytes: 0,
    pool_offset: 0,
    table_offset: LAYOUT_BYTES,
    top: 0,
    containers_offset: [LAYOUT_BYTES; LEVELS],
    free_blocks: [ONE_BIT; LEVELS],
};

/// log2 of the block size of `level`.
#[inline(always)]
const fn shift_of(level: u64) -> u64 {
    level + MIN_SHIFT as u64
}

impl Layout {
    /// The layout of a pool of `pool_bytes` bytes (a multiple of 16, at least 16): metadata
    /// first, the pool after it.
    fn with_pool(pool_bytes: u64) -> Option<Layout> {
        let top = (63 - pool_bytes.leading_zeros() as u64).min(MAX_SHIFT as u64) - MIN_SHIFT as u64;
        let mut layout = EMPTY_LAYOUT;
        layout.pool_bytes = pool_bytes;
        layout.top = top;
        let table_words = (pool_bytes >> MIN_SHIFT).div_ceil(ENTRIES_PER_WORD);
        let mut offset = round_up(LAYOUT_BYTES + table_words * 4, SECTION_ALIGN);
        for level in 0..=top {
            let geometry = BitmapGeometry::new(pool_bytes >> shift_of(level))?;
            *layout.containers_offset.get_mut(level as usize)? = offset;
            *layout.free_blocks.get_mut(level as usize)? = geometry;
            offset += geometry.bytes();
        }
        layout.pool_offset = round_up(offset, SECTION_ALIGN);
        Some(layout)
    }

    /// The layout of a body of `body_bytes` bytes (a pure function of it).
    fn plan(body_bytes: u64) -> Layout {
        // The metadata takes under 5% of the pool: start there and shrink until it fits.
        let available = body_bytes.saturating_sub(LAYOUT_BYTES + 4 * SECTION_ALIGN);
        let mut pool_bytes = (available / 20 * 19).min(MAX_POOL_BYTES) & !(MIN_BLOCK as u64 - 1);
        for _ in 0..16 {
            if pool_bytes < MIN_BLOCK as u64 {
                break;
            }
            let Some(layout) = Layout::with_pool(pool_bytes) else { break };
            let end = layout.pool_offset + pool_bytes;
            if end <= body_bytes {
                return layout;
            }
            pool_bytes = (pool_bytes - (end - body_bytes).min(pool_bytes)) & !(MIN_BLOCK as u64 - 1);
        }
        EMPTY_LAYOUT
    }

    /// Blocks of the top level (the trees).
    fn top_blocks(&self) -> u64 {
        self.pool_bytes >> shift_of(self.top)
    }
}

/// A first seed for this thread's searches: the warp and the clock choose the containers (so
/// repeated requests do not retrace one path), the lane the starting bit within a container.
#[inline(always)]
fn search_seed() -> u64 {
    let warp = arch::global_warp_id() as u64;
    let mixed =
        warp.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ arch::clock64().wrapping_mul(0xBF58_476D_1CE4_E5B9);
    (mixed & !63) | arch::lane_id() as u64
}

/// The 3L buddy allocator over a region.
#[derive(Clone, Copy, Debug)]
pub struct BuddyAlloc {
    region: Region,
}

impl BuddyAlloc {
    #[inline(always)]
    fn layout(&self) -> &Layout {
        // SAFETY: `init` wrote the layout at the body's start (aligned to 256 bytes) and nothing
        // writes it afterwards (`attach`'s contract: the region was initialised).
        unsafe { &*(self.region.body() as *const Layout) }
    }

    /// The free-block bitmap of `level` (`None` only for a level beyond the array).
    #[inline(always)]
    fn free_blocks<'a>(&self, layout: &'a Layout, level: u64) -> Option<Bitmap<'a>> {
        let geometry = layout.free_blocks.get(level as usize)?;
        let offset = *layout.containers_offset.get(level as usize)?;
        let containers = self.region.body().wrapping_add(offset as usize) as *const Atomic64;
        // SAFETY: the layout puts this level's containers inside the body, 8-byte aligned, and
        // they are only accessed atomically once initialised.
        Some(unsafe { Bitmap::from_raw(geometry, containers) })
    }

    /// The level-table word holding the entry of 16-byte unit `unit`, and the entry's shift.
    #[inline(always)]
    fn table_entry(&self, layout: &Layout, unit: u64) -> (&arch::atomic::Atomic32, u32) {
        let offset = layout.table_offset + unit / ENTRIES_PER_WORD * 4;
        // SAFETY: `unit < pool_bytes / 16` (callers), so the word lies in the table inside the
        // body, 4-byte aligned; table words are only accessed atomically.
        let word = unsafe { self.region.atomic32(offset) };
        (word, (unit % ENTRIES_PER_WORD) as u32 * 4)
    }

    /// Take a free block of `level` or above and split it down to `level`: its index at
    /// `level`, or `None` when no level had one.
    #[inline]
    fn take_block(&self, layout: &Layout, level: u64) -> Option<u64> {
        let mut seed = search_seed();
        let mut backoff = Backoff::new();
        for _ in 0..SEARCH_PASSES {
            let mut from = level;
            while from <= layout.top {
                let attempts = if from == layout.top { TOP_ATTEMPTS } else { LEVEL_ATTEMPTS };
                if let Some(block) = self.free_blocks(layout, from)?.clear_any(seed, attempts) {
                    // Acquire: the previous owner's writes (ordered before its release fence)
                    // happen before ours.
                    arch::fence();
                    return self.split_down(layout, from, block, level);
                }
                seed = next_seed(seed);
                from += 1;
            }
            // Every level was empty: splits in flight may publish halves soon.
            backoff.snooze();
        }
        None
    }

    /// Pair-creation: keep the lower half of `block` (of `from`) at each level down to `level`
    /// and publish the upper half as free there. Returns the block kept at `level`.
    #[inline]
    fn split_down(&self, layout: &Layout, from: u64, block: u64, level: u64) -> Option<u64> {
        let (mut at, mut block) = (from, block);
        while at > level {
            at -= 1;
            block *= 2;
            // The upper half is ours (we own its parent), so its bit is clear: `set` returns
            // at once (waiting only for summary bits in flight).
            self.free_blocks(layout, at)?.set(block + 1);
        }
        Some(block)
    }

    /// Free `block` of `level` (not the top level): if its buddy is free, take the buddy
    /// (`true`: the caller now owns the parent); otherwise publish the block (`false`).
    #[inline]
    fn publish_or_merge(&self, bitmap: Bitmap<'_>, block: u64) -> Option<bool> {
        let container = bitmap.container(0, block / 64);
        let own = 1u64 << (block % 64);
        let buddy = 1u64 << ((block ^ 1) % 64);
        let mut backoff = Backoff::new();
        let mut current = container.load();
        loop {
            if current & own != 0 {
                // Free already: a double free the level table did not see (cannot happen while
                // the table is intact).
                return None;
            }
            let merging = current & buddy != 0;
            let next = if merging { current & !buddy } else { current | own };
            match container.compare_exchange(current, next) {
                Ok(_) => {
                    if merging && next == 0 {
                        bitmap.clear_in_level_above(0, block / 64);
                    } else if !merging && current == 0 {
                        bitmap.set_in_level_above(0, block / 64);
                    }
                    return Some(merging);
                }
                Err(actual) => {
                    current = actual;
                    backoff.retry();
                }
            }
        }
    }

    #[inline(always)]
    fn invalid_free(&self) {
        self.region.raise(errors::INVALID_FREE);
    }
}

// SAFETY: a block is handed out only by the thread whose atomic cleared its bit (or that split
// it off a block it owned); a block's bit is set again only by its owner (`free`, or a split
// publishing a half it owns), and a parent is freed only after its owner took both halves'
// bits. So every byte of the pool belongs to exactly one free bit or one owner at a time.
// Blocks lie in the pool (inside the body), 16-byte aligned (the pool is 256-byte aligned and
// blocks are at least 16 bytes).
unsafe impl DeviceMalloc for BuddyAlloc {
    const KIND: MallocKind = MallocKind::Buddy;
    const CAPS: Caps = Caps {
        max_size: MAX_BLOCK,
        align: MIN_BLOCK,
        free: FreeSupport::Reuses,
        min_region_bytes: HEADER_BYTES + 16 * 1024,
        relays_above: u32::MAX,
    };

    unsafe fn init(region: Region, _phase: u32) {
        let layout = Layout::plan(region.body_bytes());
        let (thread, threads) = (arch::global_thread_id() as u64, arch::global_thread_count() as u64);
        if thread == 0 {
            // SAFETY: the body's first bytes are reserved for the layout; nothing else runs.
            unsafe { (region.body() as *mut Layout).write(layout) };
        }
        if layout.pool_bytes == 0 {
            return;
        }
        let alloc = BuddyAlloc { region };
        // The top level: every top block free.
        let Some(top_geometry) = layout.free_blocks.get(layout.top as usize) else { return };
        let Some(&top_offset) = layout.containers_offset.get(layout.top as usize) else { return };
        let mut index = thread;
        while index < top_geometry.containers {
            let bits = init_container(top_geometry, index, layout.top_blocks());
            // SAFETY: container `index` of the top level's bitmap lies in the body, 8-byte
            // aligned; each is written by one thread only, before any malloc.
            unsafe { region.atomic64(top_offset + index * 8) }.store(bits);
            index += threads;
        }
        // The rest of the pool, by its binary digits: one block per smaller level.
        if thread == 0 {
            let top_bytes = layout.top_blocks() << shift_of(layout.top);
            let rest = layout.pool_bytes - top_bytes;
            for level in 0..layout.top {
                let size = 1u64 << shift_of(level);
                if rest & size == 0 {
                    continue;
                }
                let offset = top_bytes + (rest & !(2 * size - 1));
                if let Some(bitmap) = alloc.free_blocks(&layout, level) {
                    bitmap.set(offset >> shift_of(level));
                }
            }
        }
    }

    #[inline(always)]
    unsafe fn attach(region: Region) -> Self {
        BuddyAlloc { region }
    }

    #[inline]
    fn malloc(&self, size: u32) -> *mut u8 {
        let layout = self.layout();
        if layout.pool_bytes == 0 || size == 0 || size > MAX_BLOCK {
            return core::ptr::null_mut();
        }
        let shift = (32 - (size - 1).leading_zeros()).max(MIN_SHIFT) as u64;
        let level = shift - MIN_SHIFT as u64;
        if level > layout.top {
            return core::ptr::null_mut();
        }
        let Some(block) = self.take_block(layout, level) else { return core::ptr::null_mut() };
        let offset = block << shift;
        let (word, entry_shift) = self.table_entry(layout, offset >> MIN_SHIFT);
        word.fetch_or(((level + 1) as u32) << entry_shift);
        self.region.body().wrapping_add((layout.pool_offset + offset) as usize)
    }

    #[inline]
    unsafe fn free(&self, ptr: *mut u8) {
        let layout = self.layout();
        let address = ptr as u64;
        let pool_start = self.region.body_addr() + layout.pool_offset;
        if address < pool_start || address - pool_start >= layout.pool_bytes {
            return self.invalid_free();
        }
        let offset = address - pool_start;
        if !offset.is_multiple_of(MIN_BLOCK as u64) {
            return self.invalid_free();
        }
        let (word, entry_shift) = self.table_entry(layout, offset >> MIN_SHIFT);
        let entry = (word.fetch_and(!(0xF << entry_shift)) >> entry_shift) & 0xF;
        if entry == 0 {
            // No allocation starts here: freed twice, or never handed out.
            return self.invalid_free();
        }
        let mut level = entry as u64 - 1;
        if level > layout.top || offset & ((1u64 << shift_of(level)) - 1) != 0 {
            return self.invalid_free();
        }
        let mut block = offset >> shift_of(level);
        // Release: our writes to the block happen before whoever takes it next.
        arch::fence();
        loop {
            let Some(bitmap) = self.free_blocks(layout, level) else { return };
            if level == layout.top {
                // Top blocks are roots of separate trees: no buddy to merge with.
                bitmap.set(block);
                return;
            }
            match self.publish_or_merge(bitmap, block) {
                Some(true) => {
                    // Acquire the buddy's last owner's writes, so that whoever takes the parent
                    // next is ordered after them too (the fence also releases our publication).
                    arch::fence();
                    block /= 2;
                    level += 1;
                }
                Some(false) => return,
                None => return self.invalid_free(),
            }
        }
    }
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    extern crate alloc;
    use alloc::vec::Vec;

    use super::*;
    use crate::malloc::testing::{HostRegion, StormConfig, run_grid};

    const REGION_BYTES: u64 = 1 << 20;

    fn region(bytes: u64) -> (HostRegion, BuddyAlloc) {
        let host = HostRegion::new(MallocKind::Buddy, bytes, 0);
        let m = host.typed::<BuddyAlloc>();
        (host, m)
    }

    /// Allocate `size` until the pool is exhausted.
    fn fill(m: &BuddyAlloc, size: u32) -> Vec<*mut u8> {
        let mut out = Vec::new();
        loop {
            let p = m.malloc(size);
            if p.is_null() {
                return out;
            }
            out.push(p);
        }
    }

    #[test]
    fn layout_fits_every_body() {
        for bytes in [0u64, 100, 4096, 16 << 10, 256 << 10, 1 << 20, 3 << 20, 1 << 30, 100 << 30] {
            let layout = Layout::plan(bytes);
            if layout.pool_bytes == 0 {
                assert!(bytes < 4096, "{bytes}");
                continue;
            }
            assert!(layout.pool_offset + layout.pool_bytes <= bytes, "{bytes}");
            assert_eq!(layout.pool_offset % SECTION_ALIGN, 0);
            // Little waste: the pool takes at least 90% of any body of a usual size.
            assert!(
                bytes < 256 << 10 || layout.pool_bytes * 10 >= bytes * 9,
                "{bytes}: pool {}",
                layout.pool_bytes
            );
        }
        let small = Layout::plan(CAPS_MIN_BODY);
        assert!(small.pool_bytes >= 8 << 10);
    }

    const CAPS_MIN_BODY: u64 = <BuddyAlloc as DeviceMalloc>::CAPS.min_region_bytes - HEADER_BYTES;

    #[test]
    fn sizes_round_to_aligned_powers_of_two() {
        let (host, m) = region(REGION_BYTES);
        let pool = host.region().body_addr() + m.layout().pool_offset;
        for size in [1u32, 15, 16, 17, 32, 33, 100, 4096, 4097, MAX_BLOCK / 2] {
            let p = m.malloc(size) as u64;
            assert_ne!(p, 0, "{size}");
            let block = (size.next_power_of_two().max(MIN_BLOCK)) as u64;
            assert_eq!((p - pool) % block, 0, "{size} bytes at {p:#x}");
            assert_eq!(p % 16, 0);
            // Writable over the whole rounded block.
            // SAFETY: the block is ours, `block` bytes.
            unsafe { core::ptr::write_bytes(p as *mut u8, 0xAB, block as usize) };
        }
        assert_eq!(host.errors(), 0);
    }

    #[test]
    fn everything_merges_back_after_freeing() {
        let (host, m) = region(REGION_BYTES);
        let layout = *m.layout();
        // The pool is not a whole number of top blocks: the rest is served by smaller trees.
        assert!(!layout.pool_bytes.is_multiple_of(MAX_BLOCK as u64));
        let tops = fill(&m, MAX_BLOCK);
        assert_eq!(tops.len() as u64, layout.top_blocks());
        for &p in &tops {
            unsafe { m.free(p) };
        }
        // Split everything to the smallest blocks, which covers the whole pool.
        let smallest = fill(&m, 1);
        assert_eq!(smallest.len() as u64, layout.pool_bytes / MIN_BLOCK as u64);
        assert!(m.malloc(1).is_null());
        for &p in &smallest {
            unsafe { m.free(p) };
        }
        // Merged back into top blocks: all of them can be taken again.
        assert_eq!(fill(&m, MAX_BLOCK).len(), tops.len());
        assert_eq!(host.errors(), 0);
    }

    #[test]
    fn out_of_memory_returns_null_and_recovers() {
        let (host, m) = region(256 << 10);
        let layout = *m.layout();
        assert!(m.malloc(MAX_BLOCK).is_null(), "a region of 256 KiB has no 256 KiB block");
        let blocks = fill(&m, 1000);
        assert!(blocks.len() as u64 >= layout.pool_bytes / 1024 - 1);
        assert!(m.malloc(1024).is_null(), "still out of memory");
        for &p in &blocks {
            unsafe { m.free(p) };
        }
        let top = m.malloc(1 << shift_of(layout.top));
        assert!(!top.is_null(), "after freeing everything a top block is free again");
        assert_eq!(host.errors(), 0);
    }

    #[test]
    fn bad_and_double_frees_raise_invalid_free() {
        let (host, m) = region(REGION_BYTES);
        let p = m.malloc(64);
        assert!(!p.is_null());
        unsafe { m.free(p.wrapping_add(16)) };
        assert_eq!(host.errors(), errors::INVALID_FREE, "interior pointer");

        let (other, m2) = region(REGION_BYTES);
        unsafe { m2.free(p) };
        assert_eq!(other.errors(), errors::INVALID_FREE, "pointer of another region");

        let (host3, m3) = region(REGION_BYTES);
        let r = m3.malloc(100);
        unsafe { m3.free(r) };
        assert_eq!(host3.errors(), 0);
        unsafe { m3.free(r) };
        assert_eq!(host3.errors(), errors::INVALID_FREE, "double free");
        // The double free corrupted nothing: the pool still merges completely.
        let layout = *m3.layout();
        assert_eq!(fill(&m3, MAX_BLOCK).len() as u64, layout.top_blocks());
        unsafe { m.free(p) };
    }

    #[test]
    fn concurrent_splits_and_merges_lose_nothing() {
        let (_host, m) = region(REGION_BYTES);
        let layout = *m.layout();
        for round in 0..4u32 {
            run_grid(16, |t| {
                let mut mine = Vec::new();
                for i in 0..200u32 {
                    let p = m.malloc(1 + (t * 37 + i * 11 + round) % 600);
                    if !p.is_null() {
                        mine.push(p);
                    }
                    if i % 3 == 0
                        && let Some(q) = mine.pop()
                    {
                        unsafe { m.free(q) };
                    }
                }
                for p in mine {
                    unsafe { m.free(p) };
                }
            });
            assert_eq!(fill(&m, MAX_BLOCK).len() as u64, layout.top_blocks(), "round {round}");
            // Free the top blocks again for the next round.
            let pool = m.region.body_addr() + layout.pool_offset;
            for i in 0..layout.top_blocks() {
                unsafe { m.free((pool + (i << shift_of(layout.top))) as *mut u8) };
            }
        }
        assert_eq!(m.region.errors(), 0);
    }

    #[test]
    fn storm_reuses_memory() {
        let host = HostRegion::new(MallocKind::Buddy, 4 << 20, 0);
        let report = host.storm(StormConfig { threads: 16, per_thread: 64, sizes: (1, 512), rounds: 6 });
        assert_eq!(report.failed, 0);
        assert_eq!(report.checked, 16 * 64 * 6);
        assert_eq!(host.errors(), 0);
    }

    #[test]
    fn storm_through_a_small_pool_fails_cleanly() {
        // Demand far above the pool: some requests fail, none corrupts, and frees recover it.
        let host = HostRegion::new(MallocKind::Buddy, 256 << 10, 0);
        let report = host.storm(StormConfig { threads: 16, per_thread: 64, sizes: (64, 1024), rounds: 4 });
        assert!(report.failed > 0);
        assert!(report.checked > 0);
        let m = host.typed::<BuddyAlloc>();
        let layout = *m.layout();
        assert!(!m.malloc(1 << shift_of(layout.top)).is_null());
    }
}
