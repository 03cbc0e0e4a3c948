//! Halloc (Adinetz & Pleiter, GTC 2014; the survey `002_...` section 2.7 and Figure 5, the
//! DynaSOAr paper `003_...` section 6): a slab allocator whose slabs keep a bitmap with a bit
//! per chunk, searched with a hash function, and whose counters are updated with
//! warp-aggregated atomics.
//!
//! # The allocator
//!
//! The region is cut into equal **slabs** (4 MiB by default, as the original; see below for
//! small regions). A slab is free until a size class takes it; its blocks then all have that
//! class's size. Requests of 16 bytes to 3 KiB are rounded up to one of 15 size classes (16,
//! 32, 48, 64, 96, ..., 2048, 3072: `2 * 2^k` and `3 * 2^k` bytes), larger ones go to CUDA's
//! allocator ([`SystemMalloc`]), as in the original.
//!
//! A slab's **bitmap** has one bit per *chunk*. A size class belongs to a chunk family (chunks
//! of 16, 48, 256 or 384 bytes) and its blocks are 1, 2, 4 or 8 chunks, aligned to their own
//! chunk count. A slab's *state word* counts the chunks in use (or reserved) and says which size
//! class it serves and whether it is a head.
//!
//! Each size class has one **head** slab that serves its requests. `malloc` reserves chunks in
//! the head's state word with one atomic per warp (the lanes asking for the same slab add up
//! their chunks; the leader adds the sum and broadcasts the old value, from which each lane
//! knows its own place), then looks for free blocks with the **hash**: it starts at
//! `thread * 13 + ticket` (the ticket being the lane's place in the counter) and steps through
//! the slab's blocks by a stride coprime to their number, so the sequence visits every block.
//! At each position it sets the block's bits with one `fetch_or`; if that finds them taken, the
//! word it read back shows which blocks of that word are free, and it tries one of those before
//! moving on. Once a head's fill passes 83.5%, or it cannot serve a request, the head is
//! **replaced**: one lane per warp and size class asks, and one thread at a time per size class
//! (a try-lock) picks the next head, searching in this order:
//!
//! - **roomy** slabs of the class (at most 60% used);
//! - **sparse** slabs of the chunk family (at most 2% used): they switch to this size class
//!   while their few live blocks stay where they are;
//! - **free** slabs (any family: the bitmap is empty);
//! - **busy** slabs of the class (over 60% used), only when a request could not be served.
//!
//! The old head goes to the set its fill puts it in. `free` finds the slab from the pointer
//! (slabs are contiguous and a power of two in size), the chunk from the slab's family, and the
//! block's length from a second bitmap of *continuation* bits; it clears the block's bits (a
//! clear bit is a double free: [`errors::INVALID_FREE`]), and decrements the state word with one
//! atomic per warp and slab. Crossing a threshold moves the slab into the roomy or sparse set;
//! reaching zero makes it free for any size class. Pointers outside the region are CUDA's and
//! are handed back to it.
//!
//! # Departures from the paper and the original code
//!
//! - **Independent thread scheduling.** The original is warp-synchronous: `__ballot` and
//!   `__shfl` without masks, and loops such as `while(__any(want_alloc))` that assume the warp
//!   runs in lockstep. Here every collective takes the group converged at that point
//!   ([`WarpGroup::current`]) and passes its mask, and every lane of the mask executes the same
//!   sequence of collectives (the loops' conditions come from ballots over the mask). The
//!   original's head lock makes the waiters spin on plain (`volatile`) loads of the head until
//!   it changes; here only the thread holding the lock searches, the others go on allocating in
//!   the old head (it still has 16.5% room) and sleep ([`Backoff`]) only when it is full.
//! - **Slabs scaled to the region.** The slab size is the largest power of two up to 4 MiB (or
//!   the region's parameter, 8 KiB..=8 MiB) that leaves at least 32 slabs, and 8 KiB in regions
//!   too small for that (a 256 KiB region has 31 slabs of 8 KiB). Slabs are carved out of the
//!   region instead of allocated one by one with `cudaMalloc`, so the slab of a pointer is a
//!   shift, not a lookup in the original's address grid.
//! - **16-byte alignment.** The original's 24-byte class (chunk family 24, 48, 96, 192) could
//!   only be 8-byte aligned; requests of 17-24 bytes get 32-byte blocks here, and the family's
//!   chunk is 48 bytes (blocks of 48, 96, 192).
//! - **Block lengths in a bitmap.** The original keeps a byte per chunk with the block's chunk
//!   count; a continuation bit per chunk does the same job in an eighth of the memory.
//! - **Hash ticket.** The original draws the hash's start from a separate array of counters
//!   (one more atomic per warp); the reservation in the slab's state word already gives each
//!   lane a distinct ticket. Probing reads back the whole bitmap word, as said above.
//! - **Counters and slab sets.** One 64-bit state word per slab holds the count, the size class
//!   and the head flag (the original packs them in 32 bits and keeps the chunk size beside).
//!   Slab sets are hints; whoever takes a slab from one checks the state word with a CAS before
//!   using it. A **busy** set per size class makes busy slabs reachable when nothing else is
//!   left; a generation count lets threads give up at once when a head search found nothing and
//!   no slab was released since (out of memory is reported, never waited out). The original's
//!   second, cached head per class is not kept.
//! - **Memory ordering.** Bits are only set by a `fetch_or` that found them clear and only
//!   cleared by the owner of the block, so bitmaps need no fences; `free` fences before giving
//!   the block's bits back (the caller's writes and the continuation bits go first) and `malloc`
//!   after taking them, as `__threadfence()` would in CUDA.
//!
//! # Limits
//!
//! Blocks are at most 3 KiB (larger requests use CUDA's heap, outside the region); internal
//! fragmentation is up to a third (a request of 1025 bytes takes 1536). Slabs given to a size
//! class return to the others only when their last block is freed (or, within a chunk family,
//! when they fall to 2%). Like every hashing allocator it cannot fill the pool to the last
//! block: heads are replaced at 83.5%, and busy slabs are used only when nothing else is left.

