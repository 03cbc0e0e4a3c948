//! CircularMalloc and its variants (Vinkler & Havran, `000_...` sections 4.2-4.4, Alg. 3,
//! Eq. 1): the pool is one circular singly linked list of chunks, each with a header holding a
//! free/used flag and the offset of the next chunk.
//!
//! # The algorithm
//! - **Pre-split** (Eq. 1): at init the pool is cut into chunks of sizes `C(i) = R / 2^floor(log2 i)`,
//!   a binary heap laid out level by level (level `k` holds `2^k` chunks of `R / 2^k`, so every
//!   level takes `R` bytes); the depth is the largest whose heap fits, and what is left forms the
//!   last chunk.
//! - **malloc**: walk the list from the shared hint `memOffset`; claim the first free chunk that
//!   is large enough with a compare-and-swap on its flag; split it when it is at least
//!   `MAX_FRAG` times the request (write the remainder's header, fence, then link it: Alg. 3
//!   lines 14-20); set `memOffset` to the chunk after the allocation.
//! - **free**: merge the chunk with the following one if that one is free and can be claimed,
//!   fence, then flag the chunk free (Alg. 3 lines 24-34).
//! - **Fused** (4.3): the flag and the next offset share one 64-bit word, so a claim is one
//!   compare-and-swap of the whole header and a release one store.
//! - **Multi** (4.4): one `memOffset` per multiprocessor (`Region::sm_slot`), each starting at
//!   its own heap: the pool holds one heap per multiprocessor, of root about `R / #SM`, laid
//!   out one after another, so they form one list as in the single variant.
//!
//! One generic implementation, [`CircularImpl`], serves the four kinds.
//!
//! # Departures from the paper
//! - **Units and pool size**: offsets count 16-byte units (64-bit words), not bytes in 32 bits,
//!   so pools up to [`MAX_POOL_BYTES`] (1 TiB) work; a larger region uses only that much.
//!   Headers take one unit (16 bytes, so data stays 16-byte aligned): the fused header uses
//!   its first 8 bytes only, the split one both words.
//! - **Atomic header reads**: every header another thread may change is read with atomic
//!   loads (the paper reads `mem[offset + NEXT_OFS]` plainly: stale-L1 hazard on current GPUs).
//! - **Check before claim**: a walker reads the header first and tries the compare-and-swap
//!   only on a free chunk that fits (the paper claims every chunk it passes and releases the
//!   ones too small, which writes to every header on the way). A split header is re-read after
//!   the claim, since the chunk may have been used and freed in between.
//! - **Merging while walking**: the paper merges only on `free`, and only with the following
//!   chunk, so a run of small free chunks (e.g. freed in allocation order) never merges again
//!   and a pool can fail although it is all free. Here a walker that finds a free chunk too
//!   small claims it and swallows the free chunks after it (up to the pool's end) until it fits;
//!   if it still does not fit, it releases the larger chunk and walks on.
//! - **Swallowed headers**: a swallowed chunk's header is marked `DEAD` (keeping its next
//!   offset), so a walker that read a link to it before the merge skips it. Every header holds
//!   a 16-bit tag, and a thread that swallows the chunk its own hint points to moves the hint
//!   back to the merged chunk; a header that fails the tag or the range checks (a hint or stale link that
//!   now points into data) sends the walker back to the pool's start, whose chunk is never
//!   swallowed. A stale walker could in principle still meet a swallowed header that the new
//!   owner's data overwrote with exactly a free header's bit pattern: the tag makes this
//!   practically impossible but, as in the paper, it is not excluded.
//! - **Held chunks are visible**: a chunk a thread holds for a moment (claimed by a walker that
//!   swallows or splits it, or being freed and merged) is marked `HELD`, not `USED`, until the
//!   thread is done. A walker that passes a held chunk knows that memory may be about to come
//!   free, as when it loses a race for a chunk that fits.
//! - **Lost races**: a walker that loses the race for a chunk, or finds it held, reads that
//!   header again (up to `MAX_LOOKS_AT_CHUNK` times) rather than follow the next offset it read
//!   before, which the winner may be changing (with the fused header, that offset skipped the
//!   whole remainder being split off).
//! - **Out of memory**: a walker gives up after covering the whole circle once (null) without
//!   meeting another thread's held chunk, a swallowed header or a lost race; otherwise it walks
//!   up to `MAX_CIRCLES` circles, so it never loops for long while other threads hold chunks. A
//!   restart from the pool's start begins the circle again, a few times per request (then it
//!   ends the circle as contended): a circle is only done once every chunk was looked at.
//!
//! # Limits
//! First-fit on a circular list: allocation cost grows with fragmentation; requests split
//! only into remainders of at least one header and one unit. Double frees are detected when
//! the header is no longer `USED` (not when the chunk was reallocated meanwhile).

