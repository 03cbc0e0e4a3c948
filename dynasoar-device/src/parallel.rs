//! The kernels behind the host's `parallel_do`, `parallel_new` and `collect`: their parameters,
//! their typed launch tokens, and their bodies (generic; the macros instantiate them per method
//! or class under a PTX entry point).
//!
//! A do-all kernel runs over the blocks the enumeration kernel listed for one concrete class
//! (paper Figure 7-8): `N_T` consecutive threads per block, so a warp reads consecutive slots of
//! one block (coalesced); a fixed grid strides over all of them. A thread visits a slot only if
//! its bit is set in the block's iteration bitmap (the snapshot of its allocation bitmap the
//! enumeration stored next to the block's index): objects created during the launch are not
//! visited.

use core::marker::PhantomData;

use crate::Plain;
use crate::arch::{self, WarpGroup, atomic::Atomic32};
use crate::block::{BLOCK_ALIGN, DATA_OFFSET};
use crate::class::{Class, Concrete, Registered};
use crate::device::{Device, Effects};
use crate::errors;
use crate::handle::{ADDRESS_LIMIT, RawHandle};
use crate::heap::{Heap, HeapHeader};
use crate::kernel::{DevPtr, Kernel};
use crate::object::Obj;

/// Parameters of a do-all kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DoParams<Arg> {
    pub heap: DevPtr<HeapHeader>,
    /// The concrete class whose objects this launch visits.
    pub class: u32,
    pub objects_per_block: u32,
    /// Which enumeration counter holds the number of listed blocks.
    pub parity: u32,
    pub _reserved: u32,
    /// The method's argument.
    pub arg: Arg,
}
// SAFETY: `repr(C)` plain data when `Arg` is.
unsafe impl<Arg: Plain> Plain for DoParams<Arg> {}

/// Parameters of a `parallel_new` kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct NewParams<Arg> {
    pub heap: DevPtr<HeapHeader>,
    /// Objects to create: indices `first..first + count`.
    pub first: u64,
    pub count: u64,
    pub arg: Arg,
}
// SAFETY: `repr(C)` plain data when `Arg` is.
unsafe impl<Arg: Plain> Plain for NewParams<Arg> {}

/// Parameters of a gather kernel (`collect`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct GatherParams {
    pub heap: DevPtr<HeapHeader>,
    pub class: u32,
    pub objects_per_block: u32,
    pub parity: u32,
    pub _reserved: u32,
    /// Room for `capacity` values.
    pub out: DevPtr<u8>,
    pub capacity: u64,
    /// Values written so far (also past `capacity`: then the host retries with more room).
    pub written: DevPtr<u32>,
}
// SAFETY: `repr(C)` plain data.
unsafe impl Plain for GatherParams {}

/// A `#[parallel]` method of class `T` taking an argument of type `Arg`: what the host passes
/// to `parallel_do` (`rt.parallel_do(Body::step)`).
pub struct ParallelMethod<T, Arg> {
    kernel: Kernel<DoParams<Arg>>,
    streaming: Option<Kernel<DoParams<Arg>>>,
    effects: Effects,
    _class: PhantomData<fn() -> T>,
}

impl<T, Arg: Plain> ParallelMethod<T, Arg> {
    #[doc(hidden)]
    pub const fn new(kernel: Kernel<DoParams<Arg>>, effects: Effects) -> Self {
        ParallelMethod { kernel, streaming: None, effects, _class: PhantomData }
    }

    /// The same method with a streaming kernel too ([`DoAll::Streaming`]); `#[soa_methods]`
    /// adds it when it found a field to prefetch.
    #[doc(hidden)]
    pub const fn with_streaming(mut self, kernel: Kernel<DoParams<Arg>>, prefetch: Prefetch) -> Self {
        if prefetch.is_some() {
            self.streaming = Some(kernel);
        }
        self
    }

