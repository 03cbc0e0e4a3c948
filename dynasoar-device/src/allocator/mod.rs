//! Object allocation and deallocation (paper Alg. 1 and 2, section 4.2).
//!
//! `allocate` is warp-aggregated: the lanes of a warp that allocate objects of the same class
//! at the same time elect a leader, which reserves slots for all of them (as many per block as
//! the block has free, in one atomic OR) and hands them out with shuffles. The leader finds
//! blocks through the class's active bitmap with a rotation seeded per warp and per retry, and
//! initialises a new block from the free bitmap when no active block is found.
//! For classes that opt in (`ClassSpec::OWNS_BLOCKS`), a leader that takes at least half a
//! block takes consecutive slots from a run of blocks reserved for its warp slot instead (see
//! `runs`).
//!
//! Independent thread scheduling: the group is taken from `activemask` at the call, every
//! collective uses that mask, all lanes of the group run the same loop (its condition is
//! broadcast from the leader), and every retry loop backs off.
//!
//! The algorithms are written against [`BlockStore`], which the device [`Heap`] implements; the
//! loom models implement it over vectors of loom atomics, so they check this very code.

#[cfg(not(loom))]
pub mod kernels;
mod runs;

pub use runs::{release_all as release_runs, release_entry as release_run_entry};

use crate::arch::{
    self, Backoff, WarpGroup,
    atomic::{Atomic32, Atomic64},
    nth_set_bit,
};
use crate::bitmap::{Bitmap, next_seed};
use crate::block::{BlockHeader, Reservation, preset_mask};
use crate::class::ClassSpec;
use crate::handle::RawHandle;
#[cfg(not(loom))]
use crate::heap::{Heap, VARIANT_NO_COALESCING, VARIANT_NO_LAST_BLOCK, VARIANT_NO_ROTATION, block_at};

/// Blocks (of all classes) that may be opened at once for leaders taking less than half a block:
/// past this, such a leader that finds no active block waits for one to be published instead
/// of opening another. Each opening serves its opener and then up to 63 other objects, so a
/// few in flight keep lone allocations going, while every extra one is a block that a burst of
/// lone allocations leaves mostly empty. At 128, Barnes-Hut's insertion (lone allocations in
/// bursts that use up its tree nodes' active blocks) kept opening blocks for them: after 1,000
/// steps its 217,543 tree nodes lay in about 24,900 blocks (26% of their slots), at 8 in about
/// 17,400; the Game of Life got 6% faster, no app more than 1% slower; each lane allocating
/// alone at 256 allocations a thread (Linux Scalability's NoCoal) 18-25% slower
/// (docs/performance-log.md, "The cap on block openings"). Leaders taking half a block or more
/// are not held back. This wait (and the one for blocks in flight before out of memory) is why
/// `allocate` is not lock-free in the formal sense: a waiter depends on openings under way
/// (ARCHITECTURE.md, "The allocator", on progress).
#[cfg(not(loom))]
const MAX_BLOCKS_OPENING: u32 = 8;
/// Off under loom: the wait is a spin on a relaxed load, which loom may serve stale forever
/// (C++ does not promise visibility in finite time; the GPU's L2 does). Waiting only delays an
/// allocation and changes no state, so the models lose nothing they check.
#[cfg(loom)]
const MAX_BLOCKS_OPENING: u32 = u32::MAX;

/// Rounds a leader retries when the class has no active block with room and no block is free,
/// before reporting out of memory (blocks may be freed or filled concurrently meanwhile).
#[cfg(not(loom))]
const OUT_OF_MEMORY_ROUNDS: u32 = 16;
#[cfg(loom)]
const OUT_OF_MEMORY_ROUNDS: u32 = 2;

/// Rollbacks of reservations in blocks that changed class (loom models check they happen).
#[cfg(loom)]
pub static ROLLBACKS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The blocks and bitmaps the allocator works on.
pub trait BlockStore {
    /// Blocks not allocated to any class.
    fn free_blocks(&self) -> Bitmap<'_>;
    /// Blocks allocated to `class`.
    fn allocated(&self, class: u8) -> Bitmap<'_>;
    /// Blocks of `class` with a free slot.
    fn active(&self, class: u8) -> Bitmap<'_>;
    /// Header of block `index`.
    fn block(&self, index: u64) -> &BlockHeader;
    /// Address of block `index` (what handles encode).
    fn block_addr(&self, index: u64) -> u64;
    /// Where the blocks lie, read once by hot paths that compute block addresses: kept in
    /// registers, it is not read again after each atomic (asm that the compiler must assume
    /// writes memory).
    fn block_layout(&self) -> BlockLayout;
    /// Header of the block at `addr` (an address [`BlockLayout::addr`] gave).
    fn block_at_addr(&self, addr: u64) -> &BlockHeader;
    /// Free blocks not yet claimed.
    fn free_count(&self) -> &Atomic64;
    /// Threads that got no object.
    fn failed_allocations(&self) -> &Atomic32;
    /// Blocks and runs being opened (claimed, not yet active or in a run table).
    fn initializing(&self) -> &Atomic32;
    /// Lanes that left a warp's hand-out without a slot and allocated alone.
    fn coalescing_misses(&self) -> &Atomic32;
    /// At most how many allocated blocks of `class` are empty: those a give-back left so (see
    /// `give_back`: a reservation in a block that another class took since gives its slots
    /// back without freeing the block) and those a free kept (see `release_slots`).
    fn stranded_blocks(&self, class: u8) -> &Atomic32;
    /// Leaders that gave up for lack of blocks.
    fn starved_leaders(&self) -> &Atomic32;
    /// Objects per block of `class`.
    fn class_objects(&self, class: u8) -> u32;
    /// Record an error for the host.
    fn raise(&self, error: u32);
    /// Record that an allocation of `class` failed for lack of memory, for the host to name
    /// the class.
    fn note_failed_class(&self, _class: u8) {}
    /// Classes of the heap.
    fn num_classes(&self) -> u8;
    /// Whether leaders of classes that opt in take their slots from runs of blocks (see
    /// `runs`).
    fn runs_enabled(&self) -> bool;
    /// Whether searches of bitmaps and blocks rotate by a seed per warp and retry (paper 4.2,
    /// the default); `false` in the paper's NoShift variant, where every search is a plain
    /// find-first-set (the leaders' seed is then 0, see `first_seed`).
    fn rotation(&self) -> bool {
        true
    }
    /// This warp's entry of `class`'s run table (see `runs`).
    fn run_entry(&self, class: u8) -> &Atomic64;
    /// Every entry of `class`'s run table (to release the runs when blocks run out).
    fn run_table(&self, class: u8) -> &[Atomic64];
    /// This warp's note of the block it last allocated in for `class` (index + 1, 0: none),
    /// which a leader tries before it searches the active bitmap; `None` where the store keeps
    /// no such note (see `search_or_open`).
    fn last_block(&self, _class: u8) -> Option<&Atomic64> {
        None
    }
    /// The change flags of `class` (see `Heap::enum_changed`), loaded when an allocation or
    /// free starts, so that the load's round trip overlaps the allocator's own.
    fn class_flags(&self, _class: u8) -> u32 {
        0
    }
    /// Note that objects of `class` were allocated or freed, so its next enumeration cannot
    /// reuse the last one (see `heap_enumerate`); `seen` is what [`class_flags`] returned.
    ///
    /// [`class_flags`]: BlockStore::class_flags
    fn class_changed(&self, _class: u8, _seen: u32) {}
    /// [`class_changed`](BlockStore::class_changed) by a free that did not wait for its
    /// block's bitmap ([`release_slot_unwaited`]): the class's active bitmap may now miss
    /// blocks with room (see `Heap::mark_stale`).
    fn class_stale(&self, class: u8, seen: u32) {
        self.class_changed(class, seen)
    }
}