mod geometry;
#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests;

use super::system::SystemMalloc;
use super::{Caps, DeviceMalloc, FreeSupport, MallocKind, Region, errors};
use dynasoar_device::arch::{self, Backoff, WarpGroup, atomic::Atomic32, atomic::Atomic64, rotate_find};
use geometry::{
    EXHAUSTED_OFFSET, FREE_SET, GENERATION_OFFSET, GEOMETRY_OFFSET, Geometry, HEADS_OFFSET, LOCKS_OFFSET,
    MAX_BLOCK_BYTES, busy_set, chunk_at, chunk_bytes, chunks_per_block, family, roomy_set, size_class,
    sparse_set,
};

/// The hash's multiplier of the thread index (the original's `THREAD_FREQ`).
const THREAD_FREQ: u32 = 13;
/// Hash positions a request probes in a slab before it gives the slab up.
const MAX_PROBES: u32 = 64;
/// `fetch_or`s at one position (the first at the hashed block, then at free blocks of the word
/// read back).
const TRIES_PER_WORD: u32 = 4;
/// Rounds of `malloc` after which it gives up even though memory may be left (a guard against
/// livelock: a round only fails when another thread got in first or replaces the head).
const MAX_ROUNDS: u32 = 4096;
/// Attempts at a state word's CAS while other threads keep changing its count.
const ADOPT_TRIES: u32 = 32;

/// A slab's state word: chunks in use or reserved (bits 0-31), size class + 1 (bits 32-39; 0:
/// the slab is free) and the head flag (bit 40).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct SlabState(u64);

impl SlabState {
    const COUNT_MASK: u64 = 0xFFFF_FFFF;
    const CLASS_SHIFT: u32 = 32;
    const HEAD: u64 = 1 << 40;

    /// A slab of `class`, not a head, with nothing in use (what a slab must be to become free).
    const fn idle(class: u32) -> u64 {
        ((class as u64 + 1) & 0xFF) << Self::CLASS_SHIFT
    }

    fn count(self) -> u32 {
        (self.0 & Self::COUNT_MASK) as u32
    }

    fn class(self) -> Option<u32> {
        match ((self.0 >> Self::CLASS_SHIFT) & 0xFF) as u32 {
            0 => None,
            c => Some(c - 1),
        }
    }

    fn is_head(self) -> bool {
        self.0 & Self::HEAD != 0
    }

