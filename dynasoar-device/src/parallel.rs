//! The kernels behind the host's `parallel_do`, `parallel_new` and `collect`: their typed
//! launch tokens and their bodies (generic; the macros instantiate them per method or class
//! under a PTX entry point), over the allocator's object store. Their parameters are
//! `launch`'s; how the heap's do-all loops find a thread's objects is `heap::listed`'s.

use core::marker::PhantomData;

use crate::Plain;
use crate::arch::{self, WarpGroup, atomic::Atomic32};
use crate::class::{ClassSpec, Concrete};
use crate::device::{Device, Effects};
use crate::kernel::Kernel;
use crate::launch::{DoAll, DoParams, GatherParams, NewParams, Prefetch, StorePtr};
use crate::object::Obj;
use crate::registry::{AllocatorSpec, Registered};
use crate::store::{Listing, ObjectStore};

// The macro names the split `parallel::Lanes`, next to the bodies that take it.
pub use crate::reduce::Lanes;

/// A `#[parallel]` method of class `T` taking an argument of type `Arg`: what the host passes
/// to `parallel_do` (`rt.parallel_do(Body::step)`).
pub struct ParallelMethod<T, Arg> {
    kernel: Kernel<DoParams<Arg>>,
    streaming: Option<Kernel<DoParams<Arg>>>,
    effects: Effects,
    lanes: u32,
    _class: PhantomData<fn() -> T>,
}

impl<T, Arg: Plain> ParallelMethod<T, Arg> {
    #[doc(hidden)]
    pub const fn new(kernel: Kernel<DoParams<Arg>>, effects: Effects) -> Self {
        ParallelMethod { kernel, streaming: None, effects, lanes: 1, _class: PhantomData }
    }

    /// The same method run on `lanes` threads per object on the GPU (`#[parallel(lanes = L)]`,
    /// see [`Device::device_reduce`](crate::Device::device_reduce)); such a method has no
    /// streaming kernel.
    #[doc(hidden)]
    pub const fn with_lanes(mut self, lanes: u32) -> Self {
        self.lanes = lanes;
        self.streaming = None;
        self
    }

    /// GPU threads per object of the method's do-all (1 unless it has `lanes`); the host's
    /// grid has a multiple of this times the class's objects per block.
    pub const fn lanes(&self) -> u32 {
        self.lanes
    }

    /// The same method with a streaming kernel too ([`DoAll::Streaming`]); `#[soa_methods]`
    /// adds it when it found a field to prefetch.
    #[doc(hidden)]
    pub const fn with_streaming(mut self, kernel: Kernel<DoParams<Arg>>, prefetch: Prefetch) -> Self {
        if prefetch.is_some() && self.lanes == 1 {
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

/// A `#[parallel]` method that takes no argument: what the host's `parallel_do` takes
/// (`parallel_do_with` takes the others). Its message tells a user who passed a method with an
/// argument to `parallel_do` what to call instead.
#[diagnostic::on_unimplemented(
    message = "`parallel_do` runs a #[parallel] method without an argument, and `{Self}` is not one",
    label = "a method that takes an argument, or no #[parallel] method",
    note = "launch a method that takes an argument with `rt.parallel_do_with(Class::method, arg)`"
)]
pub trait DoWithoutArgument: Copy {
    /// The method's class.
    type Class;
    /// The method, as one taking the argument `()`.
    fn method(self) -> ParallelMethod<Self::Class, ()>;
}

impl<T> DoWithoutArgument for ParallelMethod<T, ()> {
    type Class = T;
    fn method(self) -> Self {
        self
    }
}

/// A `#[parallel_new]` constructor that takes no argument: what the host's `parallel_new`
/// takes (`parallel_new_with` takes the others).
#[diagnostic::on_unimplemented(
    message = "`parallel_new` runs a #[parallel_new] constructor without an argument, and `{Self}` is not one",
    label = "a constructor that takes an argument, or no #[parallel_new] constructor",
    note = "launch a constructor that takes an argument with \
            `rt.parallel_new_with(Class::constructor, count, arg)`"
)]
pub trait NewWithoutArgument: Copy {
    /// The constructor's class.
    type Class;
    /// The constructor, as one taking the argument `()`.
    fn constructor(self) -> ParallelNew<Self::Class, ()>;
}

