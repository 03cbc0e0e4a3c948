//! The heap's own kernels: initialisation, enumeration of a class's blocks before a
//! `parallel_do` (paper Alg. 5 and Figure 8), and statistics. They take the class as a
//! parameter, so one PTX entry point of each serves every heap and class; they are exported by
//! this crate and so land in every model crate's PTX.
//!
//! Enumeration comes in two forms, which list the same blocks with the same snapshots (in an
//! order that neither promises: each warp reserves its entries with an atomic):
//! - flat, [`heap_enumerate`]: one launch, one thread per block of the heap;
//! - hierarchical (paper Alg. 5), two launches: [`heap_enumerate_containers`] lists the
//!   class's non-empty level-0 containers from the levels above (one thread per 4,096 blocks
//!   of the heap), then [`heap_enumerate_blocks`] lists the blocks of the listed containers
//!   only, one warp per container. Beyond that first pass, its work grows with the class's
//!   non-empty containers, not with the heap.

use dynasoar_macros::kernel;

use crate::arch::{self, WarpGroup};
use crate::bitmap::init_container;
use crate::block::preset_mask;
use crate::heap::{Heap, HeapHeader, MAX_CLASSES, STALE, block_at};
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
        for table in [heap.run_table(class), heap.last_block_table(class)] {
            let mut i = arch::global_thread_id();
            while i < table.len() {
                table[i].store(0);
                i += stride as usize;
            }
        }
    }
    let threads = arch::global_thread_id() as u64;
    if threads < c.num_classes as u64 {
        for counter in heap.enum_counters(threads as u8) {
            counter.store(0);
        }
        for counter in heap.enum_container_counters(threads as u8) {
            counter.store(0);
        }
        heap.enum_changed(threads as u8).store(crate::heap::CHANGED_BOTH);
        heap.stranded_blocks(threads as u8).store(0);
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
    /// Further classes that the flat form lists in the same launch (bits by type id; 0 for
    /// `class` alone; the hierarchical form lists `class` only), each with the parity of its
    /// bit in `other_parities`.
    pub others: u64,
    pub other_parities: u64,
    /// Classes (bits by type id) whose listed blocks note their entries
    /// (`BlockHeader::listed_at`, for `Heap::unlist`): a store per listed block, made only for
    /// the classes whose lists the host may keep through frees.
    pub notes: u64,
}

impl EnumerateParams {
    /// An enumeration of `class` alone with `parity`, noting no entries.
    pub fn one(heap: DevPtr<HeapHeader>, class: u8, parity: u32) -> Self {
        EnumerateParams { heap, class: class as u32, parity, others: 0, other_parities: 0, notes: 0 }
    }
}
// SAFETY: `repr(C)` plain data.
// Kernel parameters: not offered to users as examples of plain types in diagnostics.
#[diagnostic::do_not_recommend]
unsafe impl Plain for EnumerateParams {}

/// The start of an enumeration of `class` with `parity`, in every thread of its first kernel:
/// whether objects of the class were allocated or freed since the previous enumeration (then
/// the kernels list anew). Thread 0 clears the change flag that this enumeration does not read
/// and zeroes the counters of the other parity, which the next enumeration counts into; if
/// nothing changed, the list and snapshots are still right, and it only carries the count
/// over (classes that do not change, like the cells of a grid, then cost a launch and no
/// scan). A list that must note its entries (`notes`) is listed anew also if the list it
/// would reuse did not note them (see `Heap::enum_noted`). A listing anew frees the class's
/// empty blocks (see [`Heap::free_empty_block`]), so thread 0 then resets the class's count of them
/// (`Heap::stranded_blocks`): nothing else changes it while an enumeration runs.
#[inline(always)]
fn begin_enumeration(heap: &Heap<'_>, class: u8, parity: usize, notes: bool) -> bool {
    let counters = heap.enum_counters(class);
    let changed = heap.enum_changed(class);
    let noted = heap.enum_noted(class);
    let was_noted = noted[1 - parity].load() != 0;
    let unchanged = changed.load() & (1 << parity) == 0 && (was_noted || !notes);
    if arch::global_thread_id() == 0 {
        noted[parity].store(if unchanged { was_noted } else { notes } as u32);
        // Only bit `parity` is read in this kernel (see `Heap::enum_changed`). A listing anew
        // makes every listed block with room active and frees the empty ones: the class is no
        // longer `STALE`.
        changed.fetch_and(!(1u32 << (1 - parity)) & if unchanged { !0 } else { !STALE });
        if unchanged {
            counters[parity].store(counters[1 - parity].load());
        } else {
            heap.stranded_blocks(class).store(0);
        }
        counters[1 - parity].store(0);
        // Zeroed by either form, so that the forms may alternate on one heap.
        heap.enum_container_counters(class)[1 - parity].store(0);
    }
    !unchanged
}

