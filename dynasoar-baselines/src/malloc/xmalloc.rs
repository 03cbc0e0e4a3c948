//! XMalloc (Huang et al. 2010; the survey `002_...` section 2.2 and Figure 1): coalesced
//! requests, basic blocks of static sizes cut from superblocks, lock-free FIFO buffers, and a
//! heap of memoryblocks for superblocks and large requests.
//!
//! # The design
//! - The lanes of a warp that ask together are coalesced: one leader allocates one *basic
//!   block* for the sum of their requests and hands each lane a sub-range.
//! - Basic blocks have static sizes (here 64 B to 4 KiB, powers of two). Each size has a
//!   *first-level buffer* (free basic blocks) and a *second-level buffer* (superblocks with
//!   free basic blocks); a superblock is split into 32 basic blocks. A basic block comes from
//!   the first level, else from a buffered superblock, else from a new superblock.
//! - Superblocks and large requests are *memoryblocks* of a heap laid out as a linked list
//!   over the pool (each block's header holds its size and its predecessor's), merged with free
//!   neighbours on free.
//! - Free: a sub-range decrements its basic block's count of live sub-ranges; a basic block
//!   whose count reaches zero goes to the first-level buffer, or, when that is full, back to its
//!   superblock; a superblock whose basic blocks are all free and which no buffer holds goes
//!   back to the heap.
//!
//! # Our implementation and departures
//! - Independent thread scheduling: the original's buffers and coalescing are warp-synchronous.
//!   Here the buffers are bounded MPMC queues with ticketed slots (each slot's sequence number
//!   says whose turn it is; a claimed slot not yet published reads as empty, and a full queue
//!   refuses, so nothing waits on another thread). Coalescing uses `WarpGroup::current()` and
//!   `shfl` with that group's mask.
//! - Coalescing is in sub-groups of at most 8 lanes, and only for requests up to 480 bytes,
//!   so that a sub-group's sum fits the largest basic block (4 KiB, keeping a superblock of
//!   32 of them at 128 KiB so that regions of 256 KiB work). Larger requests get a basic block
//!   of their own, or, above 4,064 bytes (the largest block less its header and tag), a
//!   memoryblock.
//! - Each sub-range starts with a 16-byte tag (its basic block, or its memoryblock for large
//!   requests, and a live/freed word), so `free` works per pointer and detects double frees.
//! - A superblock's free basic blocks are a 32-bit mask in one atomic word, together with a
//!   flag saying that a second-level buffer (or a thread that popped it) holds it: that flag
//!   decides, without locks, who publishes a superblock again and who returns it to the heap.
//! - The memoryblock heap is guarded by one lock whose waiters back off (`Backoff::snooze`),
//!   as the original's list manipulation is a critical section; it is taken only for
//!   superblocks and requests above 4 KiB. The search is next-fit (a rover) instead of always
//!   from the head.
//! - When the heap cannot serve a superblock, the buffers of every size are drained (free basic
//!   blocks back to their superblocks, buffered superblocks that are all free back to the heap,
//!   where they merge) and the heap is tried once more. A heap that failed a request refuses
//!   as large ones at once, without its lock, until something is freed into it: under out of
//!   memory, thousands of threads would otherwise scan the whole list one after the other.
//!
//! # Limits
//! No relays: everything comes from the region. Up to 32 bytes of tag and header per request,
//! plus the rounding to a power of two. A basic block is reusable only when all the lanes it
//! served have freed their sub-ranges. Superblocks with free basic blocks that no buffer holds
//! (a buffer was full) serve again only once one of their blocks is freed. Buffers hold 64 to
//! 16,384 entries per size (about 1/64 of the region for all of them together): the original
//! sizes them statically; here they must hold the superblocks that every warp of a large launch
//! may start at the same moment, or those superblocks' other 31 blocks sit idle until a free.
//! Only one thread at a time drains the buffers when memory runs out; a request failing
//! meanwhile returns null. On the CPU backend, whose emulated threads the OS may deschedule
//! between claiming a buffer slot and publishing it, a `pop` that meets a claimed slot yields
//! to its producer a bounded number of times before it reads the buffer as empty; the GPU's
//! code has no such wait.

use super::{Caps, DeviceMalloc, FreeSupport, MallocKind, Region, errors, round_up};
use dynasoar_device::arch::{self, Backoff, WarpGroup, atomic::Atomic32, atomic::Atomic64};

/// Basic block sizes: `MIN_BASIC_BYTES << class`, for `class < CLASSES`.
const CLASSES: u64 = 7;
const MIN_BASIC_BYTES: u64 = 64;
const MAX_BASIC_BYTES: u64 = MIN_BASIC_BYTES << (CLASSES - 1);
/// Basic blocks per superblock (the original's 32: one bit each in the free mask).
const BASIC_PER_SUPER: u64 = 32;
/// All basic blocks of a superblock free.
const ALL_FREE: u32 = u32::MAX;
/// A superblock's state word: bits 0..32 the free mask, this bit: a buffer holds it.
const IN_BUFFER: u64 = 1 << 32;

