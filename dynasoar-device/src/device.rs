//! The device-side context: what methods receive as `dev` to create, free and iterate objects.

use core::marker::PhantomData;

use crate::aos::{self, AosHeader, AosStore};
use crate::block::preset_mask;
use crate::class::{AllocatorSpec, Class, Concrete, MemberOf, Registered};
use crate::handle::RawHandle;
use crate::heap::{Heap, HeapHeader};
use crate::kernel::DevPtr;
use crate::object::{Obj, View};

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
}

/// The bit mask of class `T` and its subclasses, for [`Effects`]; `T` must be a class of
/// allocator `A` (the macro's check of `creates(..)`/`frees(..)` lists).
#[doc(hidden)]
pub const fn class_mask<T: MemberOf<A>, A>() -> u64 {
    T::SUBTREE
}

/// A heap of allocator `A`, as device code uses it (passed to every `#[parallel]` method).
pub struct Device<A> {
    heap: DevPtr<HeapHeader>,
    /// What this context may create and free (see [`Effects`]); a launch of a method that
    /// declared its effects gets a context limited to them.
    effects: Effects,
    _alloc: PhantomData<fn() -> A>,
}

impl<A> Clone for Device<A> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A> Copy for Device<A> {}

impl<A: AllocatorSpec> Device<A> {
    /// The context for the heap at `heap`.
    ///
    /// # Safety
    /// `heap` must be an initialised heap of allocator `A`, alive while the context is used.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_heap(heap: DevPtr<HeapHeader>) -> Self {
        Device { heap, effects: Effects::ANY, _alloc: PhantomData }
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

    /// Raise `error` in the heap or the AOS store.
    #[inline(always)]
    fn raise(&self, error: u32) {
        if self.in_aos_store() {
            self.aos_store().raise(error);
        } else {
            self.heap().raise(error);
        }
    }

    /// Whether the objects live in an AOS store (a general-purpose allocator) rather than in
    /// the SOA heap (fixed per PTX build on the GPU).
    #[inline(always)]
    fn in_aos_store(&self) -> bool {
        aos::is_store(self.heap.addr())
    }

    #[inline(always)]
    fn aos_store(&self) -> AosStore {
        // SAFETY: `from_heap`'s contract, and `in_aos_store` said the header is a store's.
        unsafe { AosStore::from_ptr(self.heap.addr() as usize as *mut AosHeader) }
    }

    #[inline(always)]
    pub(crate) fn heap(&self) -> Heap<'_> {
        // SAFETY: `from_heap`'s contract.
        unsafe { Heap::from_ptr(self.heap.as_ptr()) }
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

    /// [`make_new`](Self::make_new) for generic code that knows `T: Registered<Alloc = A>`.
    #[inline(always)]
    pub(crate) fn make_new_registered<T: Concrete + Registered>(&self, value: T) -> Option<Obj<T>> {
        if self.effects.creates & (1 << T::TYPE_ID) == 0 {
            self.raise(crate::errors::UNDECLARED_CHANGE);
            return None;
        }
        if self.in_aos_store() {
            let raw = self.aos_store().make_new::<T>(&value)?;
            // SAFETY: a fresh object of class `T`.
            return Some(unsafe { Obj::from_raw(raw) });
        }
        let raw = self.heap().allocate::<T>()?;
        // SAFETY: a fresh object of class `T`, owned by this thread.
        unsafe { T::store(raw, &value) };
        // SAFETY: as above.
        Some(unsafe { Obj::from_raw(raw) })
    }

    /// Free `obj`. Inside a `parallel_do` over a class, the only object of that class a thread
    /// may free is its own `this` (paper section 2.1); objects of other classes may be freed.
    #[inline]
    pub fn free<T>(&self, obj: Obj<T>)
    where
        T: MemberOf<A>,
    {
        let raw = obj.raw();
        if !raw.is_null() && self.effects.frees & (1 << (raw.type_id() & 63)) == 0 {
            self.raise(crate::errors::UNDECLARED_CHANGE);
            return;
        }
        if self.in_aos_store() {
            self.aos_store().free(obj.raw());
        } else {
            self.heap().free::<T>(obj.raw());
        }
    }

    /// Call `f` on every object of class `T` and its subclasses, in this thread (paper's
    /// `device_do`). Objects created or freed concurrently may or may not be visited.
    #[inline]
    pub fn device_do<T>(&self, mut f: impl FnMut(Obj<T>))
    where
        T: MemberOf<A>,
    {
        if self.in_aos_store() {
            let store = self.aos_store();
            let mut classes = T::SUBTREE;
            while classes != 0 {
                let class = classes.trailing_zeros() as u8;
                classes &= classes - 1;
                // SAFETY: a live object of `class`, which is-a `T`.
                store.for_each_live(class, |raw| f(unsafe { Obj::from_raw(raw) }));
            }
            return;
        }
        let heap = self.heap();
        let mut classes = T::SUBTREE;
        while classes != 0 {
            let class = classes.trailing_zeros() as u8;
            classes &= classes - 1;
            let objects = heap.class_objects(class);
            let valid = !preset_mask(objects);
            heap.allocated(class).for_each_set(|index| {
                let mut slots = heap.block(index).objects() & valid;
                let addr = heap.block_addr(index);
                while slots != 0 {
                    let slot = slots.trailing_zeros();
                    slots &= slots - 1;
                    // SAFETY: the slot is allocated in a block of `class`, which is-a `T`.
                    f(unsafe { Obj::from_raw(RawHandle::new(addr, slot, objects, class)) });
                }
            });
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
}