#[cfg(not(loom))]
impl BlockStore for Heap<'_> {
    #[inline(always)]
    fn free_blocks(&self) -> Bitmap<'_> {
        Heap::free_blocks(self)
    }
    #[inline(always)]
    fn allocated(&self, class: u8) -> Bitmap<'_> {
        Heap::allocated(self, class)
    }
    #[inline(always)]
    fn active(&self, class: u8) -> Bitmap<'_> {
        Heap::active(self, class)
    }
    #[inline(always)]
    fn block(&self, index: u64) -> &BlockHeader {
        Heap::block(self, index)
    }
    #[inline(always)]
    fn block_addr(&self, index: u64) -> u64 {
        Heap::block_addr(self, index)
    }
    #[inline(always)]
    fn block_layout(&self) -> BlockLayout {
        let c = self.config();
        BlockLayout { first: c.blocks, stride: c.block_bytes, count: c.num_blocks }
    }
    #[inline(always)]
    fn block_at_addr(&self, addr: u64) -> &BlockHeader {
        block_at(addr)
    }
    #[inline(always)]
    fn free_count(&self) -> &Atomic64 {
        &self.state().free_blocks
    }
    #[inline(always)]
    fn failed_allocations(&self) -> &Atomic32 {
        &self.state().failed_allocations
    }
    #[inline(always)]
    fn initializing(&self) -> &Atomic32 {
        &self.state().initializing
    }
    #[inline(always)]
    fn starved_leaders(&self) -> &Atomic32 {
        &self.state().starved_leaders
    }
    #[inline(always)]
    fn coalescing_misses(&self) -> &Atomic32 {
        &self.state().coalescing_misses
    }
    #[inline(always)]
    fn stranded_blocks(&self, class: u8) -> &Atomic32 {
        Heap::stranded_blocks(self, class)
    }
    #[inline(always)]
    fn class_objects(&self, class: u8) -> u32 {
        Heap::class_objects(self, class)
    }
    #[inline(always)]
    fn num_classes(&self) -> u8 {
        self.config().num_classes as u8
    }
    #[inline(always)]
    fn runs_enabled(&self) -> bool {
        self.config().block_runs != 0
    }
    #[inline(always)]
    fn rotation(&self) -> bool {
        self.config().variants & VARIANT_NO_ROTATION == 0
    }
    #[inline(always)]
    fn run_entry(&self, class: u8) -> &Atomic64 {
        Heap::run_entry(self, class)
    }
    #[inline(always)]
    fn run_table(&self, class: u8) -> &[Atomic64] {
        Heap::run_table(self, class)
    }
    /// On the GPU, unless the heap is a variant without it. The CPU backend has its own
    /// placement (`arch::place_hint`), per worker thread.
    #[inline(always)]
    fn last_block(&self, class: u8) -> Option<&Atomic64> {
        if cfg!(target_arch = "nvptx64") && self.config().variants & VARIANT_NO_LAST_BLOCK == 0 {
            Some(self.last_block_entry(class))
        } else {
            None
        }
    }
    #[inline(always)]
    fn class_flags(&self, class: u8) -> u32 {
        self.enum_changed(class).load()
    }
    #[inline(always)]
    fn class_changed(&self, class: u8, seen: u32) {
        self.mark_changed(class, seen);
    }
    #[inline(always)]
    fn class_stale(&self, class: u8, seen: u32) {
        self.mark_stale(class, seen);
    }
    #[inline(always)]
    fn raise(&self, error: u32) {
        Heap::raise(self, error)
    }
    #[inline(always)]
    fn note_failed_class(&self, class: u8) {
        Heap::note_failed_class(self, class)
    }
}

/// A first seed for this warp's searches.
///
/// On the GPU: the warp's global id, mixed with the clock so that repeated allocations of one
/// warp do not retrace the same path and thousands of concurrent warps spread over the bitmaps
/// (paper section 4.2).
///
/// On the CPU backend: the block noted by `arch::place_hint` (the block the worker last
/// allocated in, or whose objects its do-all loop visits), so that new objects go next to the
/// objects that made them; without a hint, one fixed seed per worker thread (`sm_id`). A
/// worker runs its emulated threads one after another, so its searches never race each other:
/// with one seed they keep
/// finding the same blocks until these fill, and a class's objects stay together in the heap,
/// where a seed per emulated thread and clock scattered them (each object a do-all then visits
/// is a cache miss away). Different workers start their searches at different rotations, so
/// they do not all contend for the first free block, which a seed of 0 for all (the NoShift
/// variant) made them do: on 16 cores the Game of Life at 2048 x 2048 then took 4.7 s against
/// 1.2 s (docs/results/2026-11-26-s3/cpu-backend-ab.txt).
#[inline(always)]
fn warp_seed() -> u64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let w = arch::global_warp_id() as u64;
        (w.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ arch::clock64().wrapping_mul(0xBF58_476D_1CE4_E5B9)) | 1
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        match arch::place_hint() {
            arch::NO_HINT => (arch::sm_id() as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            block => seed_near(block),
        }
    }
}

/// A seed whose searches look at block `index` first: each level's rotation of a bitmap search
/// is the index's digit there, so the search takes the block if its bit is set, else the next
/// set one after it (bit 63 only keeps the seed from 0, which would not rotate).
#[inline(always)]
fn seed_near(index: u64) -> u64 {
    index | 1 << 63
}

/// The seed of a leader's searches: [`warp_seed`] (never 0), or 0 where the store does not
/// rotate ([`BlockStore::rotation`]). A seed of 0 rotates nothing, and its retries keep it 0
/// (`next_seed`), so every search of that leader is a plain find-first-set.
#[inline(always)]
pub(super) fn first_seed<S: BlockStore>(store: &S) -> u64 {
    if store.rotation() { warp_seed() } else { 0 }
}

