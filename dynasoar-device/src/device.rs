//! The device-side context: what methods receive as `dev` to create, free and iterate objects.

use core::marker::PhantomData;

use crate::class::{Class, Concrete};
use crate::launch::StorePtr;
use crate::object::{Obj, View};
use crate::packed::Packer;
use crate::reduce::Lanes;
use crate::registry::{AllocatorSpec, MemberOf, Registered};
use crate::store::ObjectStore;

/// The classes whose objects a `#[parallel]` method may create and free, as bit masks over
/// type ids (a class's bit and its subclasses').
///
/// The host skips re-listing a class before a `parallel_do` when no launch since its last
/// listing could have created or freed its objects; these masks say which launches could. A
/// method that never names its `dev` parameter changes nothing ([`Effects::NONE`]); one that
/// does changes every class ([`Effects::ANY`]) unless it declares
/// `#[parallel(creates(A, ..), frees(B, ..))]`, which the [`Device`] it receives enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effects {
    pub creates: u64,
    pub frees: u64,
}

impl Effects {
    /// Creates and frees nothing.
    pub const NONE: Effects = Effects { creates: 0, frees: 0 };
    /// May create and free objects of every class.
    pub const ANY: Effects = Effects { creates: u64::MAX, frees: u64::MAX };

    /// Type ids of the classes whose set of objects may change.
    pub const fn changed(self) -> u64 {
        self.creates | self.frees
    }

    /// Whether a launch with these effects creates objects of one class only (one type id)
    /// and frees none of them. Its allocations and frees then take shortcuts (in an allocator
    /// whose classes take no runs of blocks, see [`Device::make_new`] and [`Device::free`]):
    /// its frees leave the freed classes' active bitmaps to be made exact again
    /// (`ObjectStore::free_in_sole_launch`), which the host does before a launch without
    /// these effects needs them.
    pub const fn creates_one_class_only(self) -> bool {
        self.creates.is_power_of_two() && self.frees & self.creates == 0
    }
}

/// The bit mask of class `T` and its subclasses, for [`Effects`]; `T` must be a class of
/// allocator `A` (the macro's check of `creates(..)`/`frees(..)` lists).
#[doc(hidden)]
pub const fn class_mask<T: MemberOf<A>, A>() -> u64 {
    T::SUBTREE
}

/// A heap of allocator `A`, as device code uses it (passed to every `#[parallel]` method).
///
/// It reaches the objects through the allocator's store ([`AllocatorSpec::Store`]): DynaSOAr's
/// heap, or in the comparison suite's build, the AOS object store.
pub struct Device<A: AllocatorSpec> {
    store: A::Store,
    /// What this context may create and free (see [`Effects`]); a launch of a method that
    /// declared its effects gets a context limited to them.
    effects: Effects,
    /// In a `parallel_do`'s method: the classes iterated and `this` (see [`FreeRule`]).
    rule: FreeRule,
    /// How a `device_reduce` splits and walks a class: the method's `#[parallel(lanes = L,
    /// dense, pairs)]` (L parts, 1 but in a method with lanes; `dense` and `pairs` as
    /// [`ClassShape::dense`](crate::block::ClassShape) and `pairs` say).
    split: Lanes,
    /// In a launch of a method with lanes: the address of the heap's ranked list, or 0 (see
    /// [`ClassShape::ranked`](crate::block::ClassShape)).
    ranked: u64,
    /// Classes (bits by type id) whose current enumeration lists this launch's frees keep
    /// right ([`ObjectStore::unlist`](crate::store::ObjectStore)); 0 outside do-alls.
    keep: u32,
    _alloc: PhantomData<fn() -> A>,
}

/// What a thread of a `parallel_do` over a class may free of that class: its own `this`
/// only (paper section 2.1). Checked on the CPU backend; on the GPU it
/// is empty and the check folds away, so that no kernel that frees pays registers for it: a
/// model's tests on the CPU backend find the mistake.
#[derive(Clone, Copy)]
struct FreeRule {
    /// Type ids (bits) of the classes the launch iterates; 0 outside a `parallel_do`.
    #[cfg(not(target_arch = "nvptx64"))]
    iterated: u64,
    /// The handle of the object the method runs on.
    #[cfg(not(target_arch = "nvptx64"))]
    this: u64,
}

impl FreeRule {
    const NONE: FreeRule = FreeRule {
        #[cfg(not(target_arch = "nvptx64"))]
        iterated: 0,
        #[cfg(not(target_arch = "nvptx64"))]
        this: 0,
    };