    /// The kernel with the plain loop.
    pub const fn kernel(&self) -> &Kernel<DoParams<Arg>> {
        &self.kernel
    }

    /// The kernel with the streaming loop, if the method has one.
    pub const fn streaming_kernel(&self) -> Option<&Kernel<DoParams<Arg>>> {
        self.streaming.as_ref()
    }

    /// The classes whose objects the method may create or free.
    pub const fn effects(&self) -> Effects {
        self.effects
    }
}

impl<T, Arg> Clone for ParallelMethod<T, Arg> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, Arg> Copy for ParallelMethod<T, Arg> {}

/// A `#[parallel_new]` constructor of class `T`: what the host passes to `parallel_new`.
pub struct ParallelNew<T, Arg> {
    kernel: Kernel<NewParams<Arg>>,
    _class: PhantomData<fn() -> T>,
}

impl<T, Arg: Plain> ParallelNew<T, Arg> {
    #[doc(hidden)]
    pub const fn new(kernel: Kernel<NewParams<Arg>>) -> Self {
        ParallelNew { kernel, _class: PhantomData }
    }

    pub const fn kernel(&self) -> &Kernel<NewParams<Arg>> {
        &self.kernel
    }
}

impl<T, Arg> Clone for ParallelNew<T, Arg> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, Arg> Copy for ParallelNew<T, Arg> {}

/// Threads per block of a do-all or gather launch for a class with `objects` per block: the
/// most that fit `max_threads` and are a multiple of `objects` (at least `objects`), so that a
/// grid of such blocks strides over whole blocks of objects (see [`for_each_listed`]).
pub const fn do_all_block_threads(objects: u32, max_threads: u32) -> u32 {
    let n = if objects == 0 { 1 } else { objects };
    let fit = max_threads / n * n;
    if fit == 0 { n } else { fit }
}

/// Thread blocks of a streaming do-all launch of `threads` each (a multiple of the warp size)
/// for a class with `objects` per block: the most up to `most` (at least one's worth) that make
/// the grid's thread count a multiple of `objects`, so that each thread keeps one slot for the
/// whole loop (see [`for_each_listed_streaming`]). For 64 or any power of two, `most` itself;
/// at worst (odd counts) a multiple of `objects` blocks, fewer than 63 short of `most`.
pub const fn do_all_blocks(objects: u32, threads: u32, most: u32) -> u32 {
    let n = if objects == 0 { 1 } else { objects };
    let (mut a, mut b) = (n, if threads == 0 { 1 } else { threads });
    while b != 0 {
        (a, b) = (b, a % b);
    }
    let unit = n / a;
    let blocks = most / unit * unit;
    if blocks == 0 { unit } else { blocks }
}

/// The field of `this` that a do-all method reads first: the streaming loop prefetches it for
/// the thread's next object, so that the method's first load finds it in L2. `#[soa_methods]`
/// finds it in the method's body (the first `this.field()` call); gathers prefetch nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefetch {
    /// The field's offset in the class's `repr(C)` value (its SOA array starts `N` times that
    /// into the data segment) and its size; size 0 for no prefetch.
    offset: u32,
    size: u32,
}

impl Prefetch {
    pub const NONE: Prefetch = Prefetch { offset: 0, size: 0 };

    /// The field of `offset` and `size` bytes.
    pub const fn field(offset: usize, size: usize) -> Prefetch {
        Prefetch { offset: offset as u32, size: size as u32 }
    }

    /// The first of `fields` that is one (the spans `#[soa_class]` reports for the names a
    /// method calls on `this`, `None` for a name that is not a field).
    pub const fn first(fields: &[Option<Prefetch>]) -> Prefetch {
        let mut i = 0;
        while i < fields.len() {
            if let Some(p) = fields[i] {
                return p;
            }
            i += 1;
        }
        Prefetch::NONE
    }

    pub const fn is_some(self) -> bool {
        self.size != 0
    }
}

