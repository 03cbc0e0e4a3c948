//! The heap: one device allocation holding the allocator's state and all blocks.
//!
//! ```text
//! [ header: config (immutable after init) | state (atomics) | change flags per class ]
//! [ bitmaps: free, then allocated/active of each class; M bits each, hierarchical ]
//! [ enumeration areas, one per class: 2 + 2 counters, M block indices, M iteration bitmaps,
//!   M / 64 container indices ]
//! [ run tables, one per class: H entries, one per (multiprocessor, warp slot) ]
//! [ last-block tables, one per class: H entries, keyed as the run tables ]
//! [ blocks: M x block_bytes, 64-byte aligned ]
//! ```
//!
//! The number of blocks `M` follows from the heap size given at run time (DynaSOAr fixes it at
//! compile time). The host computes a [`HeapPlan`], uploads its [`HeapConfig`] and runs the init
//! kernel; device code reaches everything through a [`Heap`] view of the header.

pub mod kernels;
pub(crate) mod listed;
pub mod ranked;

use crate::arch::{
    self,
    atomic::{Atomic32, Atomic64},
};
use crate::bitmap::{Bitmap, BitmapGeometry};
use crate::block::{BLOCK_ALIGN, BlockHeader, DATA_OFFSET};
use crate::handle::{ADDRESS_LIMIT, RawHandle};

/// Classes a heap can hold.
pub const MAX_CLASSES: usize = 64;

/// [`HeapConfig::variants`] bit: every thread allocates alone, without warp-coalesced
/// allocation requests (the paper's DynaSOAr-NoCoal, Table 2).
pub const VARIANT_NO_COALESCING: u32 = 1;

/// [`HeapConfig::variants`] bit: bitmap searches and slot reservations never rotate by a seed,
/// every one is a plain find-first-set from the same position (the paper's DynaSOAr-NoShift,
/// section 7.3).
pub const VARIANT_NO_ROTATION: u32 = 2;

/// [`HeapConfig::variants`] bit: a leader does not try the block its warp slot last allocated
/// in before it searches the active bitmap (the allocator's last-block table, ours, not the
/// paper's), so every allocation searches as in the paper's Alg. 1.
pub const VARIANT_NO_LAST_BLOCK: u32 = 4;

/// Marks a valid heap header.
pub const HEAP_MAGIC: u64 = 0x6479_6e61_736f_6172; // "dynasoar"

pub use crate::errors;

/// Immutable heap configuration: written by the host before the init kernel, never changed
/// while kernels run (so plain loads of it are safe; only [`HeapState`] and the bitmaps and
/// block headers are shared mutable state).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeapConfig {
    pub magic: u64,
    /// Address of the heap (of this header).
    pub base: u64,
    pub total_bytes: u64,
    pub num_blocks: u64,
    pub block_bytes: u64,
    /// Address of block 0.
    pub blocks: u64,
    /// Address of the first bitmap; bitmap `i` is `bitmap_stride` containers further.
    pub bitmaps: u64,
    pub bitmap_stride: u64,
    /// Address of class 0's enumeration area; class `c`'s is `c * enum_stride` bytes further.
    pub enumeration: u64,
    pub enum_stride: u64,
    /// Address of class 0's run table; class `c`'s is `c * run_slots` entries further. The
    /// classes' last-block tables follow the run tables, `num_classes * run_slots` entries
    /// after this, with as many entries each.
    pub runs: u64,
    pub num_classes: u32,
    /// Entries of each class's run table (a power of two).
    pub run_slots: u32,
    /// Whether leaders of classes that opt in and take at least half a block hand out slots
    /// from runs of blocks (1) or search and open blocks like every other leader (0); see the
    /// allocator's `runs`.
    pub block_runs: u32,
    /// Variants of the allocator, for the paper's comparison of them (section 7.3, Figure
    /// 12(d)): [`VARIANT_NO_COALESCING`] and [`VARIANT_NO_ROTATION`] bits, and
    /// [`VARIANT_NO_LAST_BLOCK`] for our own addition; 0 (the default) is DynaSOAr as the paper
    /// describes it with the last-block tables; [`VARIANT_NO_LAST_BLOCK`] alone is the paper's.
    /// `allocate` reads it at run time, so one PTX serves every variant.
    pub variants: u32,
    pub geometry: BitmapGeometry,
    /// Objects per block of each class.
    pub class_objects: [u32; MAX_CLASSES],
}

