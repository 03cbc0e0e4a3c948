//! ScatterAlloc (Steinberger, Kenzel, Kainz, Schmalstieg, InPar 2012), as mallocMC's `Scatter`
//! creation policy implements it: the survey `002_...` section 2.3 and Figure 2, `000_...`
//! section 3.3, DynaSOAr's comparison in `003_...` section 6.
//!
//! # The algorithm
//!
//! The pool is split into pages of a fixed size (default 4096 bytes, the region's parameter
//! sets another), grouped into regions of 16 pages and the regions into 8 super blocks. A page
//! table entry per page holds the page's chunk size (0 while the page is free), its fill count
//! and a 32-bit usage bitfield.
//!
//! - **Chunks.** A request is rounded up to 16 bytes. The first allocation from a free page
//!   sets the page's chunk size to the request; later requests join any page whose chunk
//!   size is at least theirs and at most twice it (mallocMC's `wastefactor`). A page of up to
//!   32 chunks tracks them in its usage bitfield; where more fit, a second level on the page
//!   itself (up to 32 bitfields of 32 chunks at its end, so at most 1024 chunks) tracks them,
//!   and the usage bitfield marks which on-page bitfields are full.
//! - **Scattering.** The first page tried is a hash of the request size, the multiprocessor
//!   (`Region::sm_slot`) and the warp, inside the active super block (mallocMC's hash and
//!   constants); from there, linear probing through the page's region, then region after
//!   region (wrapping around the pool). Inside a page a thread starts at the bit of its lane,
//!   so the lanes of a warp take neighbouring chunks without colliding.
//! - **Fill levels.** Each region counts searches that found nothing in it; a first pass skips
//!   regions at 3/4 of their pages, a second pass (taken only when the first finds nothing)
//!   tries every page. A free that empties a page to half its chunks clears its region's count
//!   and moves the active super block back. A search that runs into the next super block
//!   makes it the active one.
//! - **Reuse.** A page whose last chunk is freed becomes free again (mallocMC's
//!   `resetfreedpages`), so it can take any chunk size or be part of a multi-page allocation.
//! - **Requests over a page** take a run of consecutive free pages, searched from the top of the
//!   pool downward, under a lock, as the original does.
//!
//! # How we implement it, and where we depart from the original
//!
//! - **One state word per page.** The chunk size and the fill count share one 64-bit atomic
//!   (chunk size in the high half). Reserving a place on a page is one `fetch_add` whose
//!   result says both whether the page still had room *and* which chunk size it had at that
//!   instant, so the original's re-read of the chunk size after reserving (and its window,
//!   where the page can be reset and reopened in between) disappears. Opening a free page
//!   is one compare-exchange that sets the chunk size and takes the first place together.
//! - **Resetting a page** is a compare-exchange from (chunk size, 0 reservations) to a locked
//!   state, which the thread that brings the count to zero attempts; it zeroes the page's
//!   usage bitfield and the 128-byte tail where any chunk size's on-page bitfields lie, then
//!   unlocks and frees the page in one atomic subtraction. A reservation that fails also
//!   attempts the reset when it was the last one, so no page stays formatted and empty (the
//!   original leaves such pages, unusable for other sizes, behind failed openings).
//! - **Stale "full" hints.** A hint that an on-page bitfield is full can be set just after a
//!   free emptied a chunk of it (the two words are updated by different threads without an
//!   order between them). The original then loses that chunk until another free in the
//!   bitfield; here a thread that holds a reservation but finds nothing among the bitfields
//!   not marked full tries the marked ones too, so a reservation (which guarantees a free
//!   chunk) only fails under heavy churn on the page.
//! - **Multi-page allocations** claim each page with a compare-exchange of its state word
//!   from free to a marker (the head page records the run's length), so they race safely
//!   with threads opening those pages for chunks; a claim that fails gives back every page
//!   taken so far and the search goes on below. The original serialises them with a spin lock
//!   taken by one lane of a warp at a time (warp-synchronous code, which the survey notes does
//!   not work with independent thread scheduling); here any thread takes the lock on its own
//!   and waiters back off with `nanosleep`. The original also marks pages by their chunk size
//!   field only, so a multi-page allocation of exactly one page could be taken for a chunk;
//!   the markers here are never a chunk size.
//! - **Memory ordering.** The original has no fences; we follow the crate's rules: a fence
//!   after a successful reservation (the page's bitfields were zeroed by whoever reset the
//!   page), one after taking a chunk (the previous owner's writes to it come first), one in
//!   `free` before the chunk is given back, and release/acquire fences around page resets
//!   and multi-page claims. All shared words are read and written through the `arch` atomics.
//! - **No warp collectives.** Every step is per thread, so nothing depends on the lanes of a
//!   warp running together. The hash uses the warp's index in its thread block where mallocMC
//!   reads the hardware warp slot (`%warpid`, which is not stable over a thread's life).
//! - **Scaled structures.** Regions smaller than the pages of 16 regions get smaller pages (the
//!   page size is halved, down to 1 KiB, until the pool holds a region); a small pool has fewer
//!   regions and super blocks (at most 8, each a whole number of regions). The last region and
//!   super block may be short, so no pages are wasted to round the pool to regions.
//!
//! # Limits
//!
//! - Internal fragmentation: a chunk may be up to twice the request (the smallest chunk is 16
//!   bytes at 4 KiB pages), and a page serves one chunk size at a time.
//! - Requests over a page are slow: one at a time in the whole GPU, each a linear search over
//!   the page table (the survey's "steep drop in performance" above the page size). Freeing
//!   one zeroes the 128-byte tail of each of its pages.
//! - A failing request scans the whole page table twice (the original's out-of-memory path).
//! - Nothing is relayed to CUDA's allocator: every request up to the pool's size is served
//!   from the pool if a run of free pages is long enough.
//! - `free` raises [`errors::INVALID_FREE`] for a pointer outside the pool, not at the start of
//!   a chunk or a multi-page allocation, on a free page, or whose chunk is not allocated (a
//!   double free, unless the chunk was handed out again meanwhile).