    /// This state as a head of `class`, keeping the count.
    fn as_head_of(self, class: u32) -> u64 {
        (self.0 & Self::COUNT_MASK) | Self::idle(class) | Self::HEAD
    }
}

/// What became of a request to replace a head (broadcast to the lanes that asked).
mod outcome {
    /// A new head is in place.
    pub const REPLACED: u32 = 1;
    /// The head had changed already, or no longer needed replacing.
    pub const STALE: u32 = 2;
    /// Another thread is replacing it.
    pub const BUSY: u32 = 3;
    /// No slab could take over: out of memory for this class.
    pub const EXHAUSTED: u32 = 4;
}

/// A lane's wish to replace its class's head, as a warp key: the head it saw (slab + 1, 0 for
/// none; below 2^27) and the class, with bit 31 set (0: no wish).
#[inline(always)]
fn replace_key(class: u32, seen: u32) -> u32 {
    (1 << 31) | (seen << 4) | class
}

/// Bits of bitmap word `word` that lie past the first `limit` chunks (never handed out).
#[inline(always)]
fn outside_mask(word: u32, limit: u32) -> u64 {
    let first = word * 64;
    if first + 64 <= limit {
        0
    } else if first >= limit {
        u64::MAX
    } else {
        u64::MAX << (limit - first)
    }
}

/// Start bits of the aligned groups of `chunks` bits that are all clear in `word`.
#[inline(always)]
fn free_starts(word: u64, chunks: u32) -> u64 {
    let mut used = word;
    let starts = match chunks {
        1 => u64::MAX,
        2 => {
            used |= used >> 1;
            0x5555_5555_5555_5555
        }
        4 => {
            used |= used >> 1;
            used |= used >> 2;
            0x1111_1111_1111_1111
        }
        _ => {
            used |= used >> 1;
            used |= used >> 2;
            used |= used >> 4;
            0x0101_0101_0101_0101
        }
    };
    !used & starts
}

/// Halloc over a region.
#[derive(Clone, Copy, Debug)]
pub struct Halloc {
    region: Region,
}

impl Halloc {
    #[inline(always)]
    fn geometry(&self) -> &Geometry {
        // SAFETY: initialisation wrote the geometry at the body's start (256-byte aligned) and
        // nothing writes it afterwards.
        unsafe { &*(self.region.body().add(GEOMETRY_OFFSET as usize) as *const Geometry) }
    }

    #[inline(always)]
    fn control(&self, base: u64, class: u32) -> &Atomic32 {
        // SAFETY: the control words lie in the body's first kilobyte, 16 per group, only
        // accessed atomically.
        unsafe { self.region.atomic32(base + 4 * (class & 15) as u64) }
    }

    /// The head of `class`: its slab + 1, 0 for none.
    #[inline(always)]
    fn head(&self, class: u32) -> &Atomic32 {
        self.control(HEADS_OFFSET, class)
    }

    #[inline(always)]
    fn lock(&self, class: u32) -> &Atomic32 {
        self.control(LOCKS_OFFSET, class)
    }

    #[inline(always)]
    fn exhausted(&self, class: u32) -> &Atomic32 {
        self.control(EXHAUSTED_OFFSET, class)
    }

    #[inline(always)]
    fn generation(&self) -> &Atomic32 {
        self.control(GENERATION_OFFSET, 0)
    }

    #[inline(always)]
    fn state(&self, g: &Geometry, slab: u32) -> &Atomic64 {
        // SAFETY: `slab < slab_count` (callers), so the word lies in the state array.
        unsafe { self.region.atomic64(g.states + 8 * slab as u64) }
    }

    #[inline(always)]
    fn set_word(&self, g: &Geometry, set: u32, word: u32) -> &Atomic64 {
        // SAFETY: `set < SET_COUNT`, `word < set_words` (callers).
        unsafe { self.region.atomic64(g.sets + 8 * (set as u64 * g.set_words as u64 + word as u64)) }
    }

    #[inline(always)]
    fn alloc_word(&self, g: &Geometry, slab: u32, word: u32) -> &Atomic64 {
        // SAFETY: `slab < slab_count`, `word < bitmap_words` (callers).
        unsafe {
            self.region.atomic64(g.alloc_bits + 8 * (slab as u64 * g.bitmap_words as u64 + word as u64))
        }
    }

