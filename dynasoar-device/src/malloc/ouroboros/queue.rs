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
//! segments of [`SEGMENT_SLOTS`] slots, one chunk from the chunk pool each: ticket `t` belongs
//! to segment `t / SEGMENT_SLOTS`. The first enqueuer of a segment maps a zeroed chunk for it;
//! the dequeuer that consumes the segment's last slot lets the chunk go back to the pool.
//! - [`Storage::Array`] (Ouro-VA): a small per-queue array maps segment `s` through entry
//!   `s % length`; entries carry the segment number, so an enqueuer whose entry still holds the
//!   segment `length` earlier waits for that one to drain.
//! - [`Storage::Linked`] (Ouro-VL): segment chunks are linked from the head (oldest) to the
//!   tail; an enqueuer one segment past the tail appends a chunk; drained chunks are unlinked
//!   from the head (in order; the tail stays) and returned. Lookups walk from the head, and
//!   an enqueuer more than `window` segments past the head waits for the head to drain.
//!
//! Both waits end: the occupancy limit of `(length - 1) * SEGMENT_SLOTS` means that when an
//! enqueuer holds a ticket `length` segments past a segment, every ticket of that segment has
//! been taken by a dequeuer in progress.

use super::CHUNK_BYTES;
use crate::arch::{self, Backoff, atomic::Atomic32, atomic::Atomic64};
use crate::malloc::Region;

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
/// Array entries, heads and links: segment + 1 in the high half, the chunk in the low half;
/// 0 is "none yet".
const UNMAPPED: u64 = 0;
const MAPPING: u64 = u64::MAX;
const CHUNK_MASK: u64 = 0xFFFF_FFFF;

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
    Array { entries: u64, length: u64, pool: ChunkPool },
    /// Pool chunks linked from the head (8-byte word at body offset `head`) to the tail; at
    /// most `window` segments from the head on may be mapped.
    Linked { head: u64, window: u64, pool: ChunkPool },
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

    /// A physical chunk for a promise made earlier. Chunks in use never exceed promises, so
    /// one is free or on its way back from a thread in progress: the wait ends.
    pub fn take_committed(&self) -> u64 {
        let mut backoff = Backoff::new();
        loop {
            if let Some(chunk) = self.returned().dequeue() {
                return chunk as u64;
            }
            let next = self.counter(self.next);
            if next.load() < self.chunks {
                let chunk = next.fetch_add(1);
                if chunk < self.chunks {
                    return chunk;
                }
            }
            backoff.snooze();
        }
    }

    /// Chunks returned and not taken again (a snapshot).
    #[cfg(test)]
    pub fn returned_count(&self) -> u64 {
        self.returned().available()
    }

    /// Returns a physical chunk (its promise is the caller's to keep or release).
    pub fn give_back(&self, chunk: u64) {
        // Cannot fail: the queue has a slot for every chunk.
        let _ = self.returned().enqueue(chunk as u32);
    }

    fn chunk_offset(&self, chunk: u64) -> u64 {
        self.base + chunk * CHUNK_BYTES
    }
}

impl IndexQueue {
    #[inline(always)]
    fn counter(&self, field: u64) -> &Atomic64 {
        // SAFETY: the layout reserves `META_BYTES` at `meta` for these counters, 8-aligned,
        // and they are only accessed atomically.
        unsafe { self.region.atomic64(self.meta + field) }
    }

    /// The slot of `ticket` and, for virtualized storage, the chunk holding it (mapped first
    /// if `map`).
    #[inline(always)]
    fn slot(&self, ticket: u64, map: bool) -> Option<(&Atomic32, u64)> {
        let (pool, chunk) = match self.storage {
            Storage::Static { slots } => {
                let index = ticket.checked_rem(self.capacity)?;
                // SAFETY: `index < capacity` and the layout reserves `capacity` 4-byte slots
                // at `slots`; slots are only accessed atomically.
                return Some((unsafe { self.region.atomic32(slots + 4 * index) }, 0));
            }
            Storage::Array { entries, length, pool } => {
                (pool, self.array_segment(entries, length, &pool, ticket / SEGMENT_SLOTS, map)?)
            }
            Storage::Linked { head, window, pool } => {
                (pool, self.linked_segment(head, window, &pool, ticket / SEGMENT_SLOTS, map))
            }
        };
        let offset = pool.chunk_offset(chunk) + SEGMENT_HEADER + 4 * (ticket % SEGMENT_SLOTS);
        // SAFETY: the chunk holds this ticket's segment until all its slots are consumed,
        // including this one; slot offsets stay inside the chunk.
        Some((unsafe { self.region.atomic32(offset) }, chunk))
    }

