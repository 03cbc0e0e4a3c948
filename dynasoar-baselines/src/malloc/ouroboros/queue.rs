//! A bounded multi-producer multi-consumer queue of `u32` values for independent thread
//! scheduling (Ouroboros' index queue, ICS 2020, section 3).
//!
//! Two semaphores guard the ring: `occupancy` counts reserved-but-not-yet-consumed entries and
//! never exceeds the capacity, so an enqueuer only ever waits for a dequeuer that already holds
//! the matching ticket; `available` counts entries that are fully written, so a dequeuer only
//! ever waits for an enqueuer that already holds its ticket. Tickets are 64-bit and never wrap.
//! Every wait backs off, so a waiter cannot starve the thread it waits for.
//!
//! Slots live in a fixed array ([`Storage::Static`]) or, for the virtualized queues, in
//! segments of [`Segments::slots`] slots (at most [`SEGMENT_SLOTS`]), one chunk from the chunk
//! pool each: ticket `t` belongs to segment `t / slots`. The first enqueuer of a segment maps a
//! zeroed chunk for it; the dequeuer that consumes the segment's last slot lets the chunk go
//! back to the pool.
//! - [`Storage::Array`] (Ouro-VA): a small per-queue array maps segment `s` through entry
//!   `s % length`. An entry names the *round* `s / length` it serves, free or mapped, so only
//!   segment `s` can map it, and only after segment `s - length` drained (a later segment
//!   never takes the entry ahead of an earlier one whose tickets are already out).
//! - [`Storage::Linked`] (Ouro-VL): segment chunks are linked from the head (oldest) to the
//!   tail; a per-queue tail word names the last chunk, and the enqueuer of the segment after it
//!   appends by a compare-exchange on that word (never on a chunk's link, which a thread that
//!   lost time might otherwise write after the chunk went back to the pool). Drained chunks
//!   are unlinked from the head (in order; the tail stays) and returned. Lookups walk from the
//!   head, and an enqueuer more than `window` segments past the head waits for it to drain.
//!
//! **Storage promise.** A queue maps at most as many segments as were promised to it
//! ([`Segments::reserved`], kept by the allocator: enough for every entry it can hold, `E`,
//! plus one). A mapper first takes one unit of that budget ([`Segments::mapped`]), waiting
//! if all are in use, and only then a chunk from the pool, so the pool's promises hold and
//! taking the chunk never waits for more than a chunk on its way back. Without the budget a
//! stalled dequeuer keeps its (old) segment mapped while later segments are mapped past it;
//! once the pool is exhausted an enqueuer then waits in the pool for a drain that needs
//! dequeuers which may never come (all of them are the same threads, blocked as enqueuers, or
//! the kernel only frees).
//!
//! Why the budget wait ends: let `U` be the tickets taken by enqueuers and not yet consumed;
//! each carries a distinct page (chunk), so `|U| <= E <= (reserved - 1) * slots`. Suppose the
//! mapper of segment `s` waits with all `reserved` units in use. A mapped segment whose tickets
//! are all taken by dequeuers drains without anyone new (those dequeuers are in progress and
//! their segment is mapped). If every mapped segment had a ticket not yet taken by a dequeuer,
//! all would lie at or after the front, and together with the (unmapped, so unconsumed)
//! tickets of `s` they would need more than `E` entries in `U`. So a segment drains and frees
//! a unit. The same count shows that the oldest linked chunk drains (linked storage needs
//! `reserved >= 2`, which `E >= 1` gives).
//!
//! The ring waits end too: the occupancy limit of `(length - 1) * slots` means that when an
//! enqueuer holds a ticket `length` segments past a segment, every ticket of that segment has
//! been taken by a dequeuer in progress.
//!
//! **Bounded waits.** Every wait gives up after [`WAIT_ROUNDS`] back-off rounds without
//! progress of the queue it waits on (several seconds on a GPU), raises
//! [`errors::OURO_WAIT_TIMEOUT`] with the bit of the wait ([`WaitSite`]) for the host, and
//! fails its operation: a hang becomes an error. Once one wait of a region gave up, the others
//! give up after far fewer rounds. A timed-out operation leaves its ticket unserved (a lost
//! entry, reported); it never writes into storage it does not own.