/// List the allocated blocks of `class` into its enumeration area, each with a snapshot of its
/// allocation bitmap: the objects the following do-all visits (paper Alg. 5, Figure 8). The
/// flat form: every block of the heap is tested (see the module documentation). The classes of
/// `p.others` are listed in the same pass: a thread finds which of them holds its block (their
/// level-0 containers loaded together) and the warp reserves entries in each class's list. A
/// `parallel_do` that lists one class so also lists the others whose lists are out of date and
/// that its method cannot change: their next do-alls need no launch of their own.
///
/// If no object of a class was allocated or freed since its previous enumeration, the kernel
/// only carries its count over (see `begin_enumeration`). Otherwise it frees the class's empty
/// blocks instead of listing them: those that frees in launches creating no object of the
/// class, or a give-back, left with the class (see [`Heap::free_empty_block`]).
///
/// One thread per block: each tests its block's bit, and each warp reserves room for its listed
/// blocks with one atomic. This kernel runs alone on a quiescent heap (stream order), so
/// it reads bitmaps and block headers with plain loads: nothing changes them meanwhile, and
/// plain loads let the hardware overlap them (asm atomics would serialise each thread).
#[kernel(crate = crate, name = "dynasoar_heap_enumerate")]
pub fn heap_enumerate(p: EnumerateParams) {
    // SAFETY: the host launches this on an initialised heap, between other kernels.
    let heap = unsafe { Heap::from_ptr(p.heap.as_ptr()) };
    let first = p.class as u8 & (MAX_CLASSES as u8 - 1);
    let classes = p.others | 1 << first;
    let parities = p.other_parities & !(1 << first) | ((p.parity & 1) as u64) << first;
    let parity = |class: u8| (parities >> class & 1) as usize;
    // The classes to list anew; the others carry their counts over. (The same for every
    // thread: each reads its class's flag bit `parity`, which no thread of this launch writes.)
    let mut changed = 0u64;
    let mut bits = classes;
    while bits != 0 {
        let class = bits.trailing_zeros() as u8;
        bits &= bits - 1;
        if begin_enumeration(&heap, class, parity(class), p.notes >> class & 1 != 0) {
            changed |= 1 << class;
        }
    }
    if changed == 0 {
        return;
    }
    // 32-bit: a heap has fewer than 2^31 blocks (`MAX_BLOCKS`). Every class's bitmap has the
    // heap's geometry.
    let blocks = heap.allocated(first).geometry().bits as u32;
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let mut bits = changed;
        while bits != 0 {
            let class = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            let counter = &heap.enum_counters(class)[parity(class)];
            list_share_on_host(&heap, class, blocks, counter, p.notes >> class & 1 != 0);
        }
    }
    #[cfg(target_arch = "nvptx64")]
    {
        let stride = arch::global_thread_count() as u32;
        let mut index = arch::global_thread_id() as u32;
        while index < blocks {
            // The class that holds the block, if it is one of `changed`: the level-0 container
            // of each class's allocated bitmap, loads that do not wait for one another (the 32
            // threads of a warp share each: one load; testing the level above first saved no
            // traffic and added a dependent round trip).
            let mut owner = MAX_CLASSES as u8;
            let mut bits = changed;
            while bits != 0 {
                let class = bits.trailing_zeros() as u8;
                bits &= bits - 1;
                // Other threads may be clearing their blocks' bits of the word (freeing empty
                // blocks, below); the word is aligned, so the load sees each clearing or not,
                // and this thread's own bit as it is: only this thread changes it.
                let container = quiet_load(heap.allocated(class).container(0, (index / 64) as u64));
                if container & (1 << (index % 64)) != 0 {
                    owner = class;
                }
            }
            // The block's bitmaps are loaded before the warp's atomics, so the round trips overlap.
            // Its objects: allocated slots, less those reserved for a run and not handed out yet.
            // An empty block is not listed but freed, once the warp's entries are reserved.
            let mut alloc = 0;
            let mut empty = false;
            let mut room = false;
            if (owner as usize) < MAX_CLASSES {
                let block = heap.block(index as u64);
                let slots = quiet_load(&block.alloc);
                alloc = slots & quiet_load(&block.handed);
                empty = slots & !preset_mask(heap.class_objects(owner)) == 0;
                room = slots != u64::MAX;
            }
            let group = WarpGroup::current();
            let mut bits = changed;
            while bits != 0 {
                let class = bits.trailing_zeros() as u8;
                bits &= bits - 1;
                let mine = owner == class && !empty;
                let at = group.fetch_add_flagged_u32(&heap.enum_counters(class)[parity(class)], mine);
                if mine {
                    let valid = !preset_mask(heap.class_objects(class));
                    // SAFETY: at most `num_blocks` blocks are allocated to a class and the list
                    // and the snapshots have room for `num_blocks` entries; each entry is
                    // written by one thread.
                    unsafe {
                        heap.enum_list(class).add(at as usize).write(index);
                        heap.enum_snapshots(class).add(at as usize).write(alloc & valid);
                    }
                    if p.notes >> class & 1 != 0 {
                        heap.block(index as u64).listed_at.store(at);
                    }
                }
            }
            if empty {
                heap.free_empty_block(index as u64, owner);
            } else if room {
                activate(&heap, owner, index as u64);
            }
            index += stride;
        }
    }
}

/// [`heap_enumerate`] on the CPU backend: an emulated thread lists a contiguous share of the
/// heap's blocks (thread `i` of `T`, the blocks from `i * M / T` up to the next thread's) with
/// one atomic for all of them, so that the list holds each share's blocks in heap order (in a
/// pool of one worker, the whole list), and a do-all, which gives each thread a contiguous
/// share of the list, walks the heap as a plain loop walks an array. The GPU's form, where
/// thread `i` lists blocks `i`, `i + T`, ... and the warps append in turn, listed the blocks of
/// a one-worker run in the order 0, T, 2T, ..., 1, T + 1, ...: every block a do-all visited
/// was far from the one before. With `note`, each listed block notes its entry
/// (`BlockHeader::listed_at`). Empty blocks are freed instead of listed (in the first pass,
/// which counts the rest).
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
fn list_share_on_host(
    heap: &Heap<'_>,
    class: u8,
    blocks: u32,
    counter: &crate::arch::atomic::Atomic32,
    note: bool,
) {
    let allocated = heap.allocated(class);
    let valid = !preset_mask(heap.class_objects(class));
    let (list, snapshots) = (heap.enum_list(class), heap.enum_snapshots(class));
    let (id, threads) = (arch::global_thread_id() as u64, arch::global_thread_count() as u64);
    let share = |thread: u64| (thread.min(threads) * blocks as u64 / threads) as u32;
    let (lo, hi) = (share(id), share(id + 1));
    if lo >= hi {
        return;
    }
    // The allocated bits of the share, container by container: `f` gets the container's index
    // and its bits that lie in the share. Atomic loads: threads whose shares split a container
    // clear their bits of it as they free empty blocks.
    let each_container = |f: &mut dyn FnMut(u32, u64)| {
        let mut word = lo / 64;
        while word * 64 < hi {
            let (from, to) = (lo.max(word * 64) - word * 64, hi.min(word * 64 + 64) - word * 64);
            let inside = (u64::MAX >> (64 - (to - from))) << from;
            let bits = allocated.container(0, word as u64).load() & inside;
            if bits != 0 {
                f(word, bits);
            }
            word += 1;
        }
    };
    let mut count = 0u32;
    each_container(&mut |word, mut bits| {
        while bits != 0 {
            let index = word * 64 + bits.trailing_zeros();
            bits &= bits - 1;
            if quiet_load(&heap.block(index as u64).alloc) & valid == 0 {
                heap.free_empty_block(index as u64, class);
            } else {
                count += 1;
            }
        }
    });
    if count == 0 {
        return;
    }
    let mut at = counter.fetch_add(count) as usize;
    each_container(&mut |word, mut bits| {
        while bits != 0 {
            let index = word * 64 + bits.trailing_zeros();
            bits &= bits - 1;
            let block = heap.block(index as u64);
            let slots = quiet_load(&block.alloc);
            if slots != u64::MAX {
                activate(heap, class, index as u64);
            }
            let alloc = slots & quiet_load(&block.handed);
            // SAFETY: at most `num_blocks` blocks are allocated to a class and the list and the
            // snapshots have room for `num_blocks` entries; this thread reserved entries
            // `at..at + count` for its share's blocks (only this thread changes its share's
            // bits, in the first pass, so the second lists the blocks the first one counted).
            unsafe {
                list.add(at).write(index);
                snapshots.add(at).write(alloc & valid);
            }
            if note {
                block.listed_at.store(at as u32);
            }
            at += 1;
        }
    });
}