    #[inline(always)]
    fn cont_word(&self, g: &Geometry, slab: u32, word: u32) -> &Atomic64 {
        // SAFETY: as for `alloc_word`.
        unsafe { self.region.atomic64(g.cont_bits + 8 * (slab as u64 * g.bitmap_words as u64 + word as u64)) }
    }

    #[inline(always)]
    fn slab_start(&self, g: &Geometry, slab: u32) -> *mut u8 {
        self.region.body().wrapping_add((g.pool + ((slab as u64) << g.slab_shift)) as usize)
    }

    /// Whether a head search found nothing and no slab was released since.
    #[inline(always)]
    fn is_exhausted(&self, class: u32) -> bool {
        let mark = self.exhausted(class).load();
        mark != 0 && mark == self.generation().load().wrapping_add(1)
    }

    // ---- malloc ----

    fn malloc_small(&self, size: u32) -> *mut u8 {
        let g = self.geometry();
        let class = size_class(size);
        let chunks = chunks_per_block(class);
        let mut backoff = Backoff::new();
        for _ in 0..MAX_ROUNDS {
            let head = self.head(class).load();
            let before = SlabState(self.reserve(g, head, chunks));
            // What this lane wants done with the head (the head it saw, and whether it could
            // not be served there), and whether it should simply look again.
            let mut replace: Option<bool> = None;
            let mut ptr = core::ptr::null_mut();
            if head == 0 {
                replace = Some(true);
            } else {
                let slab = head - 1;
                let fam = g.family(family(class));
                let ours = before.class().map(family) == Some(family(class));
                let in_use = before.count();
                if !ours || in_use + chunks > fam.chunks {
                    // The slab changed hands since we read the head, or is full.
                    self.release(g, slab, chunks);
                    if ours && before.is_head() {
                        replace = Some(true);
                    }
                } else {
                    if before.is_head() && in_use <= fam.replace_above && in_use + chunks > fam.replace_above
                    {
                        replace = Some(false);
                    }
                    let ticket = in_use >> chunks.trailing_zeros();
                    match self.take_block(g, slab, class, ticket) {
                        Some(p) => ptr = p,
                        None => {
                            self.release(g, slab, chunks);
                            if before.is_head() {
                                replace = Some(true);
                            }
                        }
                    }
                }
            }
            let forced = replace == Some(true);
            let key = match replace {
                Some(_) => replace_key(class, head),
                None => 0,
            };
            let outcome = self.replace_heads(g, key, forced);
            if !ptr.is_null() {
                return ptr;
            }
            match outcome {
                outcome::EXHAUSTED if forced => return core::ptr::null_mut(),
                outcome::BUSY if forced => {
                    if self.is_exhausted(class) {
                        return core::ptr::null_mut();
                    }
                    backoff.snooze();
                }
                _ => backoff.retry(),
            }
        }
        core::ptr::null_mut()
    }

    /// Reserve `chunks` chunks in slab `head - 1` (nothing when `head == 0`), aggregated over the
    /// lanes converged here that reserve in the same slab: the leader adds their sum with one
    /// atomic. Returns the state word as this lane's reservation found it (the count includes
    /// the chunks of the lanes ranked before it).
    #[inline(always)]
    fn reserve(&self, g: &Geometry, head: u32, chunks: u32) -> u64 {
        let group = WarpGroup::current();
        let key = if head == 0 { 0 } else { (head << 4) | chunks };
        let mut pending = key != 0;
        let mut before = 0u64;
        loop {
            let wanting = arch::ballot(group.mask, pending);
            if wanting == 0 {
                return before;
            }
            let leader = wanting.trailing_zeros();
            let leader_key = arch::shfl_u32(group.mask, key, leader);
            let mine = pending && key == leader_key;
            let peers = arch::ballot(group.mask, mine);
            let mut old = 0;
            if arch::lane_id() == leader {
                old = self.state(g, head - 1).fetch_add((chunks * peers.count_ones()) as u64);
            }
            let old = arch::shfl_u64(group.mask, old, leader);
            if mine {
                before = old + (chunks * (peers & arch::lanemask_lt()).count_ones()) as u64;
                pending = false;
            }
        }
    }

