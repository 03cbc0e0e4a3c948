//! KMA: superblocks of power-of-two pages, found through a hash map of size classes, with
//! empty superblocks in a lock-free free list (Spliet, Howes, Gaster, Varbanescu, "KMA: A
//! Dynamic Memory Manager for OpenCL", GPGPU-7 2014; the survey `002_...` section 2.6).
//!
//! # The allocator
//!
//! The pool is split into superblocks of 16 KiB. A superblock in use holds pages of one
//! power-of-two size (its size class: 16 B to 16 KiB, so 1024 pages down to 1); a bitmap says
//! which pages are taken, and a *state* word counts the pages still free to reserve. A request
//! is rounded up to its class and then:
//!
//! 1. the hash map from size class to superblocks gives a superblock of that class: the map is
//!    a table of `classes x ways` slots, and a thread uses the slot its multiprocessor (and the
//!    parity of its warp) hashes to, so threads of one multiprocessor fill the same superblock
//!    (locality) while other multiprocessors use others (less contention);
//! 2. an atomic compare-exchange on the superblock's state reserves one page (the count goes
//!    down by one); a full superblock is taken out of its slot, and an empty superblock is
//!    taken from the free list and put in;
//! 3. with a page reserved, the thread walks the bitmap (from a word and bit that depend on its
//!    thread id, so threads spread out) and sets a clear bit with an atomic OR. The reservation
//!    guarantees that a clear bit exists, so the walk always ends.
//!
//! `free` clears the page's bit and then gives the reservation back (count up by one). A
//! superblock that is in no slot and whose pages are all free goes back to the free list, where
//! any class can take it.
//!
//! The free list is a Treiber stack of superblock numbers whose head word carries a tag that
//! every push and pop increments, which makes it ABA-safe: a pop whose head changed in between
//! (even back to the same superblock) fails its compare-exchange and retries.
//!
//! # Decisions the descriptions leave open
//!
//! - *Superblock size and classes*: 16 KiB superblocks, classes 16 B .. 16 KiB (the largest
//!   request is one superblock). Small regions still get several superblocks (the smallest
//!   region the allocator accepts, 64 KiB, has three).
//! - *The hash map*: one slot per (class, way); `ways` is two per multiprocessor, fewer when the
//!   region is small (at most one superblock in slots per two superblocks of the pool, so small
//!   regions do not strand their superblocks in slots). A slot holds a superblock number, is
//!   empty, or is *pending*: the thread that found it empty (or full) marks it pending while it
//!   pops a fresh superblock, and the other threads of that slot back off until it is filled,
//!   instead of each popping a superblock of their own.
//! - *State word*: count of free pages, class, a `LIVE` bit (in use by a class), an `ATTACHED`
//!   bit (in a slot) and a 32-bit generation. Reservations compare-exchange the whole word, so
//!   a thread holding a stale superblock number (the superblock was recycled meanwhile) cannot
//!   reserve in it unless it is live in the class asked for, in which case the page is good.
//! - *Giving superblocks back*: a superblock goes to the free list only if it is both detached
//!   and completely free; that transition is one compare-exchange on its state, so it cannot
//!   race with a reservation. Whoever makes the condition true (the last `free`, or the thread
//!   that detaches it) attempts it.
//! - *Partly free superblocks*: a full superblock leaves its slot; once `free` has given back a
//!   quarter of its pages it is put back in an empty slot of its class, or replaces a full one.
//! - *Out of memory*: when the free list is empty, completely free superblocks that sit in
//!   slots (of any class) are detached and recycled; if that finds nothing, the other ways of
//!   the class are tried, and as a last resort every superblock is scanned for a free page of
//!   the class. Only then does `malloc` return null, so memory freed anywhere is found again.
//!
//! # Departures from the paper
//!
//! - KMA is OpenCL and predates independent thread scheduling; here every operation is per
//!   thread (no warp-synchronous step), all shared words are GPU-scoped atomics, fences order
//!   page contents against the bitmap, and every retry loop backs off. The one wait (a slot
//!   being refilled) waits on a thread that is running, never on a future call.
//! - The free list is a tagged Treiber stack rather than a Michael-Scott queue: the order in
//!   which empty superblocks are reused does not matter, and one tagged word is ABA-safe.
//! - KMA's second layer (the manager for dynamic data structures) is not part of `malloc`.
//!
//! # Limits
//!
//! Requests up to 16 KiB, in power-of-two classes (up to half of a page is internal
//! fragmentation). Superblock descriptors cost 0.9% of the pool. When memory is nearly
//! exhausted `malloc` scans every superblock before it fails, which is slow in large regions.

