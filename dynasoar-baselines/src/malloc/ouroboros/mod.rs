//! Ouroboros (Winter et al., "Ouroboros: virtualized queues for dynamic memory management on
//! GPUs", ICS 2020; survey `002_...` section 2.10, Figure 7), all six designs through one
//! generic type, [`Ouroboros<VARIANT>`]: queue kind (page- or chunk-based) times queue storage
//! (static, virtualized array, virtualized linked chunks).
//!
//! | type            | paper name | queues hold                  | queue slots live in          |
//! |-----------------|------------|------------------------------|------------------------------|
//! | [`PageStatic`]  | Ouro-S-P   | free pages                   | fixed arrays in the region   |
//! | [`PageArray`]   | Ouro-VA-P  | free pages                   | pool chunks, via index array |
//! | [`PageLinked`]  | Ouro-VL-P  | free pages                   | pool chunks, linked          |
//! | [`ChunkStatic`] | Ouro-S-C   | chunks with free pages       | fixed arrays in the region   |
//! | [`ChunkArray`]  | Ouro-VA-C  | chunks with free pages       | pool chunks, via index array |
//! | [`ChunkLinked`] | Ouro-VL-C  | chunks with free pages       | pool chunks, linked          |
//!
//! The pool is split into equally sized chunks of [`CHUNK_BYTES`]; each power-of-two page size
//! from 16 bytes up to the chunk size has one queue. `malloc` rounds the request up to a page
//! size. Requests above the chunk size are relayed to CUDA's allocator ([`SystemMalloc`]), as in
//! the original; pointers outside the region are freed there.
//!
//! **Chunk pool.** Chunks returned to the pool sit in a static queue; never-used chunks come
//! from a bump counter. A commit counter promises chunks (to a page size, or as queue storage
//! reserved ahead, see below) and never promises more than exist, so a thread holding a
//! promise always finds a physical chunk (at worst after a thread in progress returns one).
//!
//! **Page-based queues** (`*-P`): the queue holds free pages. On a miss one thread per page size
//! (a refill flag; the others back off and retry the queue, so a burst of misses does not take
//! one chunk per thread) takes a chunk, records its page size in a per-chunk table, keeps the
//! first page and enqueues the others. `free` enqueues the page again. As in the original,
//! chunks of page-based queues never return to the pool.
//!
//! **Chunk-based queues** (`*-C`, `chunks`): the queue holds the chunks of that page size that
//! have free pages; each chunk has a page bitmap and a state word (page size, free-page count,
//! "listed" flag). A thread dequeues a chunk, reserves a page in the count, claims a bit, and
//! re-enqueues the chunk if pages remain (else unlists it; the free that makes it non-full lists
//! it again). A chunk found entirely free is returned to the pool, where any page size can take
//! it; when the pool is empty, a refiller also reclaims entirely free chunks from the other page
//! sizes' queues.
//!
//! **Queue storage** (`queue`): all queues are ticket rings with per-slot state and two
//! semaphores (entries available; slots reserved), so every wait is for a thread that already
//! holds the matching ticket, and every wait backs off: correct under independent thread
//! scheduling, no warp collectives. Static queues (`S-*`) keep their slots in fixed arrays
//! sized for every entry they could ever hold. Virtualized queues keep slots in segments of
//! `queue::SEGMENT_SLOTS` slots, one pool chunk each, mapped by the first enqueuer of a
//! segment and returned to the pool by the dequeuer of its last slot: through a small
//! per-queue array of chunk indices (`VA-*`), or as chunks linked from front to back, freed
//! from the front when drained (`VL-*`).
//!
//! **Bounded waits.** Every wait of this module gives up after `queue::WAIT_ROUNDS` back-off
//! rounds (and `queue::WAIT_MIN_CLOCKS` clock ticks) without progress of what it waits on,
//! several seconds on a GPU, raises [`errors::OURO_WAIT_TIMEOUT`] with the bit of the wait
//! (named for the host by [`errors::OURO_WAIT_SITES`]) and fails its operation: malloc returns
//! null; a free whose entry cannot be queued loses the block (reported). None should ever
//! give up; if one does, a hang became an error that says where.
//!
//! Departures and limits:
//! - Chunk-based queues: the paper lets threads allocate from the chunk at the queue's front
//!   without dequeuing it. With our ticket queue a front chunk cannot be read without
//!   consuming its entry, and a stale front read would break the "a chunk is queued once"
//!   invariant, so a thread dequeues the chunk, takes a page and re-enqueues it. This costs a
//!   dequeue and an enqueue per allocation and serialises allocations within one chunk; other
//!   threads of the same page size meanwhile find another chunk or start one.
//! - Virtualized queues: an enqueuer cannot give its ticket back, so mapping a segment must not
//!   fail. Each queue therefore has storage chunks promised from the pool ahead, as its page
//!   size grows (enough segments for every entry it can then hold, plus one, since entries
//!   need not start at a segment boundary); the promise fails, like taking a data chunk, when
//!   the pool is exhausted. Promises are kept for good, so in small regions (a few dozen
//!   chunks) each page size in use ties up two chunks.
//!   Storage is taken physically only while segments are in use and given back when drained.
//!   A queue never maps more segments than promised: when a dequeuer stalls in a segment that
//!   later entries have passed, the mapper of a new segment waits for one of the queue's own
//!   segments to drain (which needs only dequeuers already in progress, see `queue`), never
//!   for the pool, whose last chunks other page sizes and data chunks were promised. (Earlier
//!   the pool was the one to wait on, for drains that could need dequeuers that never come.)
//! - Virtualized queues: a queue may span at most `segments` segments (the array's length, or
//!   the linked queue's window), so an enqueuer in a new segment may wait for the segment that
//!   many segments earlier to drain; the occupancy limit of `(segments - 1)` segments makes
//!   every ticket of that segment already held by a dequeuer in progress, so the wait ends.
//!   Array entries name the round of segments they serve, so a later segment never takes an
//!   entry before the earlier segment of that entry was mapped and drained.
//! - Linked storage finds the tail's segment and its successor through a per-queue tail word
//!   (appending is a compare-exchange on it), and earlier segments by a walk from the head (at
//!   most `segments` links); each link read is validated against the head, which never
//!   repeats, and no thread writes a link of a chunk it has not made sure is still linked.
//! - Page-based static queues must never overflow (an overflow would lose a page), so each
//!   holds as many entries as its page size can ever have pages; to keep that storage bounded
//!   (about 22% of the pool), page sizes 16 and 32 may use at most a quarter of the chunks
//!   each. The other variants need no such cap.
//! - Queue entries are page indices in 16-byte units (32 bits), so the pool is capped at 64 GiB;
//!   segment numbers are 32-bit tags (a queue would need about 8 * 10^12 operations to wrap).
//! - Invalid frees: a pointer in no handed-out chunk or misaligned for its page size is
//!   detected and ignored (`INVALID_FREE`); chunk-based variants detect every double free (the
//!   page's bit is already set), page-based ones only when it would overflow a static queue
//!   (with virtualized storage a double free goes undetected and adds an entry that no storage
//!   was promised for: a queue wait may then give up, see the bounded waits above).

