//! Ranked lists: the objects of one class in heap order (blocks by index, slots in a block),
//! one 32-bit entry each, built before a launch of a method with lanes so that its
//! `device_reduce` finds each lane's objects without walking the class's blocks.
//!
//! A `device_reduce` on L lanes (of a method not declared `dense`) splits a class's objects
//! into L parts by rank: the object with `r` objects of the class before it in heap order is
//! in part `r % L`. The walk over the class's blocks (`listed::for_each_allocated_in`) finds a
//! lane's objects of each block from the block's bitmaps, so every lane pays a visit per block
//! however few objects it holds, and where a class's objects die (collision's bodies merge:
//! 586 of 40,000 left in 380 blocks at the end) most of the walk is visits. The list holds
//! objects only: lane `j` of a group reads entries `j`, `j + L`, ..., and every lane of the
//! group gets the same count, give or take one. The list does not depend on L.
//!
//! A method with lanes creates and frees nothing (the macro refuses it), so the heap holds
//! still during its launch, and a list built just before it is exact for the whole launch.
//! Three kernels build it on a quiescent heap (stream order), over tiles of [`TILE_BLOCKS`]
//! blocks, one warp per tile: [`heap_rank_count`] counts each tile's objects and free slots,
//! [`heap_rank_scan`] (one warp) turns the counts into each tile's first entry, and
//! [`heap_rank_write`] writes the entries. The list is left empty ([`NOT_RANKED`]) where its
//! entries would not fit, and where the class's blocks have fewer free slots than one block
//! holds objects: there the walk over the blocks, which visits each full block's part slot by
//! slot with no entry to load, is the faster one. Either way the parts are the same objects in
//! the same order.
//!
//! The host keeps one list, of the class of the last launch with lanes, and passes its address
//! with the launch (`DoParams::ranked`); it builds the list again after any launch that may
//! have created or freed objects of the class.

use dynasoar_macros::kernel;

use crate::arch;
use crate::block::{ClassShape, preset_mask};
use crate::handle::RawHandle;
use crate::heap::kernels::quiet_load;
use crate::heap::{Heap, HeapHeader};
use crate::{DevPtr, Plain};

/// Blocks per tile: one warp counts and lists them (eight containers of the level-0 bitmap,
/// which one word of level 1 tells empty or not).
pub const TILE_BLOCKS: u32 = 512;

/// [`RankedHeader::class`] of a list that holds no class.
pub const NOT_RANKED: u32 = u32::MAX;

/// Most blocks a heap may have for its objects to be listed: an entry is the block's index
/// times 64 plus the slot, and every count (at most 64 per block) is below 2^31.
pub const MAX_RANKED_BLOCKS: u64 = 1 << 25;

/// The start of a ranked list's memory. It is followed by `tiles` counts, `tiles` first
/// entries and room for `capacity` entries, all `u32` ([`ranked_words`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RankedHeader {
    /// The class listed, or [`NOT_RANKED`].
    pub class: u32,
    /// Objects listed.
    pub count: u32,
    /// Room for entries.
    pub capacity: u32,
    /// Tiles of the heap: `num_blocks / TILE_BLOCKS`, rounded up.
    pub tiles: u32,
}
// SAFETY: `repr(C)` plain integers.
#[diagnostic::do_not_recommend]
unsafe impl Plain for RankedHeader {}

impl RankedHeader {
    /// The header of an empty list with room for `capacity` objects in a heap of `num_blocks`.
    pub const fn new(num_blocks: u64, capacity: u32) -> Self {
        RankedHeader { class: NOT_RANKED, count: 0, capacity, tiles: tiles_for(num_blocks) }
    }
}

/// Tiles of a heap of `num_blocks` blocks.
pub const fn tiles_for(num_blocks: u64) -> u32 {
    num_blocks.div_ceil(TILE_BLOCKS as u64) as u32
}

/// `u32` words of a ranked list's memory: the header, the counts and first entries of the
/// tiles, the entries.
pub const fn ranked_words(header: &RankedHeader) -> usize {
    4 + 2 * header.tiles as usize + header.capacity as usize
}