use super::{Caps, DeviceMalloc, FreeSupport, HEADER_BYTES, MallocKind, Region, errors, round_up};
use dynasoar_device::arch::{
    self, Backoff,
    atomic::{Atomic32, Atomic64},
    rotate_find,
};

const SUPERBLOCK_SHIFT: u32 = 14;
const SUPERBLOCK_BYTES: u64 = 1 << SUPERBLOCK_SHIFT;
const MIN_PAGE_SHIFT: u32 = 4;
/// Size classes: pages of 16 B, 32 B, ..., 16 KiB.
const CLASSES: u32 = SUPERBLOCK_SHIFT - MIN_PAGE_SHIFT + 1;
const MAX_PAGES: u64 = SUPERBLOCK_BYTES >> MIN_PAGE_SHIFT;
const BITMAP_BYTES: u64 = MAX_PAGES / 8;
/// Descriptor bytes per superblock: state, free-list link, bitmap.
const DESCRIPTOR_BYTES: u64 = 8 + 4 + BITMAP_BYTES;
const WAYS_PER_SM: u32 = 2;
const MAX_WAYS: u32 = 1024;
/// Slots a `free` looks at when it puts a partly free superblock back.
const REATTACH_PROBES: u32 = 4;
/// Metadata arrays start on their own 256-byte lines.
const LINE: u64 = 256;
/// Body offset of the free list's head (its own line, away from the slots).
const FREE_HEAD: u64 = 0;
/// Body offset of the hash map's slots.
const TABLE: u64 = LINE;

/// Slot values besides `superblock + 1`.
const EMPTY: u32 = 0;
const PENDING: u32 = u32::MAX;

/// State word: free pages, class, flags, generation.
const COUNT_MASK: u64 = 0xFFFF;
const CLASS_SHIFT: u32 = 16;
const LIVE: u64 = 1 << 20;
const ATTACHED: u64 = 1 << 21;
const GEN_MASK: u64 = 0xFFFF_FFFF << 32;

#[inline(always)]
fn count_of(state: u64) -> u32 {
    (state & COUNT_MASK) as u32
}

#[inline(always)]
fn class_of_state(state: u64) -> u32 {
    ((state >> CLASS_SHIFT) & 0xF) as u32
}

/// The size class of a request (`size >= 1`).
#[inline(always)]
fn class_of_size(size: u32) -> u32 {
    if size <= 1 << MIN_PAGE_SHIFT { 0 } else { 32 - (size - 1).leading_zeros() - MIN_PAGE_SHIFT }
}

/// Pages per superblock in `class` (0 for a class that does not exist).
#[inline(always)]
fn pages_of(class: u32) -> u32 {
    ((MAX_PAGES as u32) >> class.min(31)) * (class < CLASSES) as u32
}

/// Free pages at which a detached superblock is offered back to the hash map.
#[inline(always)]
fn reattach_threshold(pages: u32) -> u32 {
    (pages / 4).max(1)
}

/// Where everything lives in the body: a pure function of the region's header, so every thread
/// recomputes it (no division by a run-time value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    superblocks: u32,
    ways: u32,
    states: u64,
    links: u64,
    bitmaps: u64,
    pool: u64,
}

impl Layout {
    #[inline(always)]
    fn of(region: &Region) -> Layout {
        let body = region.body_bytes();
        let per_superblock = SUPERBLOCK_BYTES + DESCRIPTOR_BYTES;
        let estimate = body.saturating_sub(TABLE) / per_superblock;
        let fit = (estimate / (2 * CLASSES as u64)).max(1);
        let ways =
            (region.multiprocessors() as u64 * WAYS_PER_SM as u64).min(fit).min(MAX_WAYS as u64) as u32;
        let table_bytes = round_up(ways as u64 * CLASSES as u64 * 4, LINE);
        // Three round-ups below add less than a line each.
        let rest = body.saturating_sub(TABLE + table_bytes + 3 * LINE);
        let superblocks = (rest / per_superblock).min(u32::MAX as u64 / 2);
        let states = TABLE + table_bytes;
        let links = round_up(states + 8 * superblocks, LINE);
        let bitmaps = round_up(links + 4 * superblocks, LINE);
        let pool = round_up(bitmaps + BITMAP_BYTES * superblocks, LINE);
        Layout { superblocks: superblocks as u32, ways: ways.max(1), states, links, bitmaps, pool }
    }
}