mod layout;
#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests;

use self::layout::{
    ACTIVE_SUPER_BLOCK_OFFSET, CHUNK_ALIGN, Geometry, LARGE_LOCK_OFFSET, LARGE_SEARCH_TOP_OFFSET, Layout,
    MASK_TAIL_BYTES, PAGE_ENTRY_BYTES, PAGE_USAGE_OFFSET, REGION_PAGES,
};
use super::{Caps, DeviceMalloc, FreeSupport, MallocKind, Region, errors, round_up};
use dynasoar_device::arch::{
    self, Backoff,
    atomic::{Atomic32, Atomic64},
};

/// A request may use a page whose chunks are at most this many times its size.
const WASTE_FACTOR: u32 = 2;
/// First pass: regions whose count of fruitless searches reached this are skipped (3/4).
const REGION_SKIP_LEVEL: u32 = REGION_PAGES * 3 / 4;
/// mallocMC's hash: `size * K + SM * DIST_SM + warp * (DIST_WARP + DIST_WARP_REL * size * 32 / page)`.
const HASH_SIZE: u32 = 38183;
const HASH_DIST_SM: u32 = 17497;
const HASH_DIST_WARP: u32 = 1;
const HASH_DIST_WARP_REL: u32 = 1;

/// A page's state word: chunk size (or marker) in the high half, fill count in the low half.
const FILL_MASK: u64 = 0xFFFF_FFFF;
/// Added to the fill count while a page is being reset: no reservation can succeed then
/// (fill counts never come near it: one place per thread at most).
const RESET_LOCK: u64 = 1 << 30;
/// Marks the first page of a multi-page allocation; the low bits hold its page count.
const LARGE_HEAD: u32 = 0x8000_0000;
/// Marks the other pages of a multi-page allocation (and a head being freed).
const LARGE_TAIL: u32 = 0x4000_0000;

#[inline(always)]
fn chunk_of(state: u64) -> u32 {
    (state >> 32) as u32
}

#[inline(always)]
fn fill_of(state: u64) -> u64 {
    state & FILL_MASK
}

#[inline(always)]
fn with_chunk(chunk: u32) -> u64 {
    (chunk as u64) << 32
}

/// A bitfield of the low `n` bits (`n` in `0..=32`).
#[inline(always)]
fn low_bits(n: u32) -> u32 {
    if n >= 32 { u32::MAX } else { (1 << n) - 1 }
}

/// The first set bit of `bits` (not 0) at or after `start` (`< 32`), wrapping around.
#[inline(always)]
fn next_set_bit(bits: u32, start: u32) -> u32 {
    let above = bits & (u32::MAX << (start & 31));
    if above != 0 { above.trailing_zeros() } else { bits.trailing_zeros() }
}

