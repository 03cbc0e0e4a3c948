//! The object store seam: what [`Device`](crate::Device), the do-all kernels and the host's
//! launches need of the place a model's objects live.
//!
//! DynaSOAr's heap ([`Heap`]) implements [`ObjectStore`] here, in the core; the comparison
//! suite (`dynasoar-baselines`) implements it for its AOS object store. Which store a model's
//! device code is compiled against is its allocator's [`AllocatorSpec::Store`]
//! (`crate::AllocatorSpec`), which `allocator!` takes from the facade's selection per build:
//! on the GPU one store per PTX (the heap, or the AOS store in the AOS build), so the GPU pays
//! nothing for the other; on the host, where one build serves every store, [`Either`], which
//! tells them apart by the header's first word.

use crate::block::ClassShape;
use crate::class::{ClassSpec, Concrete};
use crate::handle::RawHandle;
use crate::heap::{HEAP_MAGIC, Heap, HeapConfig, HeapHeader, listed};
use crate::launch::DoAll;

/// What the host said of the objects a do-all or gather launch visits.
#[derive(Clone, Copy, Debug)]
pub struct Listing {
    /// The concrete class whose objects this launch visits.
    pub class: u8,
    /// Its objects per block (a constant of the kernel where the class has no subclass).
    pub objects: u32,
    /// Which enumeration counter holds the number of listed blocks (the SOA heap's).
    pub parity: u32,
    /// Which loop the kernel runs (the SOA heap's; other stores have one).
    pub lp: DoAll,
    /// Consecutive threads that share each object (a method's `lanes` on the GPU, see
    /// [`Device::device_reduce`](crate::Device::device_reduce)): 1, or a power of two up to a
    /// warp. They get the same objects.
    pub lanes: u32,
}

/// The blocks of a store that keeps its objects in blocks ([`ObjectStore::blocks`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockSpan {
    /// Address of block 0.
    pub first: u64,
    /// Number of blocks.
    pub count: u64,
    /// Bytes from one block to the next.
    pub bytes: u64,
}

impl BlockSpan {
    /// The blocks of DynaSOAr's heap of configuration `c`.
    #[inline(always)]
    pub const fn of_heap(c: &HeapConfig) -> Self {
        BlockSpan { first: c.blocks, count: c.num_blocks, bytes: c.block_bytes }
    }
}

