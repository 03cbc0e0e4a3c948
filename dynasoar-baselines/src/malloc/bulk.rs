//! BulkAllocator (Gelado & Garland, "Throughput-oriented GPU memory allocation", PPoPP 2019;
//! the survey `002_...` section 2.9, Figure 6): bulk semaphores, UAlloc for small requests,
//! TBuddy for large ones.
//!
//! No public source exists; this is built from the descriptions, in our own code.
//!
//! # Structure
//! - **Bulk semaphore** ([`BulkSemaphore`]): one 64-bit word, the low half counting available
//!   units and the high half flagging a refill in progress. `wait` takes one unit; when none
//!   is left and no refill runs, the caller becomes the refiller (it fetches resources in
//!   bulk and `signal`s all but its own unit at once); while a refill runs, waiters snooze
//!   instead of all hitting the backing allocator (the paper's batching of refills). A failed
//!   refill `cancel`s, and the next waiter tries again itself, so nothing waits forever.
//! - **TBuddy**: a static binary tree over the pool's 4 KiB blocks (leaves), in heap order.
//!   Each node's word holds an OWN bit (the node is allocated whole: *busy*) and a count of
//!   allocations in its subtree (non-zero: *partial*; zero: *available*). To allocate a node,
//!   a thread CASes it from 0 to OWN, then adds 1 to every ancestor: an ancestor that had OWN
//!   means a conflicting allocation won, and the thread undoes its increments and tries
//!   another node. Both conflicting allocations order on the ancestor's word, so exactly one
//!   of them wins. Freeing clears OWN and subtracts 1 from every ancestor: the state
//!   propagates to the parents as the paper describes.
//! - **UAlloc** for requests below 2 KiB: one arena per multiprocessor (`region.sm_slot()`).
//!   An arena takes chunks (2^k blocks) from TBuddy and splits them into 4 KiB bins; each bin
//!   serves one size class (16, 32, ... 2048 bytes) and tracks its elements with a bitmap and
//!   a free count. Each arena keeps, per size class, a stack of bins that have free elements,
//!   and a stack of fresh bins guarded by a bulk semaphore (a refill pushes a whole chunk).
//!
//! # Decisions the descriptions leave open
//! - The bin stacks are Treiber stacks whose head word packs a 32-bit tag (incremented by
//!   every push and pop) with the bin's index: the paper's RCU needs host-side grace periods,
//!   the tag makes a pop that read a stale `next` fail its CAS instead (ABA-safe).
//! - A bin stays on its class stack while its free count is positive. Malloc reserves an
//!   element by decrementing the head bin's count (CAS, never below 0), then claims any clear
//!   bit (the reservation guarantees one exists). A bin found at count 0 is popped; its
//!   `listed` flag is cleared and the count re-checked, and a free sets the count before
//!   checking `listed`, so one of the two re-pushes a bin that regained an element.
//! - Bins keep their size class and chunks stay with their arena for ever (the paper returns
//!   empty chunks to TBuddy; removing a bin from its stack while other threads may still
//!   reserve in it needs the RCU grace period we do not have). Freed elements are reused by
//!   the same class; a malloc whose arena cannot get memory takes from the other arenas'
//!   stacks of its class, then their fresh bins, before failing.
//! - One thread at a time starts a new bin of a class in an arena (a flag per class in the
//!   arena); the others wait for its elements instead of starting bins of their own.
//! - TBuddy's levels are not each guarded by a bulk semaphore: the node CAS already admits
//!   one winner, and a level scan starts at a per-thread position to spread contention.
//! - Scaling: chunks are 128 bins (512 KiB) as in the paper when the pool holds at least four
//!   per arena, smaller otherwise (down to one bin). The tree covers the largest power of two
//!   of blocks that fits, so up to half of a region that is not a power of two stays unused.
//!
//! - A count of the blocks TBuddy has handed out lets a request fail at once when the pool
//!   cannot hold it, instead of scanning a level (out-of-memory storms would otherwise
//!   serialise full scans behind the arenas' semaphores).
//!
//! # Limits
//! Requests up to [`MAX_SIZE`]; below 2 KiB rounded up to a power of two (at least 16), above
//! to a power of two of 4 KiB blocks. No relay to CUDA's allocator. Double frees and foreign
//! pointers are detected and raise `INVALID_FREE`.