use super::{Caps, DeviceMalloc, FreeSupport, HEADER_BYTES, MallocKind, Region, errors, round_up};
use dynasoar_device::arch::{self, Backoff, atomic::Atomic64};

/// Bytes of one unit of offsets and sizes; also the alignment of every block.
const UNIT: u64 = 16;
/// A chunk's header takes one unit in front of its data.
const HEADER_UNITS: u64 = 1;
/// Largest pool, in units (the next offset has 40 bits in a header word; 2^36 units is 1 TiB).
const MAX_POOL_UNITS: u64 = 1 << 36;
/// The largest pool served, in bytes.
pub const MAX_POOL_BYTES: u64 = MAX_POOL_UNITS * UNIT;
/// A chunk is split only when it is at least this many times the request (Alg. 3, line 15).
const MAX_FRAG: u64 = 2;
/// Size of the smallest chunks of a pre-split heap (its leaves), in units (512 bytes).
const LEAF_UNITS: u64 = 32;
/// Stride of the `memOffset` words (one 32-byte sector each, so SMs do not share one).
const HINT_STRIDE: u64 = 32;
/// Restarts from the pool's start (after a stale hint or link) per request that begin the
/// circle again instead of ending it (see [`Walk::restart`]).
const MAX_FREE_RESTARTS: u32 = 4;
/// Circles a walker makes before it reports out of memory, if on each it lost a race for a
/// chunk that fit, gave back a merge or passed a `HELD` chunk. Seen on an H200 with 65,536
/// threads in a pool of 16 times their demand: with one circle, up to 200 of them failed; with
/// eight but held chunks looking used, 12 failed after 15 rounds of fragmentation.
const MAX_CIRCLES: u32 = 8;
/// Times a walker reads a chunk's header again after losing the race for it or finding it
/// `HELD`, before it walks on.
const MAX_LOOKS_AT_CHUNK: u32 = 8;
/// Most `memOffset` words of the multi variants.
const MAX_HINTS: u64 = 256;

/// Header word layout: tag in bits 48..64, state in bits 40..48, next offset in bits 0..40
/// (the split header keeps the next offset in its second word and zero here).
const TAG: u64 = 0xC1C0 << 48;
const TAG_MASK: u64 = 0xFFFF << 48;
const STATE_SHIFT: u32 = 40;
const NEXT_MASK: u64 = (1 << STATE_SHIFT) - 1;
const FREE: u64 = 1;
const USED: u64 = 2;
const DEAD: u64 = 3;
/// Held by one thread for a moment (being claimed, merged, split or freed).
const HELD: u64 = 4;

/// Requests up to this many bytes (bounded by the pool at run time).
const MAX_SIZE: u32 = u32::MAX - 2 * UNIT as u32;

/// A chunk header as read: its state, the offset of the next chunk, and the word it came from.
#[derive(Clone, Copy, Debug)]
struct Header {
    state: u64,
    next: u64,
    word: u64,
}

/// CircularMalloc; `FUSED` keeps flag and next offset in one word, `MULTI` keeps one
/// `memOffset` per multiprocessor.
#[derive(Clone, Copy, Debug)]
pub struct CircularImpl<const FUSED: bool, const MULTI: bool> {
    region: Region,
    /// `memOffset` words.
    hints: u64,
    /// Byte offset of the pool in the body.
    pool_offset: u64,
    /// Units of the pool; the last chunk's next offset is this.
    pool_units: u64,
}

/// CircularMalloc (`000_...` 4.2).
pub type Circular = CircularImpl<false, false>;
/// Circular Fused Malloc (4.3).
pub type CircularFused = CircularImpl<true, false>;
/// Circular Multi Malloc (4.4).
pub type CircularMulti = CircularImpl<false, true>;
/// Circular Fused Multi Malloc (4.4).
pub type CircularFusedMulti = CircularImpl<true, true>;

#[inline(always)]
const fn encode(state: u64, next: u64) -> u64 {
    TAG | (state << STATE_SHIFT) | (next & NEXT_MASK)
}

/// The pre-split layout (Eq. 1): `heaps` heaps of `depth` levels with leaves of `LEAF_UNITS`,
/// one after another; the rest of the pool is one more chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Presplit {
    heaps: u64,
    depth: u32,
}