/// Set a clear bit among the low `spots` bits (`1..=32`) of `word`, trying bit
/// `seed % spots` first, then the next clear bit seen (mallocMC's `usespot`). `None` when
/// all are set.
#[inline(always)]
fn claim_bit(word: &Atomic32, spots: u32, seed: u32) -> Option<u32> {
    let all = low_bits(spots);
    let mut spot = seed % spots.max(1);
    let mut backoff = Backoff::new();
    loop {
        let bit = 1 << spot;
        let before = word.fetch_or(bit);
        if before & bit == 0 {
            return Some(spot);
        }
        let clear = all & !before;
        if clear == 0 {
            return None;
        }
        spot = next_set_bit(clear, spot);
        // Another thread took the bit we went for: it made progress.
        backoff.retry();
    }
}

/// ScatterAlloc over a region.
#[derive(Clone, Copy, Debug)]
pub struct ScatterAlloc {
    region: Region,
    layout: Layout,
}

// SAFETY: a chunk is handed out only by setting its clear bit in its page's bitfield while
// holding a reservation on the page whose chunk size is the one the address was computed
// with (the reservation keeps the page from being reset or re-cut), and its bit stays set
// until it is freed; the chunks of a geometry lie inside their page, clear of its bitfields,
// and are 16-byte aligned (the pool is 256-byte aligned, pages are powers of two of at least
// 1 KiB, chunk sizes multiples of 16). A multi-page run is handed out only once its pages
// are all claimed from free with compare-exchanges, and pages leave that state only when it is
// freed.
unsafe impl DeviceMalloc for ScatterAlloc {
    const KIND: MallocKind = MallocKind::Scatter;
    const CAPS: Caps = Caps {
        max_size: u32::MAX,
        align: CHUNK_ALIGN,
        free: FreeSupport::Reuses,
        // Thirty-one 2 KiB pages with their metadata.
        min_region_bytes: 64 << 10,
        relays_above: u32::MAX,
    };

    unsafe fn init(region: Region, _phase: u32) {
        // Everything else starts as zero (the body is zeroed): free pages, empty bitfields,
        // clear fill levels, super block 0, lock open.
        if arch::global_thread_id() == 0 {
            let layout = Layout::new(region.body_bytes(), region.param());
            // SAFETY: the body starts with room for the layout (`CONTROL_BYTES`); nothing
            // else runs during init, and afterwards it is only read.
            unsafe { (region.body() as *mut Layout).write(layout) };
            // SAFETY: a control word, only accessed atomically.
            unsafe { region.atomic32(LARGE_SEARCH_TOP_OFFSET) }.store(layout.pages);
        }
    }

    #[inline(always)]
    unsafe fn attach(region: Region) -> Self {
        // SAFETY: `init` wrote the layout at the body's start before any kernel could call
        // this, and nothing writes it afterwards, so a plain load is never stale.
        let layout = unsafe { (region.body() as *const Layout).read() };
        ScatterAlloc { region, layout }
    }

    #[inline(always)]
    fn malloc(&self, size: u32) -> *mut u8 {
        let bytes = round_up(size.max(1) as u64, CHUNK_ALIGN as u64);
        if bytes <= self.layout.page_bytes() as u64 {
            self.alloc_chunk(bytes as u32)
        } else {
            self.alloc_pages(bytes.div_ceil(self.layout.page_bytes() as u64))
        }
    }

    #[inline(always)]
    unsafe fn free(&self, ptr: *mut u8) {
        let layout = &self.layout;
        let offset = (ptr as u64).wrapping_sub(self.pool_addr());
        if offset >= layout.pool_bytes() {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        let page = (offset >> layout.page_shift) as u32;
        let in_page = (offset & (layout.page_bytes() as u64 - 1)) as u32;
        let chunk = chunk_of(self.state(page).load());
        if chunk & LARGE_HEAD != 0 && in_page == 0 {
            self.free_pages(page);
        } else if chunk == 0 || chunk > layout.page_bytes() || !in_page.is_multiple_of(chunk) {
            self.region.raise(errors::INVALID_FREE);
        } else {
            self.free_chunk(page, Geometry::new(layout.page_bytes(), chunk), in_page / chunk);
        }
    }
}

/// Addresses of the shared words.
impl ScatterAlloc {
    #[inline(always)]
    fn pool_addr(&self) -> u64 {
        self.region.body_addr() + self.layout.pool_offset
    }

