//! The do-all loops over the blocks the enumeration listed (paper Figure 7-8): how a thread of
//! a do-all or gather launch finds its share of a class's objects in the heap.
//!
//! `N_T` consecutive threads per block, so a warp reads consecutive slots of one block
//! (coalesced); a fixed grid strides over all of them. A thread visits a slot only if its bit
//! is set in the block's iteration bitmap (the snapshot of its allocation bitmap the
//! enumeration stored next to the block's index): objects created during the launch are not
//! visited.

use crate::arch;
use crate::block::{BLOCK_ALIGN, ClassShape, DATA_OFFSET, preset_mask};
use crate::errors;
use crate::handle::{ADDRESS_LIMIT, RawHandle};
use crate::heap::Heap;
use crate::launch::Prefetch;

/// The address of listed block `index`, with what the do-all loops know of it stated so that
/// building an object's handle and decoding it in the method fold away.
#[inline(always)]
fn block_address(blocks_at: u64, block_bytes: u32, index: u32) -> u64 {
    stated_block(blocks_at + index as u64 * block_bytes as u64)
}

/// `block`, an address [`block_address`] computed, with what is known of it stated to the
/// compiler.
#[inline(always)]
fn stated_block(block: u64) -> u64 {
    // SAFETY: blocks start at the heap's 256-byte aligned base (a CUDA or CPU-backend
    // allocation) plus multiples of `BLOCK_ALIGN`, below the handle limit (`HeapPlan` checks
    // the block size and the limit); callers pass only addresses `block_address` computed.
    unsafe { core::hint::assert_unchecked(block.is_multiple_of(BLOCK_ALIGN) && block < ADDRESS_LIMIT) };
    block
}