impl Presplit {
    fn for_pool(pool_units: u64, heaps_wanted: u64) -> Self {
        let heaps = heaps_wanted.min(pool_units / LEAF_UNITS).max(1);
        let mut depth = 0;
        while depth < 30 && heaps * Self::heap_units_of(depth + 1) <= pool_units {
            depth += 1;
        }
        Presplit { heaps, depth }
    }

    /// Units of one heap of `depth` levels: every level takes the root's size.
    const fn heap_units_of(depth: u32) -> u64 {
        if depth == 0 { 0 } else { depth as u64 * (LEAF_UNITS << (depth - 1)) }
    }

    fn root_units(&self) -> u64 {
        if self.depth == 0 { 0 } else { LEAF_UNITS << (self.depth - 1) }
    }

    fn heap_units(&self) -> u64 {
        Self::heap_units_of(self.depth)
    }

    fn chunks_per_heap(&self) -> u64 {
        (1u64 << self.depth) - 1
    }
}

impl<const FUSED: bool, const MULTI: bool> CircularImpl<FUSED, MULTI> {
    fn hints_for(region: Region) -> u64 {
        if MULTI { (region.multiprocessors() as u64).min(MAX_HINTS) } else { 1 }
    }

    fn layout(region: Region) -> (u64, u64, u64) {
        let hints = Self::hints_for(region);
        let pool_offset = round_up(hints * HINT_STRIDE, 256);
        let pool_units = (region.body_bytes().saturating_sub(pool_offset) / UNIT).min(MAX_POOL_UNITS);
        (hints, pool_offset, pool_units)
    }

    #[inline(always)]
    fn hint(&self, slot: u64) -> &Atomic64 {
        // SAFETY: `slot < hints`, so the word lies in the hint area before the pool, which is
        // only accessed atomically.
        unsafe { self.region.atomic64((slot % self.hints.max(1)) * HINT_STRIDE) }
    }

    #[inline(always)]
    fn my_hint(&self) -> &Atomic64 {
        self.hint(if MULTI { self.region.sm_slot() as u64 } else { 0 })
    }

    /// The flag (or fused) word of the chunk at `unit`.
    ///
    /// # Safety
    /// `unit < pool_units`.
    #[inline(always)]
    unsafe fn flag_word(&self, unit: u64) -> &Atomic64 {
        // SAFETY: the header unit lies in the pool; headers are only accessed atomically.
        unsafe { self.region.atomic64(self.pool_offset + unit * UNIT) }
    }

    /// The next word of the split header of the chunk at `unit`.
    ///
    /// # Safety
    /// `unit < pool_units`.
    #[inline(always)]
    unsafe fn next_word(&self, unit: u64) -> &Atomic64 {
        // SAFETY: as for `flag_word`, the header's second word.
        unsafe { self.region.atomic64(self.pool_offset + unit * UNIT + 8) }
    }

    /// The header at `unit` (`< pool_units`), or `None` if it is not a plausible header.
    #[inline(always)]
    fn read(&self, unit: u64) -> Option<Header> {
        // SAFETY: callers pass `unit < pool_units`.
        let word = unsafe { self.flag_word(unit) }.load();
        let next = if FUSED {
            word & NEXT_MASK
        } else {
            // SAFETY: as above.
            unsafe { self.next_word(unit) }.load()
        };
        let state = (word >> STATE_SHIFT) & 0xFF;
        let plausible = word & TAG_MASK == TAG
            && (FREE..=HELD).contains(&state)
            && next > unit
            && next <= self.pool_units
            && (FUSED || word & NEXT_MASK == 0);
        plausible.then_some(Header { state, next, word })
    }

    /// Claim the free chunk at `unit`, read as `seen`, marking it `state`; returns its header
    /// as claimed (its next offset is stable while this thread holds it).
    #[inline(always)]
    fn claim(&self, unit: u64, seen: Header, state: u64) -> Option<Header> {
        // SAFETY: `seen` was read at `unit < pool_units`.
        let flag = unsafe { self.flag_word(unit) };
        let word = encode(state, if FUSED { seen.next } else { 0 });
        flag.compare_exchange(seen.word, word).ok()?;
        if FUSED {
            return Some(Header { state, next: seen.next, word });
        }
        // Acquire: the next word that the chunk's last owner wrote before releasing it.
        arch::fence();
        // SAFETY: as above.
        let next = unsafe { self.next_word(unit) }.load();
        Some(Header { state, next, word })
    }