use super::CHUNK_BYTES;
use crate::malloc::{Region, errors};
use dynasoar_device::arch::{self, Backoff, atomic::Atomic32, atomic::Atomic64};

/// Test-only stalls at chosen points, to let the CPU backend's threads straggle the way GPU
/// threads do under independent thread scheduling. Enabled for one region at a time.
#[cfg(all(test, not(target_arch = "nvptx64")))]
pub(super) mod jitter {
    extern crate std;
    use crate::malloc::Region;
    use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
    use std::cell::Cell;

    /// Body address of the region whose queue operations stall (0: none).
    static REGION: AtomicU64 = AtomicU64::new(0);
    /// Stalls per 1,000 stall points, and the longest stall in microseconds.
    static PER_MILLE: AtomicU32 = AtomicU32::new(0);
    static MAX_US: AtomicU32 = AtomicU32::new(1);

    std::thread_local! {
        static STATE: Cell<u64> = const { Cell::new(0) };
    }

    /// Stall at `per_mille` of the stall points of `region`'s queues, for up to `max_us`
    /// microseconds; `None` turns stalls off.
    pub fn set(region: Option<&Region>, per_mille: u32, max_us: u32) {
        PER_MILLE.store(per_mille, Relaxed);
        MAX_US.store(max_us.max(1), Relaxed);
        REGION.store(region.map_or(0, |r| r.body_addr()), Relaxed);
    }

    pub fn point(region: &Region) {
        if REGION.load(Relaxed) != region.body_addr() {
            return;
        }
        let x = STATE.with(|s| {
            let mut x = s.get();
            if x == 0 {
                x = (s as *const Cell<u64> as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            }
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            s.set(x);
            x
        });
        if (x % 1000) < PER_MILLE.load(Relaxed) as u64 {
            let us = (x >> 20) % MAX_US.load(Relaxed) as u64;
            std::thread::sleep(std::time::Duration::from_micros(us));
        }
    }
}

#[cfg(not(all(test, not(target_arch = "nvptx64"))))]
mod jitter {
    use crate::malloc::Region;

    #[inline(always)]
    pub fn point(_region: &Region) {}
}

/// Back-off rounds a wait may go without progress before it gives up: with the back-off
/// capped at about 2 us per round on the GPU, about 4 s there (and 2^21 yields of the OS
/// thread on the CPU backend). The wait must also have lasted [`WAIT_MIN_CLOCKS`].
pub const WAIT_ROUNDS: u32 = 1 << 21;
/// [`arch::clock64`] ticks a wait must also have lasted without progress before it gives
/// up, in case back-off rounds are shorter than they ask for: 4 * 10^9 cycles of the GPU's
/// clock (about 2 s at 2 GHz), 4 s of the CPU backend's nanosecond clock.
pub const WAIT_MIN_CLOCKS: u64 = 4_000_000_000;
/// How often (in rounds) a waiter samples the progress of what it waits on: rarely, since
/// thousands of GPU threads may wait on the same few words that the awaited thread updates.
const PROGRESS_CHECK: u32 = 1 << 8;
/// How often a waiter checks whether another wait of the region gave up already; once one
/// did, the others give up at this check.
const GIVE_UP_CHECK: u32 = 1 << 12;

/// The waits of Ouroboros; each has its own bit in the error word (see
/// [`errors::ouro_wait_site`] and [`errors::OURO_WAIT_SITES`], in this order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum WaitSite {
    /// An enqueuer waits for the dequeuer of the previous round of its slot (static rings).
    SlotEmptied = 0,
    /// A dequeuer waits for the enqueuer of its ticket to write the entry.
    SlotWritten = 1,
    /// A queue operation waits for its segment to be mapped (or an older one to drain).
    SegmentMapped = 2,
    /// A mapper waits for a segment of its queue to drain (all promised storage in use).
    SegmentBudget = 3,
    /// A thread holding a promise waits for a physical chunk of the pool.
    PoolChunk = 4,
    /// A malloc waits for its page size's refiller or for a listed chunk.
    Refill = 5,
    /// A chunk holder waits for a freed page's bit.
    PageBit = 6,
}