/// Mutable heap-wide state.
#[repr(C, align(128))]
pub struct HeapState {
    /// Free blocks not yet claimed: a block is claimed here before it is taken from the free
    /// bitmap, so a search of that bitmap never comes up empty for lack of blocks.
    pub free_blocks: Atomic64,
    /// [`errors`] bits.
    pub errors: Atomic32,
    /// Failed allocations (threads that got no object).
    pub failed_allocations: Atomic32,
    /// Blocks (or runs of blocks) claimed from the free count but not yet published as active
    /// (or in a run table): while any are, an allocation that finds nothing is not out of
    /// memory yet.
    pub initializing: Atomic32,
    /// Leaders that gave up for lack of blocks (each failed allocation comes from one).
    pub starved_leaders: Atomic32,
    /// Lanes that left a warp's hand-out without a slot and allocated alone (see the
    /// allocator; expected to stay 0).
    pub coalescing_misses: Atomic32,
    /// The launch tag (see [`Heap::for_launch`]) of the first launch that raised an error since
    /// the last check, 0 if none did or none was tagged: so that the host names the kernel
    /// that raised it, not only the ones launched since.
    pub first_error_launch: Atomic32,
    /// Classes (bits by type id) whose allocations failed for lack of memory.
    pub failed_classes: Atomic64,
}

/// The host's copy of [`HeapState`] (same layout, plain integers).
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HeapStateWords {
    pub free_blocks: u64,
    pub errors: u32,
    pub failed_allocations: u32,
    pub initializing: u32,
    pub starved_leaders: u32,
    pub coalescing_misses: u32,
    pub first_error_launch: u32,
    pub failed_classes: u64,
}

/// The heap header at the heap's start.
#[repr(C)]
pub struct HeapHeader {
    pub config: HeapConfig,
    pub state: HeapState,
    /// Per class, the change flags (see [`Heap::enum_changed`]). Here, at a fixed offset, so
    /// that a free finds them without reading the configuration: after the free's fence (which
    /// empties the L1) such a read went to L2 and back before the flags' own load could start.
    pub enum_changed: [Atomic32; MAX_CLASSES],
    /// Per class, at most how many of its allocated blocks are empty (see
    /// [`Heap::stranded_blocks`]).
    pub stranded_blocks: [Atomic32; MAX_CLASSES],
}

/// Byte offset of [`HeapState`] in the heap.
pub const STATE_OFFSET: u64 = core::mem::offset_of!(HeapHeader, state) as u64;

const _: () = assert!(core::mem::size_of::<HeapState>() == core::mem::size_of::<HeapStateWords>());
const _: () = assert!(
    core::mem::offset_of!(HeapState, initializing) == core::mem::offset_of!(HeapStateWords, initializing)
);
const _: () = assert!(
    core::mem::offset_of!(HeapState, failed_classes) == core::mem::offset_of!(HeapStateWords, failed_classes)
);
const _: () = assert!(core::mem::size_of::<HeapHeader>() <= 4096);

/// Per-class enumeration area: counters of the two alternating enumerations (listed blocks,
/// then listed level-0 containers), then the indices of the class's allocated blocks (paper's
/// `R`, Figure 8), then for each listed block the snapshot of its allocation bitmap taken at
/// enumeration (the paper's iteration bitmap): the objects that existed at launch, which are
/// the ones a do-all visits; last, the indices of the class's non-empty level-0 containers
/// that the hierarchical enumeration lists on its way to the blocks (Alg. 5's `selected`).
const ENUM_HEADER_BYTES: u64 = 64;

/// Byte offset of the container counters in an enumeration area (after the block counters).
const ENUM_CONTAINER_COUNTERS: u64 = 8;

/// Byte offset of the noted flags in an enumeration area (after the container counters).
const ENUM_NOTED: u64 = 16;

/// Both change flags of a class (see [`Heap::enum_changed`]).
pub const CHANGED_BOTH: u32 = 0b11;