    /// Change the next offset of a chunk this thread holds (`HELD`).
    #[inline(always)]
    fn relink(&self, unit: u64, next: u64) {
        if FUSED {
            // SAFETY: the chunk is held, `unit < pool_units`.
            unsafe { self.flag_word(unit) }.store(encode(HELD, next));
        } else {
            // SAFETY: as above.
            unsafe { self.next_word(unit) }.store(next);
        }
    }

    /// Hand the held chunk at `unit` (ending at `next`) to its user.
    #[inline(always)]
    fn mark_used(&self, unit: u64, next: u64) {
        // SAFETY: the chunk is held, `unit < pool_units`.
        unsafe { self.flag_word(unit) }.store(encode(USED, if FUSED { next } else { 0 }));
    }

    /// Publish the header of a free chunk at `unit` (a held chunk given back, or a new one).
    #[inline(always)]
    fn publish_free(&self, unit: u64, next: u64) {
        if !FUSED {
            // SAFETY: the chunk is held or new, `unit < pool_units`.
            unsafe { self.next_word(unit) }.store(next);
        }
        // Release: the next offset (and, on free, the chunk's last uses) before the flag.
        arch::fence();
        // SAFETY: as above.
        unsafe { self.flag_word(unit) }.store(encode(FREE, if FUSED { next } else { 0 }));
    }

    /// Swallow the free chunks after the held chunk `unit` (whose next offset is `next`) until
    /// it has `want` units or the next chunk is not free; returns the new next offset.
    #[inline(always)]
    fn swallow(&self, unit: u64, mut next: u64, want: u64) -> u64 {
        let start = next;
        while next - unit < want && next < self.pool_units {
            let Some(following) = self.read(next) else { break };
            if following.state != FREE {
                break;
            }
            let Some(dead) = self.claim(next, following, DEAD) else { break };
            // Keep this thread's hint off the swallowed header, which data may overwrite.
            let _ = self.my_hint().compare_exchange(next, unit);
            next = dead.next;
        }
        if next != start {
            self.relink(unit, next);
        }
        next
    }

    /// Next chunk in the circle after one ending at `next`.
    #[inline(always)]
    fn wrap(&self, next: u64) -> u64 {
        if next >= self.pool_units { 0 } else { next }
    }

    /// Alg. 3, mallocCMalloc: the unit of the chunk taken for `need` units, header included.
    fn take(&self, need: u64) -> Option<u64> {
        if self.pool_units == 0 {
            return None;
        }
        let hint = self.my_hint();
        let mut unit = hint.load();
        if unit >= self.pool_units {
            unit = 0;
        }
        let mut walk = Walk::new(self.pool_units);
        let mut backoff = Backoff::new();
        // Reads of the header at `unit` so far (see `MAX_LOOKS_AT_CHUNK`).
        let mut looks_here = 0;
        loop {
            match walk.circle_state() {
                Circle::Walking => {}
                Circle::Again => backoff.snooze(),
                Circle::GiveUp => return None,
            }
            let Some(header) = self.read(unit) else {
                // A stale hint or link into data: start over from the pool's first chunk.
                walk.restart();
                unit = 0;
                continue;
            };
            let fits = header.next - unit >= need;
            if header.state == FREE
                && (fits || header.next < self.pool_units)
                && let Some(held) = self.claim(unit, header, HELD)
            {
                let next =
                    if held.next - unit >= need { held.next } else { self.swallow(unit, held.next, need) };
                if next - unit >= need {
                    let size = next - unit;
                    let mut after = next;
                    if size > need + HEADER_UNITS && need * MAX_FRAG <= size {
                        after = unit + need;
                        self.publish_free(after, next);
                        // The remainder's header is visible before the link to it.
                        arch::fence();
                        self.relink(unit, after);
                    }
                    self.mark_used(unit, after);
                    hint.store(self.wrap(after));
                    return Some(unit);
                }
                // Still too small: give back the merged chunk and go on.
                self.publish_free(unit, next);
                walk.contended();
                looks_here = 0;
                walk.pass(next - unit);
                unit = self.wrap(next);
                continue;
            }
            let lost = header.state == FREE && (fits || header.next < self.pool_units);
            if (lost || header.state == HELD) && looks_here < MAX_LOOKS_AT_CHUNK {
                // Lost the race for this chunk, or another thread holds it for a moment: read
                // its header again instead of following the next offset read before, which
                // the winner is changing. (A header stays a chunk boundary unless it is
                // swallowed, which the read shows.) Following it skipped the remainder that
                // the winner was splitting off: with a fused header, whose flag and next
                // offset are read together, every walker that lost the race at the hint skipped
                // the pool's free tail, and an H200 storm ran for minutes.
                looks_here += 1;
                walk.contended();
                backoff.retry();
                continue;
            }
            looks_here = 0;
            if lost || header.state == HELD || header.state == DEAD {
                // Another thread's chunk for a moment: it may come free, merged with more. A
                // swallowed (`DEAD`) header is reached only through a stale hint or link: the
                // chunk that swallowed it may since have been split, so its next offset can
                // skip chunks.
                walk.contended();
            }
            walk.pass(header.next - unit);
            unit = self.wrap(header.next);
        }
    }
}