const _: () = assert!(WaitSite::PageBit as usize + 1 == errors::OURO_WAIT_SITES.len());

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod wait_limit {
    extern crate std;
    std::thread_local! {
        /// Rounds after which waits of this thread give up, with no minimum time (tests).
        pub static ROUNDS: core::cell::Cell<Option<u32>> = const { core::cell::Cell::new(None) };
    }
}

/// Runs `f` with waits on this thread giving up after `rounds` rounds, however short (tests).
#[cfg(all(test, not(target_arch = "nvptx64")))]
pub(super) fn with_wait_rounds<R>(rounds: u32, f: impl FnOnce() -> R) -> R {
    let before = wait_limit::ROUNDS.with(|r| r.replace(Some(rounds)));
    let result = f();
    wait_limit::ROUNDS.with(|r| r.set(before));
    result
}

/// The rounds a wait may last, and whether it must also last [`WAIT_MIN_CLOCKS`].
#[inline(always)]
fn wait_limit() -> (u32, bool) {
    #[cfg(all(test, not(target_arch = "nvptx64")))]
    if let Some(rounds) = wait_limit::ROUNDS.with(|r| r.get()) {
        return (rounds, false);
    }
    (WAIT_ROUNDS, true)
}

/// A bounded wait: back-off rounds (and clock ticks), counted since the awaited state last
/// made progress.
pub struct Wait {
    backoff: Backoff,
    rounds: u32,
    progress: u64,
    since: u64,
    site: WaitSite,
}

impl Wait {
    #[inline(always)]
    pub fn new(site: WaitSite) -> Self {
        Wait { backoff: Backoff::new(), rounds: 0, progress: 0, since: 0, site }
    }

    /// Waits one round. `progress` gives a snapshot of what the awaited threads advance (0 if
    /// nothing); it is sampled every [`PROGRESS_CHECK`] rounds, and a change restarts the
    /// count. False once the wait gives up, after raising [`errors::OURO_WAIT_TIMEOUT`] with
    /// this wait's bit.
    #[inline(always)]
    pub fn snooze(&mut self, region: &Region, progress: impl FnOnce() -> u64) -> bool {
        if self.rounds.is_multiple_of(PROGRESS_CHECK) {
            let now = progress();
            if self.rounds == 0 || now != self.progress {
                self.progress = now;
                self.rounds = 0;
                self.since = arch::clock64();
            }
        }
        self.rounds = self.rounds.saturating_add(1);
        let (limit, timed) = wait_limit();
        let give_up = (self.rounds >= limit
            && (!timed || arch::clock64().wrapping_sub(self.since) >= WAIT_MIN_CLOCKS))
            // Another wait of the region gave up already: the allocator is broken, fail fast.
            || (self.rounds.is_multiple_of(GIVE_UP_CHECK) && region.errors() & errors::OURO_WAIT_TIMEOUT != 0);
        if give_up {
            region.raise(errors::ouro_wait_site(self.site as u32));
            return false;
        }
        self.backoff.snooze();
        true
    }
}

/// Why an enqueue did not happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueError {
    /// The queue holds `capacity` entries (nothing was written, no ticket taken).
    Full,
    /// A wait gave up (raised in the region); the value was not queued.
    TimedOut,
}

/// Bytes of one queue's counters (each on its own 8-byte word).
pub const META_BYTES: u64 = 32;
const FRONT: u64 = 0;
const BACK: u64 = 8;
const AVAILABLE: u64 = 16;
const OCCUPANCY: u64 = 24;
/// Slot value meaning "empty"; stored values are `value + 1`.
const EMPTY: u32 = 0;

/// Slots of one segment of a virtualized queue: a chunk minus its header (the count of
/// consumed slots, and the link to the next segment's chunk for linked storage).
pub const SEGMENT_SLOTS: u64 = (CHUNK_BYTES - SEGMENT_HEADER) / 4;
const SEGMENT_HEADER: u64 = 16;

/// Linked storage: heads, tails and links hold segment + 1 in the high half and the chunk in
/// the low half; 0 is "none yet".
const UNMAPPED: u64 = 0;
const MAPPING: u64 = u64::MAX;
const CHUNK_MASK: u64 = 0xFFFF_FFFF;