/// Set with the change flags of a class by a free that did not wait for its block's bitmap
/// (`Heap::free_in_sole_launch`): until the class's next enumeration anew or
/// [`heap_reactivate`](kernels::heap_reactivate), its active bitmap may miss blocks with room
/// and its empty blocks are not counted ([`Heap::stranded_blocks`]), which the heap's check
/// accepts for such a class only.
pub const STALE: u32 = 0b100;

/// Bytes of a class's enumeration area for `m` blocks: header, indices, snapshots, container
/// indices.
const fn enum_area_bytes(m: u64) -> u64 {
    enum_snapshots_offset(m) + align_up(8 * m, 256) + align_up(4 * m.div_ceil(64), 256)
}

/// Byte offset of the snapshots in an enumeration area for `m` blocks.
const fn enum_snapshots_offset(m: u64) -> u64 {
    align_up(ENUM_HEADER_BYTES + 4 * m, 256)
}

/// Why a heap cannot be laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanError {
    /// Not even one block fits.
    TooSmall {
        heap_bytes: u64,
        min_bytes: u64,
    },
    TooManyClasses(usize),
    /// A class has an invalid objects-per-block count.
    BadClass {
        class: usize,
        objects: u32,
    },
    /// The heap would extend past the addresses a handle can encode.
    AddressTooHigh(u64),
    /// A block of this many bytes does not fit the 32-bit arithmetic of the do-all loops.
    BlockTooLarge(u64),
    /// Blocks must be a multiple of [`BLOCK_ALIGN`] bytes with room for the header
    /// ([`layout::block_bytes`](crate::layout::block_bytes) computes them so).
    BadBlockBytes(u64),
}

/// Most entries of a run table: one per warp slot (64) of up to 256 multiprocessors.
pub const MAX_RUN_SLOTS: u64 = 256 * 64;

/// Entries of each run table for a heap of `heap_bytes`: one per warp slot, but no more than
/// a power of two (at least 1) that keeps each table under 1/1024 of the heap, so that small
/// heaps keep their memory for blocks (the full table, 128 KiB, from 128 MiB on).
const fn run_slots(heap_bytes: u64) -> u64 {
    let cap = heap_bytes / 1024 / 8;
    if cap >= MAX_RUN_SLOTS {
        MAX_RUN_SLOTS
    } else if cap <= 1 {
        1
    } else {
        1 << (63 - cap.leading_zeros())
    }
}

/// Most blocks of a heap: the do-all loops count blocks in 32 bits (with room to step past the
/// last). At 64 bytes a block, far beyond any GPU's memory.
pub const MAX_BLOCKS: u64 = 1 << 31;

/// Where everything lives in a heap of a given size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeapPlan {
    pub config: HeapConfig,
}

const fn align_up(x: u64, a: u64) -> u64 {
    x.div_ceil(a) * a
}