mod chunks;
mod queue;

use super::system::SystemMalloc;
use super::{Caps, DeviceMalloc, FreeSupport, HEADER_BYTES, MallocKind, Region, errors};
use dynasoar_device::arch::atomic::{Atomic32, Atomic64};
use dynasoar_device::arch::{self};
use queue::{ChunkPool, IndexQueue, QueueError, Segments, Storage, Wait, WaitSite};

/// Bytes of one chunk (the paper's default).
pub const CHUNK_BYTES: u64 = 8192;
/// Smallest page size.
const MIN_PAGE_BYTES: u64 = 16;
/// Number of page sizes: 16, 32, ..., `CHUNK_BYTES`.
const CLASSES: usize = 10;
/// Body offsets of the pool's bump counter (never-used chunks) and commit counter (chunks
/// promised to data or to queue storage); per-class blocks follow.
const NEXT_CHUNK: u64 = 0;
const COMMITTED_CHUNKS: u64 = 8;
/// Per-class block: queue counters, then the number of chunks the class holds, the refill
/// flag (a thread is starting a chunk for this page size) and the storage chunks reserved for
/// the class queue and the head of its linked chunks (virtualized queues).
const CLASS_META_BYTES: u64 = 128;
const CLASS_CHUNKS: u64 = 32;
const CLASS_REFILLING: u64 = 40;
const CLASS_RESERVED: u64 = 48;
/// Per-class head of a linked-chunk queue.
const CLASS_QUEUE_HEAD: u64 = 56;
/// Per-class count of listed chunks (chunk-based queues).
const CLASS_LISTED: u64 = 64;
/// Per-class count of segments the class queue has mapped (virtualized queues; at most
/// `CLASS_RESERVED`).
const CLASS_MAPPED: u64 = 72;
/// Per-class tail of a linked-chunk queue.
const CLASS_QUEUE_TAIL: u64 = 80;
/// Counters of the queue of chunks returned to the pool (after the class blocks).
const FREE_CHUNK_META: u64 = CLASS_META_BYTES * (CLASSES as u64 + 1);
/// Start of the per-chunk table (page size, or the chunk state for chunk-based queues).
const CHUNK_TABLE: u64 = 2048;
/// Pool alignment inside the body.
const POOL_ALIGN: u64 = 256;
/// Upper bounds of metadata bytes per chunk, so that the layout search (see [`Layout::new`],
/// which runs on every `attach`) fits at its first try.
const PER_CHUNK_OVERHEAD_PAGES_STATIC: u64 = 1808;
const PER_CHUNK_OVERHEAD_CHUNKS_STATIC: u64 = 8 + BITMAP_BYTES + 4 * CLASSES as u64;
const PER_CHUNK_OVERHEAD_PAGES_VIRTUAL: u64 = 16;
const PER_CHUNK_OVERHEAD_CHUNKS_VIRTUAL: u64 = 8 + BITMAP_BYTES + 8;
/// Chunk-based queues: one bit per page of the smallest size.
const BITMAP_BYTES: u64 = CHUNK_BYTES / MIN_PAGE_BYTES / 8;
/// Page indices are 32-bit in 16-byte units.
const MAX_POOL_BYTES: u64 = 1 << 36;