use super::{Caps, DeviceMalloc, FreeSupport, HEADER_BYTES, MallocKind, Region, errors};
use dynasoar_device::arch::{
    self, Backoff,
    atomic::{Atomic32, Atomic64},
};

/// Largest request served.
pub const MAX_SIZE: u32 = 1 << 30;
/// Bytes of a TBuddy leaf block and of a UAlloc bin.
const BLOCK: u64 = 4096;
const BLOCK_SHIFT: u32 = 12;
/// Size classes: 16 << class for class in 0..CLASSES; requests of at least `1 << 11` bytes go to
/// TBuddy.
const CLASSES: u32 = 8;
const SMALL_LIMIT: u32 = 2048;
/// Bitmap words of a bin (256 elements of 16 bytes).
const BITMAP_WORDS: u64 = 8;
/// Bytes of an arena's state: CLASSES stack heads, the fresh-bin stack head, the semaphore,
/// the classes whose new bin is being started.
const ARENA_BYTES: u64 = 128;
const FRESH_HEAD: u64 = CLASSES as u64;
const SEMAPHORE: u64 = CLASSES as u64 + 1;
const STARTING: u64 = CLASSES as u64 + 2;
const _: () = assert!((STARTING + 1) * 8 <= ARENA_BYTES);
/// Bytes of a block's metadata (u32 words).
const META_BYTES: u64 = 64;
const META_COUNT: u64 = 8;
const META_LISTED: u64 = 9;
const META_NEXT: u64 = 10;
const META_CLASS: u64 = 11;
const META_ARENA: u64 = 12;
const META_ORDER: u64 = 13;
/// Node word: allocated whole.
const OWN: u32 = 1 << 31;
/// Chunks of the paper: 128 bins.
const MAX_CHUNK_ORDER: u32 = 7;

/// A bulk semaphore over one 64-bit word: low half, units available; high half, a refill in
/// progress.
pub struct BulkSemaphore<'a>(&'a Atomic64);

/// What [`BulkSemaphore::wait`] gave the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// One unit is the caller's.
    Acquired,
    /// None was left: the caller refills, then calls `signal` or `cancel`.
    MustRefill,
}

const REFILLING: u64 = 1 << 32;

impl BulkSemaphore<'_> {
    /// Take one unit, or become the refiller; snoozes while another thread refills.
    pub fn wait(&self) -> Wait {
        let mut backoff = Backoff::new();
        loop {
            let word = self.0.load();
            let (units, refilling) = (word & 0xffff_ffff, word >> 32);
            let (new, got) = if units > 0 {
                (word - 1, Wait::Acquired)
            } else if refilling == 0 {
                (word | REFILLING, Wait::MustRefill)
            } else {
                backoff.snooze();
                continue;
            };
            match self.0.compare_exchange(word, new) {
                Ok(_) => return got,
                Err(_) => backoff.retry(),
            }
        }
    }

    /// Take one unit if one is left, without ever refilling (for a thread of another arena).
    pub fn try_take(&self) -> bool {
        let mut backoff = Backoff::new();
        loop {
            let word = self.0.load();
            if word & 0xffff_ffff == 0 {
                return false;
            }
            match self.0.compare_exchange(word, word - 1) {
                Ok(_) => return true,
                Err(_) => backoff.retry(),
            }
        }
    }

    /// The refill produced `units` units for the others (the refiller's own is not counted).
    pub fn signal(&self, units: u32) {
        self.0.fetch_add((units as u64).wrapping_sub(REFILLING));
    }

    /// The refill failed: let the next waiter try.
    pub fn cancel(&self) {
        self.0.fetch_sub(REFILLING);
    }
}