impl<T> NewWithoutArgument for ParallelNew<T, ()> {
    type Class = T;
    fn constructor(self) -> Self {
        self
    }
}

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
/// grid of such blocks strides over whole blocks of objects (see `for_each_listed` (`heap/listed.rs`)).
pub const fn do_all_block_threads(objects: u32, max_threads: u32) -> u32 {
    let n = if objects == 0 { 1 } else { objects };
    let fit = max_threads / n * n;
    if fit == 0 { n } else { fit }
}

/// Thread blocks of a streaming do-all launch of `threads` each (a multiple of the warp size)
/// for a class with `objects` per block: the most up to `most` (at least one's worth) that make
/// the grid's thread count a multiple of `objects`, so that each thread keeps one slot for the
/// whole loop (see `for_each_listed_streaming` (`heap/listed.rs`)). For 64 or any power of two, `most` itself;
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

/// The store of `T`'s allocator at `store`.
///
/// # Safety
/// `store` is the store the host launched the kernel on: an initialised store of `T`'s
/// allocator, on which it listed the launch's objects.
#[inline(always)]
unsafe fn store_of<T: Registered>(store: StorePtr) -> <T::Alloc as AllocatorSpec>::Store {
    // SAFETY: the caller's contract.
    unsafe { <T::Alloc as AllocatorSpec>::Store::at(store.addr()) }
}

/// Body of the do-all kernel of a method of class `T`: call `method` on every object of the
/// launched concrete class (which is-a `T`), with loop `lp` (a constant of each kernel). `tag`
/// is the kernel's [`kernel_tag`](crate::kernel_tag), a constant, as in the other bodies;
/// `split` the method's [`Lanes`], constants too.
#[inline(always)]
pub fn run_parallel_do<T, Arg>(
    p: DoParams<Arg>,
    tag: u32,
    effects: Effects,
    lp: DoAll,
    split: Lanes,
    method: impl Fn(Obj<T>, &Device<T::Alloc>, Arg),
) where
    T: Registered,
    Arg: Plain,
{
    let lanes = split.lanes;
    // SAFETY: the host launches do-all kernels on its store of `T::Alloc`, after listing
    // `p.class`, a concrete class in `T`'s subtree.
    let dev = unsafe { Device::<T::Alloc>::from_store(p.store) }
        .limited_to(effects)
        .with_split(split)
        .with_ranked(if lanes > 1 { p.ranked.addr() } else { 0 })
        .keeping(p.keep)
        .for_launch(tag);
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
    // The launch iterates `T`'s subtree (the host launches its concrete classes, one or several
    // a launch): a method may free only its own object of it (checked on the CPU backend, see
    // `Device::visiting`).
    let threads = crate::reduce::threads_per_object(lanes);
    let listing = Listing { class, objects, parity: p.parity, lp, lanes: threads };
    // The further classes of the launch (`DoParams::also`): a constant 0 in the kernels of
    // classes without subclasses, whose loop then runs once and folds away.
    let also = if T::SUBTREE.count_ones() > 1 { p.also & T::SUBTREE as u32 } else { 0 };
    #[cfg(target_arch = "nvptx64")]
    each_class(listing, also, p.also_parities, |listing| {
        dev.object_store().for_each_listed(listing, |raw| {
            // SAFETY: a live object of a class that is-a `T` (see above).
            method(unsafe { Obj::from_raw(raw) }, &dev.visiting(T::SUBTREE, raw), p.arg)
        })
    });
    // The CPU backend: one context for the whole loop, whose object it updates in place, and
    // the method inlined into the loop (with the macro's closure, `inline(always)` on the
    // host). Either alone left the instructions as they were; both took 31% off the Game of
    // Life's and 33% off Wa-Tor's per step (1024 x 1024, cachegrind).
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let store = *dev.object_store();
        let mut dev = dev.visiting(T::SUBTREE, crate::handle::RawHandle::NULL);
        each_class(listing, also, p.also_parities, |listing| {
            store.for_each_listed(
                listing,
                #[inline(always)]
                |raw| {
                    dev.now_visiting(raw);
                    // SAFETY: a live object of a class that is-a `T` (see above).
                    method(unsafe { Obj::from_raw(raw) }, &dev, p.arg)
                },
            )
        });
    }
}