/// Where a walk stands at the top of its loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Circle {
    /// The current circle is not done.
    Walking,
    /// A circle ended without a fit but other threads got in the way: walk one more.
    Again,
    /// Out of memory: a circle without a fit and without contention, or `MAX_CIRCLES` of them.
    GiveUp,
}

/// The budget of one malloc's walk: units covered on the current circle, restarts, circles.
///
/// A circle is done when the walk has covered `pool` units since it began or since it last
/// restarted from the pool's start (a restart from unit 0 covers everything by the pool's end,
/// so it starts the count again: counting what the jump skipped as walked would end the circle
/// with chunks never looked at, which is how requests failed in a pool of 16 times the demand).
#[derive(Clone, Copy, Debug)]
struct Walk {
    pool: u64,
    walked: u64,
    restarts: u32,
    circles: u32,
    contended: bool,
}

impl Walk {
    const fn new(pool: u64) -> Self {
        Walk { pool, walked: 0, restarts: 0, circles: 1, contended: false }
    }

    fn pass(&mut self, units: u64) {
        self.walked += units;
    }

    /// Other threads got in the way: this circle does not prove the pool full.
    fn contended(&mut self) {
        self.contended = true;
    }

    /// The walk goes back to the pool's start after a stale hint or link. The first
    /// `MAX_FREE_RESTARTS` of a request begin the circle again; after that, a restart ends the
    /// circle as contended (staleness means other threads are changing the list), so the
    /// request walks at most `MAX_FREE_RESTARTS + MAX_CIRCLES` circles. (Restarts that each
    /// earned a new circle made the multi variants, whose per-multiprocessor hints go stale
    /// often, walk eight circles per failing request on an H200.)
    fn restart(&mut self) {
        if self.restarts < MAX_FREE_RESTARTS {
            self.restarts += 1;
            self.walked = 0;
        } else {
            self.contended = true;
            self.walked = self.pool + 1;
        }
    }

    fn circle_state(&mut self) -> Circle {
        if self.walked <= self.pool {
            Circle::Walking
        } else if !self.contended || self.circles >= MAX_CIRCLES {
            Circle::GiveUp
        } else {
            self.circles += 1;
            (self.walked, self.contended) = (0, false);
            Circle::Again
        }
    }
}

// SAFETY: a chunk is handed out only by the thread whose compare-and-swap moved its header
// from FREE to HELD, and its data (the units after its header, up to its next offset) belongs
// to no other chunk until it is freed: splitting gives the remainder its own header, merging
// only takes free chunks claimed by the merging thread. Every pointer lies in the pool,
// 16-byte aligned (`UNIT`).
unsafe impl<const FUSED: bool, const MULTI: bool> DeviceMalloc for CircularImpl<FUSED, MULTI> {
    const KIND: MallocKind = match (FUSED, MULTI) {
        (false, false) => MallocKind::Circular,
        (true, false) => MallocKind::CircularFused,
        (false, true) => MallocKind::CircularMulti,
        (true, true) => MallocKind::CircularFusedMulti,
    };
    const CAPS: Caps = Caps {
        max_size: MAX_SIZE,
        align: UNIT as u32,
        free: FreeSupport::Reuses,
        min_region_bytes: HEADER_BYTES + MAX_HINTS * HINT_STRIDE + 64 * 1024,
        relays_above: u32::MAX,
    };