#[cfg(not(loom))]
impl Heap<'_> {
    /// Allocate an object of class `C`: its handle, or `None` when the heap is out of memory
    /// (the heap's `OUT_OF_MEMORY` error is raised for the host to report).
    ///
    /// Lanes of a warp calling this together are served by one leader, unless the heap is the
    /// paper's NoCoal variant ([`VARIANT_NO_COALESCING`]): then each lane allocates alone.
    ///
    /// Out of line, with the whole allocator inlined into it: the kernels that allocate then
    /// pay for one call, not for the allocator's registers around their own values (when only
    /// the search was out of line, called from the hand-out loop, Wa-Tor's 80-register kernels
    /// spilled 120 -> 172 bytes and ran 8% slower).
    #[inline(never)]
    pub fn allocate<C: ClassSpec>(&self) -> Option<RawHandle> {
        allocate_in_group::<C, _, DEFAULT_LOSSES_BEFORE_NEW_BLOCK, false>(self, self.allocation_group())
    }

    /// [`allocate`](Self::allocate) in a launch that creates objects of class `C` only and
    /// frees none of them (a method declared `#[parallel(creates(C))]`, freeing other classes
    /// or none). Then no block of `C` changes class and no slot of `C` is reused before the
    /// launch ends, and a free block can only be opened for `C`: a block found in `C`'s active
    /// bitmap is reserved with a relaxed OR and no type read after it, and a hint's block has
    /// its type read together with the reservation (see the allocator's `reserve_in`). The
    /// caller must know that the launch is such a launch.
    #[inline(never)]
    pub fn allocate_sole<C: ClassSpec>(&self) -> Option<RawHandle> {
        allocate_in_group::<C, _, DEFAULT_LOSSES_BEFORE_NEW_BLOCK, true>(self, self.allocation_group())
    }

    /// Allocate `count` objects of class `C` for this thread, `made(k, handle)` for the `k`-th
    /// (`None` where the heap is out of memory, raised for the host): the lanes of a warp
    /// calling this together are served by one leader in as few rounds as their objects take
    /// blocks, whatever each lane's count (see [`allocate_each_in_group`]). Returns how many of
    /// this thread's objects got none. Classes with runs of blocks take their objects one at a
    /// time, from runs.
    #[inline(always)]
    pub fn allocate_each<C: ClassSpec>(&self, count: u32, made: impl FnMut(u32, Option<RawHandle>)) -> u32 {
        self.allocate_each_with::<C, false>(count, made)
    }

    /// [`allocate_each`](Self::allocate_each) in a launch such as
    /// [`allocate_sole`](Self::allocate_sole)'s.
    #[inline(always)]
    pub fn allocate_each_sole<C: ClassSpec>(
        &self,
        count: u32,
        made: impl FnMut(u32, Option<RawHandle>),
    ) -> u32 {
        self.allocate_each_with::<C, true>(count, made)
    }

    #[inline(always)]
    fn allocate_each_with<C: ClassSpec, const SOLE: bool>(
        &self,
        count: u32,
        mut made: impl FnMut(u32, Option<RawHandle>),
    ) -> u32 {
        if C::OWNS_BLOCKS && self.runs_enabled() {
            let mut missed = 0;
            for k in 0..count {
                let raw = if SOLE { self.allocate_sole::<C>() } else { self.allocate::<C>() };
                missed += raw.is_none() as u32;
                made(k, raw);
            }
            return missed;
        }
        allocate_each_in_group::<C, _, SOLE>(self, self.allocation_group(), count, made)
    }

    /// The lanes an allocation serves together: those of `WarpGroup::current()`, or this lane
    /// alone in the NoCoal variant: a select of the mask, from which the rest follows as for
    /// any group. (Choosing between `current()` and `solo()` instead cost allocating kernels 2
    /// to 12 registers.)
    #[inline(always)]
    fn allocation_group(&self) -> WarpGroup {
        let mask = arch::activemask();
        let mask =
            if self.config().variants & VARIANT_NO_COALESCING == 0 { mask } else { 1 << arch::lane_id() };
        WarpGroup {
            mask,
            leader: mask.trailing_zeros(),
            rank: (mask & arch::lanemask_lt()).count_ones(),
            size: mask.count_ones(),
        }
    }

    /// A fresh block of class `C` with its lowest `wanted` slots reserved as objects for the
    /// caller: the block's address (slot `k`'s object is `RawHandle::new(address, k, ..)`), or
    /// `None` when no block is free. See [`open_block`].
    #[inline]
    pub fn open_block<C: ClassSpec>(&self, wanted: u32, near: u64) -> Option<u64> {
        open_block::<C, _>(self, wanted, near).map(|index| self.block_addr(index))
    }

    /// [`allocate`](Self::allocate) with a leader that opens a new block after losing the race
    /// for active blocks `LOSSES` times in a row (0: never, the paper's loop). For tuning.
    #[inline]
    pub fn allocate_tuned<C: ClassSpec, const LOSSES: u32>(&self) -> Option<RawHandle> {
        allocate_in_group::<C, _, LOSSES, false>(self, WarpGroup::current())
    }

    /// Allocate without combining requests within the warp (each thread its own leader); the
    /// paper's DynaSOAr-NoCoal variant in code (a heap with [`VARIANT_NO_COALESCING`] makes
    /// [`allocate`](Self::allocate) do this at run time).
    #[inline]
    pub fn allocate_uncoalesced<C: ClassSpec>(&self) -> Option<RawHandle> {
        allocate_in_group::<C, _, DEFAULT_LOSSES_BEFORE_NEW_BLOCK, false>(self, WarpGroup::solo())
    }

    /// Free the object `handle` of a class of this heap (`C` may be any class of the heap: only
    /// its block size is used, the object's own class comes from the handle). Freeing a null
    /// handle or an object that is not allocated raises an error for the host instead of
    /// corrupting the heap.
    #[inline]
    pub fn free<C: ClassSpec>(&self, handle: RawHandle) {
        self.free_with_block_bytes::<true, false>(handle, C::BLOCK_BYTES)
    }

    /// [`free`](Self::free) in a launch in which nothing allocates in this heap: without the
    /// fence that orders the thread's accesses to the object before a reuse of its slot, since
    /// none can come before the launch's end, which orders them itself. On an H200 the fence
    /// (its wait for the thread's stores in flight) cost traffic 2% of its run, whose cars
    /// are freed in a launch that creates none (docs/performance-log.md, "Frees in launches
    /// that create nothing").
    #[inline]
    pub fn free_in_launch_creating_nothing<C: ClassSpec>(&self, handle: RawHandle) {
        self.free_with_block_bytes::<false, false>(handle, C::BLOCK_BYTES)
    }

    /// [`free`](Self::free) in a launch in which no object of `handle`'s class is allocated
    /// in this heap (other classes may be): without the fence, and a block that the free
    /// empties stays allocated to its class instead of going back to the free blocks. Then
    /// neither the slot nor the block can be reused before the launch ends: the class
    /// allocates nothing, and no other class can open the block. The next enumeration that
    /// lists the class anew frees its empty blocks (the heap counts them until then,
    /// [`Heap::stranded_blocks`]); a later launch that creates objects of the class may fill
    /// them first. The class must take no runs of blocks (`ClassSpec::OWNS_BLOCKS` off): an
    /// allocation that runs out of blocks releases every class's runs, which frees blocks. On
    /// an H200 the Game of Life, whose cells of one kind are freed in the launch that creates
    /// the other kind, ran 7.3% faster so (docs/performance-log.md, "Frees that keep their
    /// emptied blocks").
    #[inline]
    pub fn free_in_launch_not_creating_its_class<C: ClassSpec>(&self, handle: RawHandle) {
        self.free_with_block_bytes::<false, true>(handle, C::BLOCK_BYTES)
    }

    /// [`free_in_launch_not_creating_its_class`](Self::free_in_launch_not_creating_its_class)
    /// in a launch that allocates as [`allocate_sole`](Self::allocate_sole) does (it creates
    /// objects of one other class only, and frees none of that class), in a heap whose classes
    /// take no runs: the slot's bit is cleared by a reduction whose old value nobody waits for
    /// ([`release_slot_unwaited`]). What the old value served is left to the class's next
    /// enumeration anew (or [`heap_reactivate`](crate::heap::kernels::heap_reactivate)): a block that
    /// was full is not made active, one that empties is not counted, and a second free of the
    /// object is not reported. The free sets the class's [`STALE`](crate::heap::STALE) flag,
    /// which tells the heap's check so. The caller must know that the launch is such a launch
    /// (then no free in it waits for a bitmap, and `reserve_in` may clear an active bit
    /// without waiting for it either).
    #[inline]
    pub fn free_in_sole_launch<C: ClassSpec>(&self, handle: RawHandle) {
        if handle.is_null() {
            self.raise(crate::errors::NULL_HANDLE);
            return;
        }
        release_slot_unwaited(self, block_at(handle.block_addr()), handle.slot(), handle.type_id());
    }

    /// Free block `index`, allocated to `class` and empty, in a kernel that runs alone on the
    /// heap (the enumerations, which free the blocks that frees or a give-back left empty with
    /// their class): see [`free_empty_block`].
    #[inline(always)]
    pub fn free_empty_block(&self, index: u64, class: u8) {
        free_empty_block(self, index, class);
    }

    /// [`free`](Self::free) without a class at hand (divides by the run-time block size).
    #[inline]
    pub fn free_untyped(&self, handle: RawHandle) {
        self.free_with_block_bytes::<true, false>(handle, self.config().block_bytes)
    }

    /// The free; `ORDERED`: with the fence before the bitmap's write (see
    /// [`free_in_launch_creating_nothing`](Self::free_in_launch_creating_nothing)); `KEEP`:
    /// an emptied block stays with its class (see
    /// [`free_in_launch_not_creating_its_class`](Self::free_in_launch_not_creating_its_class)).
    #[inline(always)]
    fn free_with_block_bytes<const ORDERED: bool, const KEEP: bool>(
        &self,
        handle: RawHandle,
        block_bytes: u64,
    ) {
        if handle.is_null() {
            self.raise(crate::errors::NULL_HANDLE);
            return;
        }
        // The block's index before the fence: its load of the heap header then overlaps the
        // fence's wait, where after it (the fence empties the L1) it went to L2 and back.
        let addr = handle.block_addr();
        let index = self.block_index(addr, block_bytes);
        let preset = preset_mask(handle.objects_per_block());
        if ORDERED {
            // Release: this thread's writes to the object happen before the slot is reused.
            arch::fence();
        }
        release_slot::<_, KEEP>(self, block_at(addr), index, handle.slot(), handle.type_id(), preset);
    }
}