/// Visit the listed blocks of `class` (N objects per block) with a fixed grid: call `f` with
/// every object whose bit is set in its block's iteration bitmap.
///
/// The grid's thread count is a multiple of N (the launcher makes its blocks so, see
/// [`do_all_block_threads`](crate::parallel::do_all_block_threads)), so a thread keeps its slot for the whole loop and steps through
/// the list by a fixed number of blocks. A grid that is not raises [`errors::BAD_GRID`] and
/// visits nothing.
///
/// The loop is kept lean because do-all kernels wait on memory and run as many threads as
/// their registers allow, and the fewer instructions between a thread's loads, the sooner it
/// issues the next: its state is 32-bit (the host launches fewer than 2^31 threads and a heap
/// has fewer than 2^31 blocks, see `HeapPlan`), the heap's geometry is read once, not after
/// every method call (whose stores the compiler cannot tell from the heap header), and a thread
/// loads only the half of each snapshot that holds its bit. With the slot carried and wrapped
/// at every step, `x += 1.0` took 28 SASS instructions per object, and its kernel issued an
/// instruction every other cycle while it waited on memory; with the slot fixed, 18. On an
/// H200 that took traffic from 2.33 to 2.17 s (the field-access benchmark did not move).
///
/// With `lanes` > 1 (a method's `lanes`, a power of two up to a warp), each run of `lanes`
/// consecutive threads shares one object: the loop runs as if the grid had a thread per run,
/// and run `k` of a block visits the block's `k`-th object (in slot order) instead of slot `k`.
#[inline(always)]
pub(crate) fn for_each_listed(
    heap: &Heap<'_>,
    class: u8,
    objects: u32,
    parity: u32,
    lanes: u32,
    mut f: impl FnMut(RawHandle),
) {
    // The host always passes 1..=64. The bounds let the compiler fold the handle's encoding and
    // decoding of N, and the lower one keeps a division-by-zero panic path out of every kernel.
    let n = objects.clamp(1, 64);
    // A constant of each kernel (1 but for methods with lanes): the divisions fold to shifts.
    let lanes = lanes.clamp(1, crate::reduce::MAX_LANES);
    let first = arch::global_thread_id() as u32 / lanes;
    let threads = arch::global_thread_count() as u32;
    let stride = threads / lanes;
    let mut position = first / n;
    let (slot, step) = (first % n, stride / n);
    // With lanes, run `slot` of a block takes the block's object of rank `slot` (the one with
    // `slot` objects below it), if it has that many: a block's objects go to its first runs,
    // so the slots of dead objects leave whole warps idle instead of some runs in every warp,
    // whose live runs loop as long as a full warp's. (Collision's bodies die: after 1000 steps
    // 14k of them lie in the 40k slots they started in. On an H200, in one call, its default
    // run took 12.3-12.6 s on 8 lanes with this against 14.7 s with one thread per body, and
    // 13.4 s on 4 lanes without it: docs/results/2026-11-27-s4/packing-ab.txt.) Without
    // lanes a thread keeps its slot, and tests one bit of each 64-bit snapshot: it loads only
    // the (little-endian) half that holds it.
    let dense = lanes > 1;
    let (half, bit) = ((slot / 32) as usize, 1u32 << (slot % 32));
    // Everything the loop needs from the heap's header is loaded at once, before the count of
    // listed blocks, whose address depends on it: plain loads of values no kernel changes.
    let (blocks_at, block_bytes) = heap.block_geometry();
    let list = heap.enum_list(class);
    let snapshots = heap.enum_snapshots(class) as *const u64;
    // Room for an entry per block of the heap (below 2^31, see `HeapPlan`).
    let room = heap.config().num_blocks as u32;
    let counter = &heap.enum_counters(class)[(parity & 1) as usize];
    // Plain loads: the enumeration kernel wrote the list and the snapshots before this launch,
    // and nothing changes them during it. (Atomic loads would serialise each thread's
    // iterations behind compiler barriers.) An object whose snapshot bit is set existed at
    // launch and stays alive until its own thread has visited it, so its block is not reused
    // before.
    // An entry is the block's index and, with lanes, the slot of this run's object (64 if
    // none: found as the entry is loaded, so that the loop holds no more registers than
    // without lanes), else the half of the snapshot that holds this thread's slot.
    // SAFETY: called with `position < room`: entries the list and the snapshots have room for
    // (memory the host zeroed when it made the heap), which the loop uses only below the count
    // of listed blocks, where the enumeration wrote them.
    let entry = |position: u32| unsafe {
        let index = list.add(position as usize).read();
        let value = if dense {
            crate::reduce::select_bit(snapshots.add(position as usize).read(), slot)
        } else {
            (snapshots as *const u32).add(2 * position as usize + half).read()
        };
        (index, value)
    };
    // The thread's first entry is loaded together with the count, not after it (a launch over
    // few objects otherwise waits for the header, the count, the entry and the object's fields
    // in turn): where the thread has no object, an entry that goes unused.
    let mut current = entry(position.min(room.max(1) - 1));
    let blocks = counter.load();
    if position >= blocks {
        return;
    }
    if !stride.is_multiple_of(n) || !threads.is_multiple_of(lanes) {
        heap.raise(errors::BAD_GRID);
        return;
    }
    loop {
        let ahead = position + step;
        // The next list entry is loaded before this object is visited, so its latency overlaps
        // the method's instead of adding to it (the method's stores would keep the compiler
        // from hoisting the load itself). On the last round, a listed entry that goes unused:
        // no branch and no placeholder value.
        let next = entry(ahead.min(blocks - 1));
        let (index, value) = current;
        if dense {
            if value < 64 {
                f(RawHandle::new(block_address(blocks_at, block_bytes, index), value, n, class));
            }
        } else if value & bit != 0 {
            f(RawHandle::new(block_address(blocks_at, block_bytes, index), slot, n, class));
        }
        if ahead >= blocks {
            break;
        }
        (position, current) = (ahead, next);
    }
}