    /// Find and take a free block of `class` in `slab` (whose chunks this lane has reserved):
    /// its address, or `None` after [`MAX_PROBES`] positions of the hash.
    #[inline(always)]
    fn take_block(&self, g: &Geometry, slab: u32, class: u32, ticket: u32) -> Option<*mut u8> {
        let size = g.size(class);
        let blocks = size.blocks;
        let chunks = chunks_per_block(class);
        let limit = blocks * chunks;
        let group = (1u64 << chunks) - 1;
        let thread = arch::global_thread_id() as u32;
        let mut block = thread.wrapping_mul(THREAD_FREQ).wrapping_add(ticket).checked_rem(blocks)?;
        for _ in 0..blocks.min(MAX_PROBES) {
            let first = block * chunks;
            let word_index = first / 64;
            let word = self.alloc_word(g, slab, word_index);
            let outside = outside_mask(word_index, limit);
            let mut bit = first % 64;
            for _ in 0..TRIES_PER_WORD {
                let mask = group << bit;
                let old = word.fetch_or(mask);
                let taken = old & mask;
                if taken == 0 {
                    // Acquire: the previous owner's writes to the block and its continuation
                    // bits (released by the fence in `free`) come before ours.
                    arch::fence();
                    if chunks > 1 {
                        self.cont_word(g, slab, word_index).fetch_or((group >> 1) << (bit + 1));
                    }
                    let chunk = (word_index * 64 + bit) as usize;
                    return Some(
                        self.slab_start(g, slab).wrapping_add(chunk * chunk_bytes(family(class)) as usize),
                    );
                }
                if taken != mask {
                    // Give back the bits we set of a partly taken block.
                    word.fetch_and(!(mask & !old));
                }
                match rotate_find(free_starts(old | outside, chunks), bit) {
                    Some(free) => bit = free,
                    None => break,
                }
            }
            block += size.step;
            if block >= blocks {
                block -= blocks;
            }
        }
        None
    }

    /// Ask for the heads of the lanes with a `key` (see [`replace_key`]) to be replaced: one lane
    /// per distinct key tries, `forced` if any of its peers could not be served. Returns the
    /// outcome for this lane (0 if it asked nothing).
    #[inline(always)]
    fn replace_heads(&self, g: &Geometry, key: u32, forced: bool) -> u32 {
        let group = WarpGroup::current();
        let mut pending = key != 0;
        let mut result = 0;
        loop {
            let wanting = arch::ballot(group.mask, pending);
            if wanting == 0 {
                return result;
            }
            let leader = wanting.trailing_zeros();
            let leader_key = arch::shfl_u32(group.mask, key, leader);
            let mine = pending && key == leader_key;
            let any_forced = arch::ballot(group.mask, mine && forced) != 0;
            let mut outcome = 0;
            if arch::lane_id() == leader {
                outcome = self.try_replace(g, key & 15, (key >> 4) & ((1 << 27) - 1), any_forced);
            }
            let outcome = arch::shfl_u32(group.mask, outcome, leader);
            if mine {
                result = outcome;
                pending = false;
            }
        }
    }

    /// Replace the head of `class` if it is still `seen` (slab + 1) and, unless `forced`, past
    /// its fill threshold. One thread at a time per class; the others are told [`outcome::BUSY`]
    /// and never wait here.
    fn try_replace(&self, g: &Geometry, class: u32, seen: u32, forced: bool) -> u32 {
        let lock = self.lock(class);
        if lock.compare_exchange(0, 1).is_err() {
            return outcome::BUSY;
        }
        // Acquire: what the previous holder did comes before our reads.
        arch::fence();
        let current = self.head(class).load();
        let fam = g.family(family(class));
        let result = if current != seen
            || (!forced
                && current != 0
                && SlabState(self.state(g, current - 1).load()).count() <= fam.replace_above)
        {
            outcome::STALE
        } else {
            let generation = self.generation().load();
            // Acquire: slabs put into sets before the generation we read are visible below.
            arch::fence();
            match self.find_slab(g, class, forced) {
                Some(slab) => {
                    self.head(class).store(slab + 1);
                    arch::fence();
                    if current != 0 {
                        self.detach(g, current - 1);
                    }
                    outcome::REPLACED
                }
                None if forced => {
                    // 0 means "never": a generation that wrapped around is not marked.
                    self.exhausted(class).store(generation.wrapping_add(1));
                    outcome::EXHAUSTED
                }
                None => outcome::STALE,
            }
        };
        // Release: the new head and the sets are visible to the next holder.
        arch::fence();
        lock.store(0);
        result
    }