/// A store of objects, as device code sees it.
///
/// # Safety
/// `make_new` and `make_new_each` return handles of fresh objects of `T`, not handed out
/// before and not freed meanwhile (and `open_block` the address of a block whose slots
/// `0..wanted` are such objects, of `T`'s objects per block), and the `for_each_*` methods call
/// `f` only with live objects of `class`: the object API turns these handles into typed objects
/// without further checks.
pub unsafe trait ObjectStore: Copy + 'static {
    /// The store whose header is at `header`.
    ///
    /// # Safety
    /// `header` must be an initialised store of this type, alive while the value is used, whose
    /// shared state is accessed only atomically while kernels run.
    unsafe fn at(header: u64) -> Self;

    /// Whether the header at `header` is one of this store's (its first word). Used on the
    /// host only, where one build serves every store ([`Either`]).
    ///
    /// # Safety
    /// `header` must point to a readable store header of some kind.
    unsafe fn recognizes(header: u64) -> bool;

    /// Raise `error` (bits of [`errors`](crate::errors)) for the host to report after the launch.
    fn raise(&self, error: u32);

    /// This view, recording `launch` (the host's nonzero tag of this launch) with the first
    /// error raised through it, where the store can: the host then names the kernel that
    /// raised it. Stores that cannot keep the tag ignore it.
    #[inline(always)]
    fn for_launch(self, _launch: u32) -> Self {
        self
    }

    /// A new object of class `T` holding `value`; `None` when the store is out of room (then
    /// raised for the host to report).
    fn make_new<T: Concrete + ClassSpec>(&self, value: &T) -> Option<RawHandle>;

    /// `count` new objects of class `T`, the `k`-th holding `value(k)`: `made(k, handle)` for
    /// each, `k` ascending, with `None` for those the store had no room for (raised for the
    /// host to report). Returns how many got none. By default one [`make_new`] after the
    /// other; DynaSOAr's heap serves the objects of all lanes of a warp that call this together
    /// in one round of its allocator.
    ///
    /// [`make_new`]: Self::make_new
    #[inline(always)]
    fn make_new_each<T: Concrete + ClassSpec>(
        &self,
        count: u32,
        mut value: impl FnMut(u32) -> T,
        mut made: impl FnMut(u32, Option<RawHandle>),
    ) -> u32 {
        let mut missed = 0;
        for k in 0..count {
            let raw = self.make_new(&value(k));
            missed += raw.is_none() as u32;
            made(k, raw);
        }
        missed
    }

    /// [`make_new`](Self::make_new) in a launch that creates objects of class `T` only and
    /// frees none of them (its method declared `#[parallel(creates(T), ..)]` without `T` among
    /// what it frees). No block of `T` can then change class, and no slot of `T` be reused,
    /// before the launch has ended, so a store may leave out the checks and ordering an
    /// allocation needs against those (DynaSOAr's heap: see [`Heap::allocate_sole`]). The
    /// caller must know that the launch is such a launch, and free in it only through
    /// [`free_in_sole_launch`](Self::free_in_sole_launch).
    #[inline(always)]
    fn make_new_sole<T: Concrete + ClassSpec>(&self, value: &T) -> Option<RawHandle> {
        self.make_new(value)
    }

    /// [`make_new_each`](Self::make_new_each) in a launch such as
    /// [`make_new_sole`](Self::make_new_sole)'s.
    #[inline(always)]
    fn make_new_each_sole<T: Concrete + ClassSpec>(
        &self,
        count: u32,
        value: impl FnMut(u32) -> T,
        made: impl FnMut(u32, Option<RawHandle>),
    ) -> u32 {
        self.make_new_each(count, value, made)
    }

    /// Room for `wanted` new objects of class `T` (1 up to `T`'s objects per block) in one
    /// block of their own: the address of a block of `T` whose slots `0..wanted` are fresh
    /// objects for the caller, which must store one in each (`RawHandle::new(address, k, ..)`
    /// is slot `k`'s). `None` where the store keeps no such blocks (the default) or has none
    /// free; nothing is raised then, and the caller makes its objects one by one
    /// ([`make_new`](Self::make_new)). The `parallel_new` kernel creates objects this way, a
    /// block at a time, so that they fill their blocks. The store takes block `near` (modulo
    /// its blocks) if it is free, else the next free one it finds after it.
    #[inline(always)]
    fn open_block<T: Concrete + ClassSpec>(&self, _wanted: u32, _near: u64) -> Option<u64> {
        None
    }

    /// Free the object `raw`, of class `T` or one of its subclasses.
    fn free<T: ClassSpec>(&self, raw: RawHandle);

    /// [`free`](Self::free) in a launch that creates no object. No allocation can then take
    /// the slot or its block before the launch has ended, and the launch's end orders all its
    /// threads' accesses before the next launch's, so a store may leave out the ordering a
    /// free needs against a reuse in the same launch (DynaSOAr's heap: the fence before the
    /// bitmap's write). The caller must know that nothing in the launch allocates.
    #[inline(always)]
    fn free_in_launch_creating_nothing<T: ClassSpec>(&self, raw: RawHandle) {
        self.free::<T>(raw);
    }

    /// [`free`](Self::free) in a launch that creates objects, but none of `raw`'s class. A
    /// store may then leave out the ordering against a reuse in the same launch if it also
    /// keeps every block that such frees empty from other classes until the launch ends
    /// (DynaSOAr's heap: [`Heap::free_in_launch_not_creating_its_class`]). The caller must
    /// know that nothing in the launch allocates an object of `raw`'s class.
    #[inline(always)]
    fn free_in_launch_not_creating_its_class<T: ClassSpec>(&self, raw: RawHandle) {
        self.free::<T>(raw);
    }

    /// [`free_in_launch_not_creating_its_class`](Self::free_in_launch_not_creating_its_class)
    /// in a launch whose allocations take [`make_new_sole`](Self::make_new_sole) (it creates
    /// objects of one other class only, and frees none of that class). A store may then leave
    /// out what needs the free's old state of the block, if it restores it before anything
    /// needs it (DynaSOAr's heap: [`Heap::free_in_sole_launch`], which waits for no round
    /// trip). The caller must know that the launch is such a launch.
    #[inline(always)]
    fn free_in_sole_launch<T: ClassSpec>(&self, raw: RawHandle) {
        self.free_in_launch_not_creating_its_class::<T>(raw);
    }

    /// Before `raw` is freed: keep its class's current enumeration list right without it (see
    /// [`Heap::unlist`]). Only for classes whose list the host keeps through frees
    /// ([`DoParams::keep`](crate::launch::DoParams)); a store that lists no classes does nothing.
    #[inline(always)]
    fn unlist(&self, _raw: RawHandle) {}

    /// Call `f` on every object of concrete class `class`, in this thread (`device_do`).
    /// `shape` is what the caller's allocator fixes of the class's blocks (see [`ClassShape`];
    /// [`ClassShape::UNKNOWN`] where nothing is), which a store may use in place of reading it.
    fn for_each_object(&self, class: u8, shape: ClassShape, f: impl FnMut(RawHandle));

    /// Call `f` on this thread's share of the objects of `listing.class` listed before this
    /// launch (do-all and gather kernels): objects created during the launch are not visited.
    fn for_each_listed(&self, listing: Listing, f: impl FnMut(RawHandle));

    /// Call `f` on the objects of concrete class `class` in part `part` of `parts` (a power of
    /// two up to 32), in the order [`for_each_object`](Self::for_each_object) visits them: one
    /// lane's share of a `device_reduce`. The parts split the objects, each object in one part,
    /// and [`for_each_object_parted`](Self::for_each_object_parted) must agree. By default the
    /// `i`-th object visited is in part `i % parts`. `shape` as for `for_each_object`.
    #[inline(always)]
    fn for_each_object_part(
        &self,
        class: u8,
        shape: ClassShape,
        parts: u32,
        part: u32,
        mut f: impl FnMut(RawHandle),
    ) {
        let mut i = 0u32;
        self.for_each_object(class, shape, |raw| {
            if i & (parts - 1) == part {
                f(raw);
            }
            i = i.wrapping_add(1);
        });
    }

    /// Where the store's blocks lie, if it keeps its objects in blocks of a handle's slots (the
    /// heap): what [`Packer`](crate::Packer) needs to pack handles into 32 bits. `None` (the
    /// default) for a store that keeps each object at an address of its own.
    #[inline(always)]
    fn blocks(&self) -> Option<BlockSpan> {
        None
    }

    /// Call `f(part, object)` on every object of concrete class `class`, in the order of
    /// [`for_each_object`](Self::for_each_object), with its part of `parts` as
    /// [`for_each_object_part`](Self::for_each_object_part) assigns it with `shape` (the CPU
    /// backend's `device_reduce`, which folds every part in one thread).
    #[inline(always)]
    fn for_each_object_parted(
        &self,
        class: u8,
        shape: ClassShape,
        parts: u32,
        mut f: impl FnMut(u32, RawHandle),
    ) {
        let mut i = 0u32;
        self.for_each_object(class, shape, |raw| {
            f(i & (parts - 1), raw);
            i = i.wrapping_add(1);
        });
    }
}