    #[inline(always)]
    fn page_addr(&self, page: u32) -> u64 {
        self.pool_addr() + ((page as u64) << self.layout.page_shift)
    }

    /// Chunk size (high half) and fill count (low half) of `page` (`< pages`).
    #[inline(always)]
    fn state(&self, page: u32) -> &Atomic64 {
        // SAFETY: the page table lies inside the body, 8-byte aligned, and its words are only
        // accessed atomically.
        unsafe { self.region.atomic64(layout::CONTROL_BYTES + PAGE_ENTRY_BYTES * page as u64) }
    }

    /// Usage bitfield of `page` (`< pages`): its chunks, or which on-page bitfields are full.
    #[inline(always)]
    fn usage(&self, page: u32) -> &Atomic32 {
        // SAFETY: as for `state`.
        unsafe {
            self.region.atomic32(layout::CONTROL_BYTES + PAGE_ENTRY_BYTES * page as u64 + PAGE_USAGE_OFFSET)
        }
    }

    /// The 32-bit word at byte `offset` (4-aligned, `< page_bytes`) of `page`, where on-page
    /// bitfields lie.
    #[inline(always)]
    fn page_word(&self, page: u32, offset: u32) -> &Atomic32 {
        // SAFETY: inside the pool; these words are accessed atomically while they are
        // bitfields, and only by the thread resetting the page (which holds it locked) or
        // by the owners of its chunks otherwise.
        unsafe {
            self.region
                .atomic32(self.layout.pool_offset + ((page as u64) << self.layout.page_shift) + offset as u64)
        }
    }

    /// Count of fruitless searches in `region` (`< regions`).
    #[inline(always)]
    fn fill_level(&self, region: u32) -> &Atomic32 {
        // SAFETY: the fill levels lie inside the body and are only accessed atomically.
        unsafe { self.region.atomic32(self.layout.fill_levels_offset + 4 * region as u64) }
    }

    #[inline(always)]
    fn active_super_block(&self) -> &Atomic32 {
        // SAFETY: a control word, only accessed atomically.
        unsafe { self.region.atomic32(ACTIVE_SUPER_BLOCK_OFFSET) }
    }

    #[inline(always)]
    fn large_lock(&self) -> &Atomic32 {
        // SAFETY: as above.
        unsafe { self.region.atomic32(LARGE_LOCK_OFFSET) }
    }

    #[inline(always)]
    fn large_search_top(&self) -> &Atomic32 {
        // SAFETY: as above.
        unsafe { self.region.atomic32(LARGE_SEARCH_TOP_OFFSET) }
    }
}

/// Chunks: allocation.
impl ScatterAlloc {
    /// A chunk for `bytes` (a multiple of 16, at most a page), or null.
    #[inline(always)]
    fn alloc_chunk(&self, bytes: u32) -> *mut u8 {
        let layout = &self.layout;
        if layout.pages == 0 {
            return core::ptr::null_mut();
        }
        let new_chunk = bytes.max(layout.min_chunk);
        let max_chunk = (WASTE_FACTOR * bytes).max(layout.min_chunk).min(layout.page_bytes());
        let seed = arch::global_thread_id() as u32;
        let start = self.start_page(new_chunk);
        let start_region = start / REGION_PAGES;
        let start_in_region = start % REGION_PAGES;
        for pass in 0..2 {
            let skip_level = if pass == 0 { REGION_SKIP_LEVEL } else { u32::MAX };
            let mut region = start_region;
            let mut region_in_block = region % layout.regions_per_super_block;
            for _ in 0..layout.regions {
                let fill_level = self.fill_level(region);
                let level = fill_level.load();
                if level < skip_level {
                    let first = region * REGION_PAGES;
                    let pages = layout.pages_in_region(region);
                    let mut in_region =
                        if pages == REGION_PAGES { start_in_region } else { start_in_region % pages };
                    for _ in 0..pages {
                        let found = self.try_page(first + in_region, bytes, new_chunk, max_chunk, seed);
                        if !found.is_null() {
                            return found;
                        }
                        in_region += 1;
                        if in_region == pages {
                            in_region = 0;
                        }
                    }
                    // Tell later searches (one step per fruitless search; lost races only
                    // mean another thread counted).
                    if level < REGION_PAGES {
                        let _ = fill_level.compare_exchange(level, level + 1);
                    }
                }
                region += 1;
                region_in_block += 1;
                if region == layout.regions {
                    region = 0;
                    region_in_block = 0;
                } else if region_in_block == layout.regions_per_super_block {
                    region_in_block = 0;
                    self.enter_super_block(region / layout.regions_per_super_block);
                }
            }
        }
        core::ptr::null_mut()
    }