/// What a reservation attempt found.
enum Reservation {
    /// One page of the superblock is ours to find in its bitmap.
    Reserved,
    /// The superblock is live in this class but has no free page.
    Full,
    /// The superblock is not (or no longer, or not yet visibly) live in this class.
    Stale,
}

/// KMA over a region.
#[derive(Clone, Copy, Debug)]
pub struct Kma {
    region: Region,
    layout: Layout,
}

impl Kma {
    #[inline(always)]
    fn free_head(&self) -> &Atomic64 {
        // SAFETY: the head word lies in the body's first line and is only accessed atomically.
        unsafe { self.region.atomic64(FREE_HEAD) }
    }

    /// The hash map's slot for `class` (< CLASSES) and `way` (< ways).
    #[inline(always)]
    fn slot(&self, class: u32, way: u32) -> &Atomic32 {
        let index = class as u64 * self.layout.ways as u64 + way as u64;
        // SAFETY: `class < CLASSES` and `way < ways` keep the slot inside the table, whose
        // words are only accessed atomically.
        unsafe { self.region.atomic32(TABLE + 4 * index) }
    }

    /// State word of superblock `sb` (< superblocks).
    #[inline(always)]
    fn state(&self, sb: u32) -> &Atomic64 {
        // SAFETY: `sb` is a superblock number, so the word lies in the state array; state words
        // are only accessed atomically.
        unsafe { self.region.atomic64(self.layout.states + 8 * sb as u64) }
    }

    /// Free-list link of superblock `sb` (< superblocks).
    #[inline(always)]
    fn link(&self, sb: u32) -> &Atomic32 {
        // SAFETY: as for `state`, in the link array.
        unsafe { self.region.atomic32(self.layout.links + 4 * sb as u64) }
    }

    /// Word `word` (< 16) of superblock `sb`'s page bitmap.
    #[inline(always)]
    fn bitmap(&self, sb: u32, word: u32) -> &Atomic64 {
        let offset = self.layout.bitmaps + BITMAP_BYTES * sb as u64 + 8 * (word as u64 % (BITMAP_BYTES / 8));
        // SAFETY: as for `state`, in the bitmap array (the word index is reduced modulo the
        // words per bitmap).
        unsafe { self.region.atomic64(offset) }
    }

    /// Address of page `page` of superblock `sb` in `class`.
    #[inline(always)]
    fn page(&self, sb: u32, class: u32, page: u32) -> *mut u8 {
        let offset =
            self.layout.pool + sb as u64 * SUPERBLOCK_BYTES + ((page as u64) << (MIN_PAGE_SHIFT + class));
        self.region.body().wrapping_add(offset as usize)
    }

    /// This thread's way into the hash map: its multiprocessor, and the parity of its warp.
    #[inline(always)]
    fn way(&self) -> u32 {
        let warp = arch::global_warp_id() as u32 & (WAYS_PER_SM - 1);
        (self.region.sm_slot() * WAYS_PER_SM + warp) % self.layout.ways
    }

    /// Reserve one free page of `sb`, if it is live in `class` and has one.
    #[inline(always)]
    fn reserve(&self, sb: u32, class: u32) -> Reservation {
        let state = self.state(sb);
        let mut backoff = Backoff::new();
        let mut current = state.load();
        loop {
            if current & LIVE == 0 || class_of_state(current) != class {
                return Reservation::Stale;
            }
            if count_of(current) == 0 {
                return Reservation::Full;
            }
            match state.compare_exchange(current, current - 1) {
                Ok(_) => return Reservation::Reserved,
                Err(actual) => {
                    current = actual;
                    backoff.retry();
                }
            }
        }
    }