impl HeapPlan {
    /// Lay out a heap of at most `heap_bytes` bytes at address `base` (256-byte aligned) for
    /// classes with `class_objects[c]` objects per block and blocks of `block_bytes`.
    pub fn new(
        base: u64,
        heap_bytes: u64,
        block_bytes: u64,
        class_objects: &[u32],
    ) -> Result<Self, PlanError> {
        let classes = class_objects.len();
        if classes == 0 || classes > MAX_CLASSES {
            return Err(PlanError::TooManyClasses(classes));
        }
        for (class, &objects) in class_objects.iter().enumerate() {
            if objects == 0 || objects > 64 {
                return Err(PlanError::BadClass { class, objects });
            }
        }
        if block_bytes > u32::MAX as u64 {
            return Err(PlanError::BlockTooLarge(block_bytes));
        }
        if block_bytes <= DATA_OFFSET || !block_bytes.is_multiple_of(BLOCK_ALIGN) {
            return Err(PlanError::BadBlockBytes(block_bytes));
        }
        let header = align_up(core::mem::size_of::<HeapHeader>() as u64, 256);
        let bitmaps = 1 + 2 * classes as u64;
        let run_slots = run_slots(heap_bytes);
        // The run tables, then the last-block tables.
        let run_bytes = align_up(2 * classes as u64 * run_slots * 8, 256);
        // Bytes a heap of `m` blocks needs.
        let bytes_for = |m: u64| -> Option<(u64, BitmapGeometry, u64, u64, u64)> {
            let geometry = BitmapGeometry::new(m)?;
            let stride = geometry.containers;
            let bitmap_bytes = align_up(bitmaps * stride * 8, 256);
            let enum_stride = enum_area_bytes(m);
            let blocks_at = align_up(header + bitmap_bytes + classes as u64 * enum_stride + run_bytes, 256);
            Some((blocks_at + m * block_bytes, geometry, stride, enum_stride, blocks_at))
        };
        let min_bytes = bytes_for(1).map(|b| b.0).unwrap_or(u64::MAX);
        if heap_bytes < min_bytes {
            return Err(PlanError::TooSmall { heap_bytes, min_bytes });
        }
        // Largest m that fits: start from the estimate that ignores metadata, then step down.
        let per_block = block_bytes + bitmaps.div_ceil(8) + 12 * classes as u64;
        let mut m = (heap_bytes / per_block).clamp(1, MAX_BLOCKS - 1);
        while m > 1 && bytes_for(m).is_none_or(|b| b.0 > heap_bytes) {
            let over = bytes_for(m).map(|b| b.0.saturating_sub(heap_bytes)).unwrap_or(u64::MAX);
            m -= (over / per_block).clamp(1, m - 1);
        }
        let (total, geometry, stride, enum_stride, blocks_at) =
            bytes_for(m).ok_or(PlanError::TooSmall { heap_bytes, min_bytes })?;
        if base + total > ADDRESS_LIMIT {
            return Err(PlanError::AddressTooHigh(base + total));
        }
        let mut objects = [0u32; MAX_CLASSES];
        objects[..classes].copy_from_slice(class_objects);
        let config = HeapConfig {
            magic: HEAP_MAGIC,
            base,
            total_bytes: total,
            num_blocks: m,
            block_bytes,
            blocks: base + blocks_at,
            bitmaps: base + header,
            bitmap_stride: stride,
            enumeration: base + header + align_up(bitmaps * stride * 8, 256),
            enum_stride,
            runs: base + header + align_up(bitmaps * stride * 8, 256) + classes as u64 * enum_stride,
            num_classes: classes as u32,
            run_slots: run_slots as u32,
            block_runs: 1,
            variants: 0,
            geometry,
            class_objects: objects,
        };
        Ok(HeapPlan { config })
    }

    /// Number of bitmaps (free, and allocated + active per class).
    pub fn bitmap_count(&self) -> u64 {
        1 + 2 * self.config.num_classes as u64
    }
}

impl HeapConfig {
    /// Address of `class`'s enumeration area: its two block counters (one per parity), then
    /// its two container counters.
    #[inline(always)]
    pub fn enum_area(&self, class: u8) -> u64 {
        self.enumeration + class as u64 * self.enum_stride
    }

    /// Address of `class`'s list of block indices (entry `i` for the `i`-th listed block).
    #[inline(always)]
    pub fn enum_list_addr(&self, class: u8) -> u64 {
        self.enum_area(class) + ENUM_HEADER_BYTES
    }

    /// Address of `class`'s iteration bitmaps (entry `i` for list entry `i`).
    #[inline(always)]
    pub fn enum_snapshots_addr(&self, class: u8) -> u64 {
        self.enum_area(class) + enum_snapshots_offset(self.num_blocks)
    }

    /// Address of `class`'s list of non-empty level-0 containers (the hierarchical
    /// enumeration's intermediate list, `num_blocks / 64` entries, rounded up).
    #[inline(always)]
    pub fn enum_containers_addr(&self, class: u8) -> u64 {
        self.enum_snapshots_addr(class) + align_up(8 * self.num_blocks, 256)
    }

    /// The same configuration for a copy of the heap at `base`.
    pub fn rebased(&self, base: u64) -> HeapConfig {
        let delta = base.wrapping_sub(self.base);
        HeapConfig {
            base,
            blocks: self.blocks.wrapping_add(delta),
            bitmaps: self.bitmaps.wrapping_add(delta),
            enumeration: self.enumeration.wrapping_add(delta),
            runs: self.runs.wrapping_add(delta),
            ..*self
        }
    }
}

/// The key of this warp's entries in the run and last-block tables (below `run_slots`): its
/// multiprocessor and warp slot (see [`Heap::run_entry`]).
#[inline(always)]
fn warp_key(c: &HeapConfig) -> u32 {
    (((arch::warp_slot() & 63) << 8) | (arch::sm_id() & 255)) & (c.run_slots - 1)
}