/// Whether two strings are equal, in a `const` context (`#[soa_class]`'s field lookup).
pub const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The address of listed block `index`, with what the do-all loops know of it stated so that
/// building an object's handle and decoding it in the method fold away.
#[inline(always)]
fn block_address(blocks_at: u64, block_bytes: u32, index: u32) -> u64 {
    let block = blocks_at + index as u64 * block_bytes as u64;
    // SAFETY: blocks start at the heap's 256-byte aligned base (a CUDA or CPU-backend
    // allocation) plus multiples of `BLOCK_ALIGN`, below the handle limit (`HeapPlan` checks
    // the block size and the limit).
    unsafe { core::hint::assert_unchecked(block.is_multiple_of(BLOCK_ALIGN) && block < ADDRESS_LIMIT) };
    block
}

/// Visit the listed blocks of `class` (N objects per block) with a fixed grid: call `f` with
/// every object whose bit is set in its block's iteration bitmap.
///
/// The grid's thread count is a multiple of N (the launcher makes its blocks so, see
/// [`do_all_block_threads`]), so a thread keeps its slot for the whole loop and steps through
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
#[inline(always)]
fn for_each_listed(heap: &Heap<'_>, class: u8, objects: u32, parity: u32, mut f: impl FnMut(RawHandle)) {
    let blocks = heap.enum_counters(class)[(parity & 1) as usize].load();
    // The host always passes 1..=64. The bounds let the compiler fold the handle's encoding and
    // decoding of N, and the lower one keeps a division-by-zero panic path out of every kernel.
    let n = objects.clamp(1, 64);
    let first = arch::global_thread_id() as u32;
    let stride = arch::global_thread_count() as u32;
    let mut position = first / n;
    if position >= blocks {
        return;
    }
    if !stride.is_multiple_of(n) {
        heap.raise(errors::BAD_GRID);
        return;
    }
    let (slot, step) = (first % n, stride / n);
    // A thread tests one bit of each 64-bit snapshot: it loads only the (little-endian) half
    // that holds it.
    let (half, bit) = ((slot / 32) as usize, 1u32 << (slot % 32));
    let (blocks_at, block_bytes) = heap.block_geometry();
    let list = heap.enum_list(class);
    let snapshots = heap.enum_snapshots(class) as *const u32;
    // Plain loads: the enumeration kernel wrote the list and the snapshots before this launch,
    // and nothing changes them during it. (Atomic loads would serialise each thread's
    // iterations behind compiler barriers.) An object whose snapshot bit is set existed at
    // launch and stays alive until its own thread has visited it, so its block is not reused
    // before.
    // SAFETY: called with `position < blocks`, entries the enumeration wrote.
    let entry = |position: u32| unsafe {
        (list.add(position as usize).read(), snapshots.add(2 * position as usize + half).read())
    };
    let mut current = entry(position);
    loop {
        let ahead = position + step;
        // The next list entry is loaded before this object is visited, so its latency overlaps
        // the method's instead of adding to it (the method's stores would keep the compiler
        // from hoisting the load itself). On the last round, a listed entry that goes unused:
        // no branch and no placeholder value.
        let next = entry(ahead.min(blocks - 1));
        let (index, snapshot) = current;
        if snapshot & bit != 0 {
            f(RawHandle::new(block_address(blocks_at, block_bytes, index), slot, n, class));
        }
        if ahead >= blocks {
            break;
        }
        (position, current) = (ahead, next);
    }
}

