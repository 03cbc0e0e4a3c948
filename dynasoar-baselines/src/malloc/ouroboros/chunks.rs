//! Chunk-based queues (Ouro-*-C): each page size queues the chunks that have free pages; a chunk
//! keeps its free pages in a bitmap and their number in its state word; a chunk whose pages are
//! all free goes back to the chunk pool, where any page size can take it.
//!
//! A chunk is *listed* (its index is in its class queue, or held by the one thread that dequeued
//! it) exactly while it has a free page. Only the thread holding a listed chunk allocates from
//! it, so a page count reserved in the state word always has a set bit to match: a free sets
//! its bit before it raises the count. The holder re-enqueues the chunk when pages remain, or
//! clears the listing when the chunk is full; a free that raises a full chunk's count lists it
//! again. State transitions are single compare-exchanges on the state word, so a free and the
//! holder's "chunk is full" decision cannot both miss each other.
//!
//! Waits are bounded (see [`queue`](super::queue)): a malloc whose wait gives up returns null;
//! a chunk whose listing could not be queued is unlisted again (a later free lists it anew),
//! so the listed count never waits on an entry that does not exist.

use super::queue::{IndexQueue, Wait, WaitSite};
use super::{
    BITMAP_BYTES, CHUNK_BYTES, CHUNK_TABLE, CLASS_LISTED, CLASS_META_BYTES, CLASS_REFILLING, CLASSES,
    MIN_PAGE_BYTES, Ouroboros,
};
use crate::malloc::errors;
use core::ptr::null_mut;
use dynasoar_device::arch::atomic::{Atomic32, Atomic64};
use dynasoar_device::arch::{self, Backoff};

/// State word: free pages in the low bits, the listing flag, and class + 1 in the top byte
/// (0: the chunk is in the pool).
const COUNT_MASK: u32 = 0xFFFF;
const LISTED: u32 = 1 << 16;
const CLASS_SHIFT: u32 = 24;

fn pages_per_chunk(class: usize) -> u32 {
    (CHUNK_BYTES >> (class as u64 + 4)) as u32
}

impl<const VARIANT: u8> Ouroboros<VARIANT> {
    fn chunk_state(&self, chunk: u64) -> &Atomic32 {
        // SAFETY: callers pass `chunk < layout.chunks`; the table has one word per chunk and is
        // only accessed atomically.
        unsafe { self.region.atomic32(CHUNK_TABLE + 4 * chunk) }
    }

    fn bitmap_word(&self, chunk: u64, word: u32) -> &Atomic64 {
        // SAFETY: callers pass `chunk < layout.chunks` and `word < BITMAP_BYTES / 8`; the layout
        // reserves `BITMAP_BYTES` per chunk at the 8-aligned `bitmaps`, only accessed atomically.
        unsafe { self.region.atomic64(self.layout.bitmaps + BITMAP_BYTES * chunk + 8 * word as u64) }
    }

    pub(super) fn malloc_from_chunks(&self, class: usize) -> *mut u8 {
        let Some(queue) = self.queue(class) else { return core::ptr::null_mut() };
        let refilling = self.counter(CLASS_META_BYTES * (class as u64 + 1) + CLASS_REFILLING);
        let mut wait = Wait::new(WaitSite::Refill);
        loop {
            if let Some(chunk) = queue.dequeue() {
                match self.take_page(chunk as u64, class, &queue) {
                    Taken::Page(page) => return page,
                    // The chunk went back to the pool; others are listed.
                    Taken::Gone => continue,
                    // A wait gave up (raised in the region).
                    Taken::Failed => return null_mut(),
                }
            }
            // One refiller per page size, as for page-based queues: a burst of misses must not
            // take one chunk per thread.
            if refilling.load() == 0 && refilling.compare_exchange(0, 1).is_ok() {
                let page = self.start_chunk(class, &queue);
                refilling.store(0);
                if let Some(page) = page {
                    return page;
                }
                // Out of chunks. A chunk of this size with free pages may still be listed but
                // held for a moment by another thread (or on its way into the queue): wait
                // for it rather than fail. Every listed chunk is in the queue or held by a
                // thread in progress, so this ends once the listed chunks run out of pages.
                if self.listed_chunks(class).load() == 0 {
                    return null_mut();
                }
            }
            // Listed chunks move through the queue (restarting the count) while held ones come
            // back.
            if !wait.snooze(&self.region, || queue.progress()) {
                return null_mut();
            }
        }
    }

    /// Chunks of `class` that are listed (in its queue or held by a thread).
    fn listed_chunks(&self, class: usize) -> &Atomic64 {
        self.counter(CLASS_META_BYTES * (class as u64 + 1) + CLASS_LISTED)
    }