/// Header of a basic block: live sub-ranges (u32), size class (u32), superblock (u64).
const BASIC_HEADER: u64 = 16;
/// Tag before every pointer handed out: owner (u64: basic block or memoryblock), state (u64).
const TAG_BYTES: u64 = 16;
/// Header of a memoryblock: size and free bit (u64), size of the previous block (u64).
const BLOCK_HEADER: u64 = 16;
/// Header of a superblock, after its memoryblock header: state (u64), size class (u32).
const SUPER_HEADER: u64 = 64;
/// Memoryblock sizes are multiples of this.
const BLOCK_GRAIN: u64 = 64;
/// The free bit of a memoryblock's size word.
const BLOCK_FREE: u64 = 1;

/// Lanes coalesced into one basic block, at most.
const COALESCE_LANES: u32 = 8;
/// Largest sub-range (tag included) that is coalesced: eight of them fit the largest block.
const COALESCE_MAX: u64 = (MAX_BASIC_BYTES - BASIC_HEADER) / COALESCE_LANES as u64 / 16 * 16;

/// Tag states.
const SMALL_LIVE: u64 = 0x584d_414c_4c53_4c56; // "XMALLSLV"
const LARGE_LIVE: u64 = 0x584d_414c_4c4c_4c56; // "XMALLLLV"
const FREED: u64 = 0x584d_414c_4c46_5245; // "XMALLFRE"

/// Entries per buffer: a power of two between these, about 1/64 of the body for all buffers
/// (enough that superblocks with free blocks stay in a buffer when thousands of warps start
/// new ones at once; see [`Layout`]).
const MIN_QUEUE_CAP: u64 = 64;
const MAX_QUEUE_CAP: u64 = 16384;
/// How often a `pop` on the CPU backend yields to the producer of a claimed, unpublished slot
/// before it reads the buffer as empty (see `XMalloc::pop`).
#[cfg(not(target_arch = "nvptx64"))]
const HOST_CLAIM_WAITS: u32 = 64;
/// A queue: head (u64) and tail (u64) on their own sectors, then slots of (sequence, value).
const QUEUE_SLOTS: u64 = 128;
/// The body: the heap's lock (u32) and rover (u64), then the queues, then the pool.
const LOCK_OFFSET: u64 = 0;
const ROVER_OFFSET: u64 = 8;
/// Heap frees so far (u64), and the smallest request that failed since the last free (u64:
/// frees << 32 | grains; 0: none), so that a full heap refuses at once, without its lock.
const FREES_OFFSET: u64 = 16;
const FAILED_OFFSET: u64 = 24;
const QUEUES_OFFSET: u64 = 256;
/// Set while one thread drains the buffers (u32; see `drain_buffers`).
const DRAINING_OFFSET: u64 = 32;
/// The pool's offset with the smallest buffers.
const MIN_POOL_OFFSET: u64 = round_up(QUEUES_OFFSET + 2 * CLASSES * (QUEUE_SLOTS + MIN_QUEUE_CAP * 16), 256);
/// No offset in the pool: "none".
const NONE: u64 = u64::MAX;

/// The two buffers of a size class.
#[derive(Clone, Copy)]
enum Level {
    /// Free basic blocks.
    First = 0,
    /// Superblocks with free basic blocks.
    Second = 1,
}

/// Bytes of a basic block of `class`.
#[inline(always)]
const fn basic_bytes(class: u64) -> u64 {
    MIN_BASIC_BYTES << class
}

/// The smallest class whose basic blocks hold `bytes` (at most `MAX_BASIC_BYTES`).
#[inline(always)]
fn class_for(bytes: u64) -> u64 {
    let bytes = bytes.max(MIN_BASIC_BYTES);
    (64 - (bytes - 1).leading_zeros() as u64) - MIN_BASIC_BYTES.trailing_zeros() as u64
}

/// Bytes of the memoryblock of a superblock of `class`.
#[inline(always)]
const fn superblock_bytes(class: u64) -> u64 {
    round_up(BLOCK_HEADER + SUPER_HEADER + BASIC_PER_SUPER * basic_bytes(class), BLOCK_GRAIN)
}

/// Where the buffers and the pool lie in a body (a pure function of its size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    queue_cap: u64,
    pool_offset: u64,
    pool_bytes: u64,
}

impl Layout {
    #[inline(always)]
    fn of(body_bytes: u64) -> Layout {
        let target = body_bytes / 64 / (2 * CLASSES * 16);
        let floor_pow2 = if target == 0 { 0 } else { 1 << (63 - target.leading_zeros()) };
        let queue_cap = floor_pow2.clamp(MIN_QUEUE_CAP, MAX_QUEUE_CAP);
        let pool_offset = round_up(QUEUES_OFFSET + 2 * CLASSES * (QUEUE_SLOTS + queue_cap * 16), 256);
        let pool_bytes = body_bytes.saturating_sub(pool_offset) / BLOCK_GRAIN * BLOCK_GRAIN;
        Layout { queue_cap, pool_offset, pool_bytes }
    }

