//! The device heap from the host: layout, initialisation, enumeration launches, error
//! reporting, statistics, and snapshots for invariant checks.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use dynasoar_device::DevPtr;
use dynasoar_device::allocator::kernels::HEAP_RELEASE_RUNS;
use dynasoar_device::block::{BLOCK_ALIGN, DATA_OFFSET, preset_mask};
use dynasoar_device::heap::kernels::{
    EnumerateParams, HEAP_ENUMERATE, HEAP_ENUMERATE_BLOCKS, HEAP_ENUMERATE_CONTAINERS, HEAP_INIT,
    HEAP_REACTIVATE, HEAP_STATS, InitParams, ReactivateParams, StatsParams,
};
use dynasoar_device::heap::ranked::{
    HEAP_RANK_COUNT, HEAP_RANK_SCAN, HEAP_RANK_WRITE, MAX_RANKED_BLOCKS, RankParams, RankedHeader,
    ranked_words, tiles_for,
};
use dynasoar_device::heap::{
    CHANGED_BOTH, Heap, HeapConfig, HeapHeader, HeapPlan, HeapStateWords, PlanError, STALE, STATE_OFFSET,
    errors,
};
use dynasoar_device::{ClassInfo, RankedPtr, RawHandle};

use crate::backend::{BackendKind, Buffer, Executor, Grid};
use crate::error::{Error, KernelNames, Result};
pub use crate::options::{AllocatorVariant, Enumeration};

/// Threads per block of the heap's own kernels.
const THREADS: u32 = 256;

/// A class as the heap sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeapClass {
    pub name: &'static str,
    pub objects_per_block: u32,
}

/// A heap in device memory, with the host's copy of its configuration.
pub struct DeviceHeap {
    buffer: Buffer<u8>,
    config: HeapConfig,
    classes: Vec<HeapClass>,
    /// Per class: parity of the next enumeration.
    parity: Vec<AtomicU32>,
    /// Whether enumerations are hierarchical ([`Enumeration`]).
    hierarchical: AtomicBool,
    /// The allocator variant's bits in the device's configuration (`HeapConfig::variants`;
    /// `config` holds those the heap was made with).
    variants: AtomicU32,
    /// Classes whose enumerations note each listed block's entry (`EnumerateParams::notes`):
    /// those whose lists the runtime may keep through frees ([`note_entries`](Self::note_entries)).
    notes: AtomicU64,
    /// On the GPU: the memory of the heap's ranked list (`dynasoar_device::heap::ranked`),
    /// which launches of methods with lanes read their `device_reduce` parts from; `None` on
    /// the CPU backend (whose `device_reduce` folds every part in one thread) and for heaps of
    /// more than `MAX_RANKED_BLOCKS` blocks.
    ranked: Option<Buffer<u32>>,
}

/// Bytes of the heap that a ranked list's entries may take, at most (one sixty-fourth: room
/// for a class of 16-byte objects that fills the heap, and for the example models' classes at
/// their default sizes); a class with more objects is walked by its blocks.
const RANKED_SHARE: u64 = 64;

/// Heaps of at least this many blocks enumerate hierarchically unless told otherwise, smaller
/// ones flat. Measured on an H200 (`dynasoar-bench enumeration`,
/// docs/results/2026-11-26-perf/enumeration.txt): the flat form was faster at every fill up to
/// 1.56M blocks (1 GiB; hierarchical 0.50-0.97x the speed, its two launches cost more than a
/// small heap's scan), the hierarchical one from 6.2M blocks (4 GiB) on at all but one fill
/// (1.05-3.7x), and in between it depended on the fill.
const HIERARCHICAL_FROM_BLOCKS: u64 = 4_000_000;

/// The type ids of the classes of `mask` (bit `i` for type id `i`), lowest first.
pub(crate) fn type_ids(mask: u64) -> impl Iterator<Item = u8> {
    let mut bits = mask;
    std::iter::from_fn(move || {
        (bits != 0).then(|| {
            let id = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            id
        })
    })
}

/// The enumeration of a heap of `blocks` blocks where neither the builder nor
/// `DYNASOAR_ENUMERATION` chose one (see [`HIERARCHICAL_FROM_BLOCKS`]).
fn default_enumeration(blocks: u64) -> Enumeration {
    if blocks >= HIERARCHICAL_FROM_BLOCKS { Enumeration::Hierarchical } else { Enumeration::Flat }
}

/// What an enumeration of a class listed (see [`DeviceHeap::listing`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    /// Indices of the listed blocks, in the order of the list (which neither enumeration
    /// promises: their warps reserve entries with atomics).
    pub blocks: Vec<u32>,
    /// The iteration bitmap of each listed block (the objects a do-all visits), at the same
    /// indices.
    pub snapshots: Vec<u64>,
}

impl Listing {
    /// The `(block, iteration bitmap)` pairs in block order, to compare listings.
    pub fn sorted(&self) -> Vec<(u32, u64)> {
        let mut pairs: Vec<(u32, u64)> =
            self.blocks.iter().copied().zip(self.snapshots.iter().copied()).collect();
        pairs.sort_unstable();
        pairs
    }
}

impl DeviceHeap {
    /// Allocate and initialise a heap of at most `heap_bytes` bytes with blocks of
    /// `block_bytes` for `classes` (in type-id order).
    pub fn new(exec: &Executor, heap_bytes: u64, block_bytes: u64, classes: &[HeapClass]) -> Result<Self> {
        let objects: Vec<u32> = classes.iter().map(|c| c.objects_per_block).collect();
        // Check the request before taking device memory.
        HeapPlan::new(0, heap_bytes, block_bytes, &objects).map_err(plan_error)?;
        let buffer = exec.alloc_zeroed::<u8>(heap_bytes as usize)?;
        let mut plan =
            HeapPlan::new(buffer.ptr().addr(), heap_bytes, block_bytes, &objects).map_err(plan_error)?;
        // `DYNASOAR_BLOCK_RUNS=on|off` (default on): whether warps that allocate at least half a
        // block of a class that opts in (`ClassSpec::OWNS_BLOCKS`) take their slots from runs of
        // blocks reserved for them (see `dynasoar_device::allocator`), or search and open blocks
        // as the paper's allocator does.
        plan.config.block_runs = exec.settings().block_runs as u32;
        // `DYNASOAR_ALLOCATOR_VARIANT` (default: the paper's allocator); see `AllocatorVariant`.
        plan.config.variants = exec.settings().allocator_variant.config_bits();
        let heap = DeviceHeap {
            buffer,
            config: plan.config,
            classes: classes.to_vec(),
            parity: classes.iter().map(|_| AtomicU32::new(0)).collect(),
            hierarchical: AtomicBool::new(
                exec.settings().enumeration.unwrap_or(default_enumeration(plan.config.num_blocks))
                    == Enumeration::Hierarchical,
            ),
            variants: AtomicU32::new(plan.config.variants),
            notes: AtomicU64::new(0),
            ranked: Self::ranked_memory(exec, &plan.config, classes)?,
        };
        heap.reset(exec)?;
        Ok(heap)
    }