/// [`for_each_listed`] for short methods, the streaming loop: the same objects, in a grid of
/// whole warps whose thread count is a multiple of N (see
/// [`do_all_blocks`](crate::parallel::do_all_blocks)); another grid raises [`errors::BAD_GRID`] and visits nothing.
///
/// The lanes of a warp share their list entries: a warp covers `spread` consecutive positions
/// a round (1 when N is 32 or 64), so one load per lane fetches the entries of `32 / spread`
/// rounds (a chunk), and every round the lanes take theirs with a shuffle. Loaded a chunk
/// ahead, the entries are never waited for, and a lane knows its next object's block before it
/// visits the current one: it prefetches the field the method reads first
/// ([`Prefetch`]) so that one object's loads overlap the previous object's method. Measured on
/// an H100 with `x += 1.0` over 16M objects: 75 us with one entry load per round and no
/// prefetch (the plain loop), about the same with shared entries alone, 63 us with the
/// prefetch and N a constant of the kernel (the copy of the same bytes: 48 us). A prefetch
/// computed from entries loaded per round did not help (75 -> 74 us). The price is about 11
/// more registers per kernel, which long methods pay for: by default the host runs this loop
/// only for methods whose kernel still fills a multiprocessor, and otherwise where asked
/// (`DoAllLoop` in the host crate).
///
/// Where N is a multiple of the warp size, every warp covers one position a round, and the
/// warps of group `g` (the `g`-th run of N threads of the grid, `groups` of them) take the
/// consecutive positions `g * R .. (g + 1) * R` (R = `blocks / groups` rounded up) instead of
/// every `groups`-th one, the plain loop's order: a chunk's entries are then 32 consecutive
/// list entries, one coalesced load of each array where the strided order made a sector
/// request per lane (about a third of the kernel's L1 load sectors for `x += 1.0`). On an
/// H200, `x += 1.0` over 16M objects: 47.7-48.4 us a pass against 50.8-50.9 us in one call
/// (72-73% of a device copy's bandwidth instead of 68.5%; the plain array kernel 47.6-47.8 us),
/// docs/results/2026-11-29-s4/blk-field.txt. Other N keep the strided order: a warp whose
/// lanes straddle two positions serves both, and the groups' positions must be the same for
/// every warp of a block's slots.
///
/// The state is 32-bit where it can be (the host launches fewer than 2^31 threads and a heap
/// has fewer than 2^31 blocks, see `HeapPlan`), the heap's geometry is read once, not after
/// every method call (whose stores the compiler cannot tell from the heap header), and the
/// control flow around the shuffles is the same for every lane of a warp: the method alone
/// diverges.
#[inline(always)]
pub(crate) fn for_each_listed_streaming(
    heap: &Heap<'_>,
    class: u8,
    objects: u32,
    parity: u32,
    prefetch: Prefetch,
    mut f: impl FnMut(RawHandle),
) {
    let blocks = heap.enum_counters(class)[(parity & 1) as usize].load();
    // The host always passes 1..=64. The bounds let the compiler fold the handle's encoding and
    // decoding of N, and the lower one keeps a division-by-zero panic path out of every kernel.
    let n = objects.clamp(1, 64);
    let stride = arch::global_thread_count() as u32;
    if !stride.is_multiple_of(n) || !arch::block_dim().is_multiple_of(arch::WARP_SIZE) {
        heap.raise(errors::BAD_GRID);
        return;
    }
    let first = arch::global_thread_id() as u32;
    let (slot, step) = (first % n, stride / n);

    // The warp (whole: the block size is a multiple of the warp size): the first position it
    // covers (`lead`), how many it covers a round, and this lane's among them (`own`).
    let lanes = u32::MAX >> (32 - arch::WARP_SIZE);
    // Thread blocks are whole warps and start at multiples of the block size, so a warp's
    // lanes are the grid's threads `warp_first..warp_first + WARP_SIZE`.
    let lane = first & (arch::WARP_SIZE - 1);
    let warp_first = first - lane;
    let lead = warp_first / n;
    // A warp of a class with a multiple of 32 objects per block covers one position (stated
    // so that the geometry below folds when N is a constant of the kernel). At least 1 and at
    // most a warp's lanes; the bounds keep division-by-zero panic paths out.
    let spread = if n.is_multiple_of(arch::WARP_SIZE) {
        1
    } else {
        ((warp_first + arch::WARP_SIZE - 1) / n - lead + 1).clamp(1, arch::WARP_SIZE)
    };
    let own = if spread == 1 { 0 } else { first / n - lead };
    let rounds = arch::WARP_SIZE / spread;
    if lead >= blocks {
        return;
    }
    // The lanes of one position hold consecutive slots, fewer than 33 of them: bit `i` of the
    // 32 bits a loading lane passes on is slot `i` of that group's first slot.
    let first_slot = |group: u32| if group == 0 { warp_first % n } else { 0 };
    let bit = 1u32 << (slot - first_slot(own));
    // This lane loads, for every chunk, the entry of position `lead + serves` in round
    // `ahead` of the chunk, if `ahead < rounds`.
    let (serves, ahead) = if spread == 1 { (0, lane) } else { (lane % spread, lane / spread) };
    let serves_from = first_slot(serves);

    let (blocks_at, block_bytes) = heap.block_geometry();
    let list = heap.enum_list(class) as *const u32;
    let snapshots = heap.enum_snapshots(class) as *const u64;
    // Plain loads: the enumeration kernel wrote the list and the snapshots before this launch,
    // and nothing changes them during it. (Atomic loads would serialise each thread's
    // iterations behind compiler barriers.) An object whose snapshot bit is set existed at
    // launch and stays alive until its own thread has visited it, so its block is not reused
    // before.
    // Positions saturate at u32::MAX, past every list: the loop ends before they could wrap.
    // The positions of group `lead`: from `start`, every `pitch`-th, below `end` (see above;
    // with N a multiple of the warp size, the same for every warp of the group, and `spread`
    // is 1).
    let (start, pitch, end) = if n.is_multiple_of(arch::WARP_SIZE) {
        let each = blocks.div_ceil(step.max(1));
        let start = lead.saturating_mul(each);
        (start, 1, start.saturating_add(each).min(blocks))
    } else {
        (lead, step, blocks)
    };
    let chunk_step = rounds.saturating_mul(pitch);
    let mut loads_at =
        if ahead < rounds { ahead.saturating_mul(pitch).saturating_add(start + serves) } else { u32::MAX };
    let mut load_chunk = || {
        let position = loads_at;
        loads_at = loads_at.saturating_add(chunk_step);
        if position < end {
            // SAFETY: `position < end <= blocks`, an entry the enumeration wrote.
            unsafe {
                (
                    list.add(position as usize).read(),
                    (snapshots.add(position as usize).read() >> serves_from) as u32,
                )
            }
        } else {
            (0, 0)
        }
    };
    let block_at = |index: u32| block_address(blocks_at, block_bytes, index);
    let prefetch_at = DATA_OFFSET
        + n as u64 * prefetch.group as u64
        + slot as u64 * prefetch.stride as u64
        + prefetch.inner as u64;

    // `at` stays below `end <= blocks` (< 2^31) and `pitch` is at most `step` (< 2^31): `at +
    // pitch` cannot wrap.
    let mut at = start;
    let mut chunk = load_chunk();
    loop {
        let next = load_chunk();
        let mut k = 0;
        while k < rounds {
            if at >= end {
                return;
            }
            let src = own + k * spread;
            let index = arch::shfl_u32(lanes, chunk.0, src);
            let snapshot = arch::shfl_u32(lanes, chunk.1, src);
            if prefetch.is_some() {
                // The next round's object, in this chunk or the next. (Further ahead was slower:
                // field access 63.9 us two rounds ahead against 64.2-64.5 on an H100; on an H200
                // 53.1-53.6 us one round ahead, 58.6-59.8 two, 71.7-72.6 four, 98.3-101.1 eight.)
                let (from, src) = if k + 1 < rounds { (chunk.0, src + spread) } else { (next.0, own) };
                arch::prefetch_l2(block_at(arch::shfl_u32(lanes, from, src)) + prefetch_at);
            }
            if snapshot & bit != 0 {
                f(RawHandle::new(block_at(index), slot, n, class));
            }
            at += pitch;
            k += 1;
        }
        chunk = next;
    }
}