/// Where everything lies in the body: a pure function of the body's size and the
/// multiprocessors.
#[derive(Clone, Copy, Debug)]
struct Layout {
    arenas: u32,
    /// log2 of the leaves of the tree.
    depth: u32,
    /// The count of blocks handed out by TBuddy (a fast out-of-memory check).
    used: u64,
    meta: u64,
    nodes: u64,
    pool: u64,
    chunk_order: u32,
}

impl Layout {
    fn of(region: &Region) -> Option<Layout> {
        let arenas = region.multiprocessors();
        let used = arenas as u64 * ARENA_BYTES;
        let meta = (used + 8).next_multiple_of(256);
        let avail = region.body_bytes().checked_sub(meta + BLOCK)?;
        let leaves = avail / (BLOCK + META_BYTES + 8);
        if leaves == 0 {
            return None;
        }
        let depth = 63 - leaves.leading_zeros();
        let leaves = 1u64 << depth;
        let nodes = meta + leaves * META_BYTES;
        let pool = (nodes + 2 * leaves * 4).next_multiple_of(BLOCK);
        let arena_bits = 32 - (arenas - 1).leading_zeros();
        let chunk_order = depth.saturating_sub(arena_bits + 2).min(MAX_CHUNK_ORDER);
        Some(Layout { arenas, depth, used, meta, nodes, pool, chunk_order })
    }

    fn leaves(&self) -> u64 {
        1 << self.depth
    }
}

/// The BulkAllocator over a region.
#[derive(Clone, Copy, Debug)]
pub struct BulkAlloc {
    region: Region,
    layout: Option<Layout>,
}

impl BulkAlloc {
    fn arena_word(&self, arena: u32, word: u64) -> &Atomic64 {
        // SAFETY: arena < arenas and word < ARENA_BYTES / 8, inside the metadata; the arena
        // words are only accessed atomically.
        unsafe { self.region.atomic64(arena as u64 * ARENA_BYTES + word * 8) }
    }

    fn block_word(&self, layout: &Layout, block: u64, word: u64) -> &Atomic32 {
        // SAFETY: callers pass block < leaves and word < META_BYTES / 4; metadata words are
        // only accessed atomically.
        unsafe { self.region.atomic32(layout.meta + block * META_BYTES + word * 4) }
    }

    fn node(&self, layout: &Layout, node: u64) -> &Atomic32 {
        // SAFETY: callers pass 1 <= node < 2 * leaves; node words are only accessed
        // atomically.
        unsafe { self.region.atomic32(layout.nodes + node * 4) }
    }

    fn block_ptr(&self, layout: &Layout, block: u64) -> *mut u8 {
        self.region.body().wrapping_add((layout.pool + block * BLOCK) as usize)
    }

    // ---- TBuddy ----