/// [`for_each_listed`] for short methods, the streaming loop: the same objects, visited in the
/// same rounds, in a grid of whole warps whose thread count is a multiple of N (see
/// [`do_all_blocks`]); another grid raises [`errors::BAD_GRID`] and visits nothing.
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
/// The state is 32-bit where it can be (the host launches fewer than 2^31 threads and a heap
/// has fewer than 2^31 blocks, see `HeapPlan`), the heap's geometry is read once, not after
/// every method call (whose stores the compiler cannot tell from the heap header), and the
/// control flow around the shuffles is the same for every lane of a warp: the method alone
/// diverges.
#[inline(always)]
fn for_each_listed_streaming(
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
    let chunk_step = rounds.saturating_mul(step);
    let mut loads_at =
        if ahead < rounds { ahead.saturating_mul(step).saturating_add(lead + serves) } else { u32::MAX };
    let mut load_chunk = || {
        let position = loads_at;
        loads_at = loads_at.saturating_add(chunk_step);
        if position < blocks {
            // SAFETY: `position < blocks`, an entry the enumeration wrote.
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
    let prefetch_at = DATA_OFFSET + n as u64 * prefetch.offset as u64 + slot as u64 * prefetch.size as u64;

    // `lead` is below `blocks` (< 2^31) and so is `step`: `at + step` cannot wrap.
    let mut at = lead;
    let mut chunk = load_chunk();
    loop {
        let next = load_chunk();
        let mut k = 0;
        while k < rounds {
            if at >= blocks {
                return;
            }
            let src = own + k * spread;
            let index = arch::shfl_u32(lanes, chunk.0, src);
            let snapshot = arch::shfl_u32(lanes, chunk.1, src);
            if prefetch.is_some() {
                // The next round's object, in this chunk or the next. (Two rounds ahead made no
                // difference: field access 63.9 us against 64.2-64.5 on an H100, one call.)
                let (from, src) = if k + 1 < rounds { (chunk.0, src + spread) } else { (next.0, own) };
                arch::prefetch_l2(block_at(arch::shfl_u32(lanes, from, src)) + prefetch_at);
            }
            if snapshot & bit != 0 {
                f(RawHandle::new(block_at(index), slot, n, class));
            }
            at += step;
            k += 1;
        }
        chunk = next;
    }
}

/// Which loop a do-all kernel runs over the listed blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DoAll {
    /// [`for_each_listed`]: few registers, for any method.
    Plain,
    /// [`for_each_listed_streaming`]: shared list entries and a prefetch of this field, for
    /// short methods over many objects.
    Streaming(Prefetch),
}

/// This thread's share of the objects of `class` listed before this launch, in the SOA heap
/// (blocks listed by the enumeration) or in an AOS store (the compacted pointer list).
#[inline(always)]
fn for_each_object(
    heap: DevPtr<HeapHeader>,
    class: u8,
    objects: u32,
    parity: u32,
    lp: DoAll,
    f: impl FnMut(RawHandle),
) {
    if crate::aos::is_store(heap.addr()) {
        // SAFETY: the host launches do-alls on the store it created, after compacting it.
        let store =
            unsafe { crate::aos::AosStore::from_ptr(heap.addr() as usize as *mut crate::aos::AosHeader) };
        store.for_each_listed(class, f);
    } else {
        // SAFETY: the host launches do-alls on an initialised heap, after enumerating `class`.
        let heap = unsafe { Heap::from_ptr(heap.as_ptr()) };
        match lp {
            DoAll::Plain => for_each_listed(&heap, class, objects, parity, f),
            DoAll::Streaming(prefetch) => {
                for_each_listed_streaming(&heap, class, objects, parity, prefetch, f)
            }
        }
    }
}

/// Body of the do-all kernel of a method of class `T`: call `method` on every object of the
/// launched concrete class (which is-a `T`), with loop `lp` (a constant of each kernel).
#[inline(always)]
pub fn run_parallel_do<T, Arg>(
    p: DoParams<Arg>,
    effects: Effects,
    lp: DoAll,
    method: impl Fn(Obj<T>, &Device<T::Alloc>, Arg),
) where
    T: Registered,
    Arg: Plain,
{
    // SAFETY: the host launches do-all kernels on its heap of `T::Alloc`, after enumerating
    // `p.class`, a concrete class in `T`'s subtree.
    let dev = unsafe { Device::<T::Alloc>::from_heap(p.heap) }.limited_to(effects);
    // A class without subclasses is the launched class: its objects per block are a constant
    // of the kernel, and the streaming loop's divisions and warp geometry fold away (the bump
    // of the field-access benchmark: 39 -> 32 registers). The plain loop keeps the launch's
    // count: the same constant in it moved register allocation in large kernels both ways
    // (Generation's `Alive::update` 124 -> 142 registers, half the threads per SM, +14%).
    let (class, objects) = if matches!(lp, DoAll::Streaming(_)) && T::SUBTREE == 1u64 << T::TYPE_ID {
        (T::TYPE_ID, T::OBJECTS_PER_BLOCK)
    } else {
        (p.class as u8, p.objects_per_block)
    };
    for_each_object(p.heap, class, objects, p.parity, lp, |raw| {
        // SAFETY: a live object of a class that is-a `T` (see above).
        method(unsafe { Obj::from_raw(raw) }, &dev, p.arg)
    });
}

/// Body of a `parallel_new` kernel: object `i` of `first..first + count` is `make(dev, i, arg)`.
#[inline(always)]
pub fn run_parallel_new<T, Arg>(p: NewParams<Arg>, make: impl Fn(&Device<T::Alloc>, u64, Arg) -> T)
where
    T: Concrete + Registered,
    Arg: Plain,
{
    // SAFETY: the host launches this on its heap of `T::Alloc`.
    let dev = unsafe { Device::<T::Alloc>::from_heap(p.heap) };
    let stride = arch::global_thread_count() as u64;
    let mut i = arch::global_thread_id() as u64;
    while i < p.count {
        let value = make(&dev, p.first + i, p.arg);
        // An allocation failure is raised in the heap and reported by the host.
        let _ = dev.make_new_registered(value);
        i += stride;
    }
}

/// Body of a gather kernel: copy every listed object of the launched concrete class (which
/// is-a `T`) into `out` as a `T` value, in no particular order.
#[inline(always)]
pub fn run_gather<T: Class>(p: GatherParams) {
    // SAFETY: a counter updated atomically only.
    let written = unsafe { Atomic32::from_ptr(p.written.as_ptr()) };
    let out = p.out.cast::<T>();
    for_each_object(p.heap, p.class as u8, p.objects_per_block, p.parity, DoAll::Plain, |raw| {
        let at = WarpGroup::current().fetch_add_one_u32(written) as u64;
        if at < p.capacity {
            // SAFETY: `raw` is a live object that is-a `T`; `out` has room for `capacity`
            // values and `at` is this thread's own entry.
            unsafe { out.write(at as usize, T::load(raw)) };
        }
    });
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn streaming_grids_keep_every_slot_fixed() {
        for objects in 1..=64u32 {
            for most in [1u32, 7, 132, 1056, 4224] {
                let blocks = do_all_blocks(objects, 256, most);
                assert!((256 * blocks).is_multiple_of(objects), "N = {objects}, {blocks} blocks");
                assert!(blocks <= most.max(objects), "N = {objects}: {blocks} blocks for at most {most}");
                assert!(blocks + 64 > most || blocks >= most, "N = {objects}: {blocks} of {most}");
            }
        }
        assert_eq!(do_all_blocks(64, 256, 1056), 1056);
        assert_eq!(do_all_blocks(48, 256, 1056), 1056);
        assert_eq!(do_all_blocks(63, 256, 1056), 1008);
        assert_eq!(do_all_blocks(63, 256, 10), 63);
    }

    #[test]
    fn prefetch_takes_the_first_field_found() {
        let a = Prefetch::field(8, 4);
        assert_eq!(Prefetch::first(&[None, Some(a), Some(Prefetch::field(0, 8))]), a);
        assert!(!Prefetch::first(&[None, None]).is_some());
        assert!(same_name("speed", "speed") && !same_name("speed", "spee") && !same_name("a", "b"));
    }
}