/// Parameters of the three kernels that build a ranked list.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RankParams {
    pub heap: DevPtr<HeapHeader>,
    /// The list's memory ([`ranked_words`] words, the header written by the host).
    pub list: DevPtr<RankedHeader>,
    /// The class to list.
    pub class: u32,
    pub _reserved: u32,
}
// SAFETY: `repr(C)` plain data.
// Kernel parameters: not offered to users as examples of plain types in diagnostics.
#[diagnostic::do_not_recommend]
unsafe impl Plain for RankParams {}

/// The parts of a ranked list's memory.
struct Parts {
    header: *mut RankedHeader,
    counts: *mut u32,
    firsts: *mut u32,
    entries: *mut u32,
}

impl Parts {
    fn of(list: DevPtr<RankedHeader>) -> (Self, RankedHeader) {
        let header = list.as_ptr();
        // SAFETY: the host's list memory starts with a header; nothing writes it during a
        // kernel but the scan's one thread, which the other kernels run after (stream order).
        let h = unsafe { header.read() };
        let words = header as *mut u32;
        // SAFETY: the memory holds `ranked_words(h)` words.
        let parts = unsafe {
            let counts = words.add(4);
            let firsts = counts.add(h.tiles as usize);
            Parts { header, counts, firsts, entries: firsts.add(h.tiles as usize) }
        };
        (parts, h)
    }
}

/// The sum of `value` over the lanes of the warp, in every lane (all lanes call it).
#[inline(always)]
fn warp_sum(value: u32) -> u32 {
    let mut v = value;
    let mut d = arch::WARP_SIZE / 2;
    while d > 0 {
        v = v.wrapping_add(arch::shfl_u32(u32::MAX, v, arch::lane_id() ^ d));
        d /= 2;
    }
    v
}

/// The sum of `value` over this lane and the lanes below it (all lanes call it).
#[inline(always)]
fn warp_inclusive_sum(value: u32) -> u32 {
    let lane = arch::lane_id();
    let mut v = value;
    let mut d = 1;
    while d < arch::WARP_SIZE {
        let below = arch::shfl_u32(u32::MAX, v, lane.saturating_sub(d));
        if lane >= d {
            v = v.wrapping_add(below);
        }
        d *= 2;
    }
    v
}

/// Call `f(index, objects, listed)` for the blocks of `tile` in rounds of a warp (all lanes
/// call it and get the same number of calls): lane `j` of round `r` gets block
/// `tile * TILE_BLOCKS + r * WARP_SIZE + j`, its objects of `class` and whether it is the
/// class's (no objects and not listed where the block is past the heap's end or not the
/// class's). A tile whose eight level-0 containers are empty
/// (one word of level 1) makes no calls. Plain loads: the heap is quiescent.
#[inline(always)]
fn for_each_round(heap: &Heap<'_>, class: u8, tile: u32, mut f: impl FnMut(u32, u64, bool)) {
    let allocated = heap.allocated(class);
    let geometry = allocated.geometry();
    let blocks = geometry.bits;
    if geometry.levels > 1 {
        let containers = TILE_BLOCKS / 64;
        let word = quiet_load(allocated.container(1, (tile / (64 / containers)) as u64));
        let shift = (tile % (64 / containers)) * containers;
        if (word >> shift) & ((1u64 << containers) - 1) == 0 {
            return;
        }
    }
    let valid = !preset_mask(heap.class_objects(class));
    let mut round = 0;
    while round < TILE_BLOCKS / arch::WARP_SIZE {
        let index = tile * TILE_BLOCKS + round * arch::WARP_SIZE + arch::lane_id();
        let listed = (index as u64) < blocks
            && quiet_load(allocated.container(0, (index / 64) as u64)) & (1 << (index % 64)) != 0;
        let objects = if listed {
            let block = heap.block(index as u64);
            quiet_load(&block.alloc) & quiet_load(&block.handed) & valid
        } else {
            0
        };
        f(index, objects, listed);
        round += 1;
    }
}