/// Call `visit` with `first`, then with `first` for each class of `also` (bits by type id) in
/// turn, its parity taken from `parities`: the classes of one do-all launch
/// ([`DoParams::also`]). One loop around one inlined copy of the do-all loop and the method,
/// not a copy per class.
#[inline(always)]
fn each_class(first: Listing, also: u32, parities: u32, mut visit: impl FnMut(Listing)) {
    let (mut listing, mut more) = (first, also);
    loop {
        visit(listing);
        if more == 0 {
            break;
        }
        let class = more.trailing_zeros();
        more &= more - 1;
        listing.class = class as u8;
        listing.parity = parities >> class & 1;
    }
}

/// Objects of class `T` that a `parallel_new` kernel puts in one block (a *block-full*): the
/// host's count of a creation's blocks ([`NewParams::first_block`]) and the kernel's agree.
pub const fn block_full<T: ClassSpec>() -> u64 {
    let n = T::OBJECTS_PER_BLOCK;
    (if n < 1 {
        1
    } else if n > 64 {
        64
    } else {
        n
    }) as u64
}

/// Body of a `parallel_new` kernel: object `i` of `first..first + count` is `make(dev, i, arg)`.
#[inline(always)]
pub fn run_parallel_new<T, Arg>(p: NewParams<Arg>, tag: u32, make: impl Fn(&Device<T::Alloc>, u64, Arg) -> T)
where
    T: Concrete + Registered,
    Arg: Plain,
{
    // SAFETY: the host launches this on its store of `T::Alloc`.
    let dev = unsafe { Device::<T::Alloc>::from_store(p.store) }.for_launch(tag);
    let store = *dev.object_store();
    let n = block_full::<T>();
    // The objects are made a *block-full* at a time: block-full `b` (objects `b * n ..`, `n`
    // of them or the rest) goes to a block opened for it, in its lowest slots
    // (`ObjectStore::open_block`), so that the objects fill their blocks, and to block
    // `first_block + b` where that block is free (a fresh heap), so that they lie in the heap
    // in the order of their indices whichever thread makes them: a walk over them then visits
    // them in the same order in every run, on the GPU as on the CPU backend and as a plain
    // loop over arrays does, and sums over them come out the same bit for bit. (Each warp's
    // blocks came from a search seeded by the warp and the clock before, and n-body's sums
    // over all bodies changed from run to run on the GPU.) Objects whose block could not be
    // opened (none free, or a store without blocks) are made one by one, which reports
    // running out of memory.
    let open = |b: u64| {
        let here = (p.count - b * n).min(n);
        store.open_block::<T>(here as u32, p.first_block + b).unwrap_or(0)
    };
    // Object `k` of the creation, in block-full `k / n`'s block `block` (0: none opened).
    let put = |block: u64, k: u64| {
        let value = make(&dev, p.first + k, p.arg);
        if block == 0 {
            // An allocation failure is raised in the store and reported by the host.
            let _ = dev.make_new_registered(value);
            return;
        }
        let raw = crate::handle::RawHandle::new(block, (k % n) as u32, n as u32, T::TYPE_ID);
        // SAFETY: slot `k % n` of a block the store opened for block-full `k / n` (objects
        // `k - k % n ..`), a fresh object of `T` that only this thread writes.
        unsafe { T::store(raw, &value) };
    };
    // The CPU backend: each emulated thread makes a contiguous share of the block-fulls.
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let blocks = p.count.div_ceil(n);
        let (id, threads) = (arch::global_thread_id() as u128, arch::global_thread_count() as u128);
        let share = |thread: u128| (thread * blocks as u128 / threads) as u64;
        for b in share(id)..share(id + 1) {
            let block = open(b);
            for k in b * n..(b * n + n).min(p.count) {
                put(block, k);
            }
        }
    }
    // The GPU: each warp makes the objects of a *round* of whole block-fulls (at least a
    // warp's worth, at most 63 objects: each lane makes one or two), lane `b` opening
    // block-full `b` of the round. Each warp asking the allocator for a warp's worth instead,
    // all at once on an empty class, each got a fresh block: n-body's 20,000 bodies (64 per
    // block) took 625 blocks, which every walk over them visits (docs/results/2026-11-28-s4/).
    #[cfg(target_arch = "nvptx64")]
    {
        const LANES: u64 = arch::WARP_SIZE as u64;
        let per_round = LANES.div_ceil(n);
        let round = n * per_round;
        let lane = arch::lane_id() as u64;
        let (warp, warps) = (arch::global_warp_id() as u64, arch::global_thread_count() as u64 / LANES);
        let rounds = p.count.div_ceil(round);
        // Warp-uniform: the round depends on the warp only, and the grid is whole warps.
        let mut r = warp;
        while r < rounds {
            let first = r * round;
            let here = (p.count - first).min(round);
            let mut block = 0;
            if lane * n < here {
                block = open(r * per_round + lane);
            }
            // Every lane of the warp takes part in both shuffles (the round's lanes reconverge).
            let mine = [
                (lane, arch::shfl_u64(u32::MAX, block, (lane / n) as u32)),
                (lane + LANES, arch::shfl_u64(u32::MAX, block, ((lane + LANES) / n).min(LANES - 1) as u32)),
            ];
            for (k, block) in mine {
                if k < here {
                    put(block, first + k);
                }
            }
            r += warps.max(1);
        }
    }
}