    /// With a page of `sb` reserved, find a clear bit in its bitmap and take it.
    fn take_page(&self, sb: u32, class: u32) -> *mut u8 {
        // Acquire: the bit clears and page contents of the frees whose reservations we may
        // have taken are visible from here on (paired with the fences in `free`).
        arch::fence();
        let pages = pages_of(class);
        let words = pages.div_ceil(64).max(1);
        let valid = if pages >= 64 { u64::MAX } else { (1u64 << pages) - 1 };
        let seed = (arch::global_thread_id() as u32).wrapping_mul(0x9E37_79B9);
        let start = seed >> 16;
        let mut backoff = Backoff::new();
        loop {
            for i in 0..words {
                // `words` is a power of two.
                let word = start.wrapping_add(i) & (words - 1);
                let bits = self.bitmap(sb, word);
                let mut seen = bits.load();
                while let Some(bit) = rotate_find(!seen & valid, seed) {
                    let mask = 1u64 << bit;
                    seen = bits.fetch_or(mask);
                    if seen & mask == 0 {
                        return self.page(sb, class, word * 64 + bit);
                    }
                    backoff.retry();
                }
            }
            // Every clear bit was taken under us; ours is being cleared by a `free` whose
            // count we already hold. Let it finish.
            backoff.snooze();
        }
    }

    fn pop_free(&self) -> Option<u32> {
        let head = self.free_head();
        let mut backoff = Backoff::new();
        loop {
            let current = head.load();
            let top = current as u32;
            if top == 0 {
                return None;
            }
            // Acquire: the link the pusher wrote before publishing `top`.
            arch::fence();
            let next = self.link(top - 1).load();
            let tag = (current >> 32).wrapping_add(1);
            if head.compare_exchange(current, (tag << 32) | next as u64).is_ok() {
                // Acquire: our later stores to the superblock come after the recycler's.
                arch::fence();
                return Some(top - 1);
            }
            backoff.retry();
        }
    }

    fn push_free(&self, sb: u32) {
        let head = self.free_head();
        let mut backoff = Backoff::new();
        loop {
            let current = head.load();
            self.link(sb).store(current as u32);
            // Release: the link (and the recycled state) before the head names `sb`.
            arch::fence();
            let tag = (current >> 32).wrapping_add(1);
            if head.compare_exchange(current, (tag << 32) | (sb as u64 + 1)).is_ok() {
                return;
            }
            backoff.retry();
        }
    }

    /// Recycle `sb` if it is live, detached and completely free (one compare-exchange, so no
    /// reservation can slip in between the check and the recycling).
    fn try_recycle(&self, sb: u32) {
        let state = self.state(sb);
        let mut backoff = Backoff::new();
        let mut current = state.load();
        loop {
            let class = class_of_state(current);
            if current & (LIVE | ATTACHED) != LIVE || count_of(current) != pages_of(class) {
                return;
            }
            let recycled = (current & GEN_MASK).wrapping_add(1 << 32);
            match state.compare_exchange(current, recycled) {
                Ok(_) => return self.push_free(sb),
                Err(actual) => {
                    current = actual;
                    backoff.retry();
                }
            }
        }
    }

    /// `sb` was just taken out of its slot by this thread: clear its flag, recycle it if empty.
    fn detached(&self, sb: u32) {
        let previous = self.state(sb).fetch_and(!ATTACHED);
        if count_of(previous) == pages_of(class_of_state(previous)) {
            self.try_recycle(sb);
        }
    }

    /// Install the fresh superblock `sb` in `slot` (which this thread holds pending) for
    /// `class`, with its first page taken by the caller.
    fn install(&self, slot: &Atomic32, sb: u32, class: u32) -> *mut u8 {
        let state = self.state(sb);
        let generation = state.load() & GEN_MASK;
        // A recycled superblock's bitmap is all clear: it was recycled with every page free.
        self.bitmap(sb, 0).store(1);
        let pages = pages_of(class) as u64;
        state.store(generation | ATTACHED | LIVE | ((class as u64) << CLASS_SHIFT) | (pages - 1));
        // Release: state and bitmap before the slot names the superblock.
        arch::fence();
        slot.store(sb + 1);
        self.page(sb, class, 0)
    }