/// What a leader broadcasts as the block when it found no memory (no block lives there).
const STARVED: u64 = u64::MAX;

/// The flag of a warp's last-block note (`BlockStore::last_block`: the block's index + 1, 0 for
/// none) that says the block filled up: the next allocation searches around it instead of
/// trying it.
const NOTE_FULL: u64 = 1 << 63;

/// No block to search around first.
const NO_BLOCK: u64 = u64::MAX;

/// Lost races for active blocks after which a leader opens a new block (0: never).
pub const DEFAULT_LOSSES_BEFORE_NEW_BLOCK: u32 = 0;

/// Allocate one object of class `C` for each lane of `group` (see
/// [`Heap::allocate_tuned`] for `LOSSES`).
///
/// Inlined into `Heap::allocate` and its variants: called out of line from there, its group
/// went through the stack and the hand-out paid a second call (Linux Scalability on an H100).
#[inline(always)]
pub fn allocate_in_group<C: ClassSpec, S: BlockStore, const LOSSES: u32, const SOLE: bool>(
    store: &S,
    group: WarpGroup,
) -> Option<RawHandle> {
    let mut group = group;
    if C::OWNS_BLOCKS && store.runs_enabled() {
        // Groups that take at least half a block take their slots from their warp slot's run.
        let layout = store.block_layout();
        let entry = store.run_entry(C::TYPE_ID);
        while takes_half_a_block::<C>(group.size) {
            let mut taken = 0;
            if group.is_leader() {
                taken = runs::take::<C, S>(store, layout, entry, group.size).0;
            }
            let taken = runs::Taken(group.broadcast_u64(taken));
            if let Some(mine) = taken.handle::<C, S>(store, layout, group.rank) {
                return Some(mine);
            }
            // The run ran out before this lane's turn: the lanes left over go on together, from
            // a new run, or by the search below if no block was free for one.
            let served = taken.count::<C>(layout, group.size);
            if served == 0 {
                break;
            }
            group = group.without_lowest(served);
        }
    }
    let mut seed = first_seed(store);
    let mut handed_out = 0u32;
    let mut mine = None;
    let mut leader_starved = false;
    while handed_out < group.size {
        let mut grant = Grant { block: 0, slots: 0 };
        if group.is_leader() {
            match search_or_open::<C, S, LOSSES, SOLE>(store, group.size - handed_out, &mut seed) {
                Some(g) => grant = g,
                None => grant.block = STARVED,
            }
        }
        let grant =
            Grant { block: group.broadcast_u64(grant.block), slots: group.broadcast_u64(grant.slots) };
        let count = grant.slots.count_ones();
        if count == 0 {
            leader_starved = grant.block == STARVED;
            break; // out of memory: the lanes not served yet get nothing
        }
        if group.rank >= handed_out && group.rank < handed_out + count {
            let k = group.rank - handed_out;
            mine = Some(RawHandle::new(
                grant.block,
                nth_set_bit(grant.slots, k),
                C::OBJECTS_PER_BLOCK,
                C::TYPE_ID,
            ));
        }
        handed_out += count;
    }
    if mine.is_none() {
        if group.size > 1 && !leader_starved {
            // A lane the hand-out skipped although its leader served the whole group: seen on
            // an H200 while ptxas took `activemask` for warp-uniform and shuffled without
            // syncing the group (fixed in `arch::activemask`), which also leaked the skipped
            // slot. It should not happen; if it does, the lane gets no object and the host
            // reports an allocator fault (`SKIPPED_LANE`), not a lack of memory. (The lane used
            // to search again on its own: a second inlined copy of the search in every
            // allocating kernel, whose registers cost the capped kernels 16-100 bytes of spills
            // and the Game of Life and Wa-Tor 1-2% of their time; docs/performance-log.md, "The
            // coalescing-miss fallback".)
            store.coalescing_misses().fetch_add(1);
            store.raise(crate::errors::SKIPPED_LANE);
        } else {
            store.failed_allocations().fetch_add(1);
            store.note_failed_class(C::TYPE_ID);
            store.raise(crate::errors::OUT_OF_MEMORY);
        }
    }
    mine
}