/// The first kernel of the hierarchical enumeration of `class` (paper Alg. 5 for the levels
/// above 0): list the indices of the class's non-empty level-0 containers, and count them in
/// the container counter of `parity`, for [`heap_enumerate_blocks`].
///
/// One thread per level-1 container (64 level-0 containers, 4,096 blocks): it skips its
/// container if its bit in level 2 is clear, else lists the container's set bits; the lanes
/// of a warp that found any reserve room for them with one atomic. The levels above 2 are not
/// read (a bit of level 3 stands for 262,144 blocks, and this pass has only one thread per
/// 4,096). A bitmap of one level (at most 64 blocks) has one container, which thread 0 lists
/// if it is not empty.
///
/// Like the flat form it carries the count over if the class did not change (then it lists
/// nothing, so the blocks kernel after it finds no container). Plain loads, as in
/// [`heap_enumerate`].
#[kernel(crate = crate, name = "dynasoar_heap_enumerate_containers")]
pub fn heap_enumerate_containers(p: EnumerateParams) {
    // SAFETY: the host launches this on an initialised heap, between other kernels.
    let heap = unsafe { Heap::from_ptr(p.heap.as_ptr()) };
    let class = p.class as u8;
    let parity = (p.parity & 1) as usize;
    if !begin_enumeration(&heap, class, parity, p.notes >> class & 1 != 0) {
        return;
    }
    let allocated = heap.allocated(class);
    let geometry = allocated.geometry();
    let counter = &heap.enum_container_counters(class)[parity];
    let list = heap.enum_containers(class);
    let levels = geometry.levels;
    // 32-bit: below 2^31 blocks (`MAX_BLOCKS`), so below 2^25 level-0 containers.
    let words = if levels > 1 { geometry.len(1) as u32 } else { 1 };
    let stride = arch::global_thread_count() as u32;
    let mut word = arch::global_thread_id() as u32;
    while word < words {
        // Bit `i` of `bits`: level-0 container `64 * word + i` is not empty.
        let bits = if levels == 1 {
            (quiet_load(allocated.container(0, 0)) != 0) as u64
        } else if levels > 2
            && quiet_load(allocated.container(2, (word / 64) as u64)) & (1 << (word % 64)) == 0
        {
            0
        } else {
            quiet_load(allocated.container(1, word as u64))
        };
        if bits != 0 {
            // The lanes that have containers to list (the scan of their counts is shuffles).
            let at = WarpGroup::current().fetch_add_u32(counter, bits.count_ones());
            let mut rest = bits;
            let mut entry = at as usize;
            while rest != 0 {
                // SAFETY: the containers listed in one enumeration are distinct level-0
                // containers (each word is read by one thread), at most `len(0)`, which the list
                // has room for; each entry is written by the thread that reserved it.
                unsafe { list.add(entry).write(word * 64 + rest.trailing_zeros()) };
                rest &= rest - 1;
                entry += 1;
            }
        }
        word += stride;
    }
}

/// Bits of a level-0 container that each lane of [`heap_enumerate_blocks`] tests.
const ROUNDS: usize = 64 / arch::WARP_SIZE as usize;

/// The second kernel of the hierarchical enumeration of `class`: list the allocated blocks of
/// the level-0 containers that [`heap_enumerate_containers`] listed, each with its snapshot,
/// as [`heap_enumerate`] lists them (and frees the empty ones).
///
/// One warp per listed container: lane `l` tests bits `l`, `l + WARP_SIZE`, ... of the
/// container (two on the GPU, all 64 on the CPU backend, whose warps have one lane), loads the
/// bitmaps of its blocks, then the warp reserves room for all its listed blocks with one
/// atomic. The grid must be whole warps (as the host launches it, in blocks of 256); one
/// that is not raises `BAD_GRID`. Plain loads, as in [`heap_enumerate`].
#[kernel(crate = crate, name = "dynasoar_heap_enumerate_blocks")]
pub fn heap_enumerate_blocks(p: EnumerateParams) {
    // SAFETY: the host launches this on an initialised heap, after `heap_enumerate_containers`
    // of the same class and parity, between other kernels.
    let heap = unsafe { Heap::from_ptr(p.heap.as_ptr()) };
    let class = p.class as u8;
    let parity = (p.parity & 1) as usize;
    let lanes = arch::WARP_SIZE;
    let threads = arch::global_thread_count() as u32;
    if !threads.is_multiple_of(lanes) {
        heap.raise(crate::errors::BAD_GRID);
        return;
    }
    // 0 if the class did not change: the containers kernel then listed nothing.
    let containers = quiet_load_u32(&heap.enum_container_counters(class)[parity]);
    let allocated = heap.allocated(class);
    let counter = &heap.enum_counters(class)[parity];
    let source = heap.enum_containers(class) as *const u32;
    let valid = !preset_mask(heap.class_objects(class));
    let list = heap.enum_list(class);
    let snapshots = heap.enum_snapshots(class);
    let (blocks_at, block_bytes) = heap.block_geometry();
    let id = arch::global_thread_id() as u32;
    let lane = id % lanes;
    let stride = threads / lanes;
    let mut entry = id / lanes;
    while entry < containers {
        // SAFETY: `entry` is below the count of entries the containers kernel wrote.
        let index = unsafe { source.add(entry as usize).read() };
        let bits = quiet_load(allocated.container(0, index as u64));
        // Every block first (their loads overlap), then one ballot per round and one atomic.
        // Bit `round * lanes + lane` of the container, for each round: the block's allocated
        // slots and its objects (those slots less the ones reserved for a run and not handed
        // out), if it is allocated.
        let mut slots = [0u64; ROUNDS];
        let mut objects = [0u64; ROUNDS];
        for (round, (slots, objects)) in slots.iter_mut().zip(&mut objects).enumerate() {
            let bit = round as u32 * lanes + lane;
            if bits >> bit & 1 != 0 {
                let block = block_at(blocks_at + (index * 64 + bit) as u64 * block_bytes as u64);
                *slots = quiet_load(&block.alloc);
                *objects = *slots & quiet_load(&block.handed);
            }
        }
        // Bit `round`: this lane lists its block of the round; an empty block is freed instead,
        // once the list is written (then fewer values are live across the free's bitmap
        // updates).
        let mut listed = 0u64;
        let mut empty = 0u64;
        for (round, slots) in slots.iter().enumerate() {
            if bits >> (round as u32 * lanes + lane) & 1 != 0 {
                if slots & valid != 0 {
                    listed |= 1u64 << round;
                } else {
                    empty |= 1u64 << round;
                }
            }
        }
        let group = WarpGroup::current();
        let mut ballots = [0u32; ROUNDS];
        let mut total = 0;
        for (round, ballot) in ballots.iter_mut().enumerate() {
            *ballot = arch::ballot(group.mask, listed >> round & 1 != 0);
            total += ballot.count_ones();
        }
        let mut base = 0;
        if group.is_leader() && total != 0 {
            base = counter.fetch_add(total);
        }
        let mut at = group.broadcast_u32(base);
        for (round, (ballot, objects)) in ballots.iter().zip(&objects).enumerate() {
            let bit = round as u32 * lanes + lane;
            if listed >> round & 1 != 0 {
                let slot = (at + (ballot & arch::lanemask_lt()).count_ones()) as usize;
                // SAFETY: as in `heap_enumerate`: the warp reserved `total` entries, each lane's
                // listed blocks get distinct ones, and the lists have room for every block.
                unsafe {
                    list.add(slot).write(index * 64 + bit);
                    snapshots.add(slot).write(objects & valid);
                }
                if p.notes >> class & 1 != 0 {
                    heap.block((index * 64 + bit) as u64).listed_at.store(slot as u32);
                }
            }
            at += ballot.count_ones();
        }
        while empty != 0 {
            let round = empty.trailing_zeros();
            empty &= empty - 1;
            heap.free_empty_block((index * 64 + round * lanes + lane) as u64, class);
        }
        for (round, slots) in slots.iter().enumerate() {
            if listed >> round & 1 != 0 && *slots != u64::MAX {
                activate(&heap, class, (index * 64 + round as u32 * lanes + lane) as u64);
            }
        }
        entry += stride;
    }
}