/// The do-all loop of the CPU backend, for both of the GPU's loops and methods without lanes:
/// the same objects, visited in another order. An emulated thread takes a contiguous share of
/// the listed blocks (thread `i` of `T`, the positions from `i * blocks / T` up to the next
/// thread's) and visits every object of each block in slot order, so that it walks the class's
/// fields as a plain loop walks an array. The GPU's order, one slot of every `T / N`-th block,
/// is what coalesces a warp's loads; on a CPU core, which runs the emulated threads one after
/// another, it put every object's fields a cache miss away. With this loop and a search seed
/// per worker (`allocator::warp_seed`), Wa-Tor and the Game of Life at 2048x2048 took 8.63 s and
/// 12.87 s on one core of a 16-core Xeon against 12.76 s and 15.69 s before, and 0.79 s and 0.87 s
/// against 1.00 s and 1.27 s on 16 (`docs/results/2026-11-26-s3/cpu-backend-ab.txt`). A grid whose thread
/// count is not a multiple of N raises [`errors::BAD_GRID`] and visits nothing, as on the GPU.
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
pub(crate) fn for_each_listed_on_host(
    heap: &Heap<'_>,
    class: u8,
    objects: u32,
    parity: u32,
    mut f: impl FnMut(RawHandle),
) {
    let blocks = heap.enum_counters(class)[(parity & 1) as usize].load() as u64;
    let n = objects.clamp(1, 64);
    let (id, threads) = (arch::global_thread_id() as u64, arch::global_thread_count() as u64);
    if !threads.is_multiple_of(n as u64) {
        heap.raise(errors::BAD_GRID);
        return;
    }
    let share = |thread: u64| (thread.min(threads) * blocks / threads) as usize;
    let (blocks_at, block_bytes) = heap.block_geometry();
    let list = heap.enum_list(class);
    let snapshots = heap.enum_snapshots(class) as *const u64;
    for position in share(id)..share(id + 1) {
        // SAFETY: `position < blocks`, an entry the enumeration wrote; plain loads, as in
        // `for_each_listed` (nothing changes the list during the launch).
        let (index, mut bits) = unsafe { (list.add(position).read(), snapshots.add(position).read()) };
        let addr = block_address(blocks_at, block_bytes, index);
        // Objects the methods create go next to this block if there is room (see
        // `allocator::warp_seed`).
        arch::set_place_hint(index as u64);
        // A snapshot holds the slots of objects only (below N, no slots reserved for runs).
        while bits != 0 {
            let slot = bits.trailing_zeros();
            bits &= bits - 1;
            f(RawHandle::new(addr, slot, n, class));
        }
    }
}