    unsafe fn init(region: Region, _phase: u32) {
        // SAFETY: attached to the region being initialised.
        let m = unsafe { Self::attach(region) };
        let presplit = Presplit::for_pool(m.pool_units, m.hints);
        let per_heap = presplit.chunks_per_heap();
        let heap_chunks = presplit.heaps * per_heap;
        let heaped_units = presplit.heaps * presplit.heap_units();
        let tail = heaped_units < m.pool_units;
        let chunks = heap_chunks + tail as u64;
        let (first, stride) = (arch::global_thread_id() as u64, arch::global_thread_count() as u64);
        let mut chunk = first;
        while chunk < chunks {
            let (unit, next) = if chunk < heap_chunks {
                // Chunk `i` (from 1) of a heap is on level floor(log2 i), each level `root`
                // units long.
                let (heap, i) = (chunk / per_heap.max(1), chunk % per_heap.max(1) + 1);
                let level = 63 - i.leading_zeros() as u64;
                let size = presplit.root_units() >> level;
                let unit =
                    heap * presplit.heap_units() + level * presplit.root_units() + (i - (1 << level)) * size;
                (unit, unit + size)
            } else {
                (heaped_units, m.pool_units)
            };
            if unit < m.pool_units {
                m.publish_free(unit, next);
            }
            chunk += stride;
        }
        let mut slot = first;
        while slot < m.hints {
            let start = if presplit.depth == 0 { 0 } else { (slot % presplit.heaps) * presplit.heap_units() };
            m.hint(slot).store(start);
            slot += stride;
        }
    }

    #[inline(always)]
    unsafe fn attach(region: Region) -> Self {
        let (hints, pool_offset, pool_units) = Self::layout(region);
        CircularImpl { region, hints, pool_offset, pool_units }
    }

    fn malloc(&self, size: u32) -> *mut u8 {
        let need = HEADER_UNITS + (size as u64).div_ceil(UNIT);
        match self.take(need) {
            Some(unit) => {
                self.region.body().wrapping_add((self.pool_offset + (unit + HEADER_UNITS) * UNIT) as usize)
            }
            None => core::ptr::null_mut(),
        }
    }