    /// The memory of the heap's ranked list, with its header written (see [`DeviceHeap`]).
    fn ranked_memory(
        exec: &Executor,
        config: &HeapConfig,
        classes: &[HeapClass],
    ) -> Result<Option<Buffer<u32>>> {
        if exec.kind() != BackendKind::Cuda || config.num_blocks > MAX_RANKED_BLOCKS {
            return Ok(None);
        }
        let most = classes.iter().map(|c| c.objects_per_block as u64).max().unwrap_or(0);
        let capacity = (config.num_blocks * most).min(config.total_bytes / RANKED_SHARE / 4);
        let header = RankedHeader::new(config.num_blocks, capacity as u32);
        let mut buffer = exec.alloc_zeroed::<u32>(ranked_words(&header))?;
        exec.write(&mut buffer, 0, &[header.class, header.count, header.capacity, header.tiles])?;
        Ok(Some(buffer))
    }

    /// Queue the building of `class`'s ranked list (for the launches of methods with lanes
    /// that follow, until objects of the class are created or freed); its address, or null
    /// where the heap keeps none (see [`DeviceHeap`]).
    pub fn rank(&self, exec: &Executor, class: u8) -> Result<RankedPtr> {
        let list = self.ranked_ptr();
        if list.is_null() {
            return Ok(list);
        }
        let params = RankParams { heap: self.ptr(), list: list.cast(), class: class as u32, _reserved: 0 };
        // One warp per tile, up to whole waves (then warps stride over the tiles).
        let tiles = tiles_for(self.config.num_blocks) as usize;
        let most = exec.wave_grid(&HEAP_RANK_COUNT, THREADS)?.total_threads();
        let grid = Grid::for_elements((tiles * 32).min(most), THREADS);
        exec.launch(&HEAP_RANK_COUNT, grid, params)?;
        exec.launch(&HEAP_RANK_SCAN, Grid::new(1, 32), params)?;
        exec.launch(&HEAP_RANK_WRITE, grid, params)?;
        Ok(list)
    }

    /// The address of the heap's ranked list memory (null where it keeps none).
    pub fn ranked_ptr(&self) -> RankedPtr {
        self.ranked.as_ref().map_or(DevPtr::null(), |b| b.ptr().cast())
    }

    /// Free every object: the heap is as new.
    pub fn reset(&self, exec: &Executor) -> Result<()> {
        let config = HeapConfig { variants: self.variants.load(Ordering::Relaxed), ..self.config };
        // SAFETY: `HeapConfig` is `repr(C)` plain integers.
        let bytes = unsafe {
            std::slice::from_raw_parts(
                &config as *const HeapConfig as *const u8,
                std::mem::size_of::<HeapConfig>(),
            )
        };
        // Writing through a shared buffer: the copy is ordered before the init kernel on the
        // executor's stream, and no kernel is using the heap now.
        exec.write_bytes(&self.buffer, 0, bytes)?;
        let containers = self.config.bitmap_stride * (1 + 2 * self.classes.len() as u64);
        let grid = Grid::for_elements(containers.max(self.classes.len() as u64) as usize, THREADS);
        exec.launch(&HEAP_INIT, grid, InitParams { heap: self.ptr() })?;
        for p in &self.parity {
            p.store(0, Ordering::Relaxed);
        }
        exec.synchronize()
    }

    /// Release the blocks that runs keep in reserve (see `DYNASOAR_BLOCK_RUNS`): the slots
    /// reserved for runs and not handed out are freed, and so are the blocks that held nothing
    /// else. Allocation releases them by itself when blocks run out; call this before checking
    /// that a heap whose objects were all freed has every block free again.
    pub fn release_runs(&self, exec: &Executor) -> Result<()> {
        let entries = self.classes.len() * self.config.run_slots as usize;
        exec.launch(
            &HEAP_RELEASE_RUNS,
            Grid::for_elements(entries, THREADS),
            InitParams { heap: self.ptr() },
        )?;
        exec.synchronize()
    }

    /// The heap's address, for kernel parameters.
    pub fn ptr(&self) -> DevPtr<HeapHeader> {
        self.buffer.ptr().cast()
    }

    pub fn config(&self) -> &HeapConfig {
        &self.config
    }

    pub fn classes(&self) -> &[HeapClass] {
        &self.classes
    }

    /// How enumerations list a class's blocks: by default as `DYNASOAR_ENUMERATION` says, else
    /// hierarchically in heaps of at least 4M blocks and flat in smaller ones.
    pub fn enumeration(&self) -> Enumeration {
        if self.hierarchical.load(Ordering::Relaxed) { Enumeration::Hierarchical } else { Enumeration::Flat }
    }

    /// List classes' blocks as `enumeration` says from the next enumeration on (the two forms
    /// may alternate on one heap: they leave the same state).
    pub fn set_enumeration(&self, enumeration: Enumeration) {
        self.hierarchical.store(enumeration == Enumeration::Hierarchical, Ordering::Relaxed);
    }

    /// The allocator's variant: by default as `DYNASOAR_ALLOCATOR_VARIANT` says, else
    /// [`AllocatorVariant::DEFAULT`] (the paper's allocator). [`config`](Self::config) keeps the
    /// variant the heap was made with; this is the one allocations use now.
    pub fn allocator_variant(&self) -> AllocatorVariant {
        AllocatorVariant::from_config_bits(self.variants.load(Ordering::Relaxed))
    }