    /// Detach every completely free superblock that sits in a slot (of any class) and recycle
    /// it, for a free list that ran dry. Returns whether any was recycled.
    fn scavenge(&self) -> bool {
        let mut found = false;
        for class in 0..CLASSES {
            for way in 0..self.layout.ways {
                let slot = self.slot(class, way);
                let value = slot.load();
                if value == EMPTY || value == PENDING {
                    continue;
                }
                let sb = value - 1;
                let state = self.state(sb).load();
                let empty = state & LIVE != 0 && count_of(state) == pages_of(class_of_state(state));
                if empty && slot.compare_exchange(value, EMPTY).is_ok() {
                    self.detached(sb);
                    found = true;
                }
            }
        }
        found
    }

    /// A page of `class` from whatever superblock has one: the class's other slots first, then
    /// every superblock (the last resort before reporting out of memory).
    fn search(&self, class: u32) -> *mut u8 {
        let start = self.way();
        for i in 0..self.layout.ways {
            let value = self.slot(class, (start + i) % self.layout.ways).load();
            if value != EMPTY
                && value != PENDING
                && let Reservation::Reserved = self.reserve(value - 1, class)
            {
                return self.take_page(value - 1, class);
            }
        }
        let count = self.layout.superblocks;
        let first = (arch::global_thread_id() as u32).wrapping_mul(0x9E37_79B9) % count.max(1);
        for i in 0..count {
            let sb = (first + i) % count;
            let state = self.state(sb).load();
            if state & LIVE != 0
                && class_of_state(state) == class
                && count_of(state) != 0
                && let Reservation::Reserved = self.reserve(sb, class)
            {
                return self.take_page(sb, class);
            }
        }
        core::ptr::null_mut()
    }

    /// This thread holds `slot` pending: fill it with a fresh superblock and take its first
    /// page, or release it and look elsewhere.
    fn refill(&self, slot: &Atomic32, class: u32) -> *mut u8 {
        let mut fresh = self.pop_free();
        if fresh.is_none() && self.scavenge() {
            fresh = self.pop_free();
        }
        if let Some(sb) = fresh {
            return self.install(slot, sb, class);
        }
        slot.store(EMPTY);
        self.search(class)
    }

    /// Offer the detached, partly free superblock `sb` back to the hash map: an empty slot of
    /// its class, or one whose superblock is full.
    fn try_reattach(&self, sb: u32, class: u32) {
        let state = self.state(sb);
        let mut current = state.load();
        let mut backoff = Backoff::new();
        loop {
            if current & (LIVE | ATTACHED) != LIVE || class_of_state(current) != class {
                return;
            }
            match state.compare_exchange(current, current | ATTACHED) {
                Ok(_) => break,
                Err(actual) => {
                    current = actual;
                    backoff.retry();
                }
            }
        }
        let start = self.way();
        for i in 0..REATTACH_PROBES.min(self.layout.ways) {
            let slot = self.slot(class, (start + i) % self.layout.ways);
            let value = slot.load();
            if value == EMPTY {
                if slot.compare_exchange(EMPTY, sb + 1).is_ok() {
                    return;
                }
            } else if value != PENDING {
                let other = value - 1;
                if count_of(self.state(other).load()) == 0 && slot.compare_exchange(value, sb + 1).is_ok() {
                    self.detached(other);
                    return;
                }
            }
        }
        // No room: it stays detached (and is recycled if it became empty meanwhile).
        self.detached(sb);
    }

    /// The superblock and byte offset in it of `ptr`, if it lies in the pool.
    #[inline(always)]
    fn locate(&self, ptr: *mut u8) -> Option<(u32, u64)> {
        let offset = (ptr as u64).checked_sub(self.region.body_addr() + self.layout.pool)?;
        let sb = offset >> SUPERBLOCK_SHIFT;
        (sb < self.layout.superblocks as u64).then_some((sb as u32, offset & (SUPERBLOCK_BYTES - 1)))
    }
}

// SAFETY: a page is handed out only after its bit was set by this thread's atomic OR (so no
// other thread holds it until a `free` clears the bit), pages lie inside their superblock in
// the pool, and are aligned to their power-of-two size (at least 16) from the 256-byte aligned
// pool start.
unsafe impl DeviceMalloc for Kma {
    const KIND: MallocKind = MallocKind::Kma;
    const CAPS: Caps = Caps {
        max_size: SUPERBLOCK_BYTES as u32,
        align: 1 << MIN_PAGE_SHIFT,
        free: FreeSupport::Reuses,
        min_region_bytes: HEADER_BYTES + 64 * 1024,
        relays_above: u32::MAX,
    };