const _: () = assert!(MIN_PAGE_BYTES << (CLASSES - 1) == CHUNK_BYTES);
const _: () = assert!(FREE_CHUNK_META + queue::META_BYTES <= CHUNK_TABLE);
const _: () = assert!(queue::META_BYTES <= CLASS_CHUNKS);
const _: () = assert!(CLASS_QUEUE_HEAD + 8 <= CLASS_LISTED && CLASS_LISTED + 8 <= CLASS_MAPPED);
const _: () = assert!(CLASS_MAPPED + 8 <= CLASS_QUEUE_TAIL && CLASS_QUEUE_TAIL + 8 <= CLASS_META_BYTES);

/// Where everything lives in the body; a pure function of the body size and the variant.
#[derive(Clone, Copy, Debug)]
struct Layout {
    chunks: u64,
    pool: u64,
    /// Chunk-based queues only: one page bitmap of [`BITMAP_BYTES`] per chunk.
    bitmaps: u64,
    /// Per class: static slots, or the segment-entry array of a virtualized array queue
    /// (reserved for linked queues too, which leave it unused: a few bytes per 16 MiB).
    slots: [u64; CLASSES],
    /// Per class: the most entries the queue may hold.
    capacity: [u64; CLASSES],
    /// Per class, virtualized queues: segment entries.
    segments: [u64; CLASSES],
    chunk_limit: [u64; CLASSES],
    /// Slots of the queue of chunks returned to the pool.
    free_chunk_slots: u64,
}