    /// Allocate as `variant` says from the next kernel on (waits for queued kernels: the
    /// device's configuration is written while no kernel reads it). Every variant keeps the
    /// heap's invariants, so the heap may change variant between kernels.
    pub fn set_allocator_variant(&self, exec: &Executor, variant: AllocatorVariant) -> Result<()> {
        let bits = variant.config_bits();
        let at = std::mem::offset_of!(HeapHeader, config) + std::mem::offset_of!(HeapConfig, variants);
        exec.write_bytes(&self.buffer, at, &bits.to_ne_bytes())?;
        self.variants.store(bits, Ordering::Relaxed);
        Ok(())
    }

    /// The parity of each class's next enumeration, bit `i` for type id `i`.
    pub fn parities(&self) -> u64 {
        self.parity
            .iter()
            .enumerate()
            .fold(0, |bits, (i, p)| bits | ((p.load(Ordering::Relaxed) as u64 & 1) << i))
    }

    /// Set each class's next parity to bit `i` (type id `i`) of `bits`, as [`parities`]
    /// returned them (the host's record only: after a capture, whose enumerations never ran,
    /// or a replay, whose enumerations the host did not queue one by one).
    ///
    /// [`parities`]: Self::parities
    pub(crate) fn set_parities(&self, bits: u64) {
        for (i, p) in self.parity.iter().enumerate() {
            p.store((bits >> i) as u32 & 1, Ordering::Relaxed);
        }
    }

    /// Queue the enumeration of `class`'s blocks; returns the parity the following do-all
    /// kernel must read.
    pub fn enumerate(&self, exec: &Executor, class: u8) -> Result<u32> {
        Ok((self.enumerate_several(exec, 1 << class)? >> class) as u32 & 1)
    }

    /// From now on, enumerations of the classes of `classes` (bits by type id) note each listed
    /// block's entry in the block, so that frees can keep their lists right
    /// (`Heap::unlist`); the others' do not (a store per listed block saved).
    pub fn note_entries(&self, classes: u64) {
        self.notes.store(classes, Ordering::Relaxed);
    }

    /// Queue the enumeration of the blocks of every class of `classes` (bits by type id):
    /// the flat form lists them in one launch, the hierarchical form each in its own two.
    /// Returns the parity that each class's following do-all kernels must read (bit by type
    /// id).
    pub fn enumerate_several(&self, exec: &Executor, classes: u64) -> Result<u64> {
        if classes == 0 {
            return Ok(0);
        }
        let mut parities = 0u64;
        for class in type_ids(classes) {
            parities |= (self.parity[class as usize].fetch_xor(1, Ordering::Relaxed) as u64 & 1) << class;
        }
        let first = classes.trailing_zeros() as u8;
        let mut params = EnumerateParams::one(self.ptr(), first, (parities >> first) as u32 & 1);
        params.notes = self.notes.load(Ordering::Relaxed);
        match self.enumeration() {
            Enumeration::Flat => {
                params.others = classes & !(1 << first);
                params.other_parities = parities & params.others;
                // One thread per block, up to whole waves of the machine (then threads stride).
                let most = exec.wave_grid(&HEAP_ENUMERATE, THREADS)?.total_threads();
                let threads = (self.config.num_blocks as usize).min(most);
                exec.launch(&HEAP_ENUMERATE, Grid::for_elements(threads, THREADS), params)?;
            }
            Enumeration::Hierarchical => {
                for class in type_ids(classes) {
                    params.class = class as u32;
                    params.parity = (parities >> class) as u32 & 1;
                    self.enumerate_hierarchically(exec, params)?;
                }
            }
        }
        Ok(parities)
    }

    /// Queue [`heap_reactivate`](dynasoar_device::heap::kernels::heap_reactivate) of `classes`
    /// (bits by type id): their active bitmaps and counts of empty blocks exact again after
    /// frees that did not wait for their blocks' bitmaps.
    pub fn reactivate(&self, exec: &Executor, classes: u64) -> Result<()> {
        // One thread per block, up to whole waves of the machine (then threads stride).
        let most = exec.wave_grid(&HEAP_REACTIVATE, THREADS)?.total_threads();
        let threads = (self.config.num_blocks as usize).min(most);
        exec.launch(
            &HEAP_REACTIVATE,
            Grid::for_elements(threads, THREADS),
            ReactivateParams { heap: self.ptr(), classes },
        )
    }

    /// Queue the two launches of the hierarchical enumeration of `params.class`.
    fn enumerate_hierarchically(&self, exec: &Executor, params: EnumerateParams) -> Result<()> {
        // One thread per level-1 container (one in all for a bitmap of one level)...
        let geometry = &self.config.geometry;
        let words = if geometry.levels > 1 { geometry.level_len[1] } else { 1 } as usize;
        let most = exec.wave_grid(&HEAP_ENUMERATE_CONTAINERS, THREADS)?.total_threads();
        exec.launch(&HEAP_ENUMERATE_CONTAINERS, Grid::for_elements(words.min(most), THREADS), params)?;
        // ... then one warp per non-empty level-0 container, as many as there may be, up to
        // whole waves (the count is on the device; warps beyond it return at once).
        let lanes = if exec.kind() == BackendKind::Cuda { 32 } else { 1 };
        let most = exec.wave_grid(&HEAP_ENUMERATE_BLOCKS, THREADS)?.total_threads();
        let threads = (geometry.level_len[0] as usize * lanes).min(most);
        exec.launch(&HEAP_ENUMERATE_BLOCKS, Grid::for_elements(threads, THREADS), params)
    }