// SAFETY: the allocator hands out each slot once until it is freed; the loops visit allocated
// slots of blocks of `class` only.
unsafe impl ObjectStore for Heap<'static> {
    #[inline(always)]
    unsafe fn at(header: u64) -> Self {
        // SAFETY: the caller's contract.
        unsafe { Heap::from_ptr(header as usize as *const HeapHeader) }
    }

    #[inline(always)]
    unsafe fn recognizes(header: u64) -> bool {
        // SAFETY: the caller's contract; the magic is written before any kernel and never changes.
        unsafe { (header as usize as *const u64).read() == HEAP_MAGIC }
    }

    #[inline(always)]
    fn raise(&self, error: u32) {
        Heap::raise(self, error);
    }

    #[inline(always)]
    fn for_launch(self, launch: u32) -> Self {
        Heap::for_launch(self, launch)
    }

    #[inline(always)]
    fn blocks(&self) -> Option<BlockSpan> {
        Some(BlockSpan::of_heap(self.config()))
    }

    #[inline(always)]
    fn make_new<T: Concrete + ClassSpec>(&self, value: &T) -> Option<RawHandle> {
        self.make_with::<T, false>(value)
    }

    #[inline(always)]
    fn make_new_each<T: Concrete + ClassSpec>(
        &self,
        count: u32,
        value: impl FnMut(u32) -> T,
        made: impl FnMut(u32, Option<RawHandle>),
    ) -> u32 {
        self.make_each_with::<T, false>(count, value, made)
    }

    #[inline(always)]
    fn make_new_sole<T: Concrete + ClassSpec>(&self, value: &T) -> Option<RawHandle> {
        self.make_with::<T, true>(value)
    }

    #[inline(always)]
    fn make_new_each_sole<T: Concrete + ClassSpec>(
        &self,
        count: u32,
        value: impl FnMut(u32) -> T,
        made: impl FnMut(u32, Option<RawHandle>),
    ) -> u32 {
        self.make_each_with::<T, true>(count, value, made)
    }

    /// Only in a heap without the paper's variants (NoCoal, NoShift, no last-block notes),
    /// which measure the allocator as the paper describes it, one object at a time.
    #[inline(always)]
    fn open_block<T: Concrete + ClassSpec>(&self, wanted: u32, near: u64) -> Option<u64> {
        if self.config().variants != 0 {
            return None;
        }
        Heap::open_block::<T>(self, wanted, near)
    }

    #[inline(always)]
    fn free<T: ClassSpec>(&self, raw: RawHandle) {
        Heap::free::<T>(self, raw);
    }

    #[inline(always)]
    fn free_in_launch_creating_nothing<T: ClassSpec>(&self, raw: RawHandle) {
        Heap::free_in_launch_creating_nothing::<T>(self, raw);
    }

    #[inline(always)]
    fn free_in_launch_not_creating_its_class<T: ClassSpec>(&self, raw: RawHandle) {
        Heap::free_in_launch_not_creating_its_class::<T>(self, raw);
    }

    #[inline(always)]
    fn free_in_sole_launch<T: ClassSpec>(&self, raw: RawHandle) {
        Heap::free_in_sole_launch::<T>(self, raw);
    }

    #[inline(always)]
    fn unlist(&self, raw: RawHandle) {
        Heap::unlist(self, raw);
    }

    #[inline(always)]
    fn for_each_object(&self, class: u8, shape: ClassShape, f: impl FnMut(RawHandle)) {
        listed::for_each_allocated(self, class, shape, f);
    }

    #[inline(always)]
    fn for_each_object_part(
        &self,
        class: u8,
        shape: ClassShape,
        parts: u32,
        part: u32,
        f: impl FnMut(RawHandle),
    ) {
        listed::for_each_allocated_in(self, class, shape, parts, part, f);
    }

    /// The heap's parts are ranks, the `i`-th object in part `i % parts`, or with
    /// `shape.dense` slots, slot `s` in part `s % parts`, as the GPU's walks split them
    /// (`listed::for_each_allocated_in`).
    #[inline(always)]
    fn for_each_object_parted(
        &self,
        class: u8,
        shape: ClassShape,
        parts: u32,
        mut f: impl FnMut(u32, RawHandle),
    ) {
        let mut rank = 0u32;
        listed::for_each_allocated(self, class, shape, |raw| {
            f(if shape.dense { raw.slot() } else { rank } & (parts - 1), raw);
            rank = rank.wrapping_add(1);
        });
    }

    #[inline(always)]
    fn for_each_listed(&self, l: Listing, f: impl FnMut(RawHandle)) {
        #[cfg(not(target_arch = "nvptx64"))]
        if l.lanes <= 1 {
            return listed::for_each_listed_on_host(self, l.class, l.objects, l.parity, f);
        }
        match l.lp {
            DoAll::Plain => listed::for_each_listed(self, l.class, l.objects, l.parity, l.lanes, f),
            DoAll::Streaming(prefetch) => {
                listed::for_each_listed_streaming(self, l.class, l.objects, l.parity, prefetch, f)
            }
        }
    }
}