impl Layout {
    fn page_bytes(class: usize) -> u64 {
        MIN_PAGE_BYTES << class
    }

    /// Page-based static queues: the small page sizes would need the most queue storage; cap
    /// their share of chunks. Other queues need no cap (storage per chunk or on demand).
    fn chunk_limit(class: usize, chunks: u64, chunk_based: bool, virtual_storage: bool) -> u64 {
        if !chunk_based && !virtual_storage && Self::page_bytes(class) < 64 {
            chunks.div_ceil(4)
        } else {
            chunks
        }
    }

    fn with_chunks(chunks: u64, chunk_based: bool, virtual_storage: bool) -> Self {
        let mut layout = Layout {
            chunks,
            pool: 0,
            bitmaps: 0,
            slots: [0; CLASSES],
            capacity: [0; CLASSES],
            segments: [0; CLASSES],
            chunk_limit: [0; CLASSES],
            free_chunk_slots: 0,
        };
        let mut offset = (CHUNK_TABLE + 4 * chunks).next_multiple_of(8);
        if chunk_based {
            layout.bitmaps = offset;
            offset += BITMAP_BYTES * chunks;
        }
        let mut class = 0;
        while class < CLASSES {
            let limit = Self::chunk_limit(class, chunks, chunk_based, virtual_storage);
            layout.chunk_limit[class] = limit;
            // Every entry the queue can ever hold: each page of the class (page-based) or
            // each chunk once (chunk-based).
            let entries = if chunk_based { chunks } else { limit * (CHUNK_BYTES / Self::page_bytes(class)) };
            layout.slots[class] = offset;
            if virtual_storage {
                // Two spare segments: one partly consumed at the front, one partly filled at
                // the back (see `queue`'s docs for why the limit leaves one segment free).
                let segments = entries.div_ceil(queue::SEGMENT_SLOTS) + 2;
                layout.segments[class] = segments;
                layout.capacity[class] = (segments - 1) * queue::SEGMENT_SLOTS;
                offset += 8 * segments;
            } else {
                layout.capacity[class] = entries;
                offset += 4 * entries;
            }
            class += 1;
        }
        layout.free_chunk_slots = offset;
        offset += 4 * chunks;
        layout.pool = offset.div_ceil(POOL_ALIGN) * POOL_ALIGN;
        layout
    }

    /// The chunk count that the per-chunk overhead bounds allow.
    fn estimated_chunks(body_bytes: u64, chunk_based: bool, virtual_storage: bool) -> u64 {
        let usable = body_bytes.saturating_sub(CHUNK_TABLE + POOL_ALIGN + 8 * 1024);
        let overhead = match (chunk_based, virtual_storage) {
            (false, false) => PER_CHUNK_OVERHEAD_PAGES_STATIC,
            (false, true) => PER_CHUNK_OVERHEAD_PAGES_VIRTUAL,
            (true, false) => PER_CHUNK_OVERHEAD_CHUNKS_STATIC,
            (true, true) => PER_CHUNK_OVERHEAD_CHUNKS_VIRTUAL,
        };
        (usable / (CHUNK_BYTES + overhead)).min(MAX_POOL_BYTES / CHUNK_BYTES - 1)
    }

    fn new(body_bytes: u64, chunk_based: bool, virtual_storage: bool) -> Self {
        let mut chunks = Self::estimated_chunks(body_bytes, chunk_based, virtual_storage);
        loop {
            let layout = Self::with_chunks(chunks, chunk_based, virtual_storage);
            if chunks == 0 || layout.pool + chunks * CHUNK_BYTES <= body_bytes {
                return layout;
            }
            chunks -= 1;
        }
    }
}