/// Body of a gather kernel: copy every listed object of the launched concrete class (which
/// is-a `T`) into `out` as a `T` value, in no particular order.
#[inline(always)]
pub fn run_gather<T: Registered>(p: GatherParams, tag: u32) {
    // SAFETY: a counter updated atomically only.
    let written = unsafe { Atomic32::from_ptr(p.written.as_ptr()) };
    let out = p.out.cast::<T>();
    // SAFETY: the host launches gathers on its store of `T::Alloc`, after listing `p.class`.
    let store = unsafe { store_of::<T>(p.store) }.for_launch(tag);
    let listing = Listing {
        class: p.class as u8,
        objects: p.objects_per_block,
        parity: p.parity,
        lp: DoAll::Plain,
        lanes: 1,
    };
    store.for_each_listed(listing, |raw| {
        let at = WarpGroup::current().fetch_add_one_u32(written) as u64;
        if at < p.capacity {
            // SAFETY: `raw` is a live object that is-a `T`; `out` (and `handles`, if not null)
            // has room for `capacity` entries and `at` is this thread's own entry.
            unsafe {
                out.write(at as usize, T::load(raw));
                if !p.handles.is_null() {
                    p.handles.write(at as usize, raw.0);
                }
            }
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
        let a = Prefetch::field(8, 4, 0);
        assert_eq!(Prefetch::first(&[None, Some(a), Some(Prefetch::field(0, 8, 0))]), a);
        assert!(!Prefetch::first(&[None, None]).is_some());
        assert!(same_name("speed", "speed") && !same_name("speed", "spee") && !same_name("a", "b"));
    }
}