    /// A slab to become the head of `class`, already marked as such: roomy slabs of the class,
    /// then sparse slabs of its family (switching their class), then free slabs, then (if
    /// `with_busy`) busy slabs of the class that still have room for a block.
    fn find_slab(&self, g: &Geometry, class: u32, with_busy: bool) -> Option<u32> {
        let fam_index = family(class);
        let fam = *g.family(fam_index);
        let chunks = chunks_per_block(class);
        let roomy = |s: SlabState| s.class() == Some(class) && !s.is_head() && s.count() <= fam.replace_above;
        if let Some(slab) = self.take_slab(g, roomy_set(class), class, roomy) {
            return Some(slab);
        }
        let sparse = |s: SlabState| {
            s.class().map(family) == Some(fam_index) && !s.is_head() && s.count() <= fam.roomy_max
        };
        if let Some(slab) = self.take_slab(g, sparse_set(fam_index), class, sparse) {
            return Some(slab);
        }
        let free = |s: SlabState| s.class().is_none() && !s.is_head();
        if let Some(slab) = self.take_slab(g, FREE_SET, class, free) {
            return Some(slab);
        }
        if !with_busy {
            return None;
        }
        let busy =
            |s: SlabState| s.class() == Some(class) && !s.is_head() && s.count() + chunks <= fam.chunks;
        self.take_slab(g, busy_set(class), class, busy)
    }

    /// Take a slab out of `set` that `accepts` (its state as read) and make it the head of
    /// `class`. Slabs that no longer belong in the set are dropped from it.
    fn take_slab(
        &self,
        g: &Geometry,
        set: u32,
        class: u32,
        accepts: impl Fn(SlabState) -> bool,
    ) -> Option<u32> {
        for word_index in 0..g.set_words {
            let word = self.set_word(g, set, word_index);
            let mut backoff = Backoff::new();
            for _ in 0..64 {
                let bits = word.load();
                if bits == 0 {
                    break;
                }
                let flag = 1u64 << bits.trailing_zeros();
                if word.fetch_and(!flag) & flag == 0 {
                    backoff.retry();
                    continue;
                }
                // Acquire: pairs with the fence before the slab was put into the set.
                arch::fence();
                let slab = word_index * 64 + bits.trailing_zeros();
                if slab >= g.slab_count {
                    continue;
                }
                match self.adopt(g, slab, class, &accepts) {
                    Some(true) => return Some(slab),
                    Some(false) => {}
                    None => {
                        // Too contended to change now: leave it for a later search.
                        self.insert(g, set, slab);
                        break;
                    }
                }
            }
        }
        None
    }

    /// Make `slab` the head of `class` if `accepts` its state. `Some(false)` if not, `None` if
    /// its count kept changing under us.
    fn adopt(
        &self,
        g: &Geometry,
        slab: u32,
        class: u32,
        accepts: &impl Fn(SlabState) -> bool,
    ) -> Option<bool> {
        let state = self.state(g, slab);
        let mut current = SlabState(state.load());
        let mut backoff = Backoff::new();
        for _ in 0..ADOPT_TRIES {
            if !accepts(current) {
                return Some(false);
            }
            // Keeps the count: requests that read a stale head may hold reservations here for
            // a moment, and give them back whatever the slab has become.
            match state.compare_exchange(current.0, current.as_head_of(class)) {
                Ok(_) => return Some(true),
                Err(actual) => current = SlabState(actual),
            }
            backoff.retry();
        }
        None
    }

    /// Clear the head flag of a replaced head and put it where its fill says.
    fn detach(&self, g: &Geometry, slab: u32) {
        let old = SlabState(self.state(g, slab).fetch_and(!SlabState::HEAD));
        let Some(class) = old.class() else { return };
        let fam = g.family(family(class));
        match old.count() {
            0 => self.try_mark_free(g, slab, class),
            n if n <= fam.sparse_max => self.insert(g, sparse_set(family(class)), slab),
            n if n <= fam.roomy_max => self.insert(g, roomy_set(class), slab),
            _ => self.insert(g, busy_set(class), slab),
        }
    }