/// Device-side view of a heap.
#[derive(Clone, Copy)]
pub struct Heap<'a> {
    header: &'a HeapHeader,
    /// The launch tag errors raised through this view record (0: none); see
    /// [`for_launch`](Self::for_launch).
    launch: u32,
}

impl<'a> Heap<'a> {
    /// The heap whose header is at `header`.
    ///
    /// # Safety
    /// `header` must point to a heap laid out by [`HeapPlan`] and initialised by the init
    /// kernel, valid for `'a`, whose shared state is accessed only atomically.
    #[inline(always)]
    pub unsafe fn from_ptr(header: *const HeapHeader) -> Self {
        // SAFETY: guaranteed by the caller.
        Heap { header: unsafe { &*header }, launch: 0 }
    }

    /// This view, recording `launch` (a tag the host gave the launch, nonzero) with the first
    /// error raised through it, so that the host names the kernel that raised it even when it
    /// checks after many launches.
    #[inline(always)]
    pub fn for_launch(self, launch: u32) -> Self {
        Heap { launch, ..self }
    }

    #[inline(always)]
    pub fn config(&self) -> &'a HeapConfig {
        &self.header.config
    }

    #[inline(always)]
    pub fn state(&self) -> &'a HeapState {
        &self.header.state
    }

    #[inline(always)]
    fn bitmap(&self, index: u64) -> Bitmap<'a> {
        let c = self.config();
        let start = c.bitmaps + index * c.bitmap_stride * 8;
        // SAFETY: bitmap `index` lies within the heap (see `HeapPlan`), holds `bitmap_stride`
        // containers, and is accessed only atomically.
        unsafe { Bitmap::from_raw(&c.geometry, start as usize as *const Atomic64) }
    }

    /// Objects per block of `class` (ids are below 64; the mask keeps the lookup unchecked).
    #[inline(always)]
    pub fn class_objects(&self, class: u8) -> u32 {
        self.config().class_objects[(class & 63) as usize]
    }

    /// Blocks not allocated to any class.
    #[inline(always)]
    pub fn free_blocks(&self) -> Bitmap<'a> {
        self.bitmap(0)
    }

    /// Blocks allocated to `class` (used to enumerate its objects).
    #[inline(always)]
    pub fn allocated(&self, class: u8) -> Bitmap<'a> {
        self.bitmap(1 + 2 * class as u64)
    }

    /// Blocks of `class` with at least one free slot (used to allocate).
    #[inline(always)]
    pub fn active(&self, class: u8) -> Bitmap<'a> {
        self.bitmap(2 + 2 * class as u64)
    }

    /// Address of block `index`.
    #[inline(always)]
    pub fn block_addr(&self, index: u64) -> u64 {
        self.config().blocks + index * self.config().block_bytes
    }

    /// Address of block 0 and the bytes of a block (below 2^32, see `HeapPlan`), for loops that
    /// compute block addresses and should not reload the header meanwhile.
    #[inline(always)]
    pub fn block_geometry(&self) -> (u64, u32) {
        (self.config().blocks, self.config().block_bytes as u32)
    }

    /// Header of block `index`.
    #[inline(always)]
    pub fn block(&self, index: u64) -> &'a BlockHeader {
        block_at(self.block_addr(index))
    }

    /// Index of the block at `addr`, for a heap whose blocks are `block_bytes` (a constant of
    /// the caller's class, so the division compiles to a multiplication).
    #[inline(always)]
    pub fn block_index(&self, addr: u64, block_bytes: u64) -> u64 {
        (addr - self.config().blocks) / block_bytes
    }

    /// The two enumeration counters of `class`: listed blocks, by parity.
    #[inline(always)]
    pub fn enum_counters(&self, class: u8) -> &'a [Atomic32; 2] {
        let at = self.config().enum_area(class);
        // SAFETY: the enumeration area of `class` starts with two counters (see `HeapPlan`).
        unsafe { &*(at as usize as *const [Atomic32; 2]) }
    }

    /// The two container counters of `class`: level-0 containers listed by the hierarchical
    /// enumeration of each parity (see [`enum_containers`](Self::enum_containers)). An
    /// enumeration of parity `p` counts into entry `p` and zeroes entry `1 - p`, which the
    /// next enumeration (of parity `1 - p`) counts into.
    #[inline(always)]
    pub fn enum_container_counters(&self, class: u8) -> &'a [Atomic32; 2] {
        let at = self.config().enum_area(class) + ENUM_CONTAINER_COUNTERS;
        // SAFETY: the header of `class`'s enumeration area has room for both pairs of counters
        // (`ENUM_HEADER_BYTES`), 8-byte aligned.
        unsafe { &*(at as usize as *const [Atomic32; 2]) }
    }

    /// Whether the list of `class` that an enumeration of each parity left notes its entries in
    /// the listed blocks (`BlockHeader::listed_at`, `EnumerateParams::notes`): nonzero if so.
    /// An enumeration of parity `p` reads entry `1 - p` (its list, if it reuses it, is that
    /// one) and writes entry `p`, as the counters.
    #[inline(always)]
    pub fn enum_noted(&self, class: u8) -> &'a [Atomic32; 2] {
        let at = self.config().enum_area(class) + ENUM_NOTED;
        // SAFETY: the header of `class`'s enumeration area has room for the flags
        // (`ENUM_HEADER_BYTES`), 8-byte aligned, zeroed with the heap.
        unsafe { &*(at as usize as *const [Atomic32; 2]) }
    }

    /// The change flags of `class`: bit `p` is set when objects of the class were allocated or
    /// freed since the enumeration before the last one of parity `p` cleared it. An
    /// enumeration of parity `p` reads bit `p` (if it is clear, nothing changed since the
    /// previous enumeration, of the other parity, and its list is reused) and clears bit
    /// `1 - p`, which no thread of it reads, so the flag needs no grid-wide barrier.
    #[inline(always)]
    pub fn enum_changed(&self, class: u8) -> &'a Atomic32 {
        // The mask keeps the lookup unchecked (ids are below 64).
        &self.header.enum_changed[(class & 63) as usize]
    }

    /// Note an allocation or free of `class` (both flags), given the flags as loaded before:
    /// only if they were not both set yet, so that the threads of a busy kernel do not all
    /// write the same word.
    ///
    /// An OR whose old value nobody waits for, not a store: a free's [`mark_stale`] of the
    /// same word may come at the same time, and neither may undo the other's bits.
    ///
    /// [`mark_stale`]: Heap::mark_stale
    #[inline(always)]
    pub fn mark_changed(&self, class: u8, seen: u32) {
        if seen & CHANGED_BOTH != CHANGED_BOTH {
            self.enum_changed(class).reduce_or(CHANGED_BOTH);
        }
    }

    /// [`mark_changed`](Heap::mark_changed) with the class's [`STALE`] flag.
    #[inline(always)]
    pub fn mark_stale(&self, class: u8, seen: u32) {
        if seen != CHANGED_BOTH | STALE {
            self.enum_changed(class).reduce_or(CHANGED_BOTH | STALE);
        }
    }

    /// At most how many allocated blocks of `class` are empty: blocks that the allocator left
    /// with their class instead of freeing them, where a give-back emptied one (a race, see
    /// the allocator's `give_back`) or a free emptied one in a launch that creates no object of
    /// the class ([`Heap::free_in_launch_not_creating_its_class`]). Each such event adds one;
    /// an enumeration that lists the class anew frees every empty block of the class and
    /// resets the count (see `heap_enumerate`). The heap's check accepts as many empty blocks
    /// of the class; a block refilled since still counts, so the count is a bound, not a tally.
    #[inline(always)]
    pub fn stranded_blocks(&self, class: u8) -> &'a Atomic32 {
        // The mask keeps the lookup unchecked (ids are below 64).
        &self.header.stranded_blocks[(class & 63) as usize]
    }

    /// The block-index list of `class`'s enumeration area.
    #[inline(always)]
    pub fn enum_list(&self, class: u8) -> *mut u32 {
        self.config().enum_list_addr(class) as usize as *mut u32
    }

    /// The iteration bitmaps of the listed blocks of `class` (entry `i` for list entry `i`).
    #[inline(always)]
    pub fn enum_snapshots(&self, class: u8) -> *mut u64 {
        self.config().enum_snapshots_addr(class) as usize as *mut u64
    }

    /// Keep the current enumeration list of `raw`'s class right as `raw` is freed: clear the
    /// object's bit in the snapshot of its block's entry (the entry the enumeration noted in
    /// [`BlockHeader::listed_at`](crate::block::BlockHeader)). The host asks for this only in
    /// a launch that creates no object of the class and only while the class's list is the one
    /// the last enumeration made (then `raw`'s block is listed, and its note is that list's),
    /// so that the next do-all over the class needs no enumeration: it visits the list's objects
    /// less those freed since (an emptied block's entry then visits nothing, whatever the block
    /// holds later).
    ///
    /// A do-all of the same launch may be reading the word: a thread reads its block's snapshot
    /// and tests only its own slot's bit, which only its own free, after it visited the object,
    /// clears (a method may free no other object of the class it iterates); the words are
    /// aligned, so a read sees them before or after the clearing, either way with that bit as
    /// it was.
    #[inline(always)]
    pub fn unlist(&self, raw: RawHandle) {
        let at = block_at(raw.block_addr()).listed_at.load();
        if (at as u64) < self.config().num_blocks {
            // SAFETY: the snapshots have room for `num_blocks` aligned entries.
            let word = unsafe { Atomic64::from_ptr(self.enum_snapshots(raw.type_id()).add(at as usize)) };
            // Nobody needs the old value: a reduction, which the thread does not wait for.
            word.reduce_and(!(1u64 << raw.slot()));
        }
    }

    /// The indices of `class`'s non-empty level-0 containers, as the hierarchical enumeration
    /// lists them before it lists their blocks (room for every level-0 container).
    #[inline(always)]
    pub fn enum_containers(&self, class: u8) -> *mut u32 {
        self.config().enum_containers_addr(class) as usize as *mut u32
    }

    /// The run table of `class`: entry `i` holds the run of blocks that the warps keyed to `i`
    /// hand out slots from (see the allocator's `runs`).
    #[inline(always)]
    pub fn run_table(&self, class: u8) -> &'a [Atomic64] {
        self.keyed_table(class as u64)
    }

    /// This warp's entry of `class`'s run table, keyed by multiprocessor and warp slot. The key
    /// is not stable (`warp_slot`) and tables smaller than the GPU's warp slots are shared:
    /// any warp may take slots from any run, so a key only spreads warps over entries.
    ///
    /// The multiprocessor goes in the low bits, so that a table smaller than 64 x 256 entries
    /// still separates the few warps per multiprocessor of a bulk allocation. Keyed the other
    /// way round (multiprocessors 128 apart sharing entries of an 8192-entry table, and
    /// PTX does not promise that `%smid` stays below the multiprocessor count), Linux
    /// Scalability with a heap that got 8192 entries ran as fast as with none.
    #[inline(always)]
    pub fn run_entry(&self, class: u8) -> &'a Atomic64 {
        self.keyed_entry(class as u64)
    }

    /// The last-block table of `class`: entry `i` holds the block that a warp keyed to `i` (as
    /// for the run table) last allocated in, as its index plus one (0: none); see the
    /// allocator's `search_or_open`.
    #[inline(always)]
    pub fn last_block_table(&self, class: u8) -> &'a [Atomic64] {
        self.keyed_table(self.config().num_classes as u64 + class as u64)
    }

    /// This warp's entry of `class`'s last-block table (keyed as [`run_entry`](Self::run_entry)).
    /// Only a hint: a warp moved to another slot, or warps sharing an entry, read a block that
    /// another warp noted, which serves as well.
    #[inline(always)]
    pub fn last_block_entry(&self, class: u8) -> &'a Atomic64 {
        self.keyed_entry(self.config().num_classes as u64 + class as u64)
    }

    /// Table `t` of those keyed by warp (`run_slots` entries each): the classes' run tables,
    /// then their last-block tables (see `HeapPlan`). `t` is below twice the classes.
    #[inline(always)]
    fn keyed_table(&self, t: u64) -> &'a [Atomic64] {
        let c = self.config();
        let at = c.runs + t * c.run_slots as u64 * 8;
        // SAFETY: the plan lays out `2 * num_classes` tables of `run_slots` entries from
        // `runs`, accessed only atomically.
        unsafe { core::slice::from_raw_parts(at as usize as *const Atomic64, c.run_slots as usize) }
    }

    /// This warp's entry of keyed table `t` (see [`keyed_table`](Self::keyed_table)).
    #[inline(always)]
    fn keyed_entry(&self, t: u64) -> &'a Atomic64 {
        let c = self.config();
        let at = c.runs + (t * c.run_slots as u64 + warp_key(c) as u64) * 8;
        // SAFETY: `warp_key < run_slots`, so the entry lies in table `t`.
        unsafe { &*(at as usize as *const Atomic64) }
    }

    /// Record an error for the host to report after the launch.
    #[inline(always)]
    pub fn raise(&self, error: u32) {
        let s = self.state();
        s.errors.fetch_or(error);
        if self.launch != 0 {
            let _ = s.first_error_launch.compare_exchange(0, self.launch);
        }
    }

    /// Record that an allocation of `class` failed for lack of memory (with the error raised).
    #[inline(always)]
    pub fn note_failed_class(&self, class: u8) {
        self.state().failed_classes.fetch_or(1 << (class & 63));
    }
}