/// One Ouroboros design: `VARIANT / 3` is the queue kind (0 pages, 1 chunks), `VARIANT % 3`
/// the queue storage (0 static, 1 virtualized array, 2 virtualized linked chunks).
#[derive(Clone, Copy, Debug)]
pub struct Ouroboros<const VARIANT: u8> {
    region: Region,
    layout: Layout,
}

const fn variant_kind(variant: u8) -> MallocKind {
    match variant {
        0 => MallocKind::OuroPageStatic,
        1 => MallocKind::OuroPageArray,
        2 => MallocKind::OuroPageLinked,
        3 => MallocKind::OuroChunkStatic,
        4 => MallocKind::OuroChunkArray,
        _ => MallocKind::OuroChunkLinked,
    }
}

/// Ouro-S-P: page-based queues, static storage.
pub type PageStatic = Ouroboros<0>;
/// Ouro-VA-P: page-based queues, virtualized array storage.
pub type PageArray = Ouroboros<1>;
/// Ouro-VL-P: page-based queues, virtualized linked-chunk storage.
pub type PageLinked = Ouroboros<2>;
/// Ouro-S-C: chunk-based queues, static storage.
pub type ChunkStatic = Ouroboros<3>;
/// Ouro-VA-C: chunk-based queues, virtualized array storage.
pub type ChunkArray = Ouroboros<4>;
/// Ouro-VL-C: chunk-based queues, virtualized linked-chunk storage.
pub type ChunkLinked = Ouroboros<5>;

impl<const VARIANT: u8> Ouroboros<VARIANT> {
    /// Variants 0-2 queue pages, 3-5 queue chunks (see [`variant_kind`]).
    const CHUNK_BASED: bool = VARIANT >= 3;
    /// Variants 1, 2, 4 and 5 keep queue slots in pool chunks: through a per-queue array of
    /// chunk indices (1, 4) or in linked chunks (2, 5).
    const VIRTUAL_STORAGE: bool = !VARIANT.is_multiple_of(3);
    const LINKED_STORAGE: bool = VARIANT % 3 == 2;

    fn pool(&self) -> ChunkPool {
        ChunkPool {
            region: self.region,
            base: self.layout.pool,
            chunks: self.layout.chunks,
            next: NEXT_CHUNK,
            committed: COMMITTED_CHUNKS,
            returned_meta: FREE_CHUNK_META,
            returned_slots: self.layout.free_chunk_slots,
        }
    }

    fn queue(&self, class: usize) -> Option<IndexQueue> {
        let slots = *self.layout.slots.get(class)?;
        let meta = CLASS_META_BYTES * (class as u64 + 1);
        let length = *self.layout.segments.get(class)?;
        let segments = Segments {
            pool: self.pool(),
            slots: queue::SEGMENT_SLOTS,
            mapped: meta + CLASS_MAPPED,
            reserved: meta + CLASS_RESERVED,
        };
        let storage = if Self::LINKED_STORAGE {
            Storage::Linked {
                head: meta + CLASS_QUEUE_HEAD,
                tail: meta + CLASS_QUEUE_TAIL,
                window: length,
                segments,
            }
        } else if Self::VIRTUAL_STORAGE {
            Storage::Array { entries: slots, length, segments }
        } else {
            Storage::Static { slots }
        };
        Some(IndexQueue { region: self.region, meta, capacity: *self.layout.capacity.get(class)?, storage })
    }