/// Array storage: an entry holds the round it serves in the high half and, in the low half,
/// [`ENTRY_FREE`], [`ENTRY_MAPPING`] or the chunk + 1. The zeroed array has every entry free
/// for round 0.
const ENTRY_FREE: u64 = 0;
const ENTRY_MAPPING: u64 = 0xFFFF_FFFF;

/// Segment numbers are kept in 32 bits: a queue would need 2^32 segments (over 8 * 10^12
/// operations) before a tag repeats.
fn segment_tag(segment: u64) -> u64 {
    ((segment as u32).wrapping_add(1) as u64) << 32
}

/// How many segments `segment` lies after the one tagged in `value` (wrapping: a segment
/// before it gives a huge distance).
fn segments_after(value: u64, segment: u64) -> u32 {
    (segment as u32).wrapping_sub(((value >> 32) as u32).wrapping_sub(1))
}

/// Segment distances above this are segments before, not after.
const BEFORE: u32 = u32::MAX / 2;

/// Where a queue's slots live.
#[derive(Clone, Copy, Debug)]
pub enum Storage {
    /// `capacity` 4-byte slots at this body offset.
    Static { slots: u64 },
    /// `length` 8-byte entries at body offset `entries`, mapping segments to pool chunks.
    Array { entries: u64, length: u64, segments: Segments },
    /// Pool chunks linked from the head (8-byte word at body offset `head`) to the tail (the
    /// word at `tail`); at most `window` segments from the head on may be mapped.
    Linked { head: u64, tail: u64, window: u64, segments: Segments },
}

/// The segments of a virtualized queue: their size, where their chunks come from, and the
/// storage promised to the queue.
#[derive(Clone, Copy, Debug)]
pub struct Segments {
    pub pool: ChunkPool,
    /// Slots per segment, at most [`SEGMENT_SLOTS`] (fewer only in tests).
    pub slots: u64,
    /// Body offset of the count of segments mapped (chunks held as storage).
    pub mapped: u64,
    /// Body offset of the count of chunks promised to this queue's storage (only grows).
    pub reserved: u64,
}

/// A view of one queue in the region: counters at `meta`; at most `capacity` entries.
#[derive(Clone, Copy, Debug)]
pub struct IndexQueue {
    pub region: Region,
    pub meta: u64,
    pub capacity: u64,
    pub storage: Storage,
}

/// The chunk pool: chunks returned to it (a static queue) and the never-used ones (a bump
/// counter), with a commit counter so that what was promised (data chunks in use, queue-storage
/// reservations) never exceeds what exists.
#[derive(Clone, Copy, Debug)]
pub struct ChunkPool {
    pub region: Region,
    /// Body offset of the pool's first chunk.
    pub base: u64,
    pub chunks: u64,
    /// Body offsets of the bump counter and the commit counter.
    pub next: u64,
    pub committed: u64,
    /// Counters and slots of the queue of returned chunks.
    pub returned_meta: u64,
    pub returned_slots: u64,
}

impl ChunkPool {
    fn counter(&self, offset: u64) -> &Atomic64 {
        // SAFETY: the layout reserves these 8-aligned counters; only accessed atomically.
        unsafe { self.region.atomic64(offset) }
    }

    fn returned(&self) -> IndexQueue {
        IndexQueue {
            region: self.region,
            meta: self.returned_meta,
            capacity: self.chunks,
            storage: Storage::Static { slots: self.returned_slots },
        }
    }

    /// Promises one chunk; false when every chunk is promised.
    pub fn commit(&self) -> bool {
        IndexQueue::acquire(self.counter(self.committed), Some(self.chunks))
    }

    pub fn uncommit(&self) {
        self.counter(self.committed).fetch_sub(1);
    }

    /// A physical chunk for a promise made earlier. Chunks in use never exceed promises
    /// (queue storage included, see the module docs), so one is free or on its way back from
    /// a thread in progress. `None` if the wait gave up (raised in the region).
    pub fn take_committed(&self) -> Option<u64> {
        let mut wait = Wait::new(WaitSite::PoolChunk);
        loop {
            if let Some(chunk) = self.returned().dequeue() {
                return Some(chunk as u64);
            }
            let next = self.counter(self.next);
            if next.load() < self.chunks {
                let chunk = next.fetch_add(1);
                if chunk < self.chunks {
                    return Some(chunk);
                }
            }
            if !wait.snooze(&self.region, || self.returned().progress()) {
                return None;
            }
        }
    }