/// Call `f` on every allocated object of `class`, in this thread (`device_do`): every block
/// the class's allocated bitmap lists, every slot set in its allocation bitmap (slots reserved
/// for runs of blocks and not handed out are not objects).
#[inline(always)]
pub(crate) fn for_each_allocated(heap: &Heap<'_>, class: u8, shape: ClassShape, f: impl FnMut(RawHandle)) {
    for_each_allocated_in(heap, class, shape, 1, 0, f);
}

/// [`for_each_allocated`] restricted to part `part` of `parts` (a `device_reduce` lane's
/// part; `parts` a power of two up to 32, `part < parts`): the objects of rank `r` with
/// `r % parts == part`, where an object's rank is the number of the class's objects before it
/// in this walk's order (blocks by index, slots in a block); with `shape.dense` (a method that
/// declared its classes dense) the objects in slots `s % parts == part` instead. In full blocks
/// both are the same objects.
///
/// Where `shape.ranked` is a ranked list of the class (a launch of a method with lanes, see
/// `heap::ranked`) and the parts are by rank, the part is read from it: its objects only,
/// without a visit to every block. Else the class's blocks are walked.
///
/// The walk over the blocks is what a lane pays per block, for the few objects of its part
/// there (4 of 64 with 16 lanes), so it is kept short and holds few registers: the bitmaps are
/// read with SM-scoped loads ([`near_load`]), which L1 serves to the many threads of a
/// multiprocessor that walk the same blocks, and the heap's geometry is read once. (Loading
/// each block's bitmaps a block ahead held more registers: n-body's force kernel, capped at 48,
/// kept 136 instead of 112 bytes of stack for spills and ran 2.7% slower on an H200;
/// collision's `device_do`, 76 instead of 66 registers, ran as fast. Its 32-bit state with the
/// allocator's geometry as constants took n-body 4.21 -> 4.14 s, and each slot from a 32-bit
/// word instead of a 64-bit count of trailing zeros 4.13 -> 4.10 s and collision 16.67 ->
/// 16.26 s: docs/results/2026-11-27-s3/.) By rank, a full block is walked by its slots, one
/// with free slots by dropping the objects of other parts from its bitmap. A launch
/// that creates or frees no object of the class sees exactly its objects (what earlier
/// launches wrote is visible at the launch's start); in one that does, an object created or
/// freed meanwhile may or may not be seen, as `device_do` documents.
#[inline(always)]
pub(crate) fn for_each_allocated_in(
    heap: &Heap<'_>,
    class: u8,
    shape: ClassShape,
    parts: u32,
    part: u32,
    mut f: impl FnMut(RawHandle),
) {
    // Where the caller's allocator fixes them, the class's objects per block and the block
    // size are constants of the kernel (the fields' offsets and the blocks' addresses then
    // take no registers); else read from the heap. A heap planned for another allocator (a
    // kernel launched by hand on a heap it was not compiled for) would be walked at wrong
    // addresses: it raises `WRONG_HEAP` and visits nothing. Always 1..=64 in a valid heap:
    // the bounds let the handle's encoding and decoding of N fold, as in the do-all loops.
    let (blocks_at, heap_block_bytes) = heap.block_geometry();
    let heap_objects = heap.class_objects(class);
    if (shape.objects != 0 && shape.objects != heap_objects)
        || (shape.block_bytes != 0 && shape.block_bytes != heap_block_bytes)
    {
        heap.raise(errors::WRONG_HEAP);
        return;
    }
    let objects = if shape.objects != 0 { shape.objects } else { heap_objects }.clamp(1, 64);
    // A block's slots of the part, shifted down by `part` (bit `t` is slot `t + part`): the
    // mask is then a constant of the kernel where N is, and the part takes one 32-bit
    // register instead of a 64-bit mask.
    let parts = parts.clamp(1, crate::reduce::MAX_LANES);
    let part = part & (parts - 1);
    let (objects_mask, every) = (!preset_mask(objects), crate::reduce::part_mask(parts, 0));
    let block_bytes = if shape.block_bytes != 0 { shape.block_bytes } else { heap_block_bytes };
    // A method that declared its classes dense splits them by slot and walks their blocks (it
    // expects them full, where the walk is faster than a list; its kernel holds no code for
    // the list and none for ranks).
    let by_rank = parts > 1 && !shape.dense;
    if by_rank && let Some(ranked) = super::ranked::Ranked::of(shape, class) {
        let address = |index: u32| kept_whole(block_address(blocks_at, block_bytes, index));
        ranked.for_each_in_part(parts, part, address, objects, class, f);
        return;
    }
    let bitmap = heap.allocated(class);
    let geometry = bitmap.geometry();
    // The walk's state is 32-bit: a heap has fewer than 2^31 blocks (`HeapPlan`), so fewer
    // than 2^25 containers of level 0 and 2^19 of level 1.
    let uppers = if geometry.levels > 1 { geometry.len(1) as u32 } else { 1 };
    // The set bits of level 0, found through the containers of level 1 (Alg. 5 in one thread:
    // empty containers of level 0 are skipped; level 1 is walked in full). `container` is the
    // level-0 container last taken (or, after a step in level 1, the first one the new level-1
    // container covers): the level-1 container being walked is `container / 64`, so it needs
    // no state of its own, and the block of bit `b` of `bits` is `container * 64 + b`.
    let mut container = 0u32;
    let mut nonempty = if geometry.levels > 1 { near_load(bitmap.container(1, 0)) } else { 1 };
    let mut bits = 0u64;
    // By rank: the class's objects in the blocks walked so far, modulo `parts`.
    let mut seen = 0u32;
    loop {
        while bits != 0 {
            let index = container * 64 + bits.trailing_zeros();
            bits &= bits - 1;
            let addr = block_address(blocks_at, block_bytes, index);
            let header = crate::heap::block_at(addr);
            let all = near_load(&header.alloc) & near_load(&header.handed) & objects_mask;
            // The block's first object of the part: in its slot order, by rank `first`.
            let mut first = part;
            if by_rank {
                first = part.wrapping_sub(seen) & (parts - 1);
                seen = seen.wrapping_add(all.count_ones());
                if all != objects_mask {
                    // A block with free slots: its objects of ranks `first`, `first + parts`,
                    // ... in the block, found by clearing the lowest objects of `rest`.
                    let mut rest = arch::clear_lowest_set_bits(all, first);
                    while rest != 0 {
                        f(RawHandle::new(kept_whole(addr), rest.trailing_zeros(), objects, class));
                        rest = arch::clear_lowest_set_bits(rest, parts);
                    }
                    continue;
                }
            }
            // A full block by rank, or any block by slot: the part's objects are in its slots
            // `first`, `first + parts`, ...
            let slots = all >> first & every;
            // A method that declared the class's blocks dense (`#[parallel(lanes = L, dense)]`),
            // where a part of a block is at most 8 slots (64 objects on 8 lanes), their count a
            // constant of the kernel: one copy of the visit per position, each testing its
            // slot's bit, so no slot is found by a count of trailing zeros and the block's bits
            // are not gathered. Same objects, same order as the loop below (docs/performance-log.md,
            // "A lane's walk unrolled").
            if shape.dense && shape.objects != 0 && parts > 1 && objects <= UNROLLED_POSITIONS * parts {
                if slots == 0 {
                    continue;
                }
                let (at, here, positions) =
                    (kept_whole(addr), kept_below(part, parts), objects.div_ceil(parts));
                macro_rules! visit_positions {
                    ($($i:literal)*) => {$(
                        // `$i < positions`: the shift is below `objects`, at most 64.
                        if $i < positions && slots & (1u64 << ($i * parts)) != 0 {
                            f(RawHandle::new(at, here + $i * parts, objects, class));
                        }
                    )*};
                }
                visit_positions!(0 1 2 3 4 5 6 7);
                continue;
            }
            // The part's slots as 32-bit words (bit `i` of word `w` is slot `part + (32 * w +
            // i) * parts`): a whole block in two words, a lane's part (at most 32 slots)
            // gathered into one, so each object costs 32-bit operations only.
            let (mut word, mut rest) = if parts == 1 {
                (slots as u32, (slots >> 32) as u32)
            } else {
                (crate::reduce::gather_every(slots, parts), 0)
            };
            let mut base = first;
            loop {
                while word != 0 {
                    let slot = base + word.trailing_zeros() * parts;
                    word &= word - 1;
                    f(RawHandle::new(kept_whole(addr), slot, objects, class));
                }
                if rest == 0 {
                    break;
                }
                (word, rest, base) = (rest, 0, base + 32 * parts);
            }
        }
        while nonempty == 0 {
            let upper = container / 64 + 1;
            if upper >= uppers {
                return;
            }
            container = upper * 64;
            nonempty = near_load(bitmap.container(1, upper as u64));
        }
        container = container / 64 * 64 + nonempty.trailing_zeros();
        nonempty &= nonempty - 1;
        bits = near_load(bitmap.container(0, container as u64));
    }
}