    /// Chain every superblock into the free list (the zeroed body is already an empty map with
    /// clear bitmaps and zero states).
    unsafe fn init(region: Region, _phase: u32) {
        // SAFETY: the region is being initialised for this kind.
        let kma = unsafe { Self::attach(region) };
        let count = kma.layout.superblocks;
        let (mut i, stride) = (arch::global_thread_id(), arch::global_thread_count());
        while i < count as usize {
            let next = if i + 1 < count as usize { i as u32 + 2 } else { 0 };
            kma.link(i as u32).store(next);
            i += stride;
        }
        if arch::global_thread_id() == 0 {
            kma.free_head().store((count != 0) as u64);
        }
    }

    #[inline(always)]
    unsafe fn attach(region: Region) -> Self {
        Kma { region, layout: Layout::of(&region) }
    }

    fn malloc(&self, size: u32) -> *mut u8 {
        let class = class_of_size(size);
        if class >= CLASSES || self.layout.superblocks == 0 {
            return core::ptr::null_mut();
        }
        let slot = self.slot(class, self.way());
        let mut backoff = Backoff::new();
        loop {
            let value = slot.load();
            if value == PENDING {
                // Another thread is filling this slot; it is running, not waiting for us.
                backoff.snooze();
                continue;
            }
            if value == EMPTY {
                if slot.compare_exchange(EMPTY, PENDING).is_ok() {
                    return self.refill(slot, class);
                }
                backoff.retry();
                continue;
            }
            let sb = value - 1;
            match self.reserve(sb, class) {
                Reservation::Reserved => return self.take_page(sb, class),
                // A superblock in a slot is live in its class; we read its state too early.
                Reservation::Stale => backoff.retry(),
                Reservation::Full => {
                    if slot.compare_exchange(value, PENDING).is_ok() {
                        self.detached(sb);
                        return self.refill(slot, class);
                    }
                    backoff.retry();
                }
            }
        }
    }

    unsafe fn free(&self, ptr: *mut u8) {
        let Some((sb, offset)) = self.locate(ptr) else {
            return self.region.raise(errors::INVALID_FREE);
        };
        let state = self.state(sb);
        let current = state.load();
        let class = class_of_state(current);
        let shift = MIN_PAGE_SHIFT + class;
        if current & LIVE == 0 || class >= CLASSES || offset & ((1 << shift) - 1) != 0 {
            return self.region.raise(errors::INVALID_FREE);
        }
        let page = (offset >> shift) as u32;
        let bit = 1u64 << (page % 64);
        // Release: the caller's writes to the page before the page is seen free.
        arch::fence();
        if self.bitmap(sb, page / 64).fetch_and(!bit) & bit == 0 {
            return self.region.raise(errors::INVALID_FREE);
        }
        // The clear bit before the count that promises it to a reserver.
        arch::fence();
        let previous = state.fetch_add(1);
        if previous & ATTACHED != 0 {
            return;
        }
        let pages = pages_of(class);
        let count = count_of(previous) + 1;
        if count == pages {
            self.try_recycle(sb);
        } else if count == reattach_threshold(pages) {
            self.try_reattach(sb, class);
        }
    }
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    extern crate alloc;
    use alloc::vec::Vec;

    use super::*;
    use crate::malloc::testing::{HostRegion, StormConfig, run_grid};

    fn region(bytes: u64) -> HostRegion {
        HostRegion::new(MallocKind::Kma, bytes, 0)
    }

    /// Allocate `size` until the allocator says no; the pointers, in order.
    fn fill(m: &Kma, size: u32) -> Vec<*mut u8> {
        core::iter::from_fn(|| Some(m.malloc(size)).filter(|p| !p.is_null())).collect()
    }