    /// Chunks returned and not taken again (a snapshot).
    #[cfg(test)]
    pub fn returned_count(&self) -> u64 {
        self.returned().available()
    }

    /// Chunks never taken (a snapshot).
    #[cfg(test)]
    pub fn untouched_count(&self) -> u64 {
        self.chunks.saturating_sub(self.counter(self.next).load())
    }

    /// Returns a physical chunk (its promise is the caller's to keep or release). False only
    /// if a wait gave up (raised in the region): the chunk is lost.
    pub fn give_back(&self, chunk: u64) -> bool {
        // Never full: the queue has a slot for every chunk.
        self.returned().enqueue(chunk as u32).is_ok()
    }

    fn chunk_offset(&self, chunk: u64) -> u64 {
        self.base + chunk * CHUNK_BYTES
    }
}

impl Segments {
    fn counter(&self, offset: u64) -> &Atomic64 {
        // SAFETY: the allocator's layout reserves these 8-aligned counters; only accessed
        // atomically.
        unsafe { self.pool.region.atomic64(offset) }
    }

    /// Segments mapped now (a snapshot).
    #[cfg(test)]
    pub fn mapped_count(&self) -> u64 {
        self.counter(self.mapped).load()
    }

    /// Takes one unit of the storage promised to `queue`, waiting while all are in use (see
    /// the module docs for why this ends). False if the wait gave up.
    fn acquire(&self, queue: &IndexQueue) -> bool {
        let mapped = self.counter(self.mapped);
        let reserved = self.counter(self.reserved);
        let mut wait = Wait::new(WaitSite::SegmentBudget);
        let mut backoff = Backoff::new();
        loop {
            let current = mapped.load();
            if current < reserved.load() {
                if mapped.compare_exchange(current, current + 1).is_ok() {
                    return true;
                }
                // Lost a race to another mapper (or a release): that thread made progress.
                backoff.retry();
                continue;
            }
            if !wait.snooze(&queue.region, || queue.progress()) {
                return false;
            }
        }
    }

    /// Gives a unit back, after its chunk went back to the pool.
    fn release(&self) {
        self.counter(self.mapped).fetch_sub(1);
    }
}

impl IndexQueue {
    #[inline(always)]
    fn counter(&self, field: u64) -> &Atomic64 {
        // SAFETY: the layout reserves `META_BYTES` at `meta` for these counters, 8-aligned,
        // and they are only accessed atomically.
        unsafe { self.region.atomic64(self.meta + field) }
    }

    /// A snapshot that changes whenever the queue makes progress (a ticket taken at either
    /// end); waits restart their count when it changes.
    #[inline(always)]
    pub fn progress(&self) -> u64 {
        self.counter(FRONT).load().wrapping_add(self.counter(BACK).load())
    }

    fn segments(&self) -> Option<&Segments> {
        match &self.storage {
            Storage::Static { .. } => None,
            Storage::Array { segments, .. } | Storage::Linked { segments, .. } => Some(segments),
        }
    }

    /// The slot of `ticket` and, for virtualized storage, the chunk holding it (mapped first
    /// if `map`). `None` if a wait gave up (raised in the region).
    #[inline(always)]
    fn slot(&self, ticket: u64, map: bool) -> Option<(&Atomic32, u64)> {
        let (segments, chunk) = match &self.storage {
            Storage::Static { slots } => {
                let index = ticket.checked_rem(self.capacity)?;
                // SAFETY: `index < capacity` and the layout reserves `capacity` 4-byte slots
                // at `slots`; slots are only accessed atomically.
                return Some((unsafe { self.region.atomic32(slots + 4 * index) }, 0));
            }
            Storage::Array { entries, length, segments } => {
                let segment = ticket.checked_div(segments.slots)?;
                (segments, self.array_segment(*entries, *length, segments, segment, map)?)
            }
            Storage::Linked { head, tail, window, segments } => {
                let segment = ticket.checked_div(segments.slots)?;
                (segments, self.linked_segment(*head, *tail, *window, segments, segment, map)?)
            }
        };
        let index = ticket % segments.slots;
        let offset = segments.pool.chunk_offset(chunk) + SEGMENT_HEADER + 4 * index;
        // SAFETY: the chunk holds this ticket's segment until all its slots are consumed,
        // including this one; `slots <= SEGMENT_SLOTS`, so slot offsets stay inside the chunk.
        Some((unsafe { self.region.atomic32(offset) }, chunk))
    }