    #[inline(always)]
    fn queue_bytes(&self) -> u64 {
        QUEUE_SLOTS + self.queue_cap * 16
    }
}

/// XMalloc over a region.
#[derive(Clone, Copy, Debug)]
pub struct XMalloc {
    region: Region,
    layout: Layout,
    pool_bytes: u64,
}

impl XMalloc {
    /// The word at `offset` of the body.
    #[inline(always)]
    fn body64(&self, offset: u64) -> &Atomic64 {
        // SAFETY: callers pass 8-aligned offsets of metadata or of the pool's headers and tags,
        // which lie in the body and are only accessed atomically.
        unsafe { self.region.atomic64(offset) }
    }

    /// The word at `offset` of the pool.
    #[inline(always)]
    fn pool64(&self, offset: u64) -> &Atomic64 {
        self.body64(self.layout.pool_offset + offset)
    }

    #[inline(always)]
    fn pool32(&self, offset: u64) -> &Atomic32 {
        // SAFETY: as for `body64`, 4-aligned.
        unsafe { self.region.atomic32(self.layout.pool_offset + offset) }
    }

    #[inline(always)]
    fn pointer(&self, pool_offset: u64) -> *mut u8 {
        self.region.body().wrapping_add((self.layout.pool_offset + pool_offset) as usize)
    }

    // ---- Buffers: bounded queues with ticketed slots --------------------------------------

    #[inline(always)]
    fn queue(&self, class: u64, level: Level) -> u64 {
        QUEUES_OFFSET + (class * 2 + level as u64) * self.layout.queue_bytes()
    }

    #[inline(always)]
    fn slot(&self, queue: u64, ticket: u64) -> (&Atomic64, &Atomic64) {
        let slot = queue + QUEUE_SLOTS + (ticket & (self.layout.queue_cap - 1)) * 16;
        (self.body64(slot), self.body64(slot + 8))
    }

    /// Append `value`; false when the queue is full.
    fn push(&self, class: u64, level: Level, value: u64) -> bool {
        let queue = self.queue(class, level);
        let tail = self.body64(queue + 64);
        let mut backoff = Backoff::new();
        loop {
            let ticket = tail.load();
            let (sequence, slot_value) = self.slot(queue, ticket);
            let turn = sequence.load() as i64 - ticket as i64;
            if turn == 0 {
                if tail.compare_exchange(ticket, ticket + 1).is_ok() {
                    // The slot's last reader has read its value before handing it over.
                    arch::fence();
                    slot_value.store(value);
                    // The value before the sequence number that publishes it.
                    arch::fence();
                    sequence.store(ticket + 1);
                    return true;
                }
            } else if turn < 0 {
                return false;
            }
            backoff.retry();
        }
    }

    /// The oldest value, or `None` when empty (or its producer has not published it yet).
    fn pop(&self, class: u64, level: Level) -> Option<u64> {
        let queue = self.queue(class, level);
        let head = self.body64(queue);
        let mut backoff = Backoff::new();
        #[cfg(not(target_arch = "nvptx64"))]
        let mut waits = 0;
        loop {
            let ticket = head.load();
            let (sequence, slot_value) = self.slot(queue, ticket);
            let turn = sequence.load() as i64 - (ticket + 1) as i64;
            if turn == 0 {
                if head.compare_exchange(ticket, ticket + 1).is_ok() {
                    arch::fence();
                    let value = slot_value.load();
                    arch::fence();
                    sequence.store(ticket + self.layout.queue_cap);
                    return Some(value);
                }
            } else if turn < 0 {
                // On the CPU backend an emulated thread is an OS thread, which the OS may
                // deschedule between claiming this slot (the tail is past it) and publishing
                // its value, for a whole time slice: read as empty meanwhile, the buffer made
                // every other request open a superblock of its own (a storm of 8 threads on 2
                // cores ran out of a pool of 8 times its demand so). There the producer gets a
                // bounded number of chances first. (A GPU thread publishes within a few
                // instructions of its claim.)
                #[cfg(not(target_arch = "nvptx64"))]
                if waits < HOST_CLAIM_WAITS && self.body64(queue + 64).load() > ticket {
                    waits += 1;
                    arch::nanosleep(0);
                    continue;
                }
                return None;
            }
            backoff.retry();
        }
    }

    // ---- The memoryblock heap ---------------------------------------------------------------

    fn lock_heap(&self) {
        // SAFETY: the lock word, only accessed atomically.
        let lock = unsafe { self.region.atomic32(LOCK_OFFSET) };
        let mut backoff = Backoff::new();
        while lock.compare_exchange(0, 1).is_err() {
            backoff.snooze();
        }
        // The previous holder's header writes before ours.
        arch::fence();
    }