    /// The page a search for chunks of `chunk` bytes starts at: mallocMC's hash of the size,
    /// the multiprocessor and the warp, inside the active super block.
    #[inline(always)]
    fn start_page(&self, chunk: u32) -> u32 {
        let layout = &self.layout;
        let block = self.active_super_block().load().min(layout.super_blocks - 1);
        let first = block * layout.pages_per_super_block();
        let pages = (layout.pages - first).min(layout.pages_per_super_block()).max(1);
        let relative = (32 * chunk) >> layout.page_shift;
        let warp = arch::thread_idx() / arch::WARP_SIZE;
        let hash = chunk
            .wrapping_mul(HASH_SIZE)
            .wrapping_add(self.region.sm_slot().wrapping_mul(HASH_DIST_SM))
            .wrapping_add(warp.wrapping_mul(HASH_DIST_WARP + HASH_DIST_WARP_REL * relative));
        first + hash % pages
    }

    /// A search ran into super block `block`: searches start there from now on (mallocMC
    /// moves on only, never back: frees move it back).
    #[inline(always)]
    fn enter_super_block(&self, block: u32) {
        let active = self.active_super_block();
        if active.load() < block {
            active.fetch_max(block);
        }
    }

    /// A chunk of `page` for `bytes`: open the page if it is free, join it if its chunk size
    /// is in `bytes..=max_chunk` and it has room. Null otherwise.
    #[inline(always)]
    fn try_page(&self, page: u32, bytes: u32, new_chunk: u32, max_chunk: u32, seed: u32) -> *mut u8 {
        let state = self.state(page);
        let mut seen = state.load();
        let page_bytes = self.layout.page_bytes();
        if chunk_of(seen) == 0 {
            // Free: cut it into chunks of our size and take the first place in one step.
            // (Stale reservations of other threads may be counted; they give them back.)
            match state.compare_exchange(seen, seen + with_chunk(new_chunk) + 1) {
                Ok(_) => return self.take_chunk(page, Geometry::new(page_bytes, new_chunk), seed),
                // Opened by someone else meanwhile: perhaps with a size we can use.
                Err(actual) => seen = actual,
            }
        }
        let chunk = chunk_of(seen);
        if chunk < bytes || chunk > max_chunk {
            return core::ptr::null_mut();
        }
        let geometry = Geometry::new(page_bytes, chunk);
        // Full pages are passed over with a load, not a read-modify-write.
        if fill_of(seen) >= geometry.capacity as u64 {
            return core::ptr::null_mut();
        }
        let before = state.fetch_add(1);
        if chunk_of(before) != chunk || fill_of(before) >= geometry.capacity as u64 {
            // Filled up, reset or re-cut since we looked.
            self.release_place(page);
            return core::ptr::null_mut();
        }
        self.take_chunk(page, geometry, seed)
    }

    /// With a place reserved on `page` (cut as `geometry`), set the bit of a free chunk and
    /// return the chunk; or give the place back and return null.
    #[inline(always)]
    fn take_chunk(&self, page: u32, geometry: Geometry, seed: u32) -> *mut u8 {
        // Acquire: the page's bitfields were zeroed by the thread that reset the page, whose
        // release our reservation observed.
        arch::fence();
        let index = if geometry.masks == 0 {
            claim_bit(self.usage(page), geometry.capacity, seed)
        } else {
            self.claim_in_hierarchy(page, geometry, seed)
        };
        match index {
            Some(index) => {
                // Acquire: the chunk's previous owner released it (its writes come first).
                arch::fence();
                (self.page_addr(page) + index as u64 * geometry.chunk as u64) as *mut u8
            }
            None => {
                self.release_place(page);
                core::ptr::null_mut()
            }
        }
    }