    fn entry(&self, entries: u64, length: u64, segment: u64) -> Option<&Atomic64> {
        let index = segment.checked_rem(length)?;
        // SAFETY: `index < length`; the layout reserves `length` 8-aligned entries at
        // `entries`, only accessed atomically.
        Some(unsafe { self.region.atomic64(entries + 8 * index) })
    }

    /// A zeroed pool chunk for a new segment (its slots empty, its counters zero), within the
    /// storage promised to this queue. `None` if a wait gave up (nothing is held then).
    fn map_segment(&self, segments: &Segments) -> Option<u64> {
        if !segments.acquire(self) {
            return None;
        }
        jitter::point(&self.region);
        let Some(chunk) = segments.pool.take_committed() else {
            segments.release();
            return None;
        };
        let base = segments.pool.chunk_offset(chunk);
        let words = (SEGMENT_HEADER + 4 * segments.slots).div_ceil(8).min(CHUNK_BYTES / 8);
        let mut word = 0;
        while word < words {
            // SAFETY: the chunk is ours (taken from the pool); the word lies inside it.
            unsafe { self.region.atomic64(base + 8 * word) }.store(0);
            word += 1;
        }
        // The zeroed chunk precedes its publication.
        arch::fence();
        Some(chunk)
    }

    /// Virtualized array: the chunk mapped to `segment`. An enqueuer (`map`) maps it once its
    /// entry is free for the segment's round; a dequeuer waits for the enqueuer of its ticket,
    /// which exists, to map it. `None` if a wait gave up.
    fn array_segment(
        &self,
        entries: u64,
        length: u64,
        segments: &Segments,
        segment: u64,
        map: bool,
    ) -> Option<u64> {
        let entry = self.entry(entries, length, segment)?;
        let round = ((segment / length) as u32 as u64) << 32;
        let mut wait = Wait::new(WaitSite::SegmentMapped);
        loop {
            let current = entry.load();
            if current & !CHUNK_MASK == round {
                let low = current & CHUNK_MASK;
                if low != ENTRY_FREE && low != ENTRY_MAPPING {
                    arch::fence();
                    return Some(low - 1);
                }
                jitter::point(&self.region);
                if map && low == ENTRY_FREE && entry.compare_exchange(current, round | ENTRY_MAPPING).is_ok()
                {
                    let Some(chunk) = self.map_segment(segments) else {
                        // Let another enqueuer of the segment try.
                        entry.store(round | ENTRY_FREE);
                        return None;
                    };
                    entry.store(round | (chunk + 1));
                    return Some(chunk);
                }
            }
            // Being mapped, still holding the segment `length` earlier, or not yet freed by it
            // (see the module docs).
            if !wait.snooze(&self.region, || self.progress()) {
                return None;
            }
        }
    }

    fn link(&self, pool: &ChunkPool, chunk: u64) -> &Atomic64 {
        // SAFETY: word 1 of a segment chunk is its link; readers validate against the head
        // that the chunk was still in the list when they read it.
        unsafe { self.region.atomic64(pool.chunk_offset(chunk) + 8) }
    }

    fn drained(&self, pool: &ChunkPool, chunk: u64) -> &Atomic32 {
        // SAFETY: word 0 of a segment chunk counts its consumed slots.
        unsafe { self.region.atomic32(pool.chunk_offset(chunk)) }
    }