    fn unlock_heap(&self) {
        arch::fence();
        // SAFETY: as in `lock_heap`.
        unsafe { self.region.atomic32(LOCK_OFFSET) }.store(0);
    }

    /// A memoryblock of `bytes` (a multiple of the grain, header included): its offset.
    fn heap_alloc(&self, bytes: u64) -> Option<u64> {
        let pool = self.pool_bytes;
        let rover = self.body64(ROVER_OFFSET);
        let grains = (bytes / BLOCK_GRAIN).min(u32::MAX as u64);
        let (frees, failed) = (self.body64(FREES_OFFSET), self.body64(FAILED_OFFSET));
        let last_failure = failed.load();
        if last_failure != 0
            && last_failure >> 32 == frees.load() & 0xffff_ffff
            && grains >= last_failure & 0xffff_ffff
        {
            // Nothing was freed since a request this large found no block: it would fail too
            // (a stale answer only fails a request in a heap that was full a moment ago).
            return None;
        }
        self.lock_heap();
        let start = rover.load();
        let mut block = start;
        let mut found = None;
        loop {
            let word = self.pool64(block).load();
            let size = word & !BLOCK_FREE;
            if size == 0 || block + size > pool {
                break; // Not a block: never happens while the list is intact.
            }
            if word & BLOCK_FREE != 0 && size >= bytes {
                let mut taken = size;
                if size - bytes >= BLOCK_GRAIN * 4 {
                    let rest = block + bytes;
                    self.pool64(rest).store((size - bytes) | BLOCK_FREE);
                    self.pool64(rest + 8).store(bytes);
                    let after = block + size;
                    if after < pool {
                        self.pool64(after + 8).store(size - bytes);
                    }
                    taken = bytes;
                }
                self.pool64(block).store(taken);
                let next = block + taken;
                rover.store(if next < pool { next } else { 0 });
                found = Some(block);
                break;
            }
            block += size;
            if block >= pool {
                block = 0;
            }
            if block == start {
                break;
            }
        }
        if found.is_none() {
            let epoch = frees.load() & 0xffff_ffff;
            let last_failure = failed.load();
            let smallest = if last_failure != 0 && last_failure >> 32 == epoch {
                grains.min(last_failure & 0xffff_ffff)
            } else {
                grains
            };
            failed.store(epoch << 32 | smallest.max(1));
        }
        self.unlock_heap();
        found
    }