/// Make block `index` of `class`, which has room, active if it is not: a block that a free
/// which did not wait for its bitmap left full in the class's eyes (see `STALE`). In kernels
/// that run alone on the heap: other threads of the kernel may set or clear other bits of the
/// active bitmap (their blocks'), which its hierarchical updates allow, but not this one.
#[inline(always)]
fn activate(heap: &Heap<'_>, class: u8, index: u64) {
    let active = heap.active(class);
    if !active.get(index) {
        active.set(index);
    }
}

/// Parameters of [`heap_reactivate`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ReactivateParams {
    pub heap: DevPtr<HeapHeader>,
    /// The classes to make exact again (bits by type id).
    pub classes: u64,
}
// SAFETY: `repr(C)` plain data.
// Kernel parameters: not offered to users as examples of plain types in diagnostics.
#[diagnostic::do_not_recommend]
unsafe impl Plain for ReactivateParams {}

/// Make the bitmaps of `p.classes` exact again after frees that did not wait for their
/// blocks' bitmaps (`Heap::free_in_sole_launch`, which set the classes' `STALE` flag): every
/// allocated block of such a class with room becomes active, and every empty one is counted
/// with the blocks the allocator left with their class (`Heap::stranded_blocks`, a bound:
/// blocks counted before may count twice). The host runs it before a launch whose frees or
/// allocations need the active bitmaps exact (they wait for a bit to change, which would never
/// come for a block such a free gave room), where no enumeration anew of the class came
/// since. Like the enumerations, it runs alone on the heap.
#[kernel(crate = crate, name = "dynasoar_heap_reactivate")]
pub fn heap_reactivate(p: ReactivateParams) {
    // SAFETY: the host launches this on an initialised heap, between other kernels.
    let heap = unsafe { Heap::from_ptr(p.heap.as_ptr()) };
    let c = heap.config();
    let classes = p.classes & ((1u64 << c.num_classes) - 1);
    if arch::global_thread_id() == 0 {
        let mut bits = classes;
        while bits != 0 {
            let class = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            heap.enum_changed(class).fetch_and(!STALE);
        }
    }
    let stride = arch::global_thread_count() as u64;
    let mut index = arch::global_thread_id() as u64;
    while index < c.num_blocks {
        let mut bits = classes;
        while bits != 0 {
            let class = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            if heap.allocated(class).get(index) {
                let slots = heap.block(index).alloc.load();
                if slots & !preset_mask(heap.class_objects(class)) == 0 {
                    heap.stranded_blocks(class).reduce_add(1);
                }
                if slots != u64::MAX {
                    activate(&heap, class, index);
                }
            }
        }
        index += stride;
    }
}

/// A plain load of an atomic word, for kernels that run while no other thread changes it.
#[inline(always)]
pub(super) fn quiet_load(word: &crate::arch::atomic::Atomic64) -> u64 {
    // SAFETY: `word` is a live, aligned u64; callers guarantee no concurrent writer.
    unsafe { word.as_ptr().read() }
}