    /// Virtualized linked chunks: `segment`'s chunk. The tail's segment and its successor
    /// (which the enqueuer that wins the tail appends) are found through the tail word;
    /// earlier ones by a walk from the head. `None` if a wait gave up.
    fn linked_segment(
        &self,
        head_offset: u64,
        tail_offset: u64,
        window: u64,
        segments: &Segments,
        segment: u64,
        map: bool,
    ) -> Option<u64> {
        // SAFETY: the layout reserves these 8-aligned words; only atomic accesses.
        let (head, tail) = unsafe { (self.region.atomic64(head_offset), self.region.atomic64(tail_offset)) };
        let tag = segment_tag(segment);
        let mut wait = Wait::new(WaitSite::SegmentMapped);
        loop {
            let last = tail.load();
            if last == UNMAPPED {
                // The queue's first segment is not there yet.
                jitter::point(&self.region);
                if map && segment == 0 && tail.compare_exchange(UNMAPPED, MAPPING).is_ok() {
                    let Some(chunk) = self.map_segment(segments) else {
                        tail.store(UNMAPPED);
                        return None;
                    };
                    head.store(tag | chunk);
                    arch::fence();
                    tail.store(tag | chunk);
                    return Some(chunk);
                }
            } else if last != MAPPING {
                let after = segments_after(last, segment);
                if after == 0 {
                    arch::fence();
                    return Some(last & CHUNK_MASK);
                }
                if after == 1 && map {
                    // The tail chunk cannot leave the list while it has no successor, and the
                    // compare-exchange on the tail word makes sure it is still the tail.
                    let first = head.load();
                    jitter::point(&self.region);
                    if (segments_after(first, segment) as u64) < window
                        && tail.compare_exchange(last, MAPPING).is_ok()
                    {
                        let Some(chunk) = self.map_segment(segments) else {
                            tail.store(last);
                            return None;
                        };
                        self.link(&segments.pool, last & CHUNK_MASK).store(tag | chunk);
                        arch::fence();
                        tail.store(tag | chunk);
                        // The old tail may have drained before it had a successor.
                        self.advance_head(head, segments);
                        return Some(chunk);
                    }
                } else if after > BEFORE
                    && let Some(chunk) = self.walk(head, &segments.pool, segment)
                {
                    // Before the tail: linked already.
                    return Some(chunk);
                }
            } else if let Some(chunk) = self.walk(head, &segments.pool, segment) {
                // The tail is being appended to (its mapper may wait for a segment to drain):
                // the segments up to the old tail stay reachable from the head, so that their
                // threads never wait for the mapper.
                return Some(chunk);
            }
            // Being appended or created, an earlier segment not appended yet, the head moved
            // during a walk, or the segment `window` earlier not drained yet (its dequeuers are
            // all in progress, see the module docs).
            if !wait.snooze(&self.region, || self.progress()) {
                return None;
            }
        }
    }

    /// Walks from the head chunk to `segment`'s, which lies before the tail. Every link read
    /// is validated by the head not having moved meanwhile (a chunk leaves the list only
    /// through the head, and head values never repeat), so a walk never follows a link of a
    /// chunk already back in the pool. `None`: the head moved; try again.
    fn walk(&self, head: &Atomic64, pool: &ChunkPool, segment: u64) -> Option<u64> {
        let tag = segment_tag(segment);
        let first = head.load();
        if first == UNMAPPED || first == MAPPING || segments_after(first, segment) > BEFORE {
            // The head past the segment cannot happen for a ticket not yet consumed.
            return None;
        }
        let mut current = first;
        loop {
            if current & !CHUNK_MASK == tag {
                arch::fence();
                return Some(current & CHUNK_MASK);
            }
            let next = self.link(pool, current & CHUNK_MASK).load();
            arch::fence();
            if head.load() != first || next == UNMAPPED || next == MAPPING {
                return None;
            }
            current = next;
        }
    }

    /// Virtualized linked chunks: unlinks drained chunks at the head (never the last one, so
    /// that the tail stays to append to) and returns them to the pool.
    fn advance_head(&self, head: &Atomic64, segments: &Segments) {
        let pool = &segments.pool;
        let mut backoff = Backoff::new();
        // Lock-free: a retry means the head moved, i.e. another thread unlinked a chunk.
        loop {
            let first = head.load();
            if first == UNMAPPED || first == MAPPING {
                return;
            }
            let chunk = first & CHUNK_MASK;
            let drained = self.drained(pool, chunk).load() as u64;
            let next = self.link(pool, chunk).load();
            arch::fence();
            if head.load() != first {
                backoff.retry();
                continue;
            }
            if drained < segments.slots || next == UNMAPPED || next == MAPPING {
                return;
            }
            jitter::point(&self.region);
            if head.compare_exchange(first, next).is_ok() {
                arch::fence();
                if pool.give_back(chunk) {
                    segments.release();
                }
            }
        }
    }