    fn entry(&self, entries: u64, length: u64, segment: u64) -> Option<&Atomic64> {
        let index = segment.checked_rem(length)?;
        // SAFETY: `index < length`; the layout reserves `length` 8-aligned entries at
        // `entries`, only accessed atomically.
        Some(unsafe { self.region.atomic64(entries + 8 * index) })
    }

    /// A zeroed pool chunk for a new segment (its slots empty, its counters zero).
    fn fresh_segment(&self, pool: &ChunkPool) -> u64 {
        let chunk = pool.take_committed();
        let base = pool.chunk_offset(chunk);
        let mut word = 0;
        while word < CHUNK_BYTES / 8 {
            // SAFETY: the chunk is ours (taken from the pool); the word lies inside it.
            unsafe { self.region.atomic64(base + 8 * word) }.store(0);
            word += 1;
        }
        // The zeroed chunk precedes its publication.
        arch::fence();
        chunk
    }

    /// Virtualized array: the chunk mapped to `segment`. An enqueuer (`map`) maps it if
    /// needed; a dequeuer waits for the enqueuer of its ticket, which exists, to map it.
    fn array_segment(
        &self,
        entries: u64,
        length: u64,
        pool: &ChunkPool,
        segment: u64,
        map: bool,
    ) -> Option<u64> {
        let entry = self.entry(entries, length, segment)?;
        let tag = segment_tag(segment);
        let mut backoff = Backoff::new();
        loop {
            let current = entry.load();
            if current != MAPPING && current & !CHUNK_MASK == tag {
                arch::fence();
                return Some(current & CHUNK_MASK);
            }
            if map && current == UNMAPPED && entry.compare_exchange(UNMAPPED, MAPPING).is_ok() {
                let chunk = self.fresh_segment(pool);
                entry.store(tag | chunk);
                return Some(chunk);
            }
            // Being mapped, or still holding the segment `length` earlier (see module docs).
            backoff.snooze();
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

    /// Virtualized linked chunks: walks from the head chunk to `segment`'s chunk. The enqueuer
    /// of a segment one past the tail appends it. Every link read is validated by the head not
    /// having moved meanwhile (a chunk leaves the list only through the head, and head values
    /// never repeat), so a walk never follows a link of a chunk already back in the pool.
    fn linked_segment(
        &self,
        head_offset: u64,
        window: u64,
        pool: &ChunkPool,
        segment: u64,
        map: bool,
    ) -> u64 {
        // SAFETY: the layout reserves this 8-aligned word for the head; only atomic accesses.
        let head = unsafe { self.region.atomic64(head_offset) };
        let tag = segment_tag(segment);
        let mut backoff = Backoff::new();
        'restart: loop {
            let first = head.load();
            if first == UNMAPPED {
                if map && segment == 0 && head.compare_exchange(UNMAPPED, MAPPING).is_ok() {
                    let chunk = self.fresh_segment(pool);
                    head.store(tag | chunk);
                    return chunk;
                }
                backoff.snooze();
                continue;
            }
            if first == MAPPING || (map && segments_after(first, segment) as u64 >= window) {
                // Being created, or the segment `window` earlier is not drained yet (see the
                // module docs: its dequeuers are all in progress).
                backoff.snooze();
                continue;
            }
            let mut current = first;
            loop {
                if current & !CHUNK_MASK == tag {
                    arch::fence();
                    return current & CHUNK_MASK;
                }
                if segments_after(current, segment) > BEFORE {
                    // Cannot happen for a ticket not yet consumed; start over.
                    backoff.snooze();
                    continue 'restart;
                }
                let link = self.link(pool, current & CHUNK_MASK);
                let next = link.load();
                arch::fence();
                if head.load() != first {
                    backoff.retry();
                    continue 'restart;
                }
                if next == UNMAPPED
                    && map
                    && segments_after(current, segment) == 1
                    && link.compare_exchange(UNMAPPED, MAPPING).is_ok()
                {
                    let chunk = self.fresh_segment(pool);
                    link.store(tag | chunk);
                    arch::fence();
                    // The tail may have drained before it had a successor.
                    self.advance_head(head, pool);
                    return chunk;
                }
                if next == UNMAPPED || next == MAPPING {
                    backoff.snooze();
                    continue 'restart;
                }
                current = next;
            }
        }
    }

    /// Virtualized linked chunks: unlinks drained chunks at the head (never the last one, so
    /// that the tail stays to append to) and returns them to the pool.
    fn advance_head(&self, head: &Atomic64, pool: &ChunkPool) {
        let mut backoff = Backoff::new();
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
            if drained < SEGMENT_SLOTS || next == UNMAPPED || next == MAPPING {
                return;
            }
            if head.compare_exchange(first, next).is_ok() {
                arch::fence();
                pool.give_back(chunk);
            }
        }
    }