/// [`quiet_load`] of a 32-bit word.
#[inline(always)]
fn quiet_load_u32(word: &crate::arch::atomic::Atomic32) -> u32 {
    // SAFETY: `word` is a live, aligned u32; callers guarantee no concurrent writer.
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

#[cfg(all(test, not(loom)))]
mod tests {
    //! The enumeration kernels on a heap in host memory, each emulated thread called in turn
    //! (as the CPU backend runs them, on one OS thread): the flat and the hierarchical form
    //! must list exactly the class's allocated blocks, each once, with its snapshot.

    use std::format;
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::arch::{LaunchCoords, with_launch_coords};
    use crate::heap::ranked::{
        RankParams, RankedHeader, heap_rank_count, heap_rank_scan, heap_rank_write, ranked_words,
    };
    use crate::heap::{CHANGED_BOTH, HeapConfig, HeapPlan};
    use crate::rand::Rng;

    /// Objects per block of the test heap's classes (the second has unusable slots).
    const CLASSES: [u32; 2] = [64, 40];
    const BLOCK_BYTES: u64 = 256;

    /// A heap of `blocks` blocks in host memory.
    struct TestHeap {
        _memory: Vec<u64>,
        base: u64,
        /// Parity of each class's next enumeration.
        parity: [u32; 2],
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Form {
        Flat,
        Hierarchical,
    }

    /// Run `kernel` as a grid of `blocks` x `threads` emulated threads, one after the other.
    fn launch<P: Copy>(kernel: fn(P), params: P, blocks: u32, threads: u32) {
        for block_idx in 0..blocks {
            for thread_idx in 0..threads {
                let coords = LaunchCoords { block_idx, thread_idx, block_dim: threads, grid_dim: blocks };
                with_launch_coords(coords, || kernel(params));
            }
        }
    }

    impl TestHeap {
        fn new(blocks: u64) -> Self {
            // The plan's metadata for `blocks` blocks, then the blocks.
            let mut bytes = blocks * BLOCK_BYTES;
            while HeapPlan::new(0, bytes, BLOCK_BYTES, &CLASSES)
                .map_or(true, |p| p.config.num_blocks < blocks)
            {
                bytes += bytes / 8 + 4096;
            }
            let mut memory = vec![0u64; (bytes / 8 + 64) as usize];
            let base = (memory.as_mut_ptr() as u64).next_multiple_of(256);
            let mut config = HeapPlan::new(base, bytes, BLOCK_BYTES, &CLASSES).unwrap().config;
            assert!(config.num_blocks >= blocks);
            // Fewer blocks than planned is a valid heap too (the geometry is what counts).
            config.num_blocks = blocks;
            config.geometry = crate::bitmap::BitmapGeometry::new(blocks).unwrap();
            // SAFETY: `memory` holds the whole heap from `base`, 256-byte aligned.
            unsafe { (base as usize as *mut HeapConfig).write(config) };
            let heap = TestHeap { _memory: memory, base, parity: [0; 2] };
            launch(heap_init, InitParams { heap: DevPtr::from_addr(base) }, 4, 64);
            heap
        }

        fn heap(&self) -> Heap<'_> {
            // SAFETY: a heap laid out by `HeapPlan` and initialised, alive as long as `self`.
            unsafe { Heap::from_ptr(self.base as usize as *const HeapHeader) }
        }

        /// Allocate block `index` to `class` with objects `objects` (and slots `reserved`
        /// reserved for a run, not handed out), as the allocator leaves it.
        fn allocate(&self, class: u8, index: u64, objects: u64, reserved: u64) {
            let heap = self.heap();
            let preset = preset_mask(CLASSES[class as usize]);
            assert!(heap.free_blocks().try_clear(index));
            heap.allocated(class).set(index);
            let block = heap.block(index);
            block.type_id.store(class as u32);
            block.alloc.store(objects | reserved | preset);
            block.handed.store(!reserved);
            heap.mark_changed(class, 0);
        }

        /// Build the ranked list of `class` in new memory whose header is `header`, on a grid of
        /// `blocks` x `threads` (the scan on one thread); the memory.
        fn rank(&self, header: RankedHeader, class: u8, blocks: u32, threads: u32) -> Vec<u32> {
            let mut memory = vec![0u32; ranked_words(&header)];
            // SAFETY: the memory starts with room for the header.
            unsafe { (memory.as_mut_ptr() as *mut RankedHeader).write(header) };
            let list = DevPtr::from_addr(memory.as_ptr() as u64);
            let params =
                RankParams { heap: DevPtr::from_addr(self.base), list, class: class as u32, _reserved: 0 };
            launch(heap_rank_count, params, blocks, threads);
            launch(heap_rank_scan, params, 1, 1);
            launch(heap_rank_write, params, blocks, threads);
            memory
        }

        /// Enumerate `class` in `form` on a grid of `blocks` x `threads`; the listed blocks
        /// with their snapshots, sorted.
        fn enumerate(&mut self, class: u8, form: Form, blocks: u32, threads: u32) -> Vec<(u32, u64)> {
            let parity = self.parity[class as usize];
            self.enumerate_noting(class, form, blocks, threads, true);
            self.listing(class, parity)
        }

        /// [`enumerate`](Self::enumerate), noting the entries in the blocks only if `notes`,
        /// and not checking the notes.
        fn enumerate_noting(
            &mut self,
            class: u8,
            form: Form,
            blocks: u32,
            threads: u32,
            notes: bool,
        ) -> Vec<(u32, u64)> {
            let parity = self.parity[class as usize];
            self.parity[class as usize] ^= 1;
            let params = EnumerateParams {
                notes: if notes { u64::MAX } else { 0 },
                ..EnumerateParams::one(DevPtr::from_addr(self.base), class, parity)
            };
            match form {
                Form::Flat => launch(heap_enumerate, params, blocks, threads),
                Form::Hierarchical => {
                    launch(heap_enumerate_containers, params, blocks, threads);
                    launch(heap_enumerate_blocks, params, blocks, threads);
                }
            }
            self.listing_unnoted(class, parity)
        }

        /// Enumerate `classes` in one flat launch (the first as `class`, the others as
        /// `others`) on a grid of `blocks` x `threads`; each class's listed blocks with their
        /// snapshots, sorted.
        fn enumerate_several(&mut self, classes: &[u8], blocks: u32, threads: u32) -> Vec<Vec<(u32, u64)>> {
            let parities: Vec<u32> = classes
                .iter()
                .map(|&c| {
                    self.parity[c as usize] ^= 1;
                    self.parity[c as usize] ^ 1
                })
                .collect();
            let mut params = EnumerateParams {
                notes: u64::MAX,
                ..EnumerateParams::one(DevPtr::from_addr(self.base), classes[0], parities[0])
            };
            for (&c, &parity) in classes.iter().zip(&parities).skip(1) {
                params.others |= 1 << c;
                params.other_parities |= (parity as u64) << c;
            }
            launch(heap_enumerate, params, blocks, threads);
            classes.iter().zip(&parities).map(|(&c, &parity)| self.listing(c, parity)).collect()
        }

        /// What the enumeration of `class` with `parity` listed, sorted. Each listed block
        /// notes its entry (`BlockHeader::listed_at`, for `Heap::unlist`).
        fn listing(&self, class: u8, parity: u32) -> Vec<(u32, u64)> {
            let heap = self.heap();
            let count = heap.enum_counters(class)[parity as usize].load() as usize;
            for i in 0..count {
                // SAFETY: the enumeration wrote `count` entries.
                let index = unsafe { heap.enum_list(class).add(i).read() };
                assert_eq!(heap.block(index as u64).listed_at.load(), i as u32, "class {class}, entry {i}");
            }
            self.listing_unnoted(class, parity)
        }

        /// [`listing`](Self::listing), of a list that need not note its entries.
        fn listing_unnoted(&self, class: u8, parity: u32) -> Vec<(u32, u64)> {
            let heap = self.heap();
            assert_eq!(heap.state().errors.load(), 0);
            let count = heap.enum_counters(class)[parity as usize].load() as usize;
            let mut listed: Vec<(u32, u64)> = (0..count)
                // SAFETY: the enumeration wrote `count` entries of each list.
                .map(|i| unsafe {
                    (heap.enum_list(class).add(i).read(), heap.enum_snapshots(class).add(i).read())
                })
                .collect();
            listed.sort_unstable();
            listed
        }
    }

    /// What an enumeration of `class` must list: every allocated block with its objects.
    fn expected(heap: &TestHeap, class: u8) -> Vec<(u32, u64)> {
        let h = heap.heap();
        let valid = !preset_mask(CLASSES[class as usize]);
        let mut want = Vec::new();
        h.allocated(class).for_each_set(|i| {
            let block = h.block(i);
            want.push((i as u32, block.alloc.load() & block.handed.load() & valid));
        });
        want
    }

    /// `Heap::unlist` clears a freed object's bit in its block's entry of its class's current
    /// list, in either form of enumeration, and nothing else: the list then holds what an
    /// enumeration after the frees would list.
    #[test]
    fn unlist_clears_the_freed_objects_bits_in_the_current_list() {
        use crate::handle::RawHandle;
        for form in [Form::Flat, Form::Hierarchical] {
            let mut heap = TestHeap::new(700);
            let mut rng = Rng::new(41, 1);
            for i in 0..700 {
                if rng.below(3) != 0 {
                    heap.allocate((i % 2) as u8, i, rng.next_u64() | 1, 0);
                }
            }
            for class in [0u8, 1] {
                let n = CLASSES[class as usize];
                let before = heap.enumerate(class, form, 3, 64);
                let h = heap.heap();
                // Free about a third of the class's objects, emptying some blocks.
                for &(index, objects) in &before {
                    let mut bits = objects;
                    while bits != 0 {
                        let slot = bits.trailing_zeros();
                        bits &= bits - 1;
                        if rng.below(3) == 0 || index % 7 == 0 {
                            let raw = RawHandle::new(h.block_addr(index as u64), slot, n, class);
                            h.unlist(raw);
                            h.block(index as u64).alloc.fetch_and(!(1u64 << slot));
                        }
                    }
                }
                let parity = heap.parity[class as usize] ^ 1;
                let kept = heap.listing(class, parity);
                let now: Vec<(u32, u64)> = before
                    .iter()
                    .map(|&(index, _)| {
                        let block = h.block(index as u64);
                        (index, block.alloc.load() & block.handed.load() & !preset_mask(n))
                    })
                    .collect();
                assert_eq!(kept, now, "{form:?}, class {class}");
                assert!(kept.iter().any(|&(_, objects)| objects == 0), "some blocks were emptied");
                assert_ne!(kept, before, "objects were freed");
            }
        }
    }

    /// An enumeration that must note its entries lists anew although nothing changed if the
    /// list it would reuse was made without notes (else `Heap::unlist` would find no entry),
    /// and reuses a list made with them; one that need not note them reuses either.
    #[test]
    fn a_list_that_must_note_its_entries_is_not_reused_from_one_that_did_not() {
        for form in [Form::Flat, Form::Hierarchical] {
            let mut heap = TestHeap::new(700);
            let mut rng = Rng::new(43, 1);
            for i in 0..700 {
                if rng.below(3) != 0 {
                    heap.allocate(0, i, rng.next_u64() | 1, 0);
                }
            }
            let want = expected(&heap, 0);
            assert_eq!(heap.enumerate_noting(0, form, 3, 64, false), want, "{form:?}");
            // Spoil every note: only a new scan that notes writes them again.
            let spoil = |heap: &TestHeap| {
                for &(index, _) in &want {
                    heap.heap().block(index as u64).listed_at.store(u32::MAX);
                }
            };
            let spoilt = |heap: &TestHeap| {
                want.iter().all(|&(i, _)| heap.heap().block(i as u64).listed_at.load() == u32::MAX)
            };
            spoil(&heap);
            assert_eq!(heap.enumerate_noting(0, form, 3, 64, false), want, "{form:?}: reused");
            assert!(spoilt(&heap), "{form:?}: reused as it is");
            // `enumerate` notes and checks every entry's note.
            assert_eq!(heap.enumerate(0, form, 3, 64), want, "{form:?}: listed anew");
            spoil(&heap);
            assert_eq!(heap.enumerate_noting(0, form, 3, 64, true), want, "{form:?}");
            assert!(spoilt(&heap), "{form:?}: a noted list is reused as it is");
            assert_eq!(heap.enumerate_noting(0, form, 3, 64, false), want, "{form:?}");
        }
    }

    /// One flat launch lists several classes (`EnumerateParams::others`) as launches of one
    /// class each do: each class's blocks with their snapshots, into the counter of its own
    /// parity; a class that did not change since carries its count over, one that changed is
    /// listed anew.
    #[test]
    fn one_launch_lists_several_classes() {
        for (blocks, seed) in [(30u64, 31u64), (700, 32)] {
            let mut heap = TestHeap::new(blocks);
            let mut rng = Rng::new(seed, 1);
            for i in 0..blocks {
                if rng.below(3) != 0 {
                    heap.allocate((i % 2) as u8, i, rng.next_u64() | 1, 0);
                }
            }
            // Class 0 once alone first, so that the two classes' parities differ.
            assert_eq!(heap.enumerate(0, Form::Flat, 2, 64), expected(&heap, 0));
            for (grid, threads) in [(1, 1), (3, 64), (64, 256)] {
                for order in [[0u8, 1], [1, 0]] {
                    let got = heap.enumerate_several(&order, grid, threads);
                    for (k, &class) in order.iter().enumerate() {
                        assert_eq!(
                            got[k],
                            expected(&heap, class),
                            "class {class}, {order:?}, {grid}x{threads}"
                        );
                    }
                }
            }
            // A change to class 1 only: listed anew; class 0 carried over.
            let index = (0..blocks).find(|&i| heap.heap().allocated(1).get(i)).unwrap();
            heap.heap().block(index).alloc.fetch_and(!1);
            heap.heap().mark_changed(1, 0);
            heap.heap().mark_changed(1, 1);
            let got = heap.enumerate_several(&[1, 0], 3, 64);
            assert_eq!((&got[0], &got[1]), (&expected(&heap, 1), &expected(&heap, 0)));
        }
    }

    /// Both forms, on a few grids (one thread; fewer threads than containers; more threads
    /// than blocks), list exactly the expected blocks; the other class's listing is untouched.
    fn check_both_forms(heap: &mut TestHeap, class: u8) {
        let want = expected(heap, class);
        let other = 1 - class;
        let other_before = heap.enumerate(other, Form::Flat, 1, 7);
        for (blocks, threads) in [(1, 1), (3, 64), (64, 256)] {
            for form in [Form::Flat, Form::Hierarchical] {
                heap.heap().mark_changed(class, 0);
                let got = heap.enumerate(class, form, blocks, threads);
                assert_eq!(got.len(), want.len(), "{form:?} on {blocks}x{threads}: count");
                assert_eq!(got, want, "{form:?} on {blocks}x{threads}");
            }
        }
        assert_eq!(heap.enumerate(other, Form::Hierarchical, 2, 32), other_before);
    }

    #[test]
    fn both_forms_list_nothing_for_an_empty_class() {
        for blocks in [1, 64, 65, 4097, 70_000] {
            let mut heap = TestHeap::new(blocks);
            heap.allocate(1, blocks - 1, 1, 0);
            check_both_forms(&mut heap, 0);
            assert!(heap.enumerate(0, Form::Hierarchical, 2, 64).is_empty());
        }
    }

    #[test]
    fn both_forms_list_a_full_heap() {
        for blocks in [1, 63, 64, 65, 4096, 4097, 9000] {
            let mut heap = TestHeap::new(blocks);
            for i in 0..blocks {
                heap.allocate(0, i, i.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1, 0);
            }
            assert_eq!(expected(&heap, 0).len() as u64, blocks);
            check_both_forms(&mut heap, 0);
        }
    }

    #[test]
    fn both_forms_list_blocks_at_container_boundaries() {
        // 3 levels: 70,000 blocks give 1,094 level-0 containers, 18 level-1 containers and one
        // level-2 container; the edges of containers of each level, and the last blocks.
        let blocks = 70_000u64;
        let mut heap = TestHeap::new(blocks);
        assert_eq!(heap.heap().allocated(0).geometry().levels, 3);
        let edges = [0, 1, 62, 63, 64, 65, 127, 128, 4095, 4096, 4097, 8191, 65_535, 65_536, 69_951, 69_952];
        for (k, &i) in edges.iter().chain(&[blocks - 2, blocks - 1]).enumerate() {
            // Some blocks hold slots reserved for a run: those are no objects of the snapshot.
            let reserved = if k % 3 == 0 { 0xf0 } else { 0 };
            heap.allocate(0, i, 1 << (k % 40), reserved);
        }
        // Class 1 owns neighbours of class 0's blocks, in the same containers.
        for i in [2, 66, 4098, 69_953] {
            heap.allocate(1, i, 3, 0);
        }
        check_both_forms(&mut heap, 0);
        check_both_forms(&mut heap, 1);
    }

    #[test]
    fn both_forms_agree_on_random_fills_of_every_depth() {
        // 1, 2, 3 and 4 levels; fills from one block in a thousand to nine in ten.
        for (blocks, seed) in [(50u64, 1u64), (3000, 2), (40_000, 3), (270_000, 4)] {
            for density in [1u32, 50, 500, 900] {
                let mut heap = TestHeap::new(blocks);
                let mut rng = Rng::new(seed, density as u64);
                for i in 0..blocks {
                    let roll = rng.below(1000);
                    if roll < density {
                        let class = (roll % 2) as u8;
                        let objects = rng.next_u64() | 1;
                        let reserved = if rng.below(4) == 0 { rng.next_u64() & !objects } else { 0 };
                        heap.allocate(class, i, objects, reserved);
                    }
                }
                for class in [0, 1] {
                    let want = expected(&heap, class);
                    for form in [Form::Flat, Form::Hierarchical] {
                        heap.heap().mark_changed(class, 0);
                        assert_eq!(
                            heap.enumerate(class, form, 16, 64),
                            want,
                            "{blocks} blocks, {density}/1000"
                        );
                    }
                }
                let h = heap.heap();
                assert_eq!(h.allocated(0).check_consistent(), Ok(()));
            }
        }
    }

    /// `device_do`'s and `device_reduce`'s walk (`for_each_allocated_in`) visits the objects
    /// of the live bitmaps in block order and, in a block, in slot order, for each part the
    /// objects of rank `r % parts == part` (rank in the class), with or without the allocator's
    /// shape, and from a ranked list built by the three kernels (on grids of one and of several
    /// warps; a list of the other class is not read); in the dense form (40 or 64 objects on 8,
    /// 16 or 32 parts) the objects of slot `s % parts == part`: the order the folds of
    /// `device_reduce` depend on (the CPU backend and the GPU must agree bit for bit).
    #[test]
    fn the_walk_visits_objects_in_block_and_slot_order() {
        use crate::block::ClassShape;
        use crate::handle::RawHandle;
        use crate::heap::listed::for_each_allocated_in;
        use crate::heap::ranked::NOT_RANKED;
        // 1, 2, 3 and 4 levels, sparse (empty containers of level 1) to dense (all but a few
        // blocks full: not listed).
        for (blocks, seed) in [(50u64, 5u64), (3000, 6), (40_000, 7), (270_000, 8)] {
            for density in [1u32, 30, 700, 1000] {
                let heap = TestHeap::new(blocks);
                let mut rng = Rng::new(seed, density as u64);
                for i in 0..blocks {
                    let roll = rng.below(1000);
                    if roll < density {
                        // A quarter of the blocks full, a quarter filled from slot 0 and the
                        // others anywhere; all full but for a few at density 1000.
                        let objects = match rng.below(if density == 1000 { 4000 } else { 4 }) {
                            1 => u64::MAX >> rng.below(64),
                            2 | 3 => rng.next_u64() | 1,
                            _ => u64::MAX,
                        };
                        let reserved = if rng.below(4) == 0 { rng.next_u64() & !objects } else { 0 };
                        heap.allocate((roll % 2) as u8, i, objects, reserved);
                    }
                }
                let h = heap.heap();
                for class in [0u8, 1] {
                    let n = CLASSES[class as usize];
                    let (mut all, mut free) = (Vec::new(), 0u32);
                    for i in 0..blocks {
                        if h.allocated(class).get(i) {
                            let b = h.block(i);
                            let objects = b.alloc.load() & b.handed.load() & !preset_mask(n);
                            free += n - objects.count_ones();
                            for slot in (0..64).filter(|s| objects >> s & 1 == 1) {
                                all.push(RawHandle::new(h.block_addr(i), slot, n, class));
                            }
                        }
                    }
                    let exact =
                        ClassShape { objects: n, block_bytes: BLOCK_BYTES as u32, ..ClassShape::UNKNOWN };
                    let dense = ClassShape { dense: true, ..exact };
                    let mut shapes = vec![ClassShape::UNKNOWN, exact, dense];
                    // The ranked list of the class, built on two grids, and one of the other
                    // class, which the walk must not read as this one's. (Fewer on the largest
                    // heap: the test runs in debug builds.)
                    let builds = [(3, 5, class), (1, 1, class), (2, 3, 1 - class)];
                    let mut lists = Vec::new();
                    for &(grid_blocks, threads, listed) in &builds[..if blocks > 40_000 { 1 } else { 3 }] {
                        let header = RankedHeader::new(blocks, 64 * blocks as u32);
                        let memory = heap.rank(header, listed, grid_blocks, threads);
                        if listed == class {
                            let sparse = free >= n;
                            let what = format!("{blocks} blocks, {density}/1000, class {class}");
                            let want = if sparse { class as u32 } else { NOT_RANKED };
                            assert_eq!((memory[0], memory[1]), (want, all.len() as u32), "{what}: header");
                            if sparse {
                                let entries = &memory[4 + 2 * header.tiles as usize..][..all.len()];
                                let want: Vec<u32> = all
                                    .iter()
                                    .map(|r| {
                                        (h.block_index(r.block_addr(), BLOCK_BYTES) as u32) << 6 | r.slot()
                                    })
                                    .collect();
                                assert_eq!(entries, want, "{what}: entries");
                            }
                        }
                        shapes.push(ClassShape { ranked: memory.as_ptr() as u64, ..exact });
                        shapes.push(ClassShape { ranked: memory.as_ptr() as u64, pairs: true, ..exact });
                        lists.push(memory);
                    }
                    for parts in [1u32, 2, 4, 8, 16, 32] {
                        for shape in &shapes {
                            for part in 0..parts {
                                let mut seen = Vec::new();
                                for_each_allocated_in(&h, class, *shape, parts, part, |raw| seen.push(raw));
                                let want: Vec<RawHandle> = all
                                    .iter()
                                    .enumerate()
                                    .filter(|(r, raw)| if shape.dense { raw.slot() } else { *r as u32 } % parts == part)
                                    .map(|(_, raw)| *raw)
                                    .collect();
                                assert_eq!(
                                    seen, want,
                                    "{blocks} blocks, {density}/1000, class {class}, {shape:?}, part {part} of {parts}"
                                );
                            }
                        }
                    }
                    // A list with no room for the class's objects lists nothing.
                    if !all.is_empty() && free >= n {
                        let small = RankedHeader::new(blocks, all.len() as u32 - 1);
                        let memory = heap.rank(small, class, 1, 1);
                        assert_eq!(memory[0], NOT_RANKED, "an overfull list lists nothing");
                        assert!(
                            memory[4 + 2 * small.tiles as usize..].iter().all(|&e| e == 0),
                            "and writes no entry"
                        );
                    }
                }
            }
        }
    }

    /// A do-all with lanes (`for_each_listed`, `lanes` > 1) gives run `k` of a listed block
    /// (`lanes` consecutive threads) the block's object of rank `k`: every object of the
    /// listing once per lane of one run, runs past a block's objects idle.
    #[test]
    fn a_do_all_with_lanes_packs_each_blocks_objects_onto_its_first_runs() {
        use crate::handle::RawHandle;
        use crate::heap::listed::for_each_listed;
        use crate::reduce::select_bit;
        for (blocks, seed) in [(30u64, 11u64), (700, 12)] {
            let mut heap = TestHeap::new(blocks);
            let mut rng = Rng::new(seed, 1);
            for i in 0..blocks {
                if rng.below(3) != 0 {
                    let full = rng.below(4) == 0;
                    heap.allocate((i % 2) as u8, i, if full { u64::MAX } else { rng.next_u64() | 1 }, 0);
                }
            }
            for class in [0u8, 1] {
                let n = CLASSES[class as usize];
                let parity = heap.parity[class as usize];
                let listed = heap.enumerate(class, Form::Flat, 2, 64);
                let h = heap.heap();
                let snapshot_of = |raw: RawHandle| {
                    listed.iter().find(|&&(i, _)| h.block_addr(i as u64) == raw.block_addr()).unwrap().1
                };
                for lanes in [2u32, 8, 32] {
                    // 3 thread blocks of N runs each: the grid strides over 3 listed blocks.
                    let (grid, threads) = (3u32, n * lanes);
                    let mut seen = Vec::new();
                    for block_idx in 0..grid {
                        for thread_idx in 0..threads {
                            let coords =
                                LaunchCoords { block_idx, thread_idx, block_dim: threads, grid_dim: grid };
                            let t = block_idx * threads + thread_idx;
                            with_launch_coords(coords, || {
                                for_each_listed(&h, class, n, parity, lanes, |raw| seen.push((t, raw)))
                            });
                        }
                    }
                    assert_eq!(h.state().errors.load(), 0);
                    for &(t, raw) in &seen {
                        let rank = (t / lanes) % n;
                        assert_eq!(
                            raw.slot(),
                            select_bit(snapshot_of(raw), rank),
                            "class {class}, {lanes} lanes, thread {t}"
                        );
                    }
                    let mut want: Vec<RawHandle> = listed
                        .iter()
                        .flat_map(|&(i, objects)| {
                            (0..64)
                                .filter(move |s| objects >> s & 1 == 1)
                                .map(move |s| RawHandle::new(h.block_addr(i as u64), s, n, class))
                        })
                        .flat_map(|raw| std::iter::repeat_n(raw, lanes as usize))
                        .collect();
                    let mut got: Vec<RawHandle> = seen.iter().map(|&(_, raw)| raw).collect();
                    want.sort_unstable_by_key(|r| r.0);
                    got.sort_unstable_by_key(|r| r.0);
                    assert_eq!(got, want, "{blocks} blocks, class {class}, {lanes} lanes");
                }
            }
        }
    }

    /// A walk told a shape the heap does not have (another allocator's objects per block or
    /// block size) raises `WRONG_HEAP` and visits nothing; the heap's own shape walks.
    #[test]
    fn a_walk_with_another_allocators_shape_visits_nothing() {
        use crate::block::ClassShape;
        use crate::heap::listed::for_each_allocated_in;
        let heap = TestHeap::new(300);
        for i in 0..300 {
            heap.allocate(0, i, u64::MAX, 0);
        }
        let h = heap.heap();
        let block_bytes = BLOCK_BYTES as u32;
        for (shape, visits) in [
            (ClassShape { objects: 64, block_bytes, ..ClassShape::UNKNOWN }, 300 * 64),
            (ClassShape { objects: 32, block_bytes, ..ClassShape::UNKNOWN }, 0),
            (ClassShape { objects: 64, block_bytes: 2 * block_bytes, ..ClassShape::UNKNOWN }, 0),
            (ClassShape { objects: 0, block_bytes: 512, ..ClassShape::UNKNOWN }, 0),
        ] {
            h.state().errors.store(0);
            let mut seen = 0u32;
            for_each_allocated_in(&h, 0, shape, 1, 0, |_| seen += 1);
            assert_eq!(seen, visits, "{shape:?}");
            let raised = h.state().errors.load() & crate::errors::WRONG_HEAP != 0;
            assert_eq!(raised, visits == 0, "{shape:?}");
        }
    }

    /// An enumeration of an unchanged class carries the previous one's count over in both
    /// forms, also when the forms alternate; a change is seen by the next one of either form.
    #[test]
    fn unchanged_classes_keep_their_listing_in_both_forms() {
        let mut heap = TestHeap::new(5000);
        for i in (0..5000).step_by(37) {
            heap.allocate(0, i, 0b101, 0);
        }
        let want = expected(&heap, 0);
        let forms =
            [Form::Hierarchical, Form::Hierarchical, Form::Flat, Form::Hierarchical, Form::Flat, Form::Flat];
        for form in forms {
            // No change since the last one: the list is reused (the flag of this parity is
            // clear after the first two), and it is still right.
            assert_eq!(heap.enumerate(0, form, 4, 64), want, "{form:?}");
        }
        let h = heap.heap();
        assert_eq!(h.enum_changed(0).load() & CHANGED_BOTH, 0, "both flags cleared");
        for form in forms {
            heap.allocate(0, heap.parity[0] as u64 * 2 + 1 + 5 * expected(&heap, 0).len() as u64, 1, 0);
            assert_eq!(heap.enumerate(0, form, 4, 64), expected(&heap, 0), "{form:?} after a change");
            assert_eq!(heap.enumerate(0, form, 4, 64), expected(&heap, 0), "{form:?} again");
        }
    }
}