    #[test]
    fn size_classes_are_powers_of_two_from_sixteen_bytes() {
        assert_eq!(class_of_size(1), 0);
        assert_eq!(class_of_size(16), 0);
        assert_eq!(class_of_size(17), 1);
        assert_eq!(class_of_size(32), 1);
        assert_eq!(class_of_size(33), 2);
        assert_eq!(class_of_size(8192), 9);
        assert_eq!(class_of_size(8193), 10);
        assert_eq!(class_of_size(16384), 10);
        assert_eq!(class_of_size(16385), CLASSES);
        assert_eq!(pages_of(0), 1024);
        assert_eq!(pages_of(10), 1);
        assert_eq!(pages_of(CLASSES), 0);
    }

    #[test]
    fn layout_fits_the_body_and_scales_the_ways() {
        for (bytes, mps) in [((64 << 10) + 256, 1), (256 << 10, 132), (17 << 20, 8), (1 << 30, 132)] {
            let r = region(bytes);
            // SAFETY: the test's own region; nothing else reads the header meanwhile.
            unsafe { (*r.region().header_ptr()).multiprocessors = mps };
            let layout = Layout::of(&r.region());
            assert!(layout.superblocks >= 3, "{bytes}: {layout:?}");
            assert!(layout.pool + layout.superblocks as u64 * SUPERBLOCK_BYTES <= r.region().body_bytes());
            assert!(layout.ways >= 1 && layout.ways <= mps * WAYS_PER_SM);
            let share = r.region().body_bytes() / (SUPERBLOCK_BYTES * 2 * CLASSES as u64);
            assert!(layout.ways as u64 <= share.max(1), "{bytes}: {layout:?}");
            assert_eq!(layout.pool % LINE, 0);
        }
    }

    #[test]
    fn pages_are_aligned_to_their_class_and_disjoint() {
        let r = region(1 << 20);
        let m = r.typed::<Kma>();
        let pool = r.region().body_addr() + m.layout.pool;
        let mut blocks = Vec::new();
        for size in [1, 15, 16, 17, 31, 32, 33, 100, 128, 129, 1000, 4096, 4097, 8192, 16383, 16384] {
            let p = m.malloc(size);
            assert!(!p.is_null(), "{size}");
            let page = 1u64 << (MIN_PAGE_SHIFT + class_of_size(size));
            assert_eq!((p as u64 - pool) % page, 0, "{size} bytes at {p:?}");
            assert_eq!(p as u64 % 16, 0);
            blocks.push((p as u64, page));
        }
        blocks.sort_unstable();
        assert!(blocks.windows(2).all(|w| w[0].0 + w[0].1 <= w[1].0));
        assert!(m.malloc(16385).is_null());
        assert_eq!(r.errors(), 0);
    }

    #[test]
    fn freed_pages_and_superblocks_are_reused_by_any_class() {
        let r = region(512 << 10);
        let m = r.typed::<Kma>();
        let superblocks = m.layout.superblocks as usize;
        // Every superblock as one 16 KiB page: the pool is exactly that many.
        let big = fill(&m, 16384);
        assert_eq!(big.len(), superblocks);
        assert!(m.malloc(16).is_null(), "no superblock left for another class");
        // One back: a small class can take it.
        unsafe { m.free(big[3]) };
        let small = fill(&m, 16);
        assert_eq!(small.len(), 1024);
        assert!(small.iter().all(|&p| (p as u64).wrapping_sub(big[3] as u64) < SUPERBLOCK_BYTES));
        // All back: the same number of pages again, in any order.
        for &p in big.iter().filter(|&&p| p != big[3]).chain(&small) {
            unsafe { m.free(p) };
        }
        assert_eq!(fill(&m, 16384).len(), superblocks);
        assert_eq!(r.errors(), 0);
    }

    #[test]
    fn out_of_memory_recovers_after_frees() {
        let r = region(256 << 10);
        let m = r.typed::<Kma>();
        let blocks = fill(&m, 100);
        assert!(!blocks.is_empty());
        assert!(m.malloc(100).is_null());
        assert!(m.malloc(5000).is_null());
        unsafe { m.free(blocks[blocks.len() / 2]) };
        let again = m.malloc(100);
        assert_eq!(again, blocks[blocks.len() / 2], "the only free page");
        for &p in &blocks {
            unsafe { m.free(p) };
        }
        // Every superblock is recycled, even those still in slots of the old class.
        assert_eq!(fill(&m, 16384).len(), m.layout.superblocks as usize);
        assert_eq!(r.errors(), 0);
    }