    /// A chunk of a hierarchical page: try the on-page bitfields not marked full, starting at
    /// the one of our lane, then (a mark can be stale, and our reservation guarantees a free
    /// chunk) the marked ones. Marks the bitfields found full.
    #[inline(always)]
    fn claim_in_hierarchy(&self, page: u32, geometry: Geometry, seed: u32) -> Option<u32> {
        let usage = self.usage(page);
        let all = low_bits(geometry.masks);
        let first = seed % geometry.masks.max(1);
        for pass in 0..2 {
            let mut candidates = if pass == 0 { all & !usage.load() } else { all };
            while candidates != 0 {
                let mask = next_set_bit(candidates, first);
                candidates &= !(1 << mask);
                let word = self.page_word(page, geometry.mask_offset(self.layout.page_bytes(), mask));
                match claim_bit(word, geometry.chunks_in_mask(mask), seed) {
                    Some(bit) => return Some(32 * mask + bit),
                    None => {
                        if pass == 0 {
                            usage.fetch_or(1 << mask);
                        }
                    }
                }
            }
        }
        None
    }

    /// Give back a place reserved on `page`; the thread that gives back the last place of a
    /// page cut into chunks tries to reset it.
    #[inline(always)]
    fn release_place(&self, page: u32) {
        let before = self.state(page).fetch_sub(1);
        let chunk = chunk_of(before);
        if fill_of(before) == 1 && chunk != 0 && chunk <= self.layout.page_bytes() {
            self.try_reset(page, chunk);
        }
    }

    /// Make `page` (cut into `chunk`-byte chunks) free again if it has no place reserved:
    /// lock it, zero its bitfields, then clear its chunk size and unlock it in one step.
    #[inline(never)]
    fn try_reset(&self, page: u32, chunk: u32) {
        let state = self.state(page);
        let empty = with_chunk(chunk);
        if state.compare_exchange(empty, empty + RESET_LOCK).is_err() {
            // A place was reserved meanwhile (or another thread resets it).
            return;
        }
        // Acquire: the last owners' writes to the page come before our zeroing.
        arch::fence();
        self.usage(page).store(0);
        self.zero_mask_tail(page);
        // Release: whoever opens the page next sees clean bitfields.
        arch::fence();
        state.fetch_sub(empty + RESET_LOCK);
    }