    /// Virtualized queues: makes sure the class queue can map enough segments for `entries`
    /// entries without ever finding the pool empty, by promising pool chunks ahead. The queue
    /// never maps more segments than promised (it waits for one of its own to drain instead,
    /// see [`queue`]). Only the class's refiller calls this; promises are kept for good.
    fn reserve_queue_storage(&self, class: usize, entries: u64) -> bool {
        if !Self::VIRTUAL_STORAGE {
            return true;
        }
        let reserved = self.counter(CLASS_META_BYTES * (class as u64 + 1) + CLASS_RESERVED);
        // `entries` live entries span at most this many segments; a drained segment goes
        // back at once. At least two, which linked storage needs to append past a drained
        // tail.
        let needed = entries.div_ceil(queue::SEGMENT_SLOTS) + 1;
        while reserved.load() < needed {
            if !self.pool().commit() {
                return false;
            }
            reserved.fetch_add(1);
        }
        true
    }

    /// Returns a chunk that `class` held to the pool.
    fn release_chunk(&self, class: usize, chunk: u64) {
        self.counter(CLASS_META_BYTES * (class as u64 + 1) + CLASS_CHUNKS).fetch_sub(1);
        let pool = self.pool();
        // A chunk that could not be given back (a wait gave up, raised) stays promised.
        if pool.give_back(chunk) {
            pool.uncommit();
        }
    }

    fn counter(&self, offset: u64) -> &Atomic64 {
        // SAFETY: offsets below `CHUNK_TABLE` are the allocator's counters, 8-aligned, only
        // accessed atomically.
        unsafe { self.region.atomic64(offset) }
    }

    fn chunk_class(&self, chunk: u64) -> &Atomic32 {
        // SAFETY: callers pass `chunk < layout.chunks`; the table has one word per chunk and is
        // only accessed atomically.
        unsafe { self.region.atomic32(CHUNK_TABLE + 4 * chunk) }
    }

    fn page_ptr(&self, index: u32) -> *mut u8 {
        let offset = self.layout.pool + index as u64 * MIN_PAGE_BYTES;
        self.region.body().wrapping_add(offset as usize)
    }

    /// A chunk from the pool for `class`, within the class's share, with queue storage for
    /// the entries it brings (`entries_per_chunk` per chunk held); `None` when there is none.
    fn take_chunk(&self, class: usize, entries_per_chunk: u64) -> Option<u64> {
        let limit = *self.layout.chunk_limit.get(class)?;
        let held = self.counter(CLASS_META_BYTES * (class as u64 + 1) + CLASS_CHUNKS);
        let before = held.fetch_add(1);
        if before >= limit || !self.pool().commit() {
            held.fetch_sub(1);
            return None;
        }
        if !self.reserve_queue_storage(class, (before + 1) * entries_per_chunk) {
            held.fetch_sub(1);
            self.pool().uncommit();
            return None;
        }
        let chunk = self.pool().take_committed();
        if chunk.is_none() {
            // A wait gave up (raised in the region).
            held.fetch_sub(1);
            self.pool().uncommit();
        }
        chunk
    }

    fn malloc_small(&self, class: usize) -> *mut u8 {
        let Some(queue) = self.queue(class) else { return core::ptr::null_mut() };
        let refilling = self.counter(CLASS_META_BYTES * (class as u64 + 1) + CLASS_REFILLING);
        let mut wait = Wait::new(WaitSite::Refill);
        loop {
            if let Some(index) = queue.dequeue() {
                return self.page_ptr(index);
            }
            // One refiller per page size: without it, thousands of threads that find the queue
            // empty at once would each take a chunk and exhaust the pool.
            if refilling.load() == 0 && refilling.compare_exchange(0, 1).is_ok() {
                let page = self.refill(class, &queue);
                refilling.store(0);
                return match page {
                    Some(page) => page,
                    // Out of chunks; a free may have raced with us.
                    None => queue.dequeue().map_or(core::ptr::null_mut(), |index| self.page_ptr(index)),
                };
            }
            // The refiller is at work: its enqueues move the queue (and restart the count).
            if !wait.snooze(&self.region, || queue.progress()) {
                return core::ptr::null_mut();
            }
        }
    }