    #[test]
    fn detached_superblocks_are_reattached_and_recycled() {
        let r = region(512 << 10);
        let m = r.typed::<Kma>();
        let blocks = fill(&m, 2048); // eight pages per superblock, every superblock full
        assert_eq!(blocks.len(), 8 * m.layout.superblocks as usize);
        // Free two pages of a full, detached superblock: it goes back to a slot...
        let first = blocks[0];
        let sb = m.locate(first).unwrap().0;
        unsafe { m.free(blocks[0]) };
        unsafe { m.free(blocks[1]) };
        let state = m.state(sb).load();
        assert_eq!(count_of(state), 2);
        assert!(state & ATTACHED != 0, "reattached after a quarter came back");
        // ...and serves the next requests of its class.
        let a = m.malloc(2048);
        let b = m.malloc(2048);
        assert!([a, b].contains(&blocks[0]) && [a, b].contains(&blocks[1]));
        assert_eq!(r.errors(), 0);
    }

    #[test]
    fn bad_frees_are_reported() {
        let r = region(256 << 10);
        let m = r.typed::<Kma>();
        let p = m.malloc(64);
        unsafe { m.free(p.wrapping_add(16)) };
        assert_eq!(r.errors(), errors::INVALID_FREE, "misaligned");
        // SAFETY: clearing the error word of our own region between checks.
        // SAFETY: the header of our own region; its error word is atomic.
        unsafe { (*r.region().header_ptr()).errors.store(0) };
        unsafe { m.free(p) };
        unsafe { m.free(p) };
        assert_eq!(r.errors(), errors::INVALID_FREE, "double free");
        // SAFETY: as above.
        unsafe { (*r.region().header_ptr()).errors.store(0) };
        unsafe { m.free(r.region().body()) };
        assert_eq!(r.errors(), errors::INVALID_FREE, "outside the pool");
        // SAFETY: as above.
        unsafe { (*r.region().header_ptr()).errors.store(0) };
        let unused = m.page(m.layout.superblocks - 1, 0, 0);
        unsafe { m.free(unused) };
        assert_eq!(r.errors(), errors::INVALID_FREE, "a superblock not in use");
    }

    #[test]
    fn storms_reuse_memory_across_rounds() {
        let r = region(8 << 20);
        let report = r.storm(StormConfig { threads: 16, per_thread: 64, sizes: (1, 2048), rounds: 8 });
        assert_eq!(report.failed, 0);
        assert_eq!(report.checked, 8 * 16 * 64);
        assert_eq!(r.errors(), 0);
    }

    #[test]
    fn storms_in_a_tight_pool_fail_cleanly_and_recover() {
        let r = region(256 << 10);
        let report = r.storm(StormConfig { threads: 16, per_thread: 64, sizes: (16, 1024), rounds: 4 });
        assert!(report.failed > 0, "the demand is twice the pool");
        assert!(report.checked > 0);
        // After every round freed everything, a small request of every class is served.
        let m = r.typed::<Kma>();
        for class in 0..CLASSES {
            let p = m.malloc(16 << class);
            assert!(!p.is_null(), "class {class}");
            unsafe { m.free(p) };
        }
    }

    #[test]
    fn concurrent_alloc_free_churn_keeps_every_page_once() {
        let r = region(1 << 20);
        let m = r.typed::<Kma>();
        run_grid(16, |t| {
            let mut live = Vec::new();
            for i in 0..2000u32 {
                let size = 16 << ((t + i) % 6);
                let p = m.malloc(size);
                assert!(!p.is_null());
                // SAFETY: the page is ours, at least 16 bytes.
                unsafe { (p as *mut u64).write_volatile(((t as u64) << 32) | i as u64) };
                live.push((p, ((t as u64) << 32) | i as u64));
                if live.len() > 20 {
                    let (q, tag) = live.swap_remove((i as usize * 7) % live.len());
                    // SAFETY: still ours.
                    assert_eq!(unsafe { (q as *const u64).read_volatile() }, tag);
                    unsafe { m.free(q) };
                }
            }
            for (q, _) in live {
                unsafe { m.free(q) };
            }
        });
        assert_eq!(r.errors(), 0);
        // Everything came back: the whole pool is free superblocks again.
        assert_eq!(fill(&m, 16384).len(), m.layout.superblocks as usize);
    }
}