    /// Allocates a page from `chunk`, which the caller dequeued (so it holds the listing).
    /// [`Taken::Gone`] when the chunk was entirely free and went back to the pool instead.
    fn take_page(&self, chunk: u64, class: usize, queue: &IndexQueue) -> Taken {
        if chunk >= self.layout.chunks {
            return Taken::Gone;
        }
        let state = self.chunk_state(chunk);
        let pages = pages_per_chunk(class);
        let mut backoff = Backoff::new();
        loop {
            let current = state.load();
            if current >> CLASS_SHIFT != class as u32 + 1 || current & LISTED == 0 {
                // Not a listed chunk of this class: only a corrupted queue entry gets here.
                return Taken::Gone;
            }
            let free = current & COUNT_MASK;
            if free == 0 {
                self.unlist_or_requeue(chunk, class, queue);
                return Taken::Gone;
            }
            // An entirely free chunk goes back to the pool for any page size, unless it is the
            // only chunk listed here (then it would come straight back on the next miss).
            if free == pages && queue.available() > 0 {
                if state.compare_exchange(current, 0).is_ok() {
                    self.listed_chunks(class).fetch_sub(1);
                    self.release_chunk(class, chunk);
                    return Taken::Gone;
                }
            } else if state.compare_exchange(current, current - 1).is_ok() {
                break;
            }
            backoff.retry();
        }
        // Pairs with the fence a free makes between setting the bit and raising the count.
        arch::fence();
        let Some(page) = self.claim_page_bit(chunk, pages) else {
            // Give the reserved count back (no bit was taken) and let the chunk go on.
            state.fetch_add(1);
            self.unlist_or_requeue(chunk, class, queue);
            return Taken::Failed;
        };
        self.unlist_or_requeue(chunk, class, queue);
        // The page's last owner wrote it before freeing it (it fenced before setting the bit).
        arch::fence();
        let offset = self.layout.pool + chunk * CHUNK_BYTES + page as u64 * (MIN_PAGE_BYTES << class);
        Taken::Page(self.region.body().wrapping_add(offset as usize))
    }

    /// Clears one set bit of `chunk`'s bitmap; the caller reserved a free page in the count.
    /// `None` if the wait for a free's bit gave up (raised in the region).
    fn claim_page_bit(&self, chunk: u64, pages: u32) -> Option<u32> {
        let words = pages.div_ceil(64);
        let mut wait = Wait::new(WaitSite::PageBit);
        loop {
            let mut word = 0;
            while word < words {
                let bits = self.bitmap_word(chunk, word);
                let current = bits.load();
                if current != 0 {
                    let bit = current.trailing_zeros();
                    if bits.fetch_and(!(1u64 << bit)) & (1u64 << bit) != 0 {
                        return Some(word * 64 + bit);
                    }
                }
                word += 1;
            }
            // A free raised the count before its bit became visible here: it is on its way.
            if !wait.snooze(&self.region, || 0) {
                return None;
            }
        }
    }

    /// After allocating from a held chunk: keep it listed if it has free pages, else clear the
    /// listing (a later free lists it again).
    fn unlist_or_requeue(&self, chunk: u64, class: usize, queue: &IndexQueue) {
        let state = self.chunk_state(chunk);
        let mut backoff = Backoff::new();
        loop {
            let current = state.load();
            if current & COUNT_MASK > 0 {
                // Never full: the queue has a slot for every chunk and this one is listed once.
                self.requeue(chunk, class, queue);
                return;
            }
            if state.compare_exchange(current, current & !LISTED).is_ok() {
                self.listed_chunks(class).fetch_sub(1);
                return;
            }
            backoff.retry();
        }
    }

    /// Queues `chunk`, which is listed and held by the caller. If a wait gives up (raised in
    /// the region), the chunk is unlisted instead, so that no one waits for an entry that
    /// does not exist; the next free of one of its pages lists it again.
    fn requeue(&self, chunk: u64, class: usize, queue: &IndexQueue) {
        if queue.enqueue(chunk as u32).is_ok() {
            return;
        }
        let state = self.chunk_state(chunk);
        let mut backoff = Backoff::new();
        loop {
            let current = state.load();
            if current & LISTED == 0 {
                // Not ours to unlist (cannot happen while we hold the listing).
                return;
            }
            if state.compare_exchange(current, current & !LISTED).is_ok() {
                self.listed_chunks(class).fetch_sub(1);
                return;
            }
            backoff.retry();
        }
    }

    /// A chunk from the pool, or, when every chunk is in use, one reclaimed from another page
    /// size's queue.
    fn take_free_chunk(&self, class: usize) -> Option<u64> {
        if let Some(chunk) = self.take_chunk(class, 1) {
            return Some(chunk);
        }
        if self.reclaim_free_chunks(class) { self.take_chunk(class, 1) } else { None }
    }