    /// Give memoryblock `block` back, merging it with free neighbours.
    fn heap_free(&self, block: u64) {
        let pool = self.pool_bytes;
        if !block.is_multiple_of(BLOCK_GRAIN) || block >= pool {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        let rover = self.body64(ROVER_OFFSET);
        self.lock_heap();
        let word = self.pool64(block).load();
        let mut size = word & !BLOCK_FREE;
        if word & BLOCK_FREE != 0 || size == 0 || block + size > pool {
            self.unlock_heap();
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        let next = block + size;
        if next < pool {
            let next_word = self.pool64(next).load();
            if next_word & BLOCK_FREE != 0 {
                size += next_word & !BLOCK_FREE;
                if rover.load() == next {
                    rover.store(block);
                }
            }
        }
        let mut start = block;
        let previous_size = self.pool64(block + 8).load();
        if block != 0 && previous_size != 0 && previous_size <= block {
            let previous = block - previous_size;
            let previous_word = self.pool64(previous).load();
            if previous_word & BLOCK_FREE != 0 {
                size += previous_word & !BLOCK_FREE;
                if rover.load() == block {
                    rover.store(previous);
                }
                start = previous;
            }
        }
        self.pool64(start).store(size | BLOCK_FREE);
        let after = start + size;
        if after < pool {
            self.pool64(after + 8).store(size);
        }
        self.body64(FREES_OFFSET).fetch_add(1);
        self.unlock_heap();
    }

    // ---- Superblocks and basic blocks ----------------------------------------------------

    #[inline(always)]
    fn super_state(&self, superblock: u64) -> &Atomic64 {
        self.pool64(superblock + BLOCK_HEADER)
    }

    #[inline(always)]
    fn basic_block(&self, superblock: u64, class: u64, index: u64) -> u64 {
        superblock + BLOCK_HEADER + SUPER_HEADER + index * basic_bytes(class)
    }

    /// Drop the buffer's hold on `superblock`; it goes back to the heap if all is free.
    fn release_superblock(&self, superblock: u64) {
        let state = self.super_state(superblock);
        let mut backoff = Backoff::new();
        loop {
            let current = state.load();
            if state.compare_exchange(current, current & !IN_BUFFER).is_ok() {
                if current as u32 == ALL_FREE {
                    self.heap_free(superblock);
                }
                return;
            }
            backoff.retry();
        }
    }

    /// Put `superblock` (whose hold the caller has) in its second-level buffer.
    fn publish_superblock(&self, superblock: u64, class: u64) {
        if !self.push(class, Level::Second, superblock) {
            self.release_superblock(superblock);
        }
    }

    /// Write a basic block's header when it leaves its superblock.
    fn carve(&self, superblock: u64, class: u64, index: u64) -> u64 {
        let block = self.basic_block(superblock, class, index);
        self.pool32(block + 4).store(class as u32);
        self.pool64(block + 8).store(superblock);
        block
    }

    /// A basic block from `superblock`, which the caller popped from the second-level buffer.
    fn take_from_superblock(&self, superblock: u64, class: u64) -> Option<u64> {
        let state = self.super_state(superblock);
        let mut backoff = Backoff::new();
        loop {
            let current = state.load();
            let free = current as u32;
            if free == 0 {
                // Cannot happen: only the holder takes blocks and it published a non-empty one.
                self.release_superblock(superblock);
                return None;
            }
            let index = free.trailing_zeros();
            let rest = free & !(1 << index);
            // An exhausted superblock leaves the buffers until a block comes back.
            let next = if rest == 0 { 0 } else { rest as u64 | IN_BUFFER };
            if state.compare_exchange(current, next).is_ok() {
                if rest != 0 {
                    self.publish_superblock(superblock, class);
                }
                return Some(self.carve(superblock, class, index as u64));
            }
            backoff.retry();
        }
    }

    /// Give basic block `block` back to its superblock.
    fn return_to_superblock(&self, block: u64) {
        let superblock = self.pool64(block + 8).load();
        let class = self.pool32(block + 4).load() as u64;
        if class >= CLASSES || superblock >= block {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        let index = (block - superblock - BLOCK_HEADER - SUPER_HEADER) / basic_bytes(class);
        let bit = 1u32 << (index % BASIC_PER_SUPER);
        let state = self.super_state(superblock);
        let mut backoff = Backoff::new();
        loop {
            let current = state.load();
            if current as u32 & bit != 0 {
                self.region.raise(errors::INVALID_FREE);
                return;
            }
            let free = current as u32 | bit;
            let held = current & IN_BUFFER != 0;
            let next = if held || free == ALL_FREE { current | bit as u64 } else { free as u64 | IN_BUFFER };
            if state.compare_exchange(current, next).is_ok() {
                if !held && free == ALL_FREE {
                    self.heap_free(superblock);
                } else if !held {
                    self.publish_superblock(superblock, class);
                }
                return;
            }
            backoff.retry();
        }
    }

    /// A new superblock of `class` from the heap, keeping its first basic block.
    fn new_superblock(&self, class: u64) -> Option<u64> {
        let superblock = self.heap_alloc(superblock_bytes(class))?;
        self.pool32(superblock + BLOCK_HEADER + 8).store(class as u32);
        self.super_state(superblock).store((ALL_FREE & !1) as u64 | IN_BUFFER);
        let block = self.carve(superblock, class, 0);
        self.publish_superblock(superblock, class);
        Some(block)
    }

    /// Empty the first-level buffers into their superblocks and give the superblocks that are
    /// all free back to the heap (out of memory).
    ///
    /// One thread at a time: the others go on without (under out of memory, every failing
    /// request would otherwise cycle through every buffer).
    fn drain_buffers(&self) {
        // SAFETY: the flag word, only accessed atomically.
        let draining = unsafe { self.region.atomic32(DRAINING_OFFSET) };
        if draining.compare_exchange(0, 1).is_err() {
            return;
        }
        for class in 0..CLASSES {
            for _ in 0..self.layout.queue_cap {
                match self.pop(class, Level::First) {
                    Some(block) => self.return_to_superblock(block),
                    None => break,
                }
            }
            // Superblocks still in use stay buffered: their free blocks serve this size.
            for _ in 0..self.layout.queue_cap {
                match self.pop(class, Level::Second) {
                    Some(superblock) if self.super_state(superblock).load() as u32 == ALL_FREE => {
                        self.release_superblock(superblock)
                    }
                    Some(superblock) => self.publish_superblock(superblock, class),
                    None => break,
                }
            }
        }
        draining.store(0);
    }

    /// A basic block of `class` for `lanes` sub-ranges: its offset, or `NONE`.
    fn alloc_basic(&self, class: u64, lanes: u32) -> u64 {
        let block = self.find_basic(class).or_else(|| {
            self.drain_buffers();
            self.find_basic(class)
        });
        match block {
            Some(block) => {
                self.pool32(block).store(lanes);
                // The count before any lane can free its sub-range.
                arch::fence();
                block
            }
            None => NONE,
        }
    }

    fn find_basic(&self, class: u64) -> Option<u64> {
        if let Some(block) = self.pop(class, Level::First) {
            return Some(block);
        }
        // Each superblock popped yields a block (see `take_from_superblock`).
        while let Some(superblock) = self.pop(class, Level::Second) {
            if let Some(block) = self.take_from_superblock(superblock, class) {
                return Some(block);
            }
        }
        self.new_superblock(class)
    }

    /// Tag the sub-range at `range` (owned by `owner`) and return the pointer after the tag.
    fn hand_out(&self, range: u64, owner: u64, live: u64) -> *mut u8 {
        self.pool64(range).store(owner);
        self.pool64(range + 8).store(live);
        self.pointer(range + TAG_BYTES)
    }

    /// A sub-range of `need` bytes (tag included) in a basic block or memoryblock of its own.
    fn malloc_alone(&self, need: u64) -> *mut u8 {
        if BASIC_HEADER + need <= MAX_BASIC_BYTES {
            let block = self.alloc_basic(class_for(BASIC_HEADER + need), 1);
            if block == NONE {
                return core::ptr::null_mut();
            }
            return self.hand_out(block + BASIC_HEADER, block, SMALL_LIVE);
        }
        match self.heap_alloc(round_up(BLOCK_HEADER + need, BLOCK_GRAIN)) {
            Some(block) => self.hand_out(block + BLOCK_HEADER, block, LARGE_LIVE),
            None => {
                self.drain_buffers();
                match self.heap_alloc(round_up(BLOCK_HEADER + need, BLOCK_GRAIN)) {
                    Some(block) => self.hand_out(block + BLOCK_HEADER, block, LARGE_LIVE),
                    None => core::ptr::null_mut(),
                }
            }
        }
    }
}

// SAFETY: every byte of the pool belongs to at most one memoryblock, handed out under the heap
// lock; a superblock's basic blocks are handed out once each (a bit cleared by
// compare-and-swap, or a queue entry popped once); a basic block is reused only after all of
// its sub-ranges were freed (its live count reaches zero), and the sub-ranges a leader hands
// out are disjoint (exclusive prefix sums). Offsets are multiples of 16 from a 256-byte
// aligned pool.
unsafe impl DeviceMalloc for XMalloc {
    const KIND: MallocKind = MallocKind::XMalloc;
    const CAPS: Caps = Caps {
        max_size: u32::MAX - 256,
        align: 16,
        free: FreeSupport::Reuses,
        min_region_bytes: super::HEADER_BYTES + MIN_POOL_OFFSET + superblock_bytes(CLASSES - 1) + (16 << 10),
        relays_above: u32::MAX,
    };

    unsafe fn init(region: Region, _phase: u32) {
        // SAFETY: the region being initialised; nothing else runs.
        let m = unsafe { Self::attach(region) };
        let (me, threads) = (arch::global_thread_id() as u64, arch::global_thread_count().max(1) as u64);
        if me == 0 {
            m.body64(ROVER_OFFSET).store(0);
            m.body64(FREES_OFFSET).store(0);
            m.body64(FAILED_OFFSET).store(0);
            // SAFETY: the flag word.
            unsafe { region.atomic32(DRAINING_OFFSET) }.store(0);
            // SAFETY: the lock word.
            unsafe { region.atomic32(LOCK_OFFSET) }.store(0);
            m.pool64(0).store(m.pool_bytes | BLOCK_FREE);
            m.pool64(8).store(0);
        }
        // Slot `i` of a queue starts with sequence `i`: free for the producer of ticket `i`.
        let (cap, queue_bytes) = (m.layout.queue_cap, m.layout.queue_bytes());
        let slots = 2 * CLASSES * cap;
        let mut slot = me;
        while slot < slots {
            let queue = QUEUES_OFFSET + (slot / cap) * queue_bytes;
            let ticket = slot % cap;
            if ticket == 0 {
                m.body64(queue).store(0);
                m.body64(queue + 64).store(0);
            }
            m.body64(queue + QUEUE_SLOTS + ticket * 16).store(ticket);
            slot += threads;
        }
    }

    #[inline(always)]
    unsafe fn attach(region: Region) -> Self {
        let layout = Layout::of(region.body_bytes());
        XMalloc { region, layout, pool_bytes: layout.pool_bytes }
    }

    fn malloc(&self, size: u32) -> *mut u8 {
        let need = round_up(size as u64, 16) + TAG_BYTES;
        if need > COALESCE_MAX {
            return self.malloc_alone(need);
        }
        // Lanes here coalesce, in sub-groups of `COALESCE_LANES` consecutive lanes.
        let group = WarpGroup::current();
        let me = arch::lane_id();
        let my_subgroup = group.rank / COALESCE_LANES;
        let (mut below, mut total, mut lanes_in_subgroup) = (0u64, 0u64, 0u32);
        let mut subgroup_leader = me;
        let (mut lanes, mut rank) = (group.mask, 0u32);
        while lanes != 0 {
            let lane = lanes.trailing_zeros();
            lanes &= lanes - 1;
            let lane_need = arch::shfl_u32(group.mask, need as u32, lane) as u64;
            if rank / COALESCE_LANES == my_subgroup {
                if lanes_in_subgroup == 0 {
                    subgroup_leader = lane;
                }
                if lane < me {
                    below += lane_need;
                }
                total += lane_need;
                lanes_in_subgroup += 1;
            }
            rank += 1;
        }
        let mut block = NONE;
        if me == subgroup_leader {
            block = self.alloc_basic(class_for(BASIC_HEADER + total), lanes_in_subgroup);
        }
        let block = arch::shfl_u64(group.mask, block, subgroup_leader);
        if block == NONE {
            return core::ptr::null_mut();
        }
        self.hand_out(block + BASIC_HEADER + below, block, SMALL_LIVE)
    }

    unsafe fn free(&self, ptr: *mut u8) {
        let address = ptr as u64;
        let pool_start = self.region.body_addr() + self.layout.pool_offset;
        if !self.region.contains(ptr)
            || !address.is_multiple_of(16)
            || address < pool_start + BLOCK_HEADER + TAG_BYTES
        {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        let tag = address - pool_start - TAG_BYTES;
        let owner = self.pool64(tag).load();
        let live = self.pool64(tag + 8);
        let kind = live.load();
        if (kind != SMALL_LIVE && kind != LARGE_LIVE) || live.compare_exchange(kind, FREED).is_err() {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        if kind == LARGE_LIVE {
            self.heap_free(owner);
            return;
        }
        if owner >= tag || !owner.is_multiple_of(16) {
            self.region.raise(errors::INVALID_FREE);
            return;
        }
        if self.pool32(owner).fetch_sub(1) == 1 {
            let class = self.pool32(owner + 4).load() as u64;
            if class >= CLASSES || !self.push(class, Level::First, owner) {
                self.return_to_superblock(owner);
            }
        }
    }
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::*;
    use crate::malloc::testing::{HostRegion, StormConfig, run_grid};
    use std::vec::Vec;

    fn region(bytes: u64) -> HostRegion {
        HostRegion::new(MallocKind::XMalloc, bytes, 0)
    }

    #[test]
    fn layout_scales_the_buffers_with_the_body() {
        for body in [150 << 10, 1 << 20, 16 << 20, 2 << 30, 100 << 30] {
            let l = Layout::of(body);
            assert!(l.queue_cap.is_power_of_two());
            assert!((MIN_QUEUE_CAP..=MAX_QUEUE_CAP).contains(&l.queue_cap));
            assert!(l.pool_offset + l.pool_bytes <= body);
            assert!(l.pool_offset <= MIN_POOL_OFFSET.max(body / 32));
        }
        let smallest = Layout::of(XMalloc::CAPS.min_region_bytes - crate::malloc::HEADER_BYTES);
        assert_eq!(smallest.pool_offset, MIN_POOL_OFFSET);
        assert!(smallest.pool_bytes >= superblock_bytes(CLASSES - 1));
    }

    #[test]
    fn classes_fit_their_requests() {
        assert_eq!(class_for(1), 0);
        assert_eq!(class_for(64), 0);
        assert_eq!(class_for(65), 1);
        assert_eq!(class_for(4096), CLASSES - 1);
        const { assert!(COALESCE_LANES as u64 * COALESCE_MAX + BASIC_HEADER <= MAX_BASIC_BYTES) };
        const { assert!(XMalloc::CAPS.min_region_bytes <= 256 << 10) };
    }

    #[test]
    fn sizes_at_class_boundaries_are_aligned_and_writable() {
        let r = region(4 << 20);
        let m = r.typed::<XMalloc>();
        let (lo, hi) = r.bounds();
        let mut blocks = Vec::new();
        for size in [1u32, 16, 17, 32, 33, 48, 49, 112, 113, 480, 481, 4064, 4065, 70_000] {
            let p = m.malloc(size);
            assert!(!p.is_null(), "{size}");
            assert_eq!(p as u64 % 16, 0);
            assert!(p as u64 >= lo && p as u64 + size as u64 <= hi);
            // SAFETY: the block is ours, `size` bytes.
            unsafe { core::ptr::write_bytes(p, 0xab, size as usize) };
            blocks.push(p);
        }
        for p in blocks {
            unsafe { m.free(p) };
        }
        assert_eq!(r.errors(), 0);
    }

    #[test]
    fn reuses_freed_basic_blocks_and_memoryblocks() {
        let r = region(1 << 20);
        let m = r.typed::<XMalloc>();
        let a = m.malloc(100);
        unsafe { m.free(a) };
        assert_eq!(m.malloc(100), a);
        let big = m.malloc(100_000);
        assert!(!big.is_null());
        unsafe { m.free(big) };
        assert_eq!(m.malloc(100_000), big);
        assert_eq!(r.errors(), 0);
    }

    #[test]
    fn out_of_memory_returns_null_and_recovers_after_frees() {
        let r = region(XMalloc::CAPS.min_region_bytes);
        let m = r.typed::<XMalloc>();
        let mut blocks = Vec::new();
        loop {
            let p = m.malloc(200);
            if p.is_null() {
                break;
            }
            blocks.push(p);
            assert!(blocks.len() < 10_000, "never ran out");
        }
        assert!(blocks.len() > 100);
        assert!(m.malloc(60_000).is_null());
        for p in blocks.drain(..) {
            unsafe { m.free(p) };
        }
        // Everything merged back: a request of most of the pool, then small ones again.
        let big = m.malloc(100_000);
        assert!(!big.is_null());
        unsafe { m.free(big) };
        for _ in 0..100 {
            let p = m.malloc(200);
            assert!(!p.is_null());
            blocks.push(p);
        }
        for p in blocks {
            unsafe { m.free(p) };
        }
        assert_eq!(r.errors(), 0);
    }

    #[test]
    fn coalesced_block_returns_after_its_last_sub_range() {
        // What a leader does for three lanes (the CPU backend's warps have one lane).
        let r = region(1 << 20);
        let m = r.typed::<XMalloc>();
        let class = class_for(BASIC_HEADER + 3 * 64);
        let block = m.alloc_basic(class, 3);
        assert_ne!(block, NONE);
        let ptrs: Vec<*mut u8> =
            (0..3).map(|i| m.hand_out(block + BASIC_HEADER + i * 64, block, SMALL_LIVE)).collect();
        assert_eq!(ptrs[1] as u64 - ptrs[0] as u64, 64);
        unsafe { m.free(ptrs[2]) };
        unsafe { m.free(ptrs[0]) };
        assert_eq!(m.pop(class, Level::First), None);
        unsafe { m.free(ptrs[1]) };
        assert_eq!(m.pop(class, Level::First), Some(block));
        assert_eq!(r.errors(), 0);
    }

    #[test]
    fn detects_double_and_foreign_frees() {
        let r = region(1 << 20);
        let m = r.typed::<XMalloc>();
        let p = m.malloc(40);
        unsafe { m.free(p) };
        assert_eq!(r.errors(), 0);
        unsafe { m.free(p) };
        assert_eq!(r.errors() & errors::INVALID_FREE, errors::INVALID_FREE);
        let r = region(1 << 20);
        let m = r.typed::<XMalloc>();
        let p = m.malloc(5000);
        unsafe { m.free(p.wrapping_add(16)) };
        assert_eq!(r.errors() & errors::INVALID_FREE, errors::INVALID_FREE);
        let mut local = 0u64;
        unsafe { m.free(&mut local as *mut u64 as *mut u8) };
        unsafe { m.free(p) };
    }

    #[test]
    fn storm_with_reuse() {
        let r = region(4 << 20);
        let report = r.storm(StormConfig { threads: 32, per_thread: 64, sizes: (1, 600), rounds: 6 });
        assert_eq!(report.failed, 0);
        assert_eq!(report.checked, 6 * 32 * 64);
        assert_eq!(r.errors(), 0);
    }

    #[test]
    fn storm_with_large_requests() {
        let r = region(16 << 20);
        let report = r.storm(StormConfig { threads: 16, per_thread: 16, sizes: (1000, 20_000), rounds: 4 });
        assert_eq!(report.failed, 0);
        assert_eq!(r.errors(), 0);
    }

    #[test]
    fn blocks_freed_by_other_threads_all_come_back() {
        // About 9 MB a round, twice that after rounding to the classes.
        let r = region(48 << 20);
        let m = r.typed::<XMalloc>();
        let (threads, per_thread) = (24u32, 150u32);
        for round in 0..4u32 {
            let slots: Vec<Atomic64> = (0..threads * per_thread).map(|_| Atomic64::new(0)).collect();
            run_grid(threads, |t| {
                for i in 0..per_thread {
                    let size = 1 + (i * 53 + t * 7 + round * 13) % 5000;
                    let p = m.malloc(size);
                    assert!(!p.is_null(), "round {round}");
                    slots[(t * per_thread + i) as usize].store(p as u64);
                }
            });
            // Each thread frees another thread's blocks.
            run_grid(threads, |t| {
                let owner = (t + 1 + round) % threads;
                for i in 0..per_thread {
                    unsafe { m.free(slots[(owner * per_thread + i) as usize].load() as *mut u8) };
                }
            });
        }
        assert_eq!(r.errors(), 0);
        m.drain_buffers();
        assert_eq!(m.pool64(0).load(), m.pool_bytes | BLOCK_FREE);
    }

    #[test]
    fn concurrent_churn_keeps_buffers_consistent() {
        let r = region(2 << 20);
        let m = r.typed::<XMalloc>();
        run_grid(16, |t| {
            for i in 0..2000u32 {
                let size = 1 + (i * 37 + t * 11) % 700;
                let p = m.malloc(size);
                assert!(!p.is_null());
                // SAFETY: ours, `size` bytes.
                unsafe { core::ptr::write_bytes(p, t as u8, size as usize) };
                // SAFETY: as above.
                assert_eq!(unsafe { *p.add(size as usize - 1) }, t as u8);
                unsafe { m.free(p) };
            }
        });
        assert_eq!(r.errors(), 0);
        // Everything back: the whole pool is one free memoryblock again after a drain.
        m.drain_buffers();
        assert_eq!(m.pool64(0).load(), m.pool_bytes | BLOCK_FREE);
    }
}