    /// Zero the tail of `page` where on-page bitfields lie (for every chunk size).
    #[inline(always)]
    fn zero_mask_tail(&self, page: u32) {
        let page_bytes = self.layout.page_bytes();
        let mut offset = page_bytes - MASK_TAIL_BYTES as u32;
        while offset < page_bytes {
            self.page_word(page, offset).store(0);
            offset += 4;
        }
    }
}

/// Chunks: free.
impl ScatterAlloc {
    /// Free chunk `index` of `page` (cut as `geometry`).
    #[inline(always)]
    fn free_chunk(&self, page: u32, geometry: Geometry, index: u32) {
        if index >= geometry.capacity {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        // Release: our writes to the chunk come before its next owner's.
        arch::fence();
        let usage = self.usage(page);
        let was_allocated = if geometry.masks == 0 {
            let bit = 1 << index;
            usage.fetch_and(!bit) & bit != 0
        } else {
            let (mask, bit) = (index / 32, 1 << (index % 32));
            let word = self.page_word(page, geometry.mask_offset(self.layout.page_bytes(), mask));
            let was_allocated = word.fetch_and(!bit) & bit != 0;
            // The bitfield has room again: clear its "full" mark (after the bit, so that a
            // search that sees the mark cleared finds the room).
            if was_allocated && usage.load() & (1 << mask) != 0 {
                usage.fetch_and(!(1 << mask));
            }
            was_allocated
        };
        if !was_allocated {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        let before = self.state(page).fetch_sub(1);
        if fill_of(before) == (geometry.capacity as u64 / 2).max(1) {
            self.note_room(page);
        }
        if fill_of(before) == 1 {
            self.try_reset(page, geometry.chunk);
        }
    }

    /// `page` fell to half full: its region is worth searching again, and so is its super block.
    #[inline(always)]
    fn note_room(&self, page: u32) {
        let region = page / REGION_PAGES;
        let fill_level = self.fill_level(region);
        if fill_level.load() != 0 {
            fill_level.store(0);
        }
        let block = region / self.layout.regions_per_super_block;
        let active = self.active_super_block();
        if active.load() > block {
            active.fetch_min(block);
        }
    }
}

/// Requests over a page: runs of consecutive pages.
impl ScatterAlloc {
    /// `pages` consecutive pages, or null.
    #[inline(never)]
    fn alloc_pages(&self, pages: u64) -> *mut u8 {
        let total = self.layout.pages;
        if pages > total as u64 {
            return core::ptr::null_mut();
        }
        let pages = pages as u32;
        let lock = self.large_lock();
        let mut backoff = Backoff::new();
        // Test and test-and-set: waiters read the lock word (no traffic on it) and sleep.
        while lock.load() != 0 || lock.swap(1) != 0 {
            backoff.snooze();
        }
        arch::fence();
        let top = self.large_search_top().load().min(total);
        // From the top of the pool down (chunk searches start low), first below the search
        // start, then the part above it that frees may have opened.
        let found = self.find_run(pages, 0, top, true).or_else(|| self.find_run(pages, top, total, false));
        // Release: the next holder sees our claims and search start.
        arch::fence();
        lock.store(0);
        match found {
            Some(head) => self.page_addr(head) as *mut u8,
            None => core::ptr::null_mut(),
        }
    }

    /// Claim the highest run of `pages` free pages in `low..high`, searching downward.
    /// `from_top`: the search started at the search start, which then moves below the run if
    /// no free page was passed over on the way.
    fn find_run(&self, pages: u32, low: u32, high: u32, from_top: bool) -> Option<u32> {
        let mut run = 0;
        let mut passed_free = false;
        let mut page = high;
        while page > low {
            page -= 1;
            if chunk_of(self.state(page).load()) != 0 {
                passed_free |= run > 0;
                run = 0;
                continue;
            }
            run += 1;
            if run < pages {
                continue;
            }
            if self.claim_run(page, pages) {
                if from_top && !passed_free {
                    let _ = self.large_search_top().compare_exchange(high, page);
                }
                return Some(page);
            }
            // A page of the run was opened for chunks meanwhile: go on below it.
            passed_free = true;
            run = 0;
        }
        None
    }

    /// Claim pages `head..head + pages` (all seen free), or none of them.
    fn claim_run(&self, head: u32, pages: u32) -> bool {
        let marker = |i: u32| if i == 0 { LARGE_HEAD | pages } else { LARGE_TAIL };
        for i in 0..pages {
            if !self.claim_free_page(head + i, marker(i)) {
                // Give back what we took: the pages are free again at once.
                for j in 0..i {
                    self.state(head + j).fetch_sub(with_chunk(marker(j)));
                }
                return false;
            }
        }
        // Acquire: the pages' previous owners' writes come before the caller's.
        arch::fence();
        true
    }

    /// Mark `page` with `marker` if it is free.
    fn claim_free_page(&self, page: u32, marker: u32) -> bool {
        let state = self.state(page);
        let mut seen = state.load();
        let mut backoff = Backoff::new();
        loop {
            if chunk_of(seen) != 0 {
                return false;
            }
            // The fill count may hold stale reservations, which their threads give back.
            match state.compare_exchange(seen, seen + with_chunk(marker)) {
                Ok(_) => return true,
                Err(actual) => seen = actual,
            }
            backoff.retry();
        }
    }

    /// Free the multi-page allocation whose head is `head`.
    #[inline(never)]
    fn free_pages(&self, head: u32) {
        let state = self.state(head);
        let mut seen = state.load();
        let mut backoff = Backoff::new();
        // Turn the head into a tail first: a second free of the same pointer then fails.
        let pages = loop {
            let chunk = chunk_of(seen);
            let pages = chunk & !LARGE_HEAD;
            if chunk & LARGE_HEAD == 0 || pages == 0 || pages > self.layout.pages - head {
                self.region.raise(errors::INVALID_FREE);
                return;
            }
            let freeing = (seen & FILL_MASK) | with_chunk(LARGE_TAIL);
            match state.compare_exchange(seen, freeing) {
                Ok(_) => break pages,
                Err(actual) => seen = actual,
            }
            backoff.retry();
        };
        // Acquire and release: the writes to the pages come before our zeroing.
        arch::fence();
        for page in head..head + pages {
            self.zero_mask_tail(page);
        }
        // Release: whoever takes the pages next sees clean bitfields.
        arch::fence();
        for page in head..head + pages {
            self.state(page).fetch_sub(with_chunk(LARGE_TAIL));
        }
        // The pages may serve chunks again: let searches into their regions.
        let mut region = head / REGION_PAGES;
        while region * REGION_PAGES < head + pages {
            let fill_level = self.fill_level(region);
            if fill_level.load() != 0 {
                fill_level.store(0);
            }
            region += 1;
        }
        let search_top = self.large_search_top();
        if search_top.load() < head + pages {
            search_top.fetch_max(head + pages);
        }
    }
}