    /// Moves the entirely free chunks listed for other page sizes to the pool; true if any.
    /// Each queue is walked once: entries are dequeued and re-enqueued unless returned.
    fn reclaim_free_chunks(&self, except: usize) -> bool {
        let mut any = false;
        let mut class = 0;
        while class < CLASSES {
            if class != except
                && let Some(queue) = self.queue(class)
            {
                let pages = pages_per_chunk(class);
                let mut left = queue.available();
                while left > 0 {
                    left -= 1;
                    let Some(chunk) = queue.dequeue() else { break };
                    let chunk = chunk as u64;
                    if chunk >= self.layout.chunks {
                        continue;
                    }
                    let state = self.chunk_state(chunk);
                    let current = state.load();
                    let entirely_free = current >> CLASS_SHIFT == class as u32 + 1
                        && current & COUNT_MASK == pages
                        && current & LISTED != 0;
                    if entirely_free && state.compare_exchange(current, 0).is_ok() {
                        self.listed_chunks(class).fetch_sub(1);
                        self.release_chunk(class, chunk);
                        any = true;
                    } else {
                        // Still listed and held by us: a free cannot unlist it.
                        self.requeue(chunk, class, &queue);
                    }
                }
            }
            class += 1;
        }
        any
    }

    /// Gives a pool chunk to `class`: keeps its first page, lists the rest.
    fn start_chunk(&self, class: usize, queue: &IndexQueue) -> Option<*mut u8> {
        let chunk = self.take_free_chunk(class)?;
        let pages = pages_per_chunk(class);
        let mut word = 0;
        while word < (BITMAP_BYTES / 8) as u32 {
            let first = word * 64;
            let bits = if first >= pages {
                0
            } else if pages - first >= 64 {
                u64::MAX
            } else {
                (1u64 << (pages - first)) - 1
            };
            // Page 0 is ours.
            self.bitmap_word(chunk, word).store(if word == 0 { bits & !1 } else { bits });
            word += 1;
        }
        let free = pages - 1;
        let listed = if free > 0 { LISTED } else { 0 };
        // The bitmap precedes the state, and the state precedes the page's hand-out and the
        // queue entry: frees and holders read them after they saw either.
        arch::fence();
        self.chunk_state(chunk).store(((class as u32 + 1) << CLASS_SHIFT) | listed | free);
        arch::fence();
        if free > 0 {
            self.listed_chunks(class).fetch_add(1);
            self.requeue(chunk, class, queue);
        }
        Some(self.region.body().wrapping_add((self.layout.pool + chunk * CHUNK_BYTES) as usize))
    }

    pub(super) fn free_to_chunk(&self, ptr: *mut u8) {
        let offset = (ptr as u64).wrapping_sub(self.region.body_addr()).wrapping_sub(self.layout.pool);
        let chunk = offset / CHUNK_BYTES;
        if chunk >= self.layout.chunks {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        let state = self.chunk_state(chunk);
        let class = state.load() >> CLASS_SHIFT;
        if class == 0 || class as usize > CLASSES {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        let class = class as usize - 1;
        let page_bytes = MIN_PAGE_BYTES << class;
        if !offset.is_multiple_of(page_bytes) {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        let page = ((offset % CHUNK_BYTES) / page_bytes) as u32;
        let bit = 1u64 << (page % 64);
        // Release the page's contents before it can be handed out again.
        arch::fence();
        if self.bitmap_word(chunk, page / 64).fetch_or(bit) & bit != 0 {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        arch::fence();
        let pages = pages_per_chunk(class);
        let Some(queue) = self.queue(class) else { return };
        let mut backoff = Backoff::new();
        loop {
            let current = state.load();
            if current >> CLASS_SHIFT != class as u32 + 1 {
                // The chunk went back to the pool: the page was not allocated.
                self.region.raise(errors::INVALID_FREE);
                return;
            }
            let free = (current & COUNT_MASK) + 1;
            if current & LISTED != 0 {
                if state.compare_exchange(current, current + 1).is_ok() {
                    return;
                }
            } else if free == pages {
                // An unlisted chunk becomes entirely free only with one page per chunk: it goes
                // straight back to the pool.
                if state.compare_exchange(current, 0).is_ok() {
                    self.release_chunk(class, chunk);
                    return;
                }
            } else if state.compare_exchange(current, (current + 1) | LISTED).is_ok() {
                self.listed_chunks(class).fetch_add(1);
                self.requeue(chunk, class, &queue);
                return;
            }
            backoff.retry();
        }
    }
}

/// What [`take_page`](Ouroboros::take_page) got from a dequeued chunk.
enum Taken {
    Page(*mut u8),
    /// The chunk went back to the pool (or the entry was not a listed chunk of the class).
    Gone,
    /// A wait gave up (raised in the region).
    Failed,
}

const _: () = assert!(CHUNK_BYTES / MIN_PAGE_BYTES <= COUNT_MASK as u64);