/// Most objects one lane asks [`allocate_each_in_group`] for: 32 lanes of it sum to less than
/// 2^32.
pub const MAX_EACH: u32 = 1 << 26;

/// Allocate `asked` objects of class `C` for each lane of `group` (each lane its own count,
/// 0 included), calling `made(k, handle)` for this lane's `k`-th object, `k` ascending
/// (`None` for the objects the heap had no memory for, after the others). Returns how many of
/// this lane's objects got none (out of memory, raised for the host as by
/// [`allocate_in_group`]).
///
/// One leader serves the whole group's objects, block by block, as if each object were a lane
/// of its own: the lanes' counts are summed by ballots (`WarpGroup::exclusive_sum_by_bits`),
/// and each reservation's slots go to the objects in the order of their lanes and, within a
/// lane, of `k`. So a lane that makes several objects waits for one round of the allocator (or
/// as many as its group needs blocks), where a loop over `allocate` runs one round per object
/// and makes the warp wait for the lane with the most (the Game of Life's new cells, each
/// filling up to eight neighbour cells). Classes with runs of blocks (`ClassSpec::OWNS_BLOCKS`)
/// are the caller's to serve one object at a time: this path takes no runs. A lane asking for
/// more than [`MAX_EACH`] objects gets `None` past them, as out of memory (no heap holds that
/// many).
#[inline(always)]
pub fn allocate_each_in_group<C: ClassSpec, S: BlockStore, const SOLE: bool>(
    store: &S,
    group: WarpGroup,
    asked: u32,
    mut made: impl FnMut(u32, Option<RawHandle>),
) -> u32 {
    // So that the group's sum fits 32 bits.
    let count = asked.min(MAX_EACH);
    let (start, total) = group.exclusive_sum_by_bits(count);
    let end = start.wrapping_add(count);
    let mut seed = first_seed(store);
    let mut handed_out = 0u32;
    let mut leader_starved = false;
    // Uniform: `total` and `handed_out` are the same on every lane of the group. (The round is
    // written out as in `allocate_in_group`: one inlined helper for both moved ptxas's register
    // choices in 20 of the example models' kernels, sm_90.)
    while handed_out < total {
        let mut grant = Grant { block: 0, slots: 0 };
        if group.is_leader() {
            match search_or_open::<C, S, DEFAULT_LOSSES_BEFORE_NEW_BLOCK, SOLE>(
                store,
                total - handed_out,
                &mut seed,
            ) {
                Some(g) => grant = g,
                None => grant.block = STARVED,
            }
        }
        let grant =
            Grant { block: group.broadcast_u64(grant.block), slots: group.broadcast_u64(grant.slots) };
        let got = grant.slots.count_ones();
        if got == 0 {
            leader_starved = grant.block == STARVED;
            break; // out of memory: the objects not served yet get nothing
        }
        // This lane's objects among the grant's: numbers `first..last` of the group's.
        let first = start.max(handed_out);
        let last = end.min(handed_out + got);
        if first < last {
            let mut slots = arch::clear_lowest_set_bits(grant.slots, first - handed_out);
            for v in first..last {
                let slot = slots.trailing_zeros();
                slots &= slots - 1;
                made(v - start, Some(RawHandle::new(grant.block, slot, C::OBJECTS_PER_BLOCK, C::TYPE_ID)));
            }
        }
        handed_out += got;
    }
    let served = end.min(handed_out).saturating_sub(start);
    let missed = asked - served;
    if missed > 0 {
        for k in served..asked {
            made(k, None);
        }
        if group.size > 1 && !leader_starved && served < count {
            // See `allocate_in_group`: a hand-out that skipped objects of a served group.
            store.coalescing_misses().fetch_add(missed);
            store.raise(crate::errors::SKIPPED_LANE);
        } else {
            store.failed_allocations().fetch_add(missed);
            store.note_failed_class(C::TYPE_ID);
            store.raise(crate::errors::OUT_OF_MEMORY);
        }
    }
    missed
}

/// A fresh block of class `C` whose lowest `wanted` slots (1 up to `C`'s objects per block)
/// are reserved for the caller, as objects: block `near` (modulo the store's blocks) if it is
/// free, else the next free block the search finds after it (where the store rotates its
/// searches; the first free one where it does not); the block's index, or `None` when no block is free
/// (nothing is raised; the caller then allocates its objects one by one, which reports out of
/// memory where it happens). The block is active if slots are left. For bulk creation (the
/// `parallel_new` kernel): one call per block-full of new objects, so that they lie in blocks
/// as full as their count allows. (Warps that each ask for half a block or more of a class
/// with no active block all open one at once: n-body's 20,000 bodies, created by 625 warps of
/// 32, lay in 625 half-full blocks of 64, which every walk over them visited; H200,
/// docs/results/2026-11-28-s4/occupancy.txt.)
#[inline]
pub fn open_block<C: ClassSpec, S: BlockStore>(store: &S, wanted: u32, near: u64) -> Option<u64> {
    let seen = store.class_flags(C::TYPE_ID);
    let wanted = wanted.clamp(1, C::OBJECTS_PER_BLOCK);
    let seed = if store.rotation() { seed_near(near % store.block_layout().count.max(1)) } else { 0 };
    let (index, _) = initialize_free_block::<C, S>(store, wanted, seed)?;
    store.class_changed(C::TYPE_ID, seen);
    Some(index)
}

/// Where a store's blocks lie (see [`BlockStore::block_layout`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockLayout {
    /// Address of block 0.
    pub first: u64,
    /// Bytes from one block to the next.
    pub stride: u64,
    /// Blocks.
    pub count: u64,
}

impl BlockLayout {
    /// Address of block `index`.
    #[inline(always)]
    pub fn addr(self, index: u64) -> u64 {
        self.first + index * self.stride
    }
}

/// What a leader hands its group: `slots` (as bits) of the block at address `block`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Grant {
    block: u64,
    slots: u64,
}