    // ---- sets and counts ----

    #[inline(always)]
    fn insert(&self, g: &Geometry, set: u32, slab: u32) {
        self.set_word(g, set, slab / 64).fetch_or(1 << (slab % 64));
        // Release: a head search that reads the new generation sees the slab in the set.
        arch::fence();
        self.generation().fetch_add(1);
    }

    #[inline(always)]
    fn remove(&self, g: &Geometry, set: u32, slab: u32) {
        self.set_word(g, set, slab / 64).fetch_and(!(1 << (slab % 64)));
    }

    /// Give back `chunks` chunks of `slab` (a failed reservation, or a freed block).
    #[inline(always)]
    fn release(&self, g: &Geometry, slab: u32, chunks: u32) {
        let old = self.state(g, slab).fetch_sub(chunks as u64);
        self.reclassify(g, slab, SlabState(old), chunks);
    }

    /// [`release`](Self::release) aggregated over the converged lanes that give back the same
    /// number of chunks of the same slab.
    #[inline(always)]
    fn release_aggregated(&self, g: &Geometry, slab: u32, chunks: u32) {
        let group = WarpGroup::current();
        let key = ((slab + 1) << 4) | chunks;
        let mut pending = true;
        loop {
            let wanting = arch::ballot(group.mask, pending);
            if wanting == 0 {
                return;
            }
            let leader = wanting.trailing_zeros();
            let leader_key = arch::shfl_u32(group.mask, key, leader);
            let mine = pending && key == leader_key;
            let peers = arch::ballot(group.mask, mine);
            if arch::lane_id() == leader {
                self.release(g, slab, chunks * peers.count_ones());
            }
            if mine {
                pending = false;
            }
        }
    }

    /// Move a slab whose count fell by `removed` from `old` into the set it now belongs to.
    /// Heads stay where they are (their replacement files them), and a free slab had only a
    /// stale reservation rolled back.
    fn reclassify(&self, g: &Geometry, slab: u32, old: SlabState, removed: u32) {
        let Some(class) = old.class() else { return };
        if old.is_head() {
            return;
        }
        let fam_index = family(class);
        let fam = g.family(fam_index);
        let before = old.count();
        let Some(after) = before.checked_sub(removed) else { return };
        if after == 0 {
            self.try_mark_free(g, slab, class);
        } else if after <= fam.sparse_max && before > fam.sparse_max {
            self.insert(g, sparse_set(fam_index), slab);
            self.remove(g, roomy_set(class), slab);
        } else if after <= fam.roomy_max && before > fam.roomy_max {
            self.insert(g, roomy_set(class), slab);
            self.remove(g, busy_set(class), slab);
        }
    }

    /// Make an empty, non-head slab of `class` free for any class (unless a reservation or a
    /// head search got to it first: they move it on themselves).
    fn try_mark_free(&self, g: &Geometry, slab: u32, class: u32) {
        if self.state(g, slab).compare_exchange(SlabState::idle(class), 0).is_ok() {
            // Its hints in the other sets are stale now (takers check, but skip the work).
            self.remove(g, roomy_set(class), slab);
            self.remove(g, busy_set(class), slab);
            self.remove(g, sparse_set(family(class)), slab);
            // Release: every block's bits were cleared before the count reached zero.
            arch::fence();
            self.insert(g, FREE_SET, slab);
        }
    }

    // ---- free ----