    /// Splits a fresh chunk into pages of `class`: keeps the first, enqueues the others.
    fn refill(&self, class: usize, queue: &IndexQueue) -> Option<*mut u8> {
        let chunk = self.take_chunk(class, CHUNK_BYTES >> (class as u64 + 4))?;
        self.chunk_class(chunk).store(class as u32 + 1);
        // A thread that frees a page of this chunk reads the class after it got the pointer.
        arch::fence();
        let units_per_page = 1u32 << class;
        let first = (chunk * (CHUNK_BYTES / MIN_PAGE_BYTES)) as u32;
        let pages = (CHUNK_BYTES >> (class as u64 + 4)) as u32;
        let mut page = 1;
        while page < pages {
            // Cannot be full: the queue holds every page its class can ever have. A wait that
            // gave up loses the page (raised in the region).
            let _ = queue.enqueue(first + page * units_per_page);
            page += 1;
        }
        Some(self.page_ptr(first))
    }

    fn free_small(&self, ptr: *mut u8) {
        let offset = (ptr as u64).wrapping_sub(self.region.body_addr()).wrapping_sub(self.layout.pool);
        let chunk = offset / CHUNK_BYTES;
        if chunk >= self.layout.chunks {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        let class = self.chunk_class(chunk).load();
        if class == 0 || class as usize > CLASSES || !offset.is_multiple_of(MIN_PAGE_BYTES << (class - 1)) {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        let Some(queue) = self.queue(class as usize - 1) else { return };
        if queue.enqueue((offset / MIN_PAGE_BYTES) as u32) == Err(QueueError::Full) {
            // Only more frees than pages can overflow the queue: a double free. (A wait that
            // gave up raised its own error.)
            self.region.raise(errors::INVALID_FREE);
        }
    }
}

// SAFETY: page-based: a page is handed out only by dequeuing it (each queue entry is consumed
// once) or as the first page of a chunk taken exclusively from the pool. Chunk-based: a page is
// handed out only by the thread that cleared its bit (a fetch_and returning it set) or as the
// first page of a fresh chunk; a chunk returns to the pool only when all its pages are free.
// Queue storage chunks are taken from the pool exclusively and never hold pages at the same
// time. Pages of one chunk are disjoint and lie inside the pool, which lies inside the body;
// pages are 16-aligned.
unsafe impl<const VARIANT: u8> DeviceMalloc for Ouroboros<VARIANT> {
    const KIND: MallocKind = variant_kind(VARIANT);
    const CAPS: Caps = Caps {
        max_size: u32::MAX - 4096,
        align: MIN_PAGE_BYTES as u32,
        free: FreeSupport::Reuses,
        min_region_bytes: HEADER_BYTES + 64 * 1024,
        relays_above: CHUNK_BYTES as u32,
    };

    unsafe fn init(_region: Region, _phase: u32) {
        // The zeroed body is the initial state: no chunk taken, every queue empty.
    }

    #[inline(always)]
    unsafe fn attach(region: Region) -> Self {
        Ouroboros {
            region,
            layout: Layout::new(region.body_bytes(), Self::CHUNK_BASED, Self::VIRTUAL_STORAGE),
        }
    }

    fn malloc(&self, size: u32) -> *mut u8 {
        let size = size as u64;
        if size > CHUNK_BYTES {
            return SystemMalloc.malloc(size as u32);
        }
        let class = size.max(MIN_PAGE_BYTES).next_power_of_two().trailing_zeros() as usize - 4;
        if Self::CHUNK_BASED { self.malloc_from_chunks(class) } else { self.malloc_small(class) }
    }

    unsafe fn free(&self, ptr: *mut u8) {
        if ptr.is_null() {
            return;
        }
        if !self.region.contains(ptr) {
            // SAFETY: outside the region, so relayed to CUDA's allocator by `malloc`.
            unsafe { SystemMalloc.free(ptr) }
        } else if Self::CHUNK_BASED {
            self.free_to_chunk(ptr)
        } else {
            self.free_small(ptr)
        }
    }
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests;