/// The search of the active bitmap and the opening of new blocks (Alg. 1) for `wanted` slots
/// of class `C`.
#[inline(always)]
fn search_or_open<C: ClassSpec, S: BlockStore, const LOSSES: u32, const SOLE: bool>(
    store: &S,
    wanted: u32,
    seed: &mut u64,
) -> Option<Grant> {
    let active = store.active(C::TYPE_ID);
    let changed = || store.class_changed(C::TYPE_ID, store.class_flags(C::TYPE_ID));
    let mut starved = 0u32;
    let mut losses = 0u32;
    let mut backoff = Backoff::new();
    // The CPU backend: the block this worker last allocated in (or whose objects it visits,
    // `arch::place_hint`), if it is an active block of `C`, before any search: most of a
    // worker's allocations go there, and the search costs a load and a rotation per level.
    // (Not in the loom models, which check the GPU's paths: their threads share the OS thread
    // whose hint this is.)
    #[cfg(not(any(target_arch = "nvptx64", loom)))]
    {
        let hint = arch::place_hint();
        if hint < active.len()
            && active.get(hint)
            && let Some(r) = reserve_in::<C, S, SOLE>(store, hint, wanted, 0, true)
        {
            changed();
            return Some(Grant { block: store.block_addr(hint), slots: r.slots });
        }
    }
    // The block this warp last allocated in, before any search (the GPU's counterpart of the
    // hint above): in the apps' allocating kernels most allocations are a lone lane's, and the
    // search of the active bitmap, one dependent L2 round trip per level, took a tenth of
    // their stall samples. The note is only a hint: the block may have filled, been freed or
    // been reused for another class since, which `reserve_in` finds (a full bitmap, or the
    // type check and its rollback) as for a block found through a stale active bit.
    //
    // A note of a block that filled up (`NOTE_FULL`), or whose reservation fails, still says
    // where this warp's blocks lie: the search then looks first at the active bitmap's bottom
    // container around it (the 64 blocks next to it, one load) and only then from the top (a
    // load per level). Traffic's car allocations went to the search in 38% of the rounds,
    // most of them after a note of a filled block (docs/performance-log.md, "The allocation's
    // tail").
    let mut near = NO_BLOCK;
    if let Some(entry) = store.last_block(C::TYPE_ID) {
        let noted = entry.load();
        let at = noted & !NOTE_FULL;
        if at != 0 && at <= active.len() {
            if noted & NOTE_FULL == 0
                && let Some(r) = reserve_in::<C, S, SOLE>(store, at - 1, wanted, slot_seed(*seed), false)
            {
                if r.filled_block {
                    entry.store(noted | NOTE_FULL);
                }
                changed();
                return Some(Grant { block: store.block_addr(at - 1), slots: r.slots });
            }
            near = at - 1;
        }
    }
    // Note a block found below for the next allocation (flagged full if this one filled it).
    // The entry is looked up again rather than kept: kept over the search loop, its address
    // raised the allocator's spills under the apps' register caps.
    let note = |index: u64, filled: bool| {
        if let Some(entry) = store.last_block(C::TYPE_ID) {
            entry.store((index + 1) | if filled { NOTE_FULL } else { 0 });
        }
    };
    loop {
        let found = if near != NO_BLOCK {
            let around = active.try_find_set_near(near, *seed);
            near = NO_BLOCK;
            around.or_else(|| active.try_find_set(*seed))
        } else if LOSSES > 0 && losses >= LOSSES {
            losses = 0;
            None
        } else {
            active.try_find_set(*seed)
        };
        let index = match found {
            Some(index) => index,
            None => {
                // Both loads before either test, so that their round trips overlap.
                let (opening, free) = (store.initializing().load(), store.free_count().load());
                // Enough blocks are being opened already (an allocation spike): wait for them
                // to become active rather than open yet another, so that a spike of thousands of
                // warps leaves fewer barely used blocks behind. Only a load: a read-modify-write
                // gate here (a semaphore) made a million starving threads hammer one address and
                // stall on an H200. The bound is soft: leaders arriving together may all pass it.
                // A leader that takes at least half a block itself leaves no barely used block
                // behind and is not held back.
                if opening >= MAX_BLOCKS_OPENING && !takes_half_a_block::<C>(wanted) {
                    backoff.snooze();
                    arch::fence();
                    *seed = next_seed(*seed);
                    continue;
                }
                // With no block left to open (out of memory, or all being reused), starving
                // threads only read the free count: claiming it would make them all hammer it.
                let opened =
                    if free as i64 > 0 { initialize_free_block::<C, S>(store, wanted, *seed) } else { None };
                match opened {
                    Some((index, slots)) => {
                        #[cfg(not(any(target_arch = "nvptx64", loom)))]
                        arch::set_place_hint(index);
                        note(index, slots | preset_mask(C::OBJECTS_PER_BLOCK) == u64::MAX);
                        changed();
                        return Some(Grant { block: store.block_addr(index), slots });
                    }
                    None => {
                        // Blocks ran out: what runs keep in reserve is all there is, so release
                        // it, and search again if there was any. Only in classes with runs: the
                        // call took the apps' allocating kernels up by 20-40 registers (their
                        // 80-register kernels spilled three times as much), so classes without
                        // runs leave the runs alone, and runs get short when blocks get scarce.
                        if C::OWNS_BLOCKS && store.runs_enabled() && runs::release_all(store) {
                            arch::fence();
                            continue;
                        }
                        // Blocks claimed by others but not yet active will take allocations
                        // soon; only rounds with none in flight count towards out of memory.
                        if store.initializing().load() == 0 {
                            starved += 1;
                            if starved > OUT_OF_MEMORY_ROUNDS {
                                store.starved_leaders().fetch_add(1);
                                return None;
                            }
                        }
                        backoff.snooze();
                        // Acquire: pairs with the release before `initializing` is decremented,
                        // so the next search sees the blocks published meanwhile.
                        arch::fence();
                        *seed = next_seed(*seed);
                        continue;
                    }
                }
            }
        };
        if let Some(r) = reserve_in::<C, S, SOLE>(store, index, wanted, slot_seed(*seed), true) {
            #[cfg(not(any(target_arch = "nvptx64", loom)))]
            arch::set_place_hint(index);
            note(index, r.filled_block);
            changed();
            return Some(Grant { block: store.block_addr(index), slots: r.slots });
        }
        // The block filled up (or changed class) since we found it: another warp won. Look
        // again with a new rotation (and sleep only if we keep losing).
        losses += 1;
        backoff.retry();
        *seed = next_seed(*seed);
    }
}

/// The rotation of a reservation's search for free slots in a block, from the leader's seed.
/// The CPU backend fills a block from its lowest free slot, so that objects a worker creates
/// one after another lie in slot order (a worker's allocations never race each other, so it
/// has no use for the GPU's rotation of slots).
#[inline(always)]
fn slot_seed(seed: u64) -> u32 {
    if cfg!(any(target_arch = "nvptx64", loom)) { seed as u32 } else { 0 }
}