    unsafe fn free(&self, ptr: *mut u8) {
        let offset = (ptr as u64).wrapping_sub(self.region.body_addr() + self.pool_offset);
        let data_unit = offset / UNIT;
        if !offset.is_multiple_of(UNIT) || data_unit < HEADER_UNITS || data_unit > self.pool_units {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        let unit = data_unit - HEADER_UNITS;
        // Hold it while merging: walkers then know it is coming free. A failed claim is a
        // double free racing with this one.
        let Some(header) =
            self.read(unit).filter(|h| h.state == USED).and_then(|h| self.claim(unit, h, HELD))
        else {
            self.region.raise(errors::INVALID_FREE);
            return;
        };
        // Alg. 3, freeCMalloc: merge with the following chunk if it is free.
        let next = self.swallow(unit, header.next, header.next - unit + 1);
        if next != header.next {
            self.my_hint().store(self.wrap(next));
        }
        self.publish_free(unit, next);
    }
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    extern crate alloc;
    extern crate std;
    use alloc::vec::Vec;

    use super::*;
    use crate::malloc::check::check_allocations;
    use crate::malloc::testing::{HostRegion, StormConfig, run_grid, take_until_null};

    const REGION: u64 = 1 << 20;

    fn each_kind(test: impl Fn(MallocKind)) {
        for kind in [
            MallocKind::Circular,
            MallocKind::CircularFused,
            MallocKind::CircularMulti,
            MallocKind::CircularFusedMulti,
        ] {
            test(kind);
        }
    }

    fn with<R>(
        kind: MallocKind,
        region: &HostRegion,
        f: impl Fn(&dyn Fn(u32) -> *mut u8, &dyn Fn(*mut u8)) -> R,
    ) -> R {
        let any = region.any();
        assert_eq!(any.kind(), kind);
        f(&|size| any.malloc(size), &|ptr| unsafe { any.free(ptr) })
    }

    /// The chunks of the list, walked from the pool's start: (unit, next, state).
    fn chunks<const F: bool, const M: bool>(m: &CircularImpl<F, M>) -> Vec<(u64, u64, u64)> {
        let mut out = Vec::new();
        let mut unit = 0;
        while unit < m.pool_units {
            let h = m.read(unit).expect("a valid header");
            out.push((unit, h.next, h.state));
            unit = h.next;
        }
        out
    }

    #[test]
    fn presplit_is_a_binary_heap_per_hint() {
        let region = HostRegion::new(MallocKind::Circular, REGION, 0);
        let m = region.typed::<Circular>();
        let list = chunks(&m);
        let p = Presplit::for_pool(m.pool_units, 1);
        assert!(p.depth >= 3);
        assert_eq!(list.len() as u64, p.chunks_per_heap() + (p.heap_units() < m.pool_units) as u64);
        let root = p.root_units();
        assert_eq!(list[0].1 - list[0].0, root);
        assert_eq!(list[1].1 - list[1].0, root / 2);
        assert_eq!(list[2].1 - list[2].0, root / 2);
        assert_eq!(list[3].1 - list[3].0, root / 4);
        assert!(list.iter().all(|c| c.2 == FREE));
        let region = HostRegion::new(MallocKind::CircularMulti, REGION, 0);
        let m = region.typed::<CircularMulti>();
        let p = Presplit::for_pool(m.pool_units, m.hints);
        assert_eq!(p.heaps, 4);
        assert!(p.root_units() < root, "smaller heaps for several multiprocessors");
        let list = chunks(&m);
        assert_eq!(list.len() as u64, 4 * p.chunks_per_heap() + (4 * p.heap_units() < m.pool_units) as u64);
        for slot in 0..4 {
            assert_eq!(m.hint(slot).load(), slot * p.heap_units());
        }
    }

    /// Walks on, `step` units at a time; returns the units covered before the walk left its
    /// circle, and how it left.
    fn walk_until_circle_ends(walk: &mut Walk, step: u64) -> (u64, Circle) {
        let mut covered = 0;
        loop {
            match walk.circle_state() {
                Circle::Walking => {}
                other => return (covered, other),
            }
            walk.pass(step);
            covered += step;
        }
    }

    #[test]
    fn a_restarted_walk_still_covers_the_whole_pool() {
        let pool = 1000;
        let mut walk = Walk::new(pool);
        // Most of a circle, then a stale link: the walk from the start must cover the pool.
        walk.pass(900);
        walk.restart();
        let (covered, end) = walk_until_circle_ends(&mut walk, 10);
        assert!(covered >= pool, "only {covered} units looked at after the restart");
        assert_eq!(end, Circle::GiveUp, "no contention: out of memory after one full circle");
    }

    #[test]
    fn restarts_beyond_the_free_ones_end_the_circle_as_contended() {
        let mut walk = Walk::new(1000);
        for _ in 0..MAX_FREE_RESTARTS {
            walk.restart();
            assert_eq!(walk.circle_state(), Circle::Walking);
        }
        walk.restart();
        assert_eq!(walk.circle_state(), Circle::Again, "staleness is contention");
        // Every further circle ends at its first stale link; the request gives up in time.
        let mut circles = 1;
        loop {
            walk.restart();
            match walk.circle_state() {
                Circle::Again => circles += 1,
                Circle::GiveUp => break,
                Circle::Walking => unreachable!("a restart past the budget ends the circle"),
            }
        }
        assert_eq!(circles + 1, MAX_CIRCLES);
    }

    #[test]
    fn contention_earns_another_circle_up_to_the_limit() {
        let mut walk = Walk::new(100);
        let mut circles = 0;
        loop {
            walk.contended();
            match walk_until_circle_ends(&mut walk, 7).1 {
                Circle::Again => circles += 1,
                Circle::GiveUp => break,
                Circle::Walking => unreachable!(),
            }
        }
        assert_eq!(circles + 1, MAX_CIRCLES);
    }

    #[test]
    fn sizes_alignment_split_and_reuse() {
        each_kind(|kind| {
            let region = HostRegion::new(kind, REGION, 0);
            with(kind, &region, |malloc, free| {
                let (lo, hi) = region.bounds();
                let sizes = [1u32, 15, 16, 17, 32, 255, 256, 257, 4096, 65536];
                let ptrs: Vec<_> = sizes.iter().map(|&s| malloc(s)).collect();
                let blocks: Vec<_> = ptrs.iter().zip(sizes).map(|(&p, s)| (p as u64, s as u64)).collect();
                assert!(blocks.iter().all(|b| b.0 != 0), "{kind}");
                check_allocations(&blocks, 16, Some((lo, hi))).unwrap_or_else(|e| panic!("{kind}: {e}"));
                for &p in &ptrs {
                    free(p);
                }
                assert_eq!(region.errors(), 0, "{kind}");
                // Everything is free again: a request of most of the pool succeeds, because
                // walkers merge free neighbours.
                let big = malloc((REGION / 2) as u32);
                assert!(!big.is_null(), "{kind}: free memory is merged and reused");
                free(big);
                assert_eq!(region.errors(), 0, "{kind}");
            });
        });
    }

    #[test]
    fn out_of_memory_returns_null_and_recovers() {
        each_kind(|kind| {
            let region = HostRegion::new(kind, REGION, 0);
            with(kind, &region, |malloc, free| {
                let held = take_until_null(|| malloc(1000));
                assert!(held.len() > 500, "{kind}: {} blocks of 1000 from 1 MiB", held.len());
                assert!(malloc(1000).is_null(), "{kind}: still full");
                let blocks: Vec<_> = held.iter().map(|&p| (p as u64, 1000)).collect();
                check_allocations(&blocks, 16, Some(region.bounds()))
                    .unwrap_or_else(|e| panic!("{kind}: {e}"));
                for &p in &held {
                    free(p);
                }
                assert!(!malloc(500_000).is_null(), "{kind}: recovered after freeing everything");
                assert_eq!(region.errors(), errors::OUT_OF_MEMORY, "{kind}: only the failed mallocs");
            });
        });
    }

    #[test]
    fn bad_and_double_frees_are_reported() {
        each_kind(|kind| {
            let region = HostRegion::new(kind, REGION, 0);
            with(kind, &region, |malloc, free| {
                let p = malloc(64);
                free(p);
                assert_eq!(region.errors(), 0);
                free(p);
                assert_eq!(region.errors(), errors::INVALID_FREE, "{kind}: double free");
            });
            let region = HostRegion::new(kind, REGION, 0);
            with(kind, &region, |malloc, free| {
                let p = malloc(64);
                free(p.wrapping_add(16));
                assert_eq!(region.errors(), errors::INVALID_FREE, "{kind}: pointer into a block");
            });
            let region = HostRegion::new(kind, REGION, 0);
            with(kind, &region, |_, free| {
                let mut outside = 0u64;
                free(&mut outside as *mut u64 as *mut u8);
                assert_eq!(region.errors(), errors::INVALID_FREE, "{kind}: pointer outside");
            });
        });
    }

    #[test]
    fn free_merges_with_the_following_free_chunk() {
        let region = HostRegion::new(MallocKind::CircularFused, REGION, 0);
        let m = region.typed::<CircularFused>();
        let a = m.malloc(100);
        let b = m.malloc(100);
        assert_eq!(b as u64 - a as u64, 128, "split: 7 data units and a header");
        unsafe { m.free(b) };
        unsafe { m.free(a) };
        let list = chunks(&m);
        assert_eq!(list[0].2, FREE);
        assert!(list[0].1 > 16, "a merged with b and the remainder after it");
        assert_eq!(region.errors(), 0);
    }

    #[test]
    fn concurrent_alloc_free_rounds() {
        each_kind(|kind| {
            let region = HostRegion::new(kind, 2 << 20, 0);
            let any = region.any();
            for round in 0..8u64 {
                let blocks = std::sync::Mutex::new(Vec::new());
                run_grid(16, |t| {
                    let mut rng = dynasoar_device::rand::Rng::new(round, t as u64);
                    let mut mine = Vec::new();
                    for _ in 0..128 {
                        let size = 1 + (rng.next_u64() % 512) as u32;
                        let p = any.malloc(size);
                        assert!(!p.is_null(), "{kind}: a pool of several times the demand");
                        // SAFETY: the block is this thread's, `size` bytes.
                        unsafe { core::ptr::write_bytes(p, t as u8, size as usize) };
                        mine.push((p as u64, size as u64));
                        // Free some at once, so frees and mallocs race.
                        if rng.next_u64().is_multiple_of(3)
                            && let Some((q, _)) = mine.pop()
                        {
                            unsafe { any.free(q as *mut u8) };
                        }
                    }
                    blocks.lock().unwrap().extend(mine);
                });
                let blocks = blocks.into_inner().unwrap();
                check_allocations(&blocks, 16, Some(region.bounds()))
                    .unwrap_or_else(|e| panic!("{kind}: {e}"));
                run_grid(16, |t| {
                    for &(p, _) in blocks.iter().skip(t as usize).step_by(16) {
                        unsafe { any.free(p as *mut u8) };
                    }
                });
            }
            assert_eq!(region.errors(), 0, "{kind}");
        });
    }

    #[test]
    fn storm() {
        each_kind(|kind| {
            let region = HostRegion::new(kind, 4 << 20, 0);
            let report =
                region.storm(StormConfig { threads: 8, per_thread: 200, sizes: (1, 512), rounds: 12 });
            assert_eq!(report.failed, 0, "{kind}");
            assert_eq!(region.errors(), 0, "{kind}");
        });
    }
}