    fn free_small(&self, ptr: *mut u8) {
        let g = self.geometry();
        let addr = ptr as u64;
        let pool = self.region.body_addr() + g.pool;
        let Some(offset) = addr.checked_sub(pool) else {
            return self.region.raise(errors::INVALID_FREE);
        };
        let slab = offset >> g.slab_shift;
        if slab >= g.slab_count as u64 {
            return self.region.raise(errors::INVALID_FREE);
        }
        let slab = slab as u32;
        // While the block is live, its slab cannot become free, so its family stays the same.
        let Some(class) = SlabState(self.state(g, slab).load()).class() else {
            return self.region.raise(errors::INVALID_FREE);
        };
        let fam = family(class);
        let within = offset & (g.slab_bytes() - 1);
        let Some(chunk) = chunk_at(fam, within).filter(|&c| c < g.family(fam).chunks as u64) else {
            return self.region.raise(errors::INVALID_FREE);
        };
        let (word_index, bit) = ((chunk / 64) as u32, (chunk % 64) as u32);
        let alloc = self.alloc_word(g, slab, word_index);
        let cont = self.cont_word(g, slab, word_index);
        let cont_bits = cont.load();
        let is_start = cont_bits & (1 << bit) == 0;
        if !is_start || alloc.load() & (1 << bit) == 0 {
            // Inside a block, or not allocated (freed twice).
            return self.region.raise(errors::INVALID_FREE);
        }
        let run = if bit == 63 { 0 } else { (cont_bits >> (bit + 1)).trailing_ones() };
        let chunks = run + 1;
        if !matches!(chunks, 1 | 2 | 4 | 8) || bit & (chunks - 1) != 0 {
            return self.region.raise(errors::INVALID_FREE);
        }
        let group = (1u64 << chunks) - 1;
        if chunks > 1 {
            cont.fetch_and(!((group >> 1) << (bit + 1)));
        }
        // Release: the caller's writes to the block and our continuation bits come before the
        // block can be taken again.
        arch::fence();
        let mask = group << bit;
        let cleared = (alloc.fetch_and(!mask) & mask).count_ones();
        if cleared != chunks {
            // Another thread freed (part of) it at the same time.
            self.region.raise(errors::INVALID_FREE);
        }
        if cleared != 0 {
            self.release_aggregated(g, slab, cleared);
        }
    }
}

// SAFETY: a block is handed out only by the `fetch_or` that found all its chunk bits clear, in
// a slab whose chunk family is pinned by the caller's reservation in the slab's state word (a
// slab changes family only while free, i.e. with no reservation); its address lies inside that
// slab, inside the region, 16-byte aligned (slabs are 256-byte aligned, chunks multiples of 16
// bytes). Its bits stay set until `free`. Relayed requests are CUDA's (or the C library's).
unsafe impl DeviceMalloc for Halloc {
    const KIND: MallocKind = MallocKind::Halloc;
    const CAPS: Caps = Caps {
        max_size: u32::MAX,
        align: 16,
        free: FreeSupport::Reuses,
        min_region_bytes: 256 << 10,
        relays_above: MAX_BLOCK_BYTES,
    };

    unsafe fn init(region: Region, _phase: u32) {
        let g = Geometry::compute(region.body_bytes(), region.param());
        if arch::global_thread_id() == 0 {
            // SAFETY: the body starts 256-byte aligned and the geometry fits before the control
            // words; nothing else runs on the region during initialisation.
            unsafe { (region.body().add(GEOMETRY_OFFSET as usize) as *mut Geometry).write(g) };
        }
        // SAFETY: `attach` on the region being initialised.
        let halloc = unsafe { Self::attach(region) };
        // Every slab starts free; the rest of the body is zero, which means "nothing".
        let mut word = arch::global_thread_id();
        while word < g.set_words as usize {
            let first = word as u64 * 64;
            let slabs = (g.slab_count as u64 - first).min(64);
            let bits = if slabs == 64 { u64::MAX } else { (1u64 << slabs) - 1 };
            halloc.set_word(&g, FREE_SET, word as u32).store(bits);
            word += arch::global_thread_count();
        }
    }

    #[inline(always)]
    unsafe fn attach(region: Region) -> Self {
        Halloc { region }
    }

    #[inline(always)]
    fn malloc(&self, size: u32) -> *mut u8 {
        if size > MAX_BLOCK_BYTES {
            return SystemMalloc.malloc(size);
        }
        self.malloc_small(size)
    }

    #[inline(always)]
    unsafe fn free(&self, ptr: *mut u8) {
        if self.region.contains(ptr) {
            self.free_small(ptr)
        } else {
            // SAFETY: outside the region, so relayed to CUDA's allocator by `malloc`.
            unsafe { SystemMalloc.free(ptr) }
        }
    }
}
