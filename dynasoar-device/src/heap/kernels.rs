//! The heap's own kernels: initialisation, enumeration of a class's blocks before a
//! `parallel_do` (paper Alg. 5 and Figure 8), and statistics. They take the class as a
//! parameter, so one PTX entry point of each serves every heap and class; they are exported by
//! this crate and so land in every model crate's PTX.

use dynasoar_macros::kernel;

use crate::arch::{self, WarpGroup};
use crate::bitmap::init_container;
use crate::block::preset_mask;
use crate::heap::{Heap, HeapHeader};
use crate::{DevPtr, Plain};

/// Parameters of [`heap_init`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct InitParams {
    pub heap: DevPtr<HeapHeader>,
}
// SAFETY: `repr(C)` plain data.
// Kernel parameters: not offered to users as examples of plain types in diagnostics.
#[diagnostic::do_not_recommend]
unsafe impl Plain for InitParams {}

/// Write every bitmap container (the free bitmap full, the others empty), clear the run
/// tables and every block's handed-out bitmap (0 while a block is free), and write the heap
/// state.
/// The header's config must already be in place.
#[kernel(crate = crate, name = "dynasoar_heap_init")]
pub fn heap_init(p: InitParams) {
    // SAFETY: the host launches this on a heap whose config it has just written.
    let heap = unsafe { Heap::from_ptr(p.heap.as_ptr()) };
    let c = heap.config();
    let total = (1 + 2 * c.num_classes as u64) * c.bitmap_stride;
    let mut i = arch::global_thread_id() as u64;
    let stride = arch::global_thread_count() as u64;
    // SAFETY: the bitmaps are `total` consecutive containers; nothing else runs meanwhile.
    let containers = unsafe {
        core::slice::from_raw_parts(c.bitmaps as usize as *const arch::atomic::Atomic64, total as usize)
    };
    while i < total {
        let (bitmap, index) = (i / c.bitmap_stride, i % c.bitmap_stride);
        let value = if bitmap == 0 && index < c.geometry.containers {
            init_container(&c.geometry, index, c.num_blocks)
        } else {
            0
        };
        containers[i as usize].store(value);
        i += stride;
    }
    let mut block = arch::global_thread_id() as u64;
    while block < c.num_blocks {
        heap.block(block).handed.store(0);
        block += stride;
    }
    for class in 0..c.num_classes as u8 {
        let runs = heap.run_table(class);
        let mut i = arch::global_thread_id();
        while i < runs.len() {
            runs[i].store(0);
            i += stride as usize;
        }
    }
    let threads = arch::global_thread_id() as u64;
    if threads < c.num_classes as u64 {
        for counter in heap.enum_counters(threads as u8) {
            counter.store(0);
        }
        heap.enum_changed(threads as u8).store(crate::heap::CHANGED_BOTH);
    }
    if threads == 0 {
        let s = heap.state();
        s.free_blocks.store(c.num_blocks);
        s.errors.store(0);
        s.failed_allocations.store(0);
        s.initializing.store(0);
        s.starved_leaders.store(0);
        s.coalescing_misses.store(0);
        s.first_error_launch.store(0);
        s.failed_classes.store(0);
    }
}

/// Parameters of [`heap_enumerate`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct EnumerateParams {
    pub heap: DevPtr<HeapHeader>,
    pub class: u32,
    /// Which of the two counters this enumeration fills (the other one is reset for the next).
    pub parity: u32,
}
// SAFETY: `repr(C)` plain data.
// Kernel parameters: not offered to users as examples of plain types in diagnostics.
#[diagnostic::do_not_recommend]
unsafe impl Plain for EnumerateParams {}