    /// A free run of `2^order` blocks, as its first block.
    fn buddy_alloc(&self, layout: &Layout, order: u32) -> Option<u64> {
        let level = layout.depth.checked_sub(order)?;
        let count = 1u64 << level;
        let run = 1u64 << order;
        // SAFETY: the word after the arenas, only accessed atomically.
        let used = unsafe { self.region.atomic64(layout.used) };
        // Without this, every failing request of an exhausted pool would scan a whole level.
        if used.fetch_add(run) + run > layout.leaves() {
            used.fetch_sub(run);
            return None;
        }
        let start = (arch::global_thread_id() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32;
        let mut backoff = Backoff::new();
        for step in 0..count {
            let node = count + (start.wrapping_add(step) & (count - 1));
            if self.node(layout, node).load() != 0 {
                continue;
            }
            if self.node(layout, node).compare_exchange(0, OWN).is_err() {
                backoff.retry();
                continue;
            }
            if self.mark_ancestors(layout, node) {
                arch::fence();
                return Some((node - count) << order);
            }
            self.node(layout, node).fetch_and(!OWN);
        }
        used.fetch_sub(run);
        None
    }

    /// Counts the new allocation `node` in its ancestors; false (and undone) if one of them is
    /// allocated whole.
    fn mark_ancestors(&self, layout: &Layout, node: u64) -> bool {
        let mut ancestor = node / 2;
        while ancestor >= 1 {
            if self.node(layout, ancestor).fetch_add(1) & OWN != 0 {
                let mut undo = node / 2;
                while undo >= ancestor {
                    self.node(layout, undo).fetch_sub(1);
                    undo /= 2;
                }
                return false;
            }
            ancestor /= 2;
        }
        true
    }

    fn buddy_free(&self, layout: &Layout, block: u64, order: u32) {
        let level = layout.depth.saturating_sub(order);
        let node = (1u64 << level) + (block >> order);
        arch::fence();
        self.node(layout, node).fetch_and(!OWN);
        let mut ancestor = node / 2;
        while ancestor >= 1 {
            self.node(layout, ancestor).fetch_sub(1);
            ancestor /= 2;
        }
        // SAFETY: as in `buddy_alloc`.
        unsafe { self.region.atomic64(layout.used) }.fetch_sub(1 << order);
    }

    fn large_malloc(&self, layout: &Layout, size: u32) -> *mut u8 {
        let blocks = (size as u64).div_ceil(BLOCK);
        let order = 64 - (blocks - 1).leading_zeros();
        let order = if blocks <= 1 { 0 } else { order };
        match self.buddy_alloc(layout, order) {
            Some(block) => {
                self.block_word(layout, block, META_ORDER).store(order + 1);
                self.block_ptr(layout, block)
            }
            None => core::ptr::null_mut(),
        }
    }

    // ---- UAlloc ----

    /// Push `bin` onto the tagged stack at `head`.
    fn push(&self, layout: &Layout, head: &Atomic64, bin: u64) {
        let mut backoff = Backoff::new();
        loop {
            let word = head.load();
            self.block_word(layout, bin, META_NEXT).store(word as u32);
            arch::fence();
            let new = ((word >> 32).wrapping_add(1) << 32) | (bin + 1);
            match head.compare_exchange(word, new) {
                Ok(_) => return,
                Err(_) => backoff.retry(),
            }
        }
    }

    /// Pop the head bin if it is still `expected` (a tagged head word).
    fn pop_if(&self, layout: &Layout, head: &Atomic64, expected: u64) -> bool {
        let bin = (expected & 0xffff_ffff).wrapping_sub(1);
        if bin >= layout.leaves() {
            return false;
        }
        let next = self.block_word(layout, bin, META_NEXT).load() as u64;
        let new = ((expected >> 32).wrapping_add(1) << 32) | next;
        head.compare_exchange(expected, new).is_ok()
    }

    /// Pop a bin off `arena`'s fresh stack, where the caller took a unit of its semaphore.
    fn pop_fresh(&self, layout: &Layout, arena: u32) -> u64 {
        let head = self.arena_word(arena, FRESH_HEAD);
        // A unit means a bin was pushed before it was signalled; pops may race.
        let mut backoff = Backoff::new();
        loop {
            let word = head.load();
            if word & 0xffff_ffff != 0 && self.pop_if(layout, head, word) {
                return (word & 0xffff_ffff) - 1;
            }
            backoff.retry();
        }
    }

    /// A fresh bin of `arena`, refilling its stack from TBuddy if needed.
    fn fresh_bin(&self, layout: &Layout, arena: u32) -> Option<u64> {
        let semaphore = BulkSemaphore(self.arena_word(arena, SEMAPHORE));
        let head = self.arena_word(arena, FRESH_HEAD);
        match semaphore.wait() {
            Wait::Acquired => Some(self.pop_fresh(layout, arena)),
            Wait::MustRefill => {
                let Some(chunk) = self.buddy_alloc(layout, layout.chunk_order) else {
                    semaphore.cancel();
                    return None;
                };
                let bins = 1u64 << layout.chunk_order;
                for bin in chunk + 1..chunk + bins {
                    self.push(layout, head, bin);
                }
                arch::fence();
                semaphore.signal(bins as u32 - 1);
                Some(chunk)
            }
        }
    }

    /// Make the fresh `bin` a bin of `class` listed in arena `home`, and take its first element.
    fn start_bin(&self, layout: &Layout, bin: u64, class: u32, home: u32) -> *mut u8 {
        let elements = BLOCK >> (4 + class);
        for word in 0..BITMAP_WORDS {
            let first = word * 32;
            let bits = if first >= elements {
                u32::MAX
            } else if elements - first >= 32 {
                0
            } else {
                u32::MAX << (elements - first)
            };
            self.block_word(layout, bin, word).store(bits);
        }
        self.block_word(layout, bin, 0).fetch_or(1);
        self.block_word(layout, bin, META_COUNT).store(elements as u32 - 1);
        self.block_word(layout, bin, META_CLASS).store(class + 1);
        self.block_word(layout, bin, META_ARENA).store(home);
        self.block_word(layout, bin, META_LISTED).store(1);
        arch::fence();
        self.push(layout, self.arena_word(home, class as u64), bin);
        self.block_ptr(layout, bin)
    }

    /// An element from the bins already on `arena`'s stack of `class`.
    fn take_listed(&self, layout: &Layout, arena: u32, class: u32) -> Option<*mut u8> {
        let head = self.arena_word(arena, class as u64);
        let mut backoff = Backoff::new();
        loop {
            let word = head.load();
            let bin = (word & 0xffff_ffff).wrapping_sub(1);
            if bin >= layout.leaves() {
                return None;
            }
            let count = self.block_word(layout, bin, META_COUNT);
            let free = count.load();
            if free == 0 {
                if self.pop_if(layout, head, word) {
                    let listed = self.block_word(layout, bin, META_LISTED);
                    listed.store(0);
                    arch::fence();
                    if count.load() > 0 && listed.compare_exchange(0, 1).is_ok() {
                        self.push(layout, head, bin);
                    }
                } else {
                    backoff.retry();
                }
                continue;
            }
            if count.compare_exchange(free, free - 1).is_err() {
                backoff.retry();
                continue;
            }
            return Some(self.claim_bit(layout, bin, class));
        }
    }

    /// Claim a clear bit of `bin`, where the caller reserved one.
    fn claim_bit(&self, layout: &Layout, bin: u64, class: u32) -> *mut u8 {
        let mut backoff = Backoff::new();
        loop {
            for word in 0..BITMAP_WORDS {
                let bits = self.block_word(layout, bin, word);
                let mut seen = bits.load();
                while seen != u32::MAX {
                    let bit = (!seen).trailing_zeros();
                    let prev = bits.fetch_or(1 << bit);
                    if prev & (1 << bit) == 0 {
                        arch::fence();
                        let element = word * 32 + bit as u64;
                        let offset = element << (4 + class);
                        return self.block_ptr(layout, bin).wrapping_add(offset as usize);
                    }
                    seen = prev | (1 << bit);
                }
            }
            // Every bit was taken by reservers racing ahead of frees that are mid-way.
            backoff.snooze();
        }
    }

    fn small_malloc(&self, layout: &Layout, size: u32) -> *mut u8 {
        let class = (32 - (size.max(16) - 1).leading_zeros()).saturating_sub(4);
        let home = self.region.sm_slot() % layout.arenas;
        // One thread at a time starts a bin of a class in an arena; the others wait for its
        // elements. Without that, every thread that found the class's stack empty started a
        // bin of its own: the threads of a multiprocessor took up to a bin (4 KiB) each for
        // one small object, and 160 MiB did not hold 400,000 of them on an H200.
        let starting = self.arena_word(home, STARTING);
        let mut backoff = Backoff::new();
        loop {
            if let Some(ptr) = self.take_listed(layout, home, class) {
                return ptr;
            }
            if starting.fetch_or(1 << class) & (1 << class) != 0 {
                backoff.snooze();
                continue;
            }
            // Another thread may have started a bin and let go of the flag between this
            // thread's look at the stack and its taking the flag: look again before starting
            // one (without this, 16 threads started 2 bins in about 15 of 100 runs on 16 cores).
            if let Some(ptr) = self.take_listed(layout, home, class) {
                starting.fetch_and(!(1 << class));
                return ptr;
            }
            let started = self.fresh_bin(layout, home).map(|bin| self.start_bin(layout, bin, class, home));
            starting.fetch_and(!(1 << class));
            match started {
                Some(ptr) => return ptr,
                None => break,
            }
        }
        // TBuddy has no chunk left. Chunks stay with their arenas, so the memory left is in
        // the other arenas: first their bins of this class, then their fresh bins (without
        // that, a pool could run out while most of it sat unused in fresh bins of arenas whose
        // multiprocessors did not need them: 45,632 of 400,000 small mallocs failed in a
        // 96 MiB pool on an H200).
        for step in 1..layout.arenas {
            if let Some(ptr) = self.take_listed(layout, (home + step) % layout.arenas, class) {
                return ptr;
            }
        }
        for step in 1..layout.arenas {
            let arena = (home + step) % layout.arenas;
            if BulkSemaphore(self.arena_word(arena, SEMAPHORE)).try_take() {
                let bin = self.pop_fresh(layout, arena);
                return self.start_bin(layout, bin, class, home);
            }
        }
        core::ptr::null_mut()
    }

    fn small_free(&self, layout: &Layout, bin: u64, class: u32, offset: u64) {
        if offset & ((16 << class) - 1) != 0 {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        let element = offset >> (4 + class);
        let bits = self.block_word(layout, bin, element / 32);
        let bit = 1u32 << (element % 32);
        arch::fence();
        if bits.fetch_and(!bit) & bit == 0 {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        self.block_word(layout, bin, META_COUNT).fetch_add(1);
        arch::fence();
        let listed = self.block_word(layout, bin, META_LISTED);
        if listed.load() == 0 && listed.compare_exchange(0, 1).is_ok() {
            let arena = self.block_word(layout, bin, META_ARENA).load() % layout.arenas;
            self.push(layout, self.arena_word(arena, class as u64), bin);
        }
    }
}

// SAFETY: TBuddy hands a run of blocks to one thread only (the node CAS and the ancestor
// counts admit one of any two overlapping runs); a bin element is handed out only by the
// thread that set its bit; chunks become bins of one arena only; every pointer lies in the pool
// and is aligned to 16 bytes (pool and blocks are 4 KiB aligned in the body, elements are
// multiples of 16 bytes).
unsafe impl DeviceMalloc for BulkAlloc {
    const KIND: MallocKind = MallocKind::Bulk;
    const CAPS: Caps = Caps {
        max_size: MAX_SIZE,
        align: 16,
        free: FreeSupport::Reuses,
        min_region_bytes: 256 * 1024,
        relays_above: u32::MAX,
    };

    unsafe fn init(_region: Region, _phase: u32) {
        // The zeroed body is the initial state: empty stacks, semaphores at zero with no
        // refill, every tree node available, no block allocated.
    }

    #[inline(always)]
    unsafe fn attach(region: Region) -> Self {
        BulkAlloc { region, layout: Layout::of(&region) }
    }

    fn malloc(&self, size: u32) -> *mut u8 {
        let Some(layout) = self.layout else {
            return core::ptr::null_mut();
        };
        if size < SMALL_LIMIT { self.small_malloc(&layout, size) } else { self.large_malloc(&layout, size) }
    }

    unsafe fn free(&self, ptr: *mut u8) {
        let Some(layout) = self.layout else {
            self.region.raise(errors::INVALID_FREE);
            return;
        };
        let offset = (ptr as u64).wrapping_sub(self.region.body_addr() + layout.pool);
        let block = offset >> BLOCK_SHIFT;
        if !self.region.contains(ptr) || block >= layout.leaves() {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        let class = self.block_word(&layout, block, META_CLASS).load();
        if class != 0 {
            self.small_free(&layout, block, (class - 1) % CLASSES, offset & (BLOCK - 1));
            return;
        }
        if offset & (BLOCK - 1) != 0 {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        match self.block_word(&layout, block, META_ORDER).swap(0) {
            0 => self.region.raise(errors::INVALID_FREE),
            order => self.buddy_free(&layout, block, order - 1),
        }
    }
}

const _: () = assert!(HEADER_BYTES + 4 * BLOCK < BulkAlloc::CAPS.min_region_bytes);

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::*;
    use crate::malloc::testing::{HostRegion, StormConfig, run_grid};

    fn region(bytes: u64) -> HostRegion {
        HostRegion::new(MallocKind::Bulk, bytes, 0)
    }

    #[test]
    fn class_boundaries_and_alignment() {
        let r = region(1 << 20);
        let m = r.typed::<BulkAlloc>();
        for size in [1, 16, 17, 32, 33, 1024, 1025, 2047, 2048, 4096, 4097, 65536] {
            let a = m.malloc(size);
            let b = m.malloc(size);
            assert!(!a.is_null() && !b.is_null(), "size {size}");
            assert_eq!(a as u64 % 16, 0);
            assert!((a as u64).abs_diff(b as u64) >= size as u64, "size {size}");
            unsafe { m.free(a) };
            unsafe { m.free(b) };
        }
        assert_eq!(r.errors(), 0);
    }

    #[test]
    fn reuses_freed_memory() {
        let r = region(1 << 20);
        let m = r.typed::<BulkAlloc>();
        let a = m.malloc(100);
        unsafe { m.free(a) };
        assert_eq!(m.malloc(100), a);
        let big = m.malloc(10000);
        unsafe { m.free(big) };
        assert_eq!(m.malloc(10000), big);
    }

    #[test]
    fn out_of_memory_and_recovery() {
        let r = region(256 * 1024);
        let m = r.typed::<BulkAlloc>();
        let mut held = [core::ptr::null_mut(); 2048];
        let mut count = 0;
        while count < held.len() {
            let p = m.malloc(256);
            if p.is_null() {
                break;
            }
            held[count] = p;
            count += 1;
        }
        assert!(count > 0 && count < held.len());
        assert!(m.malloc(256).is_null());
        assert!(m.malloc(8192).is_null());
        for &p in &held[..count] {
            unsafe { m.free(p) };
        }
        assert!(!m.malloc(256).is_null());
        assert_eq!(r.errors(), 0);
    }

    /// Chunks stay with their arenas: when TBuddy has none left, a malloc takes the fresh bins
    /// another arena refilled but did not use, instead of failing.
    #[test]
    fn fresh_bins_of_other_arenas_are_used_before_failing() {
        use dynasoar_device::arch::{LaunchCoords, with_launch_coords};
        let in_arena = |sm: u32, f: &mut dyn FnMut()| {
            with_launch_coords(LaunchCoords { block_idx: sm, thread_idx: 0, block_dim: 1, grid_dim: 4 }, f)
        };
        let fill = |m: &BulkAlloc| {
            let mut n = 0u64;
            while !m.malloc(256).is_null() {
                n += 1;
            }
            n
        };
        // 8 MiB: chunks of 128 bins (512 KiB).
        let r = region(8 << 20);
        let m = r.typed::<BulkAlloc>();
        let mut alone = 0;
        in_arena(1, &mut || alone = fill(&m));
        let r = region(8 << 20);
        let m = r.typed::<BulkAlloc>();
        // Arena 0 takes a chunk for one small element (one bin of its 128), then arena 1 fills.
        in_arena(0, &mut || assert!(!m.malloc(16).is_null()));
        let mut shared = 0;
        in_arena(1, &mut || shared = fill(&m));
        // Arena 0 keeps one bin (16 elements of 256 bytes); the rest of its chunk is used.
        assert!(shared + 16 >= alone, "{shared} mallocs with another arena's chunk, {alone} alone");
        assert_eq!(r.errors() & !errors::OUT_OF_MEMORY, 0);
    }

    /// Threads of one arena that find their class's stack empty together share the bin one of
    /// them starts, instead of each starting one.
    #[test]
    fn concurrent_first_mallocs_share_one_bin() {
        use dynasoar_device::arch::{LaunchCoords, with_launch_coords};
        let r = region(8 << 20);
        let m = r.typed::<BulkAlloc>();
        let barrier = std::sync::Barrier::new(16);
        let addrs: std::vec::Vec<u64> = std::thread::scope(|s| {
            let handles: std::vec::Vec<_> = (0..16)
                .map(|t| {
                    let (m, barrier) = (&m, &barrier);
                    s.spawn(move || {
                        let coords = LaunchCoords { block_idx: 0, thread_idx: t, block_dim: 16, grid_dim: 1 };
                        with_launch_coords(coords, || {
                            barrier.wait();
                            m.malloc(16) as u64
                        })
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(addrs.iter().all(|&a| a != 0));
        let bins: std::collections::HashSet<u64> = addrs.iter().map(|a| a / 4096).collect();
        assert_eq!(bins.len(), 1, "16 mallocs of 16 bytes in one arena started {} bins", bins.len());
    }

    #[test]
    fn large_blocks_free_back_to_the_tree() {
        let r = region(1 << 20);
        let m = r.typed::<BulkAlloc>();
        let whole = m.malloc(128 * 1024);
        assert!(!whole.is_null());
        unsafe { m.free(whole) };
        let mut held = [core::ptr::null_mut(); 4];
        for slot in &mut held {
            *slot = m.malloc(32 * 1024);
            assert!(!slot.is_null());
        }
        for p in held {
            unsafe { m.free(p) };
        }
        assert_eq!(m.malloc(128 * 1024), whole);
    }

    #[test]
    fn detects_bad_and_double_frees() {
        let r = region(1 << 20);
        let m = r.typed::<BulkAlloc>();
        let a = m.malloc(64);
        unsafe { m.free(a) };
        unsafe { m.free(a) };
        assert_ne!(r.errors() & errors::INVALID_FREE, 0);
        let r = region(1 << 20);
        let m = r.typed::<BulkAlloc>();
        let big = m.malloc(5000);
        unsafe { m.free(big.wrapping_add(16)) };
        assert_ne!(r.errors() & errors::INVALID_FREE, 0);
        let mut local = 0u64;
        let r = region(1 << 20);
        unsafe { r.typed::<BulkAlloc>().free(&mut local as *mut u64 as *mut u8) };
        assert_ne!(r.errors() & errors::INVALID_FREE, 0);
    }

    #[test]
    fn storm_with_reuse() {
        let r = region(32 << 20);
        let report = r.storm(StormConfig { threads: 16, per_thread: 200, sizes: (1, 3000), rounds: 6 });
        assert_eq!(report.failed, 0);
        assert_eq!(r.errors(), 0);
    }

    #[test]
    fn concurrent_large_allocations_are_disjoint() {
        let r = region(4 << 20);
        let m = r.typed::<BulkAlloc>();
        run_grid(8, |thread| {
            let mark = thread as u8 + 1;
            for _ in 0..200 {
                let p = m.malloc(8192);
                if !p.is_null() {
                    // SAFETY: 8192 bytes are ours until freed.
                    unsafe { core::ptr::write_bytes(p, mark, 8192) };
                    // SAFETY: as above.
                    assert!(unsafe { core::slice::from_raw_parts(p, 8192) }.iter().all(|&b| b == mark));
                    unsafe { m.free(p) };
                }
            }
        });
        assert_eq!(r.errors(), 0);
    }
}