    /// Number of blocks the enumeration of `class` with `parity` listed (waits for it).
    pub fn enumerated_blocks(&self, exec: &Executor, class: u8, parity: u32) -> Result<u32> {
        let at = self.config.enum_area(class) - self.config.base + 4 * (parity as u64 & 1);
        let bytes = exec.read(&self.buffer, at as usize, 4)?;
        Ok(u32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    /// The blocks and iteration bitmaps that the enumeration of `class` with `parity` listed
    /// (waits for it): to check an enumeration, or compare the two forms.
    pub fn listing(&self, exec: &Executor, class: u8, parity: u32) -> Result<Listing> {
        let count = self.enumerated_blocks(exec, class, parity)? as usize;
        let c = &self.config;
        let list = exec.read(&self.buffer, (c.enum_list_addr(class) - c.base) as usize, 4 * count)?;
        let snapshots =
            exec.read(&self.buffer, (c.enum_snapshots_addr(class) - c.base) as usize, 8 * count)?;
        Ok(Listing {
            blocks: list.chunks_exact(4).map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]])).collect(),
            snapshots: snapshots
                .chunks_exact(8)
                .map(|b| u64::from_ne_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
                .collect(),
        })
    }

    /// Mark `class` as changed, as an allocation or a free of one of its objects does, so
    /// that its next enumeration lists its blocks anew instead of carrying the last count
    /// over (for timing enumerations; waits for queued kernels).
    pub fn mark_changed(&self, exec: &Executor, class: u8) -> Result<()> {
        let at = std::mem::offset_of!(HeapHeader, enum_changed) + 4 * class as usize;
        // The class's `STALE` flag stays as it is.
        let old = exec.read(&self.buffer, at, 4)?;
        let flags = u32::from_ne_bytes([old[0], old[1], old[2], old[3]]) & STALE | CHANGED_BOTH;
        exec.write_bytes(&self.buffer, at, &flags.to_ne_bytes())
    }

    /// The heap's mutable state (waits for queued kernels).
    pub fn state(&self, exec: &Executor) -> Result<HeapStateWords> {
        let bytes = exec.read(&self.buffer, STATE_OFFSET as usize, std::mem::size_of::<HeapStateWords>())?;
        // SAFETY: `HeapStateWords` is plain integers with the layout of `HeapState`.
        Ok(unsafe { std::ptr::read_unaligned(bytes.as_ptr() as *const HeapStateWords) })
    }

    /// Report (and clear) errors raised by device code since the last check, naming `kernels`.
    pub fn take_errors(&self, exec: &Executor, kernels: &[&'static str]) -> Result<()> {
        let state = self.state(exec)?;
        if state.errors == 0 {
            return Ok(());
        }
        let cleared = HeapStateWords {
            errors: 0,
            failed_allocations: 0,
            first_error_launch: 0,
            failed_classes: 0,
            ..state
        };
        // SAFETY: plain integers.
        let bytes = unsafe {
            std::slice::from_raw_parts(
                &cleared as *const HeapStateWords as *const u8,
                std::mem::size_of::<HeapStateWords>(),
            )
        };
        exec.write_bytes(&self.buffer, STATE_OFFSET as usize, bytes)?;
        // The launch that raised first, where it was tagged; else every kernel since the last
        // check.
        let kernels = match exec.tagged_kernel(state.first_error_launch) {
            Some(kernel) => KernelNames(vec![kernel]),
            None => KernelNames(kernels.to_vec()),
        };
        if state.errors & errors::BAD_GRID != 0 {
            return Err(Error::BadGrid { kernels });
        }
        if state.errors & errors::WRONG_HEAP != 0 {
            return Err(Error::WrongHeap { kernels });
        }
        if state.errors & errors::UNDECLARED_CHANGE != 0 {
            return Err(Error::UndeclaredChange { kernels });
        }
        if state.errors & errors::FREED_ITERATED != 0 {
            return Err(Error::FreedIterated { kernels });
        }
        if state.errors & errors::SKIPPED_LANE != 0 {
            return Err(Error::SkippedLane { kernels });
        }
        if state.errors & errors::OUT_OF_MEMORY != 0 {
            return Err(self.out_of_memory(kernels, state));
        }
        if state.errors & errors::DOUBLE_FREE != 0 {
            return Err(Error::InvalidFree {
                kernels,
                what: "freed an object that was not allocated (double free)",
            });
        }
        Err(Error::InvalidFree { kernels, what: "freed or used a null handle" })
    }

    /// The out-of-memory error of `state`: which classes' allocations failed, and a heap size
    /// to try.
    fn out_of_memory(&self, kernels: KernelNames, state: HeapStateWords) -> Error {
        let failed_classes: Vec<&HeapClass> = self
            .classes
            .iter()
            .enumerate()
            .filter(|(i, _)| state.failed_classes & (1 << i) != 0)
            .map(|(_, c)| c)
            .collect();
        let classes = failed_classes.iter().map(|c| c.name).collect::<Vec<_>>().join(", ");
        // The failed objects alone need this many more blocks (at the most objects per block
        // among the classes that failed: a lower bound). A heap that fills has fragmentation
        // too, so suggest at least twice the size, rounded up to MiB.
        let per_block = failed_classes.iter().map(|c| c.objects_per_block as u64).max().unwrap_or(1).max(1);
        let more = (state.failed_allocations as u64).div_ceil(per_block) * self.config.block_bytes;
        let suggested =
            (self.config.total_bytes + more).max(2 * self.config.total_bytes).next_multiple_of(1 << 20);
        Error::OutOfMemory {
            kernels,
            failed: state.failed_allocations,
            heap_bytes: self.config.total_bytes,
            blocks: self.config.num_blocks,
            classes: if classes.is_empty() { "(unknown)".to_string() } else { classes },
            suggested_bytes: suggested,
        }
    }

    /// Blocks and objects per class, and how full the heap is.
    pub fn stats(&self, exec: &Executor) -> Result<HeapStats> {
        let out = exec.alloc_zeroed::<u64>(2 * self.classes.len())?;
        let containers = self.config.geometry.level_len[0] as usize * self.classes.len();
        exec.launch(
            &HEAP_STATS,
            Grid::for_elements(containers, THREADS),
            StatsParams { heap: self.ptr(), out: out.ptr() },
        )?;
        let counts = exec.read_all(&out)?;
        let state = self.state(exec)?;
        let classes = self
            .classes
            .iter()
            .enumerate()
            .map(|(i, c)| ClassStats {
                name: c.name,
                objects_per_block: c.objects_per_block,
                blocks: counts[2 * i],
                objects: counts[2 * i + 1],
            })
            .collect();
        Ok(HeapStats {
            num_blocks: self.config.num_blocks,
            free_blocks: state.free_blocks,
            block_bytes: self.config.block_bytes,
            classes,
            coalescing_misses: state.coalescing_misses,
        })
    }

    /// A copy of the whole heap on the host, for invariant checks (waits for queued kernels).
    pub fn snapshot(&self, exec: &Executor) -> Result<HeapSnapshot> {
        let bytes = exec.read(&self.buffer, 0, self.config.total_bytes as usize)?;
        Ok(HeapSnapshot::new(&bytes, self.config, self.classes.clone()))
    }
}