/// Whether a leader asking for `wanted` objects takes at least half a block of `C`.
#[inline(always)]
fn takes_half_a_block<C: ClassSpec>(wanted: u32) -> bool {
    wanted * 2 >= C::OBJECTS_PER_BLOCK
}

/// A load for a decision that must rest on the latest value (that memory ran out). On the GPU
/// a `.gpu`-scoped relaxed load is served by L2, the point of coherence, and so is the latest;
/// loom may serve a relaxed load stale forever, so its models read with a read-modify-write.
#[inline(always)]
fn load_latest64(a: &Atomic64) -> u64 {
    #[cfg(loom)]
    return a.fetch_or(0);
    #[cfg(not(loom))]
    a.load()
}

/// Reserve up to `wanted` slots of block `index`, found through the active bitmap
/// (`found_active`) or a hint (Alg. 1, lines 9-17). The reservation if the block is of class
/// `C`; `None` if it was full, or had been freed and reused for another class (the slots are
/// then given back).
///
/// `SOLE`: the launch creates objects of `C` only and frees none (see
/// [`Heap::allocate_sole`]). Then no block of `C` changes class or has a slot reused before
/// the launch ends, and a free block can only be opened for `C`. So a block found in `C`'s
/// active bitmap is `C`'s: the reservation needs neither the type read nor an acquire (what the
/// block's opener published before it is nothing this thread reads). A hint may name a block of
/// another class: its type is read together with the reservation (no round trip waits for the
/// other), and where it reads `C` the block is `C`'s, stays so, and any slots the reservation
/// got are `C`'s (a block still free has a full bitmap, and only `C` can open it); where it does
/// not, the paper's order follows (a fence, then the type read).
#[inline]
fn reserve_in<C: ClassSpec, S: BlockStore, const SOLE: bool>(
    store: &S,
    index: u64,
    wanted: u32,
    seed: u32,
    found_active: bool,
) -> Option<Reservation> {
    let block = store.block(index);
    let r;
    let type_id;
    if SOLE {
        let seen = if found_active { C::TYPE_ID } else { block.type_id.load() as u8 };
        r = block.reserve_relaxed(wanted, seed)?;
        if seen == C::TYPE_ID {
            type_id = seen;
        } else {
            // Acquire: the relaxed reservation and this fence pair with the opener's release as
            // the acquire reservation below does.
            arch::fence();
            type_id = block.type_id.load() as u8;
        }
    } else {
        // The reservation is an acquire: it pairs with the fence of `initialize_free_block`, so
        // the type read below is the one the block had when its bitmap let us in (or a later
        // one).
        r = block.reserve(wanted, seed)?;
        type_id = block.type_id.load() as u8;
    }
    if type_id == C::TYPE_ID {
        if r.filled_block {
            if SOLE {
                // Nothing in a launch such as this one sets an active bit of `C`: no free of
                // `C` (the launch frees none), no give-back in a block of `C` (below). So a
                // clear bit stays clear: it may be, with the block not full before this
                // reservation, where a free that did not wait for the bitmap gave the block
                // room in an earlier launch (`release_slot_unwaited`; `C` is then `STALE`).
                // Waiting for it to be set would never end.
                store.active(type_id).try_clear(index);
            } else {
                store.active(type_id).clear(index);
            }
        }
        return Some(r);
    }
    // The block was freed and reused for another class after we found it: give the slots
    // back as that class's (paper Alg. 1, line 17).
    #[cfg(loom)]
    ROLLBACKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if SOLE {
        // In a launch such as this one, nothing else changes that class's active bits (it is
        // neither created nor freed with the paper's free), so leaving the bit as it is through
        // the reservation and its give-back leaves it right: a clear on filling and a set on
        // giving back, where a reservation of another leader came between them, could leave
        // it wrong (a set that came after that leader's clear) or wait for good (its own set
        // then finding the bit set).
        give_back::<_, false>(store, block, index, r.slots, type_id);
    } else {
        if r.filled_block {
            store.active(type_id).clear(index);
        }
        give_back::<_, true>(store, block, index, r.slots, type_id);
    }
    None
}

/// Give back `slots`, which a reservation took in block `index` after the block had been freed
/// and reused for class `type_id` (paper Alg. 1, line 17, where this is a free of each slot).
///
/// One write of the bitmap, and (`ACTIVATE`, but in a launch that creates one other class only,
/// see `reserve_in`) the block's active bit where the block was full (as the reservation, or
/// others since, had left it); a block that this leaves empty is not freed but
/// stays allocated to its class, and active, for that class's next allocations (a later free
/// that empties it again frees it), and `stranded_blocks` counts it, so that the heap's checks
/// tell it from a leak. The paper's full free here put the free of an emptied block (its
/// invalidation, three bitmaps, two fences) into every allocating kernel, for a path that runs
/// only when a block is freed and reused between a leader's finding it and reserving in it:
/// 10-32 more registers (ptxas 13.0, uncapped: the Game of Life's `Candidate::update` 106 ->
/// 128, Wa-Tor's `Fish::update` 100 -> 128) and, under the apps' caps, 80-320 bytes of the
/// allocator's spills where 0-120 are left (docs/performance-log.md, "The give-back").
#[inline(always)]
fn give_back<S: BlockStore, const ACTIVATE: bool>(
    store: &S,
    block: &BlockHeader,
    index: u64,
    slots: u64,
    type_id: u8,
) {
    let flags = store.class_flags(type_id);
    // The slots are this leader's (its reservation set them), so the release cannot fail.
    if let Some(release) = block.release_slots(slots, preset_mask(store.class_objects(type_id))) {
        if ACTIVATE && release.was_full {
            store.active(type_id).set(index);
        }
        if release.emptied {
            store.stranded_blocks(type_id).reduce_add(1);
        }
    }
    store.class_changed(type_id, flags);
}