    /// After consuming `ticket`'s slot in `chunk`: the segment's last consumer frees its entry
    /// for the next round (array) or unlinks it (linked) and returns its chunk to the pool.
    fn consumed(&self, ticket: u64, chunk: u64) {
        let Some(segments) = self.segments() else { return };
        // The consumed slot precedes the count that lets the chunk go.
        arch::fence();
        if self.drained(&segments.pool, chunk).fetch_add(1) as u64 + 1 != segments.slots {
            return;
        }
        arch::fence();
        jitter::point(&self.region);
        match self.storage {
            Storage::Array { entries, length, .. } => {
                let segment = ticket / segments.slots;
                if let Some(entry) = self.entry(entries, length, segment) {
                    let next_round = ((segment / length) as u32).wrapping_add(1) as u64;
                    entry.store((next_round << 32) | ENTRY_FREE);
                    arch::fence();
                    if segments.pool.give_back(chunk) {
                        segments.release();
                    }
                }
            }
            Storage::Linked { head, .. } => {
                // SAFETY: as in `linked_segment`.
                self.advance_head(unsafe { self.region.atomic64(head) }, segments);
            }
            Storage::Static { .. } => {}
        }
    }

    /// Takes one unit of `semaphore` if it stays within `limit` (`None`: must be positive).
    /// Lock-free: a retry means another thread changed the count.
    #[inline(always)]
    fn acquire(semaphore: &Atomic64, limit: Option<u64>) -> bool {
        let mut backoff = Backoff::new();
        loop {
            let current = semaphore.load();
            let next = match limit {
                Some(limit) if current < limit => current + 1,
                None if current > 0 => current - 1,
                _ => return false,
            };
            if semaphore.compare_exchange(current, next).is_ok() {
                return true;
            }
            backoff.retry();
        }
    }

    /// Appends `value` (< u32::MAX). [`QueueError::Full`]: nothing happened;
    /// [`QueueError::TimedOut`]: a wait gave up (raised in the region) and the value is lost.
    pub fn enqueue(&self, value: u32) -> Result<(), QueueError> {
        if !Self::acquire(self.counter(OCCUPANCY), Some(self.capacity)) {
            return Err(QueueError::Full);
        }
        jitter::point(&self.region);
        let ticket = self.counter(BACK).fetch_add(1);
        jitter::point(&self.region);
        let Some((slot, _)) = self.slot(ticket, true) else { return Err(QueueError::TimedOut) };
        // Release: the caller's writes (e.g. into a freed page) precede the entry's publication.
        arch::fence();
        let mut wait = Wait::new(WaitSite::SlotEmptied);
        // The previous round's dequeuer of this slot holds its ticket (occupancy <= capacity)
        // but may not have emptied it yet.
        while slot.compare_exchange(EMPTY, value + 1).is_err() {
            if !wait.snooze(&self.region, || self.progress()) {
                return Err(QueueError::TimedOut);
            }
        }
        arch::fence();
        self.counter(AVAILABLE).fetch_add(1);
        Ok(())
    }

    /// Entries fully written and not yet claimed by a dequeuer (a snapshot).
    pub fn available(&self) -> u64 {
        self.counter(AVAILABLE).load()
    }

    /// Removes a value; `None` when no fully written entry is available, or if a wait gave up
    /// (raised in the region).
    pub fn dequeue(&self) -> Option<u32> {
        if !Self::acquire(self.counter(AVAILABLE), None) {
            return None;
        }
        jitter::point(&self.region);
        let ticket = self.counter(FRONT).fetch_add(1);
        jitter::point(&self.region);
        let (slot, chunk) = self.slot(ticket, false)?;
        jitter::point(&self.region);
        let mut wait = Wait::new(WaitSite::SlotWritten);
        // The enqueuer of this ticket exists (available counted a write for it or a later
        // one) but may still be writing.
        let stored = loop {
            let stored = slot.swap(EMPTY);
            if stored != EMPTY {
                break stored;
            }
            if !wait.snooze(&self.region, || self.progress()) {
                return None;
            }
        };
        arch::fence();
        self.consumed(ticket, chunk);
        self.counter(OCCUPANCY).fetch_sub(1);
        Some(stored - 1)
    }
}