/// The most positions of a part that a dense walk visits one copy each of (see
/// [`for_each_allocated_in`]).
const UNROLLED_POSITIONS: u32 = 8;

/// `addr` (a block's address), hidden from the compiler's hoisting: each object's field
/// addresses are then computed from the block's address in the loop, where the compiler would
/// otherwise keep one sum per field the method reads across it (a register pair each).
#[inline(always)]
fn kept_whole(addr: u64) -> u64 {
    #[cfg(target_arch = "nvptx64")]
    let addr = {
        let out: u64;
        // SAFETY: a register move.
        unsafe {
            core::arch::asm!("mov.b64 {o}, {i};", i = in(reg64) addr, o = out(reg64) out,
                options(nomem, nostack, preserves_flags));
        }
        out
    };
    stated_block(addr)
}

/// `part` (below `parts`), hidden from the compiler's hoisting as [`kept_whole`] hides a
/// block's address: the fields' addresses of the part's positions in a block are then one sum
/// per field and block plus constant offsets, where the compiler would otherwise keep one
/// sum per field and position across the whole walk.
#[inline(always)]
fn kept_below(part: u32, parts: u32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    let part = {
        let out: u32;
        // SAFETY: a register move.
        unsafe {
            core::arch::asm!("mov.b32 {o}, {i};", i = in(reg32) part, o = out(reg32) out,
                options(nomem, nostack, preserves_flags));
        }
        out
    };
    // SAFETY: the callers' part is below their part count.
    unsafe { core::hint::assert_unchecked(part < parts) };
    part
}

/// A relaxed load of an atomic word at SM scope (`ld.relaxed.cta`): the multiprocessor's L1
/// may serve it, where a GPU-scoped load goes to L2 every time. It sees what kernels before
/// this one wrote; writes of other multiprocessors during this kernel may show late.
#[inline(always)]
fn near_load(word: &crate::arch::atomic::Atomic64) -> u64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let value: u64;
        // SAFETY: `word` is a live, aligned u64 in global memory; an atomic (relaxed) load.
        unsafe {
            core::arch::asm!(
                "{{ .reg .b64 %g; cvta.to.global.u64 %g, {a}; ld.relaxed.cta.global.u64 {v}, [%g]; }}",
                a = in(reg64) word.as_ptr(),
                v = out(reg64) value,
                options(nostack, readonly, preserves_flags)
            );
        }
        value
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        word.load()
    }
}