fn plan_error(e: PlanError) -> Error {
    Error::HeapConfig(match e {
        PlanError::TooSmall { heap_bytes, min_bytes } => {
            format!("a heap of {heap_bytes} bytes holds no block; it needs at least {min_bytes} bytes")
        }
        PlanError::TooManyClasses(n) => format!("{n} classes; a heap holds 1 to 64"),
        PlanError::BadClass { class, objects } => {
            format!("class {class} has {objects} objects per block (1..=64)")
        }
        PlanError::AddressTooHigh(a) => {
            format!("heap ends at {a:#x}, above the 2^48 limit of object handles")
        }
        PlanError::BadBlockBytes(b) => {
            format!(
                "blocks of {b} bytes; a block is a multiple of {BLOCK_ALIGN} bytes with more than \
                 {DATA_OFFSET} (use layout::block_bytes)"
            )
        }
        PlanError::BlockTooLarge(b) => {
            format!(
                "blocks of {b} bytes, above the 4 GiB a do-all can address; make the largest class smaller"
            )
        }
    })
}

/// Occupancy of one class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassStats {
    pub name: &'static str,
    pub objects_per_block: u32,
    /// Blocks allocated to the class.
    pub blocks: u64,
    /// Live objects.
    pub objects: u64,
}

impl ClassStats {
    /// Slots of the class's blocks that hold no object, as a fraction of all its slots: the
    /// paper's fragmentation (section 7.3).
    pub fn fragmentation(&self) -> f64 {
        let slots = self.blocks * self.objects_per_block as u64;
        if slots == 0 { 0.0 } else { 1.0 - self.objects as f64 / slots as f64 }
    }
}

/// Occupancy of a heap.
#[derive(Clone, Debug, PartialEq)]
pub struct HeapStats {
    pub num_blocks: u64,
    pub free_blocks: u64,
    pub block_bytes: u64,
    pub classes: Vec<ClassStats>,
    /// Lanes that the warp-coalesced hand-out skipped since the heap was created (an allocator
    /// fault, reported as [`Error::SkippedLane`]; see ARCHITECTURE.md,
    /// "The allocator"). Zero unless the fault occurs.
    pub coalescing_misses: u32,
}

impl HeapStats {
    /// Per-class object counts (`objects[type id]`) as stats, for stores that know only those
    /// (no blocks).
    pub fn from_object_counts(classes: &[ClassInfo], objects: &[u64]) -> HeapStats {
        let classes = classes
            .iter()
            .map(|c| ClassStats {
                name: c.name,
                objects_per_block: 1,
                blocks: 0,
                objects: objects.get(c.type_id as usize).copied().unwrap_or(0),
            })
            .collect();
        HeapStats { num_blocks: 0, free_blocks: 0, block_bytes: 0, classes, coalescing_misses: 0 }
    }

    /// Fraction of blocks in use.
    pub fn fill(&self) -> f64 {
        1.0 - self.free_blocks as f64 / self.num_blocks as f64
    }

    /// Unused slots of all allocated blocks over all their slots.
    pub fn fragmentation(&self) -> f64 {
        let slots: u64 = self.classes.iter().map(|c| c.blocks * c.objects_per_block as u64).sum();
        let objects: u64 = self.classes.iter().map(|c| c.objects).sum();
        if slots == 0 { 0.0 } else { 1.0 - objects as f64 / slots as f64 }
    }
}

/// A host copy of a heap, checkable with the device crate's own views.
pub struct HeapSnapshot {
    words: Vec<u64>,
    device_base: u64,
    config: HeapConfig,
    classes: Vec<HeapClass>,
}

/// What a consistent snapshot holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotSummary {
    pub free_blocks: u64,
    /// Per class: allocated blocks and live objects.
    pub classes: Vec<(u64, u64)>,
    /// Slots reserved for runs and not handed out yet (all classes).
    pub reserved_slots: u64,
    /// Allocated blocks without objects, which the allocator left with their class (a
    /// give-back's race, or frees in launches that created none of the class, until the
    /// class's next enumeration; counted in `classes` too).
    pub empty_blocks: u64,
    /// Classes (bits by type id) whose `STALE` flag is set: frees that did not wait for their
    /// blocks' bitmaps left their active bitmaps and counts of empty blocks to be made exact
    /// (the check accepts both as they are for these classes).
    pub stale_classes: u64,
}

impl HeapSnapshot {
    fn new(bytes: &[u8], config: HeapConfig, classes: Vec<HeapClass>) -> Self {
        // A u64 vector is 8-aligned; the header wants 128 and device allocations are 256-byte
        // aligned: over-allocate and offset.
        let mut words = vec![0u64; bytes.len().div_ceil(8) + 32];
        let start = words.as_ptr().align_offset(256);
        let dst = &mut words[start..];
        // SAFETY: `dst` has room for `bytes` (8 bytes per word).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst.as_mut_ptr() as *mut u8, bytes.len()) };
        let mut snapshot = HeapSnapshot { words, device_base: config.base, config, classes };
        let host_config = config.rebased(snapshot.host_base());
        // Point the copy's header at the copy, so the device views work on it.
        // SAFETY: the copy starts with a `HeapHeader`, 64-byte aligned.
        unsafe { std::ptr::write(snapshot.host_base() as usize as *mut HeapConfig, host_config) };
        snapshot.config = host_config;
        snapshot
    }

    fn host_base(&self) -> u64 {
        let p = self.words.as_ptr();
        p as u64 + p.align_offset(256) as u64 * 8
    }