/// Take a free block, make it a block of class `C` holding `wanted` slots (or all it has) for
/// the caller, and make the rest available (Alg. 1, lines 4-7). Returns the block's index and
/// the caller's slots; `None` when no block is free.
///
/// The caller's slots are set in the same write that resets the block's bitmap, so the opener
/// skips the reservation (a load and an atomic) and its type check (a fence and a load) that
/// the paper's loop makes it do after opening: no one else can reach the block before it is
/// published.
#[inline]
fn initialize_free_block<C: ClassSpec, S: BlockStore>(
    store: &S,
    wanted: u32,
    seed: u64,
) -> Option<(u64, u64)> {
    // Claim a block from the count first: then the bitmap search below must succeed. One
    // `fetch_sub`, undone on failure, rather than a CAS loop: leaders opening blocks all hit
    // this counter, and CAS attempts would serialise them one round trip each (that capped
    // allocation at one block per ~330 ns on an H200), while plain RMWs pipeline. A claim
    // succeeds only if the count was positive net of all claims in flight, so successful
    // claims never outnumber the free bits; failed claims only make others fail transiently,
    // which the caller retries.
    if !claim_free_blocks(store, 1) {
        return None;
    }
    let preset = preset_mask(C::OBJECTS_PER_BLOCK);
    // The lowest `wanted` slots: a fresh block's free slots are the low ones.
    let slots = !preset & if wanted >= 64 { u64::MAX } else { (1u64 << wanted) - 1 };
    let has_room = preset | slots != u64::MAX;
    if has_room {
        store.initializing().reduce_add(1);
    }
    let mut seed = seed;
    let free_blocks = store.free_blocks();
    let index = loop {
        if let Some(index) = free_blocks.clear_any(seed, 64) {
            break index;
        }
        seed = next_seed(seed);
    };
    // Acquire: pairs with the release in `release_slots` before the block was published as
    // free, so the previous owner's invalidation of the block's bitmap is ordered before our
    // reset of it below (without it, the reset could land first and leave the block "full").
    arch::fence();
    let block = store.block(index);
    // Swaps for the same reason as the bitmap's below. Every slot's object is handed out as
    // soon as it is reserved (unlike a run's, see `runs`).
    block.type_id.swap(C::TYPE_ID as u32);
    block.handed.swap(u64::MAX);
    // Release: the type id is visible to anyone whose reservation in this block succeeds
    // (paper footnote 5).
    arch::fence();
    // A swap, not a store: every write of an allocation bitmap is a read-modify-write, so its
    // history is one chain that each thread's `before` value places it in (a plain store may
    // race with a late, failing reservation of the block's previous life; loom also mis-models
    // that race, tokio-rs/loom#254).
    block.alloc.swap(preset | slots);
    #[cfg(loom)]
    std::eprintln!("[{:?}] open {index}", loom::thread::current().id());
    store.allocated(C::TYPE_ID).set(index);
    if has_room {
        store.active(C::TYPE_ID).set(index);
        // Release: whoever sees this block no longer initialising also sees it active.
        arch::fence();
        store.initializing().reduce_sub(1);
    }
    Some((index, slots))
}

/// Claim `count` blocks from the heap's free count (see `initialize_free_block`): `true` if
/// there were that many free, net of the claims of others.
#[inline(always)]
fn claim_free_blocks<S: BlockStore>(store: &S, count: u64) -> bool {
    let free = store.free_count();
    if (free.fetch_sub(count) as i64) < count as i64 {
        free.reduce_add(count);
        return false;
    }
    true
}

/// Free `slot` of block `index` of class `type_id` (Alg. 2), updating the block bitmaps;
/// `KEEP`: a block this empties stays allocated to its class (see `release_slots`).
#[inline]
pub fn release_slot<S: BlockStore, const KEEP: bool>(
    store: &S,
    block: &BlockHeader,
    index: u64,
    slot: u32,
    type_id: u8,
    preset: u64,
) {
    let flags = store.class_flags(type_id);
    if !release_slots::<S, KEEP>(store, block, index, 1 << slot, type_id, preset) {
        store.raise(crate::errors::DOUBLE_FREE);
        return;
    }
    store.class_changed(type_id, flags);
}

/// Free `slot` of `block`, of class `type_id`, with a reduction (`red.and`) whose old value
/// nobody waits for: the thread goes on at once, where [`release_slot`] waits a round trip to
/// L2 for the bitmap it changed. Only in a launch that allocates as `Heap::allocate_sole` does
/// and creates no object of the class (see `Heap::free_in_sole_launch`). Without the old value
/// there is no double-free check and no transition: a block that was full stays out of the
/// class's active bitmap, and a block the free empties stays with its class, uncounted. The
/// class's `STALE` flag says so, until the next enumeration that lists the class anew, which
/// makes every listed block with room active again and frees the empty ones (or
/// `heap_reactivate`, which the host runs before any launch that needs the bitmaps exact).
#[inline(always)]
pub fn release_slot_unwaited<S: BlockStore>(store: &S, block: &BlockHeader, slot: u32, type_id: u8) {
    let flags = store.class_flags(type_id);
    block.alloc.reduce_and(!(1u64 << slot));
    store.class_stale(type_id, flags);
}

/// Free the slots `mask` of block `index` of class `type_id` (Alg. 2 for several slots at
/// once), updating the block bitmaps; `false` if any of them was not allocated.
///
/// `KEEP` (in a launch that allocates no object of the class): a block this empties is not
/// freed but stays allocated to its class, and active, as a give-back's stranded block does
/// (`stranded_blocks` counts it), until the class's next enumeration anew frees it
/// ([`free_empty_block`]) or an allocation of the class fills it first. No one reaches it
/// before the launch ends: the class allocates nothing, and no other class can open a block
/// that is not free. So the frees that empty it need not order their accesses to its objects
/// before a reuse: the launch's end does.
#[inline]
fn release_slots<S: BlockStore, const KEEP: bool>(
    store: &S,
    block: &BlockHeader,
    index: u64,
    mask: u64,
    type_id: u8,
    preset: u64,
) -> bool {
    let Some(release) = block.release_slots(mask, preset) else {
        return false;
    };
    if release.was_full {
        store.active(type_id).set(index);
    }
    if KEEP {
        if release.emptied {
            store.stranded_blocks(type_id).reduce_add(1);
        }
        return true;
    }
    let deactivate = || store.active(type_id).clear(index);
    if release.emptied && block.invalidate(preset, deactivate) {
        deactivate();
        store.allocated(type_id).clear(index);
        // Acquire: pairs with the releases before the frees and run releases whose bitmap
        // writes our invalidation read, so that the bits they set in `handed` come before our
        // reset (a free block hands out nothing, see `BlockHeader::handed`).
        arch::fence();
        block.handed.swap(0);
        // Release: everything we did to the block happens before whoever takes it next
        // initialises it (see `initialize_free_block`).
        arch::fence();
        store.free_blocks().set(index);
        store.free_count().reduce_add(1);
    }
    true
}

/// Free block `index`, allocated to `class` and empty (a block that a give-back or a free left
/// with its class, see `release_slots`), in a kernel that runs alone on the heap (the
/// enumerations): nothing reserves in the block or frees in it meanwhile, so the free needs
/// neither the invalidation's retries nor fences (the launch's end orders it before the next
/// kernel). The block ends as a free block does: its bitmap full (a stale hint's reservation
/// fails), nothing handed out, in no class's bitmaps but the free one.
#[inline(always)]
pub fn free_empty_block<S: BlockStore>(store: &S, index: u64, class: u8) {
    let block = store.block(index);
    block.alloc.swap(u64::MAX);
    block.handed.swap(0);
    // An empty block is active (it has room); `try_clear`, so that a heap that is not as it
    // should be cannot hang here (its check then names the block).
    store.active(class).try_clear(index);
    store.allocated(class).try_clear(index);
    store.free_blocks().set(index);
    store.free_count().reduce_add(1);
}

#[cfg(all(test, not(loom)))]
mod tests;
#[cfg(any(test, loom))]
#[doc(hidden)]
pub mod vec_store;