/// The header of the block at `addr`.
#[inline(always)]
pub fn block_at<'a>(addr: u64) -> &'a BlockHeader {
    // SAFETY: callers pass the address of a block of a live heap (from a handle or the heap's
    // geometry); block headers are accessed only atomically.
    unsafe { &*(addr as usize as *const BlockHeader) }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn plan_fits_the_requested_size() {
        for heap_bytes in [64 << 10, 1 << 20, 100 << 20, 1 << 30] {
            let plan = HeapPlan::new(0x1000_0000, heap_bytes, 640, &[64, 32, 12]).unwrap();
            let c = plan.config;
            assert!(c.total_bytes <= heap_bytes, "{heap_bytes}");
            // Most of it is blocks: metadata is about 12 bytes per block and class (enumeration
            // list and snapshots) plus bitmaps, padded to 256 bytes per area (tiny heaps lose a
            // little more).
            let percent = if heap_bytes >= 1 << 20 { 90 } else { 85 };
            assert!(c.num_blocks * c.block_bytes * 100 >= heap_bytes * percent, "{heap_bytes}: {c:?}");
            assert_eq!(c.blocks % 256, 0);
            assert!(c.blocks + c.num_blocks * c.block_bytes <= c.base + c.total_bytes);
            assert!(c.enumeration + 3 * c.enum_stride <= c.runs);
            for class in 0..3u8 {
                // The areas' parts follow each other, aligned, and stay in the class's area.
                let area = c.enum_area(class);
                assert!(area + 16 <= c.enum_list_addr(class));
                assert!(c.enum_list_addr(class) + 4 * c.num_blocks <= c.enum_snapshots_addr(class));
                assert!(c.enum_snapshots_addr(class) + 8 * c.num_blocks <= c.enum_containers_addr(class));
                assert_eq!(c.enum_snapshots_addr(class) % 8, 0);
                let containers_end = c.enum_containers_addr(class) + 4 * c.geometry.len(0);
                assert!(containers_end <= area + c.enum_stride, "{heap_bytes}: class {class}");
            }
            assert!(c.run_slots.is_power_of_two() && c.run_slots as u64 <= MAX_RUN_SLOTS);
            // The run tables, then the last-block tables, of the 3 classes before the blocks.
            assert!(c.runs + 2 * 3 * c.run_slots as u64 * 8 <= c.blocks, "{heap_bytes}: {c:?}");
        }
    }

    #[test]
    fn plan_rejects_bad_input() {
        assert!(matches!(HeapPlan::new(0, 100, 640, &[64]), Err(PlanError::TooSmall { .. })));
        assert!(matches!(HeapPlan::new(0, 1 << 20, 640, &[]), Err(PlanError::TooManyClasses(0))));
        assert!(matches!(HeapPlan::new(0, 1 << 20, 640, &[65]), Err(PlanError::BadClass { .. })));
        assert!(matches!(HeapPlan::new(1 << 48, 1 << 20, 640, &[64]), Err(PlanError::AddressTooHigh(_))));
        for bad in [576, 128, 0] {
            assert_eq!(HeapPlan::new(0, 1 << 20, bad, &[64]), Err(PlanError::BadBlockBytes(bad)));
        }
    }
}