    fn heap(&self) -> Heap<'_> {
        // SAFETY: the copy holds a complete heap whose config points into the copy; nothing
        // modifies it while the view is used.
        unsafe { Heap::from_ptr(self.host_base() as usize as *const HeapHeader) }
    }

    /// Translate a device handle into this copy (and back with `to_device`).
    pub fn to_host(&self, h: RawHandle) -> RawHandle {
        h.rebased(self.host_base().wrapping_sub(self.device_base) as i64)
    }

    pub fn to_device(&self, h: RawHandle) -> RawHandle {
        h.rebased(self.device_base.wrapping_sub(self.host_base()) as i64)
    }

    /// Whether `handle` (a device handle) names a live object of its class.
    pub fn is_live(&self, handle: RawHandle) -> bool {
        let h = self.to_host(handle);
        let c = &self.config;
        let addr = h.block_addr();
        if addr < c.blocks
            || addr >= c.blocks + c.num_blocks * c.block_bytes
            || !(addr - c.blocks).is_multiple_of(c.block_bytes)
        {
            return false;
        }
        let index = (addr - c.blocks) / c.block_bytes;
        let heap = self.heap();
        let class = h.type_id();
        (class as usize) < self.classes.len()
            && heap.allocated(class).get(index)
            && heap.block(index).type_id.load() == class as u32
            && heap.block(index).objects() & (1 << h.slot()) != 0
            && h.slot() < self.classes[class as usize].objects_per_block
    }

    /// The 8-byte word at byte `offset` into the object `handle` (a device handle).
    pub fn object_word(&self, handle: RawHandle, offset: u64) -> u64 {
        let h = self.to_host(handle);
        let addr = h.field_addr(offset, 8);
        // SAFETY: the address lies in a block of the copy (callers check `is_live`).
        unsafe { *(addr as usize as *const u64) }
    }

    /// Every live object of `class`, as device handles.
    pub fn live_objects(&self, class: u8) -> Vec<RawHandle> {
        let heap = self.heap();
        let n = self.classes[class as usize].objects_per_block;
        let mut out = Vec::new();
        for index in 0..self.config.num_blocks {
            if heap.allocated(class).get(index) {
                let bits = heap.block(index).objects() & !preset_mask(n);
                for slot in 0..64 {
                    if bits & (1 << slot) != 0 {
                        out.push(self.to_device(RawHandle::new(heap.block_addr(index), slot, n, class)));
                    }
                }
            }
        }
        out
    }

    /// Check every invariant that holds when no kernel is running: bitmap levels consistent;
    /// each block free or allocated to exactly one class, of that class's type; active exactly
    /// when allocated and not full; no allocated block empty (a run's reserved slots count as
    /// allocated) but those the allocator left with their class (at most as many of each
    /// class as it counted, `Heap::stranded_blocks`); slots reserved for runs allocated; the
    /// free count equal to the free bitmap. A class whose `STALE` flag is set (frees that did
    /// not wait for their blocks' bitmaps, since its last enumeration anew or reactivation)
    /// may have blocks with room that are not active and uncounted empty blocks.
    pub fn check(&self) -> std::result::Result<SnapshotSummary, String> {
        let heap = self.heap();
        let stale = |class: u8| heap.enum_changed(class).load() & STALE != 0;
        let free = heap.free_blocks();
        free.check_consistent().map_err(|e| format!("free bitmap inconsistent at {e:?}"))?;
        for (c, class) in self.classes.iter().enumerate() {
            let c = c as u8;
            heap.allocated(c)
                .check_consistent()
                .map_err(|e| format!("{}: allocated bitmap inconsistent at {e:?}", class.name))?;
            heap.active(c)
                .check_consistent()
                .map_err(|e| format!("{}: active bitmap inconsistent at {e:?}", class.name))?;
        }
        let mut summary = SnapshotSummary {
            free_blocks: 0,
            classes: vec![(0, 0); self.classes.len()],
            reserved_slots: 0,
            empty_blocks: 0,
            stale_classes: (0..self.classes.len() as u8).filter(|&c| stale(c)).fold(0, |m, c| m | 1 << c),
        };
        let mut empty = Vec::new();
        for index in 0..self.config.num_blocks {
            let owners: Vec<u8> =
                (0..self.classes.len() as u8).filter(|&c| heap.allocated(c).get(index)).collect();
            let is_free = free.get(index);
            match (is_free, owners.as_slice()) {
                (true, []) => {
                    summary.free_blocks += 1;
                    if let Some(c) = (0..self.classes.len() as u8).find(|&c| heap.active(c).get(index)) {
                        return Err(format!("free block {index} is active for class {c}"));
                    }
                    let handed = heap.block(index).handed.load();
                    if handed != 0 {
                        return Err(format!("free block {index} has handed-out bits {handed:#x}"));
                    }
                }
                (false, [c]) => {
                    let class = &self.classes[*c as usize];
                    let block = heap.block(index);
                    let ty = block.type_id.load();
                    if ty != *c as u32 {
                        return Err(format!("block {index} of {} has type id {ty}", class.name));
                    }
                    let preset = preset_mask(class.objects_per_block);
                    let alloc = block.alloc.load();
                    if alloc & preset != preset {
                        return Err(format!("block {index} of {} lost preset bits: {alloc:#x}", class.name));
                    }
                    if alloc == preset {
                        empty.push((index, *c));
                    }
                    let reserved = !block.handed.load() & !preset;
                    if reserved & !alloc != 0 {
                        return Err(format!(
                            "block {index} of {}: slots {reserved:#x} reserved for a run but not allocated ({alloc:#x})",
                            class.name
                        ));
                    }
                    let active = heap.active(*c).get(index);
                    // A class that frees which did not wait for their bitmaps left stale may
                    // have blocks with room that are not active (see `STALE`).
                    let stale_room = !active && alloc != u64::MAX && stale(*c);
                    if active != (alloc != u64::MAX) && !stale_room {
                        return Err(format!(
                            "block {index} of {}: active = {active} with bitmap {alloc:#x}",
                            class.name
                        ));
                    }
                    for other in (0..self.classes.len() as u8).filter(|o| o != c) {
                        if heap.active(other).get(index) {
                            return Err(format!(
                                "block {index} of {} is active for class {other}",
                                class.name
                            ));
                        }
                    }
                    summary.classes[*c as usize].0 += 1;
                    summary.classes[*c as usize].1 += (alloc & !reserved & !preset).count_ones() as u64;
                    summary.reserved_slots += reserved.count_ones() as u64;
                }
                (free, owners) => {
                    return Err(format!("block {index}: free = {free}, allocated to classes {owners:?}"));
                }
            }
        }
        let state_free = heap.state().free_blocks.load();
        if state_free != summary.free_blocks {
            return Err(format!("free-block count {state_free} but {} blocks are free", summary.free_blocks));
        }
        for (c, class) in self.classes.iter().enumerate() {
            let mine: Vec<u64> = empty.iter().filter(|e| e.1 == c as u8).map(|e| e.0).collect();
            let stranded = heap.stranded_blocks(c as u8).load();
            if mine.len() as u64 > stranded as u64 && !stale(c as u8) {
                return Err(format!(
                    "blocks {mine:?} of {} are allocated but empty (the allocator left {stranded} such \
                     blocks)",
                    class.name
                ));
            }
        }
        summary.empty_blocks = empty.len() as u64;
        Ok(summary)
    }
}