impl Heap<'static> {
    /// A new object of class `T` holding `value` (see [`ObjectStore::make_new`]); `SOLE`: as
    /// [`ObjectStore::make_new_sole`].
    #[inline(always)]
    fn make_with<T: Concrete + ClassSpec, const SOLE: bool>(&self, value: &T) -> Option<RawHandle> {
        let raw = if SOLE { self.allocate_sole::<T>() } else { self.allocate::<T>() }?;
        // SAFETY: a fresh object of class `T`, owned by this thread.
        unsafe { T::store(raw, value) };
        Some(raw)
    }

    /// `count` new objects of class `T` (see [`ObjectStore::make_new_each`]); `SOLE`: as
    /// [`ObjectStore::make_new_each_sole`].
    #[inline(always)]
    fn make_each_with<T: Concrete + ClassSpec, const SOLE: bool>(
        &self,
        count: u32,
        mut value: impl FnMut(u32) -> T,
        mut made: impl FnMut(u32, Option<RawHandle>),
    ) -> u32 {
        let store = |k: u32, raw: Option<RawHandle>| {
            if let Some(raw) = raw {
                // SAFETY: a fresh object of class `T`, owned by this thread.
                unsafe { T::store(raw, &value(k)) };
            }
            made(k, raw);
        };
        if SOLE { self.allocate_each_sole::<T>(count, store) } else { self.allocate_each::<T>(count, store) }
    }
}

/// One of two stores, told apart at run time by the header ([`ObjectStore::recognizes`]): the
/// host's store, where one build of a model serves DynaSOAr's heap and the comparison suite's.
#[derive(Clone, Copy)]
pub enum Either<A, B> {
    First(A),
    Second(B),
}