/// Count each tile's objects of `p.class` into the list's counts, and its blocks' free slots
/// into the first entries, which the scan reads before it writes them (one warp per tile, any
/// grid of whole warps).
#[kernel(crate = crate, name = "dynasoar_heap_rank_count")]
pub fn heap_rank_count(p: RankParams) {
    // SAFETY: the host launches this on an initialised heap, between other kernels.
    let heap = unsafe { Heap::from_ptr(p.heap.as_ptr()) };
    let (parts, h) = Parts::of(p.list);
    let class = p.class as u8;
    let objects = heap.class_objects(class);
    let warps = (arch::global_thread_count() / arch::WARP_SIZE as usize) as u32;
    let mut tile = arch::global_warp_id() as u32;
    while tile < h.tiles {
        let (mut entries, mut free) = (0u32, 0u32);
        for_each_round(&heap, class, tile, |_, bits, listed| {
            entries += bits.count_ones();
            free += if listed { objects - bits.count_ones() } else { 0 };
        });
        let (entries, free) = (warp_sum(entries), warp_sum(free));
        if arch::lane_id() == 0 {
            // SAFETY: `tile < tiles`; one warp per tile writes its count.
            unsafe {
                parts.counts.add(tile as usize).write(entries);
                parts.firsts.add(tile as usize).write(free);
            }
        }
        tile += warps;
    }
}

/// Turn the tiles' counts into their first entries and write the list's header: the class
/// if its objects fit and its blocks have at least one block's worth of free slots, else
/// [`NOT_RANKED`] (see the module documentation). The first warp of the grid does it all: each
/// lane sums a run of the tiles.
#[kernel(crate = crate, name = "dynasoar_heap_rank_scan")]
pub fn heap_rank_scan(p: RankParams) {
    if arch::global_warp_id() != 0 {
        return;
    }
    // SAFETY: the host launches this on an initialised heap, between other kernels.
    let heap = unsafe { Heap::from_ptr(p.heap.as_ptr()) };
    let (parts, h) = Parts::of(p.list);
    let lane = arch::lane_id();
    let per = h.tiles.div_ceil(arch::WARP_SIZE);
    let (start, end) = ((lane * per).min(h.tiles), ((lane + 1) * per).min(h.tiles));
    // No sum wraps: the host lists heaps of at most `MAX_RANKED_BLOCKS` blocks.
    let (mut sum, mut free) = (0u32, 0u32);
    for t in start..end {
        // SAFETY: `t < tiles`, written by the count kernel (the first entries hold the free
        // slots until this lane overwrites them below).
        unsafe {
            sum += parts.counts.add(t as usize).read();
            free += parts.firsts.add(t as usize).read();
        }
    }
    let inclusive = warp_inclusive_sum(sum);
    let total = arch::shfl_u32(u32::MAX, inclusive, arch::WARP_SIZE - 1);
    let free = warp_sum(free);
    let mut at = inclusive - sum;
    for t in start..end {
        // SAFETY: as above; each first entry written by one lane.
        unsafe {
            let count = parts.counts.add(t as usize).read();
            parts.firsts.add(t as usize).write(at);
            at += count;
        }
    }
    if lane == 0 {
        let sparse = free >= heap.class_objects(p.class as u8);
        let class = if total <= h.capacity && sparse { p.class } else { NOT_RANKED };
        // SAFETY: one thread writes the header; the next kernel reads it.
        unsafe { parts.header.write(RankedHeader { class, count: total, ..h }) };
    }
}