    /// Whether freeing the object with handle `raw` (not null) breaks the rule.
    #[inline(always)]
    fn forbids(self, _raw: u64, _type_id: u8) -> bool {
        #[cfg(not(target_arch = "nvptx64"))]
        {
            self.iterated & (1 << (_type_id & 63)) != 0 && _raw != self.this
        }
        #[cfg(target_arch = "nvptx64")]
        {
            false
        }
    }
}

impl<A: AllocatorSpec> Clone for Device<A> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A: AllocatorSpec> Copy for Device<A> {}

impl<A: AllocatorSpec> Device<A> {
    /// The context for the store at `store`.
    ///
    /// # Safety
    /// `store` must be an initialised store of allocator `A`'s kind, alive while the context
    /// is used.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_store(store: StorePtr) -> Self {
        // SAFETY: the caller's contract.
        Device {
            store: unsafe { A::Store::at(store.addr()) },
            effects: Effects::ANY,
            rule: FreeRule::NONE,
            split: Lanes::ONE,
            ranked: 0,
            keep: 0,
            _alloc: PhantomData,
        }
    }

    /// The store the objects live in (what the do-all kernels visit).
    #[inline(always)]
    pub(crate) fn object_store(&self) -> &A::Store {
        &self.store
    }

    /// This context, allowed to create and free only what `effects` says: anything else
    /// raises [`errors::UNDECLARED_CHANGE`](crate::errors::UNDECLARED_CHANGE) and does
    /// nothing. (With the masks known at compile time, as in every do-all kernel, the checks
    /// of `make_new` fold away.)
    #[doc(hidden)]
    #[inline(always)]
    pub fn limited_to(self, effects: Effects) -> Self {
        Device { effects, ..self }
    }

    /// This context, for a method with `#[parallel(lanes = L, dense, pairs)]` (`split`, constants
    /// of its kernel): its [`device_reduce`](Self::device_reduce) splits classes into L parts
    /// and walks them as `dense` and `pairs` say (see [`ClassShape`](crate::block::ClassShape)),
    /// and with L > 1 it may create and free nothing (each object runs on L GPU threads, which
    /// would each do it: [`errors::UNDECLARED_CHANGE`](crate::errors::UNDECLARED_CHANGE)
    /// instead). A lane count that is not a power of two up to a warp counts as 1.
    #[doc(hidden)]
    #[inline(always)]
    pub fn with_split(self, split: Lanes) -> Self {
        let lanes = if crate::reduce::valid_lanes(split.lanes) { split.lanes } else { 1 };
        let effects = if lanes > 1 { Effects::NONE } else { self.effects };
        Device { split: Lanes { lanes, ..split }, effects, ..self }
    }

    /// This context, in a launch of a method with lanes, with the heap's ranked list at
    /// `ranked` (0 for none; see [`ClassShape::ranked`](crate::block::ClassShape)).
    #[doc(hidden)]
    #[inline(always)]
    pub fn with_ranked(self, ranked: u64) -> Self {
        Device { ranked, ..self }
    }

    /// This context, in a do-all launch whose frees keep the current enumeration lists of the
    /// classes `keep` right (bits by type id, from [`DoParams::keep`](crate::launch::DoParams)).
    #[doc(hidden)]
    #[inline(always)]
    pub fn keeping(self, keep: u32) -> Self {
        Device { keep, ..self }
    }

    /// This context, for a `parallel_do` method over the classes `iterated` running on the
    /// object `this`: freeing another object of those classes raises
    /// [`errors::FREED_ITERATED`](crate::errors::FREED_ITERATED) where the rule is checked
    /// (the CPU backend; on the GPU this is the context unchanged).
    #[doc(hidden)]
    #[inline(always)]
    pub fn visiting(self, _iterated: u64, _this: crate::handle::RawHandle) -> Self {
        #[cfg(not(target_arch = "nvptx64"))]
        return Device { rule: FreeRule { iterated: _iterated, this: _this.0 }, ..self };
        #[cfg(target_arch = "nvptx64")]
        self
    }

    /// On the CPU backend, where the rule is checked: this context, set by [`visiting`]
    /// (Self::visiting), now runs on the object `this` (the do-all loop updates one context in
    /// place rather than making one per object).
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    pub(crate) fn now_visiting(&mut self, this: crate::handle::RawHandle) {
        self.rule.this = this.0;
    }

    /// This context, recording the host's tag of this launch with the first error raised
    /// through it (see [`ObjectStore::for_launch`]).
    #[doc(hidden)]
    #[inline(always)]
    pub fn for_launch(self, launch: u32) -> Self {
        Device { store: self.store.for_launch(launch), ..self }
    }

    /// Create an object of class `T` holding `value`. `None` if the heap is out of memory (the
    /// host then reports an out-of-memory error after the launch).
    ///
    /// Threads of a warp creating objects of the same class together share one allocation.
    #[inline]
    pub fn make_new<T>(&self, value: T) -> Option<Obj<T>>
    where
        T: Concrete + MemberOf<A>,
    {
        self.make_new_registered(value)
    }

    /// Create `count` objects of class `T`, the `k`-th holding `value(k)`, and pass each to
    /// `made(k, object)` (`k` ascending; `None` where the heap is out of memory, which the host
    /// then reports). Returns how many objects could not be made.
    ///
    /// The same objects as a loop of [`make_new`](Self::make_new), in one allocation: the
    /// threads of a warp calling this together are served at once, however many objects each
    /// asks for, where a loop makes the warp wait for one allocation after the other up to the
    /// largest count among its threads. For a thread that makes a few objects of one class at
    /// once (a new cell filling its empty neighbour cells).
    ///
    /// The Game of Life's `Alive::update` (in the example models) is one: a new cell claims its
    /// empty neighbour cells, then makes a candidate for each, the `k`-th in its `k`-th claimed
    /// cell, and stores each candidate's handle there in `made`.
    #[inline(always)]
    pub fn make_new_each<T>(
        &self,
        count: u32,
        value: impl FnMut(u32) -> T,
        mut made: impl FnMut(u32, Option<Obj<T>>),
    ) -> u32
    where
        T: Concrete + MemberOf<A>,
    {
        if self.effects.creates & (1 << T::TYPE_ID) == 0 {
            self.store.raise(crate::errors::UNDECLARED_CHANGE);
            for k in 0..count {
                made(k, None);
            }
            return count;
        }
        // SAFETY: a fresh object of class `T` (the store's contract).
        let made =
            |k, raw: Option<crate::handle::RawHandle>| made(k, raw.map(|raw| unsafe { Obj::from_raw(raw) }));
        if self.creates_only(T::TYPE_ID) {
            self.store.make_new_each_sole::<T>(count, value, made)
        } else {
            self.store.make_new_each::<T>(count, value, made)
        }
    }

    /// Whether this launch creates objects of class `type_id` only and frees none of them (its
    /// method declared so; a constant of the kernel): then its allocations need not guard
    /// against a block of the class changing class, or a slot being reused, before the launch
    /// ends ([`ObjectStore::make_new_sole`]).
    ///
    /// Its frees then take [`ObjectStore::free_in_sole_launch`] (see [`free`](Self::free)),
    /// which the allocations' own shortcuts count on; an allocator with classes that take runs
    /// of blocks keeps the general forms.
    #[inline(always)]
    fn creates_only(&self, type_id: u8) -> bool {
        self.effects.creates == 1 << type_id && self.sole_launch()
    }

    /// Whether this launch creates objects of one class only and frees none of them
    /// ([`Effects::creates_one_class_only`]), in an allocator whose classes take no runs.
    #[inline(always)]
    fn sole_launch(&self) -> bool {
        self.effects.creates_one_class_only() && !A::ANY_OWNS_BLOCKS
    }

    /// [`make_new`](Self::make_new) for generic code that knows `T: Registered<Alloc = A>`.
    #[inline(always)]
    pub(crate) fn make_new_registered<T: Concrete + Registered>(&self, value: T) -> Option<Obj<T>> {
        if self.effects.creates & (1 << T::TYPE_ID) == 0 {
            self.store.raise(crate::errors::UNDECLARED_CHANGE);
            return None;
        }
        let raw = if self.creates_only(T::TYPE_ID) {
            self.store.make_new_sole::<T>(&value)
        } else {
            self.store.make_new::<T>(&value)
        }?;
        // SAFETY: a fresh object of class `T` (the store's contract).
        Some(unsafe { Obj::from_raw(raw) })
    }

    /// Free `obj`. Inside a `parallel_do` over a class, the only object of that class a thread
    /// may free is its own `this` (paper section 2.1); objects of other classes may be freed.
    ///
    /// Always inlined: the launch's declared effects (constants of its kernel) choose the
    /// free's form, and out of line one function served every kernel with its effects read
    /// at run time (and all forms compiled into it).
    #[inline(always)]
    pub fn free<T>(&self, obj: Obj<T>)
    where
        T: MemberOf<A>,
    {
        let raw = obj.raw();
        if !raw.is_null() && self.effects.frees & (1 << (raw.type_id() & 63)) == 0 {
            self.store.raise(crate::errors::UNDECLARED_CHANGE);
            return;
        }
        if !raw.is_null() && self.rule.forbids(raw.0, raw.type_id()) {
            self.store.raise(crate::errors::FREED_ITERATED);
            return;
        }
        // Lists of classes the launch frees and creates none of (constants of a do-all kernel,
        // so that kernels whose methods create what they free carry no code for it).
        let keep = self.keep & (self.effects.frees & !self.effects.creates) as u32;
        if !raw.is_null() && raw.type_id() < 32 && keep >> raw.type_id() & 1 != 0 {
            self.store.unlist(raw);
        }
        // A launch whose method declares that it creates nothing (`#[parallel(frees(..))]`; a
        // constant of its kernel) reuses no slot or block before it ends: its frees need not
        // order the thread's accesses to the object before such a reuse.
        if self.effects.creates == 0 {
            self.store.free_in_launch_creating_nothing::<T>(raw);
        } else if self.sole_launch() {
            // One that creates objects of one other class only (the declared effects allow no
            // free of that class) and allocates them without waiting for active bits to change:
            // its frees need not wait for their blocks' bitmaps either (and must not set active
            // bits: see `ObjectStore::make_new_sole`). The Game of Life's and generation's
            // updates, each freeing one kind of cell and creating the other.
            self.store.free_in_sole_launch::<T>(raw);
        } else if self.effects.creates & T::SUBTREE == 0 && !T::OWNS_BLOCKS {
            // Nor does one that creates objects of other classes only reuse the slot, or the
            // block if the store keeps emptied blocks from them until the launch ends. (A
            // class with runs of blocks is left out: an allocation that runs out of blocks
            // releases every class's runs, which frees blocks. `#[soa_class]` classes have
            // none.)
            self.store.free_in_launch_not_creating_its_class::<T>(raw);
        } else {
            self.store.free::<T>(raw);
        }
    }

    /// Call `f` on every object of class `T` and its subclasses, in this thread (paper's
    /// `device_do`).
    ///
    /// It visits the objects that exist when the loop reaches them. In a launch that creates
    /// and frees no objects of `T` (n-body's and collision's force loops, and every method that
    /// only reads), that is exactly the objects that existed at launch. Objects of `T` that
    /// other threads of the same launch create may or may not be visited: the paper's
    /// `device_do` never visits them, this one does not promise it (it walks the live bitmaps,
    /// not a snapshot). So where it matters, create objects of `T` in another step than the one
    /// that iterates them. Objects of `T` that other threads free during the launch may be
    /// visited while they are freed: do not free objects of a class that the same launch
    /// iterates with `device_do`.
    #[inline]
    pub fn device_do<T>(&self, mut f: impl FnMut(Obj<T>))
    where
        T: MemberOf<A>,
    {
        let mut classes = T::SUBTREE;
        while classes != 0 {
            let class = classes.trailing_zeros() as u8;
            classes &= classes - 1;
            // SAFETY: a live object of `class`, which is-a `T` (the store's contract).
            self.store.for_each_object(class, self.shape(class), |raw| f(unsafe { Obj::from_raw(raw) }));
        }
    }

    /// What the allocator fixes of the blocks of its class `class` (a constant where `class`
    /// is: the walks' field and block addresses then fold), and whether the method declared
    /// them dense (which only walks split into parts use).
    #[inline(always)]
    fn shape(&self, class: u8) -> crate::block::ClassShape {
        crate::block::ClassShape {
            objects: match A::CLASSES.get(class as usize) {
                Some(info) => info.objects_per_block,
                None => 0,
            },
            block_bytes: if A::BLOCK_BYTES <= u32::MAX as u64 { A::BLOCK_BYTES as u32 } else { 0 },
            dense: self.split.dense,
            pairs: self.split.pairs,
            ranked: self.ranked,
        }
    }

    /// Fold every object of class `T` and its subclasses into a value: `fold(acc, object,
    /// value)` from `init`, with each object's handle and its value as a `T` (its fields, as
    /// [`load`](Self::load) reads them), the `device_do` of a reduction.
    ///
    /// In a method with `#[parallel(lanes = L)]`, each object's method runs on L GPU threads
    /// and this call splits the objects among them: each folds its part from `init`, and the L
    /// results are combined with `combine`, every thread getting the total. With L = 16,
    /// n-body's force loop runs on 16 times as many threads. (The fields `fold` does not read
    /// are not loaded.)
    ///
    /// The result does not depend on the thread timing or on how many GPU threads run: the
    /// parts are fixed (the `i`-th object of the class in `device_do` order is in part
    /// `i % L`), each part is folded in `device_do` order, and the parts are combined as a
    /// tree, lower part first (`combine(combine(p0, p2), combine(p1, p3))` for L = 4). So with
    /// the objects in the same places, float sums are identical on the GPU and the CPU
    /// backend. Without `lanes` (L = 1) it is a fold in `device_do` order. On the GPU, a
    /// launch with lanes reads each lane's part of the launch's own class from a list of its
    /// objects that the runtime builds before the launch where the class's blocks have free
    /// slots, so a class whose objects left its blocks sparse costs its objects, not its
    /// blocks.
    ///
    /// With `#[parallel(lanes = L, dense)]` (for classes whose blocks are full) the parts are
    /// by slot instead (in DynaSOAr's heap, the objects in slots `s` with `s % L == part`; in
    /// full blocks the same parts), and each lane walks the blocks, visiting its slot
    /// positions of a block one by one (where a lane's part is at most 8 slots).
    ///
    /// `fold` should only compute: the L threads of an object run everything else in the
    /// method alike, so its writes to `this` store the same values, but side effects in `fold`
    /// happen in one thread per part. A method with lanes cannot create or free objects.
    #[inline]
    pub fn device_reduce<T, R>(
        &self,
        init: R,
        fold: impl Fn(R, Obj<T>, T) -> R,
        combine: impl Fn(R, R) -> R,
    ) -> R
    where
        T: MemberOf<A>,
        R: Copy,
    {
        let lanes = self.split.lanes;
        // SAFETY (both forms): the stores call back with live objects of `class`, which is-a
        // `T` (the store's contract); `T::load` reads the fields of such an object.
        #[cfg(target_arch = "nvptx64")]
        {
            let part = crate::arch::lane_id() & (lanes - 1);
            let mut acc = init;
            let mut classes = T::SUBTREE;
            while classes != 0 {
                let class = classes.trailing_zeros() as u8;
                classes &= classes - 1;
                self.store.for_each_object_part(class, self.shape(class), lanes, part, |raw| {
                    // SAFETY: see above.
                    acc = fold(acc, unsafe { Obj::from_raw(raw) }, unsafe { T::load(raw) });
                });
            }
            if lanes > 1 { crate::reduce::combine_lanes(acc, lanes, &combine) } else { acc }
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            let mut accs = [init; crate::reduce::MAX_LANES as usize];
            let mut classes = T::SUBTREE;
            while classes != 0 {
                let class = classes.trailing_zeros() as u8;
                classes &= classes - 1;
                self.store.for_each_object_parted(class, self.shape(class), lanes, |part, raw| {
                    let acc = &mut accs[part as usize];
                    // SAFETY: see above.
                    *acc = fold(*acc, unsafe { Obj::from_raw(raw) }, unsafe { T::load(raw) });
                });
            }
            crate::reduce::combine_parts(&mut accs[..lanes as usize], &combine)
        }
    }

    /// The object's value (all its fields at once, as its class's struct).
    #[inline(always)]
    pub fn load<T: Class>(&self, obj: Obj<T>) -> T {
        // SAFETY: `obj` is a live object that is-a `T`.
        unsafe { T::load(obj.raw()) }
    }

    /// Overwrite all the object's fields with `value`.
    #[inline(always)]
    pub fn store<T: Class>(&self, obj: Obj<T>, value: T) {
        // SAFETY: `obj` is a live object that is-a `T`; the caller owns it for this write.
        unsafe { T::store(obj.raw(), &value) }
    }

    /// A [`Packer`] of this heap's handles into 32 bits, for scratch that holds many of them
    /// per thread (a tree walk's stack), or `None` where they do not fit: a store that keeps
    /// each object at an address of its own (the comparison suite's AOS store), more than
    /// [`MAX_CLASSES`](crate::MAX_CLASSES) classes, or more than [`Packer::MAX_BLOCKS`] blocks.
    /// Keep the handles as they are then. Reads the heap's geometry: call it once, before a
    /// loop.
    #[inline(always)]
    pub fn packer(&self) -> Option<Packer<A>> {
        self.store.blocks().and_then(Packer::new)
    }
}