/// List the allocated blocks of `class` into its enumeration area, each with a snapshot of its
/// allocation bitmap: the objects the following do-all visits (paper Alg. 5, Figure 8).
///
/// If no object of the class was allocated or freed since the previous enumeration, its list
/// and snapshots are still right: the kernel only carries the count over (classes that do not
/// change, like the cells of a grid, then cost one launch and no scan).
///
/// One thread per block: each tests its block's bit, and each warp reserves room for its listed
/// blocks with one atomic. This kernel runs alone on a quiescent heap (stream order), so
/// it reads bitmaps and block headers with plain loads: nothing changes them meanwhile, and
/// plain loads let the hardware overlap them (asm atomics would serialise each thread).
#[kernel(crate = crate, name = "dynasoar_heap_enumerate")]
pub fn heap_enumerate(p: EnumerateParams) {
    // SAFETY: the host launches this on an initialised heap, between other kernels.
    let heap = unsafe { Heap::from_ptr(p.heap.as_ptr()) };
    let class = p.class as u8;
    let allocated = heap.allocated(class);
    let geometry = allocated.geometry();
    let counters = heap.enum_counters(class);
    let parity = (p.parity & 1) as usize;
    let changed = heap.enum_changed(class);
    let unchanged = changed.load() & (1 << parity) == 0;
    if arch::global_thread_id() == 0 {
        // Only bit `parity` is read in this kernel (see `Heap::enum_changed`).
        changed.fetch_and(!(1u32 << (1 - parity)));
        if unchanged {
            counters[parity].store(counters[1 - parity].load());
        }
        counters[1 - parity].store(0);
    }
    if unchanged {
        return;
    }
    let valid = !preset_mask(heap.class_objects(class));
    let list = heap.enum_list(class);
    let snapshots = heap.enum_snapshots(class);
    // 32-bit: a heap has fewer than 2^31 blocks (`MAX_BLOCKS`).
    let blocks = geometry.bits as u32;
    let stride = arch::global_thread_count() as u32;
    let mut index = arch::global_thread_id() as u32;
    while index < blocks {
        // The level-0 container only: the 32 threads of a warp share it (one load), so testing
        // the level above first saved no traffic and added a dependent round trip.
        let listed = quiet_load(allocated.container(0, (index / 64) as u64)) & (1 << (index % 64)) != 0;
        // The block's bitmaps are loaded before the warp's atomic, so the round trips overlap.
        // Its objects: allocated slots, less those reserved for a run and not handed out yet.
        let alloc = if listed {
            let block = heap.block(index as u64);
            quiet_load(&block.alloc) & quiet_load(&block.handed)
        } else {
            0
        };
        let group = WarpGroup::current();
        let at = group.fetch_add_flagged_u32(&counters[parity], listed);
        if listed {
            // SAFETY: at most `num_blocks` blocks are allocated to a class and the list and the
            // snapshots have room for `num_blocks` entries; each entry is written by one thread.
            unsafe {
                list.add(at as usize).write(index);
                snapshots.add(at as usize).write(alloc & valid);
            }
        }
        index += stride;
    }
}

/// A plain load of an atomic word, for kernels that run while no other thread changes it.
#[inline(always)]
fn quiet_load(word: &crate::arch::atomic::Atomic64) -> u64 {
    // SAFETY: `word` is a live, aligned u64; callers guarantee no concurrent writer.
    unsafe { word.as_ptr().read() }
}

/// Parameters of [`heap_stats`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct StatsParams {
    pub heap: DevPtr<HeapHeader>,
    /// `2 * num_classes` zeroed counters: allocated blocks and live objects of each class.
    pub out: DevPtr<u64>,
}
// SAFETY: `repr(C)` plain data.
// Kernel parameters: not offered to users as examples of plain types in diagnostics.
#[diagnostic::do_not_recommend]
unsafe impl Plain for StatsParams {}

/// Count the allocated blocks and live objects of every class.
#[kernel(crate = crate, name = "dynasoar_heap_stats")]
pub fn heap_stats(p: StatsParams) {
    // SAFETY: the host launches this on an initialised heap, between other kernels.
    let heap = unsafe { Heap::from_ptr(p.heap.as_ptr()) };
    let c = heap.config();
    let per_class = c.geometry.len(0);
    let total = per_class * c.num_classes as u64;
    let stride = arch::global_thread_count() as u64;
    let mut i = arch::global_thread_id() as u64;
    while i < total {
        let class = (i / per_class) as u8;
        let bits = heap.allocated(class).container(0, i % per_class).load();
        if bits != 0 {
            let preset = preset_mask(heap.class_objects(class));
            let mut objects = 0u64;
            let mut rest = bits;
            while rest != 0 {
                let index = (i % per_class) * 64 + rest.trailing_zeros() as u64;
                rest &= rest - 1;
                objects += (heap.block(index).objects() & !preset).count_ones() as u64;
            }
            // SAFETY: `out` holds two counters per class, updated only atomically here.
            let out = unsafe { arch::atomic::Atomic64::from_ptr(p.out.as_ptr().add(2 * class as usize)) };
            out.fetch_add(bits.count_ones() as u64);
            // SAFETY: as above.
            let out = unsafe { arch::atomic::Atomic64::from_ptr(p.out.as_ptr().add(2 * class as usize + 1)) };
            out.fetch_add(objects);
        }
        i += stride;
    }
}