    /// After consuming `ticket`'s slot in `chunk`: the segment's last consumer unmaps (array)
    /// or unlinks (linked) it and returns its chunk to the pool.
    fn consumed(&self, ticket: u64, chunk: u64) {
        let pool = match self.storage {
            Storage::Static { .. } => return,
            Storage::Array { pool, .. } | Storage::Linked { pool, .. } => pool,
        };
        // The consumed slot precedes the count that lets the chunk go.
        arch::fence();
        if self.drained(&pool, chunk).fetch_add(1) as u64 + 1 != SEGMENT_SLOTS {
            return;
        }
        match self.storage {
            Storage::Array { entries, length, .. } => {
                if let Some(entry) = self.entry(entries, length, ticket / SEGMENT_SLOTS) {
                    entry.store(UNMAPPED);
                    arch::fence();
                    pool.give_back(chunk);
                }
            }
            Storage::Linked { head, .. } => {
                arch::fence();
                // SAFETY: as in `linked_segment`.
                self.advance_head(unsafe { self.region.atomic64(head) }, &pool);
            }
            Storage::Static { .. } => {}
        }
    }

    /// Takes one unit of `semaphore` if it stays within `limit` (`None`: must be positive).
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

    /// Appends `value` (< u32::MAX); false when the queue is full (nothing was written).
    pub fn enqueue(&self, value: u32) -> bool {
        if !Self::acquire(self.counter(OCCUPANCY), Some(self.capacity)) {
            return false;
        }
        let ticket = self.counter(BACK).fetch_add(1);
        let Some((slot, _)) = self.slot(ticket, true) else { return false };
        // Release: the caller's writes (e.g. into a freed page) precede the entry's publication.
        arch::fence();
        let mut backoff = Backoff::new();
        // The previous round's dequeuer of this slot holds its ticket (occupancy <= capacity)
        // but may not have emptied it yet.
        while slot.compare_exchange(EMPTY, value + 1).is_err() {
            backoff.snooze();
        }
        arch::fence();
        self.counter(AVAILABLE).fetch_add(1);
        true
    }

    /// Entries fully written and not yet claimed by a dequeuer (a snapshot).
    pub fn available(&self) -> u64 {
        self.counter(AVAILABLE).load()
    }

    /// Removes a value; `None` when no fully written entry is available.
    pub fn dequeue(&self) -> Option<u32> {
        if !Self::acquire(self.counter(AVAILABLE), None) {
            return None;
        }
        let ticket = self.counter(FRONT).fetch_add(1);
        let (slot, chunk) = self.slot(ticket, false)?;
        let mut backoff = Backoff::new();
        // The enqueuer of this ticket exists (available counted a write for it or a later
        // one) but may still be writing.
        let stored = loop {
            let stored = slot.swap(EMPTY);
            if stored != EMPTY {
                break stored;
            }
            backoff.snooze();
        };
        arch::fence();
        self.consumed(ticket, chunk);
        self.counter(OCCUPANCY).fetch_sub(1);
        Some(stored - 1)
    }
}