macro_rules! either {
    ($self:expr, $s:ident => $e:expr) => {
        match $self {
            Either::First($s) => $e,
            Either::Second($s) => $e,
        }
    };
}

// SAFETY: each call goes to the one store the header belongs to.
unsafe impl<A: ObjectStore, B: ObjectStore> ObjectStore for Either<A, B> {
    #[inline(always)]
    unsafe fn at(header: u64) -> Self {
        // SAFETY: the caller's contract, for whichever store the header is.
        unsafe {
            if A::recognizes(header) { Either::First(A::at(header)) } else { Either::Second(B::at(header)) }
        }
    }

    #[inline(always)]
    unsafe fn recognizes(header: u64) -> bool {
        // SAFETY: the caller's contract.
        unsafe { A::recognizes(header) || B::recognizes(header) }
    }

    #[inline(always)]
    fn raise(&self, error: u32) {
        either!(self, s => s.raise(error))
    }

    #[inline(always)]
    fn for_launch(self, launch: u32) -> Self {
        match self {
            Either::First(s) => Either::First(s.for_launch(launch)),
            Either::Second(s) => Either::Second(s.for_launch(launch)),
        }
    }

    #[inline(always)]
    fn blocks(&self) -> Option<BlockSpan> {
        either!(self, s => s.blocks())
    }

    #[inline(always)]
    fn make_new<T: Concrete + ClassSpec>(&self, value: &T) -> Option<RawHandle> {
        either!(self, s => s.make_new(value))
    }

    #[inline(always)]
    fn make_new_each<T: Concrete + ClassSpec>(
        &self,
        count: u32,
        value: impl FnMut(u32) -> T,
        made: impl FnMut(u32, Option<RawHandle>),
    ) -> u32 {
        either!(self, s => s.make_new_each(count, value, made))
    }

    #[inline(always)]
    fn make_new_sole<T: Concrete + ClassSpec>(&self, value: &T) -> Option<RawHandle> {
        either!(self, s => s.make_new_sole(value))
    }

    #[inline(always)]
    fn make_new_each_sole<T: Concrete + ClassSpec>(
        &self,
        count: u32,
        value: impl FnMut(u32) -> T,
        made: impl FnMut(u32, Option<RawHandle>),
    ) -> u32 {
        either!(self, s => s.make_new_each_sole(count, value, made))
    }

    #[inline(always)]
    fn open_block<T: Concrete + ClassSpec>(&self, wanted: u32, near: u64) -> Option<u64> {
        either!(self, s => s.open_block::<T>(wanted, near))
    }

    #[inline(always)]
    fn free<T: ClassSpec>(&self, raw: RawHandle) {
        either!(self, s => s.free::<T>(raw))
    }

    #[inline(always)]
    fn free_in_launch_creating_nothing<T: ClassSpec>(&self, raw: RawHandle) {
        either!(self, s => s.free_in_launch_creating_nothing::<T>(raw))
    }

    #[inline(always)]
    fn free_in_launch_not_creating_its_class<T: ClassSpec>(&self, raw: RawHandle) {
        either!(self, s => s.free_in_launch_not_creating_its_class::<T>(raw))
    }

    #[inline(always)]
    fn free_in_sole_launch<T: ClassSpec>(&self, raw: RawHandle) {
        either!(self, s => s.free_in_sole_launch::<T>(raw))
    }

    #[inline(always)]
    fn unlist(&self, raw: RawHandle) {
        either!(self, s => s.unlist(raw))
    }

    #[inline(always)]
    fn for_each_object(&self, class: u8, shape: ClassShape, f: impl FnMut(RawHandle)) {
        either!(self, s => s.for_each_object(class, shape, f))
    }

    #[inline(always)]
    fn for_each_listed(&self, listing: Listing, f: impl FnMut(RawHandle)) {
        either!(self, s => s.for_each_listed(listing, f))
    }

    #[inline(always)]
    fn for_each_object_part(
        &self,
        class: u8,
        shape: ClassShape,
        parts: u32,
        part: u32,
        f: impl FnMut(RawHandle),
    ) {
        either!(self, s => s.for_each_object_part(class, shape, parts, part, f))
    }

    #[inline(always)]
    fn for_each_object_parted(
        &self,
        class: u8,
        shape: ClassShape,
        parts: u32,
        f: impl FnMut(u32, RawHandle),
    ) {
        either!(self, s => s.for_each_object_parted(class, shape, parts, f))
    }
}