/// Write the entries of `p.class` (`index * 64 + slot`, in heap order) from each tile's first
/// entry, if the scan listed the class (one warp per tile, any grid of whole warps).
#[kernel(crate = crate, name = "dynasoar_heap_rank_write")]
pub fn heap_rank_write(p: RankParams) {
    // SAFETY: the host launches this on an initialised heap, between other kernels.
    let heap = unsafe { Heap::from_ptr(p.heap.as_ptr()) };
    let (parts, h) = Parts::of(p.list);
    if h.class != p.class {
        return;
    }
    let warps = (arch::global_thread_count() / arch::WARP_SIZE as usize) as u32;
    let mut tile = arch::global_warp_id() as u32;
    while tile < h.tiles {
        // SAFETY: `tile < tiles`, written by the scan.
        let mut first = unsafe { parts.firsts.add(tile as usize).read() };
        for_each_round(&heap, p.class as u8, tile, |index, objects, _| {
            let count = objects.count_ones();
            let inclusive = warp_inclusive_sum(count);
            let mut at = first + inclusive - count;
            let mut bits = objects;
            while bits != 0 {
                let slot = bits.trailing_zeros();
                bits &= bits - 1;
                // SAFETY: the scan found `total <= capacity` objects in all, and this entry is
                // below this tile's first plus its count: inside the list, written once.
                unsafe { parts.entries.add(at as usize).write(index << 6 | slot) };
                at += 1;
            }
            first += arch::shfl_u32(u32::MAX, inclusive, arch::WARP_SIZE - 1);
        });
        tile += warps;
    }
}

/// A ranked list's entries, as a launch with lanes reads them.
#[derive(Clone, Copy)]
pub(crate) struct Ranked {
    entries: *const u32,
    count: u32,
    /// Fold two objects at a time (see [`ClassShape::pairs`]).
    pairs: bool,
}

impl Ranked {
    /// The launch's ranked list (`shape.ranked`, the address a launch with lanes received; 0
    /// for none), if it lists `class`, walked as `shape.pairs` says.
    #[inline(always)]
    pub(crate) fn of(shape: ClassShape, class: u8) -> Option<Self> {
        if shape.ranked == 0 {
            return None;
        }
        let (memory, h) = Parts::of(DevPtr::from_addr(shape.ranked));
        (h.class == class as u32).then_some(Ranked {
            entries: memory.entries,
            count: h.count,
            pairs: shape.pairs,
        })
    }

    /// Call `f` on the objects of part `part` of `parts` (the objects of rank `part`,
    /// `part + parts`, ...), with each handle built as the block walk builds it (the address of
    /// block `index` from `block_address`, N objects per block, `class`); in a list walked in
    /// pairs (see [`ClassShape::pairs`]) two at a time, in the same order.
    #[inline(always)]
    pub(crate) fn for_each_in_part(
        self,
        parts: u32,
        part: u32,
        block_address: impl Fn(u32) -> u64,
        n: u32,
        class: u8,
        mut f: impl FnMut(RawHandle),
    ) {
        let (entries, count, pairs) = (self.entries, self.count, self.pairs);
        let mut rank = part;
        if rank >= count {
            return;
        }
        // SAFETY: below `count` (clamped), entries the write kernel wrote; nothing changes the
        // list during a launch with lanes. Plain loads, each loaded a round ahead so that its
        // latency overlaps the fold's.
        let load = |rank: u32| unsafe { entries.add(rank.min(count - 1) as usize).read() };
        let handle = |entry: u32| RawHandle::new(block_address(entry >> 6), entry & 63, n, class);
        if pairs {
            // The next pair's entries are loaded before this pair is visited. (On 32 lanes,
            // H200: collision's `compute_force` 2.01 s against 2.18 s one at a time, its
            // `prepare_merge`, whose fold branches, 1.65 s against 1.47 s; docs/results/
            // 2026-11-29-s2/list-pair-c280da6.txt.)
            let mut pair = (load(rank), load(rank + parts));
            while rank + parts < count {
                let ahead = rank + 2 * parts;
                let next = (load(ahead), load(ahead + parts));
                f(handle(pair.0));
                f(handle(pair.1));
                (rank, pair) = (ahead, next);
            }
            if rank < count {
                f(handle(pair.0));
            }
            return;
        }
        let mut entry = load(rank);
        loop {
            let ahead = rank + parts;
            let next = load(ahead);
            f(handle(entry));
            if ahead >= count {
                break;
            }
            (rank, entry) = (ahead, next);
        }
    }
}