#[cfg(test)]
mod tests {
    use dynasoar_device::rand::Rng;

    use super::*;
    use crate::backend::Backend;

    const CLASSES: [HeapClass; 2] =
        [HeapClass { name: "A", objects_per_block: 64 }, HeapClass { name: "B", objects_per_block: 24 }];

    /// A heap on the CPU backend, whose memory this thread may then write through the device
    /// crate's views (the CPU backend's device memory is host memory).
    fn cpu_heap(bytes: u64) -> (Executor, DeviceHeap) {
        let exec = Executor::with_backend("", Backend::Cpu).unwrap();
        let heap = DeviceHeap::new(&exec, bytes, 256, &CLASSES).unwrap();
        (exec, heap)
    }

    fn view(heap: &DeviceHeap) -> Heap<'_> {
        // SAFETY: on the CPU backend the heap's address is host memory; no kernel runs.
        unsafe { Heap::from_ptr(heap.ptr().as_ptr()) }
    }

    /// Give block `index` to `class` with `objects`, as the allocator leaves a block.
    fn allocate(heap: &DeviceHeap, class: u8, index: u64, objects: u64) {
        let h = view(heap);
        assert!(h.free_blocks().try_clear(index));
        h.state().free_blocks.fetch_sub(1);
        h.allocated(class).set(index);
        let block = h.block(index);
        block.type_id.store(class as u32);
        let alloc = objects | preset_mask(CLASSES[class as usize].objects_per_block);
        block.alloc.store(alloc);
        block.handed.store(u64::MAX);
        if alloc != u64::MAX {
            h.active(class).set(index);
        }
        h.mark_changed(class, 0);
    }

    fn expected(heap: &DeviceHeap, class: u8) -> Vec<(u32, u64)> {
        let h = view(heap);
        let valid = !preset_mask(CLASSES[class as usize].objects_per_block);
        let mut want = Vec::new();
        h.allocated(class).for_each_set(|i| want.push((i as u32, h.block(i).objects() & valid)));
        want
    }

    /// Enumerate `class` in `form` (anew if `changed`): its sorted listing, checked against
    /// the listed count.
    fn listed(
        exec: &Executor,
        heap: &DeviceHeap,
        class: u8,
        form: Enumeration,
        changed: bool,
    ) -> Vec<(u32, u64)> {
        heap.set_enumeration(form);
        if changed {
            heap.mark_changed(exec, class).unwrap();
        }
        let parity = heap.enumerate(exec, class).unwrap();
        heap.take_errors(exec, &["enumerate"]).unwrap();
        let listing = heap.listing(exec, class, parity).unwrap();
        assert_eq!(listing.blocks.len(), heap.enumerated_blocks(exec, class, parity).unwrap() as usize);
        listing.sorted()
    }

    #[test]
    fn the_default_enumeration_follows_the_heap_size_unless_the_environment_says() {
        let (exec, heap) = cpu_heap(1 << 20);
        // A 1 MiB heap is small: flat, unless DYNASOAR_ENUMERATION says otherwise.
        assert_eq!(heap.enumeration(), exec.settings().enumeration.unwrap_or(Enumeration::Flat));
        assert_eq!(default_enumeration(HIERARCHICAL_FROM_BLOCKS - 1), Enumeration::Flat);
        assert_eq!(default_enumeration(HIERARCHICAL_FROM_BLOCKS), Enumeration::Hierarchical);
        heap.set_enumeration(Enumeration::Flat);
        assert_eq!(heap.enumeration(), Enumeration::Flat);
        assert_eq!("hierarchical".parse::<Enumeration>().unwrap(), Enumeration::Hierarchical);
        assert!("Flat".parse::<Enumeration>().is_err());
    }

    /// The variant reaches the device's configuration, survives a reset, and can change back.
    #[test]
    fn the_allocator_variant_is_written_to_the_device_configuration() {
        let (exec, heap) = cpu_heap(1 << 20);
        let from_env = exec.settings().allocator_variant;
        assert_eq!(heap.allocator_variant(), from_env);
        assert_eq!(view(&heap).config().variants, from_env.config_bits());
        let both = AllocatorVariant { coalescing: false, rotation: false, last_block: true };
        heap.set_allocator_variant(&exec, both).unwrap();
        assert_eq!(heap.allocator_variant(), both);
        assert_eq!(view(&heap).config().variants, both.config_bits());
        heap.reset(&exec).unwrap();
        assert_eq!(view(&heap).config().variants, both.config_bits(), "reset keeps the variant");
        // Nothing else of the configuration changed.
        assert_eq!(*view(&heap).config(), HeapConfig { variants: both.config_bits(), ..*heap.config() });
        heap.set_allocator_variant(&exec, AllocatorVariant::DEFAULT).unwrap();
        assert_eq!(view(&heap).config().variants, 0);
    }

    /// A skipped lane (an allocator fault) is reported as such, naming the kernel, even where
    /// the launch also ran out of memory; the error bits are cleared once reported.
    #[test]
    fn a_skipped_lane_is_reported_as_an_allocator_fault() {
        let (exec, heap) = cpu_heap(1 << 20);
        view(&heap).state().errors.store(errors::SKIPPED_LANE | errors::OUT_OF_MEMORY);
        let err = heap.take_errors(&exec, &["dynasoar_do__Zoo__Cat__have_kitten"]).unwrap_err();
        assert!(matches!(err, Error::SkippedLane { .. }), "{err}");
        let text = err.to_string();
        assert!(
            text.contains("dynasoar_do__Zoo__Cat__have_kitten") && text.contains("allocator fault"),
            "{text}"
        );
        heap.take_errors(&exec, &["next"]).unwrap();
    }

    /// An allocated block without objects is a leak unless the allocator left it with its
    /// class (a give-back's race, or a free in a launch creating none of the class): the
    /// check fails until the heap counts as many such blocks of that class.
    #[test]
    fn the_check_allows_as_many_empty_blocks_of_a_class_as_it_counted() {
        let (exec, heap) = cpu_heap(1 << 20);
        allocate(&heap, 0, 3, 0b101);
        allocate(&heap, 1, 5, 0);
        allocate(&heap, 0, 9, 0);
        let err = heap.snapshot(&exec).unwrap().check().unwrap_err();
        assert!(err.contains("blocks [9] of A are allocated but empty"), "{err}");
        view(&heap).stranded_blocks(1).store(2);
        let err = heap.snapshot(&exec).unwrap().check().unwrap_err();
        assert!(err.contains("blocks [9] of A"), "another class's count does not cover it: {err}");
        view(&heap).stranded_blocks(0).store(1);
        let summary = heap.snapshot(&exec).unwrap().check().unwrap();
        assert_eq!(summary.classes, vec![(2, 2), (1, 0)]);
        assert_eq!(summary.empty_blocks, 2);
        view(&heap).stranded_blocks(1).store(0);
        let err = heap.snapshot(&exec).unwrap().check().unwrap_err();
        assert!(err.contains("blocks [5] of B"), "{err}");
    }

    /// An enumeration anew frees the empty blocks of its class (those that frees or a
    /// give-back left with the class) instead of listing them, and resets the class's count
    /// of them; in both forms. Another class's empty block and count stay as they were.
    #[test]
    fn an_enumeration_frees_the_empty_blocks_of_its_class() {
        let (exec, heap) = cpu_heap(8 << 20);
        for form in [Enumeration::Flat, Enumeration::Hierarchical] {
            let with = [3u64, 64, 70, 200];
            let empty = [4u64, 65, 130, 4100];
            for &i in &with {
                allocate(&heap, 0, i, 1 << (i % 64));
            }
            for &i in &empty {
                allocate(&heap, 0, i, 0);
            }
            allocate(&heap, 1, 5, 0);
            view(&heap).stranded_blocks(0).store(4);
            view(&heap).stranded_blocks(1).store(1);
            let free = view(&heap).state().free_blocks.load();
            let want: Vec<(u32, u64)> = with.iter().map(|&i| (i as u32, 1 << (i % 64))).collect();
            assert_eq!(listed(&exec, &heap, 0, form, true), want, "{form:?}");
            let h = view(&heap);
            for &i in &empty {
                assert!(
                    h.free_blocks().get(i) && !h.allocated(0).get(i) && !h.active(0).get(i),
                    "{form:?}: block {i} freed"
                );
                assert_eq!((h.block(i).alloc.load(), h.block(i).handed.load()), (u64::MAX, 0));
            }
            assert_eq!(h.state().free_blocks.load(), free + 4, "{form:?}");
            assert_eq!((h.stranded_blocks(0).load(), h.stranded_blocks(1).load()), (0, 1), "{form:?}");
            let summary = heap.snapshot(&exec).unwrap().check().unwrap();
            assert_eq!(summary.empty_blocks, 1, "{form:?}: class 1's");
            assert_eq!(listed(&exec, &heap, 0, form, false), want, "{form:?} unchanged");
            heap.reset(&exec).unwrap();
        }
    }

    /// Both forms, launched as the runtime launches them, list every allocated block of the
    /// class once with its objects, on empty, sparse and full classes of a three-level bitmap,
    /// alternating on one heap; an unchanged class keeps its listing in both.
    #[test]
    fn both_enumerations_list_the_same_blocks_on_the_cpu_backend() {
        let (exec, heap) = cpu_heap(8 << 20);
        let blocks = heap.config().num_blocks;
        assert_eq!(heap.config().geometry.levels, 3, "{blocks} blocks");
        let forms = [Enumeration::Flat, Enumeration::Hierarchical];
        for form in forms {
            assert!(listed(&exec, &heap, 0, form, true).is_empty(), "{form:?}: empty class");
        }
        let mut rng = Rng::new(7, 0);
        // Class 1: a sparse scatter; class 0: runs of neighbours, then every other block.
        for i in 0..blocks {
            if rng.below(100) == 0 {
                allocate(&heap, 1, i, rng.next_u64() | 1);
            } else if (i / 4096) % 3 == 1 {
                allocate(&heap, 0, i, rng.next_u64() | 1);
            }
        }
        for class in [0, 1] {
            let want = expected(&heap, class);
            assert!(!want.is_empty());
            for form in forms.iter().chain(&forms).chain(forms.iter().rev()) {
                assert_eq!(listed(&exec, &heap, class, *form, true), want, "{form:?}, class {class}");
                assert_eq!(
                    listed(&exec, &heap, class, *form, false),
                    want,
                    "{form:?} unchanged, class {class}"
                );
            }
        }
        // The rest of the heap to class 0: a full heap.
        for i in 0..blocks {
            if view(&heap).free_blocks().get(i) {
                allocate(&heap, 0, i, 1 << (i % 64));
            }
        }
        let want = expected(&heap, 0);
        assert_eq!(want.len() as u64 + expected(&heap, 1).len() as u64, blocks);
        for form in forms {
            assert_eq!(listed(&exec, &heap, 0, form, true), want, "{form:?}: full heap");
        }
        assert_eq!(heap.snapshot(&exec).unwrap().check().map(|s| s.free_blocks), Ok(0));
    }
}
