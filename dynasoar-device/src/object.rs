//! Objects seen from code: typed handles and views.
//!
//! - [`Handle<T>`]: a nullable reference to an object of class `T` (or a subclass), storable in
//!   fields and buffers (plain data, 8 bytes).
//! - [`Obj<T>`]: a live object, readable and writable: what methods receive as `this` and
//!   what `make_new` returns.
//! - [`Ref<T>`]: a live object, seen through read-only accessors. A `Ref` is a view, not a
//!   lock: the same object stays writable through any handle to it (`this.handle().get()`
//!   gives an `Obj`), as every object reached by a handle is, in the paper's model too. A
//!   method that takes `this: Ref<Self>` says that it does not write its object's fields;
//!   nothing in the runtime depends on it.
//!
//! Field accessors are generated per class (`#[soa_class]` makes a `<Class>Fields` trait) and
//! work on every view whose class is the class or a subclass of it: [`IsA`] relates a class to
//! its ancestors, with a depth marker so the impls never overlap.

use core::marker::PhantomData;

use crate::Plain;
use crate::arch::atomic::{Atomic32, Atomic64};
use crate::handle::{FieldPlace, RawHandle};
use crate::registry::Registered;

/// Depth marker of [`IsA`]: the class itself.
pub enum Here {}
/// Depth marker of [`IsA`]: an ancestor one level further up than `D`.
pub struct There<D>(PhantomData<D>);

/// `Self` is the class `P` or a subclass of it (`D` is inferred; see the module docs).
///
/// # Safety
/// Implemented only by `#[soa_class]`, which lays out a subclass with its parent's fields first.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a subclass of `{P}`",
    note = "a class is-a `{P}` if it is `{P}` or declares `#[soa_class(extends = ...)]` leading to it"
)]
pub unsafe trait IsA<P, D> {}

/// A reference to a live object: [`Obj`] (read-write) or [`Ref`] (read-only).
///
/// # Safety
/// `raw` must return the handle of a live object whose class is-a `Self::Class`.
pub unsafe trait View: Copy {
    type Class;
    fn raw(self) -> RawHandle;
}

/// Views through which fields can be written.
#[diagnostic::on_unimplemented(
    message = "cannot write a field through the read-only view `{Self}`",
    label = "read-only view",
    note = "`Ref<T>` only reads; methods that write take `this: Obj<Self>`"
)]
pub trait Writable: View {}

macro_rules! typed_handle {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[repr(transparent)]
        pub struct $name<T> {
            raw: RawHandle,
            _class: PhantomData<fn() -> T>,
        }

        impl<T> Clone for $name<T> {
            #[inline(always)]
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<T> Copy for $name<T> {}
        impl<T> PartialEq for $name<T> {
            #[inline(always)]
            fn eq(&self, other: &Self) -> bool {
                self.raw == other.raw
            }
        }
        impl<T> Eq for $name<T> {}
        impl<T> core::hash::Hash for $name<T> {
            fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
                self.raw.hash(state)
            }
        }
        impl<T> core::fmt::Debug for $name<T> {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, "{}({:#x})", stringify!($name), self.raw.0)
            }
        }
    };
}

typed_handle!(
    /// A nullable reference to an object of class `T` or a subclass; plain data, so it can be
    /// stored in fields and buffers. `Handle::NULL` refers to nothing.
    Handle
);
typed_handle!(
    /// A live object of class `T` or a subclass, readable and writable.
    Obj
);
typed_handle!(
    /// A live object of class `T` or a subclass, seen through read-only accessors (a view,
    /// not a lock: see the module docs).
    Ref
);

// SAFETY: a handle is a 64-bit integer; zero is the null handle.
unsafe impl<T: 'static> Plain for Handle<T> {}

impl<T> Default for Handle<T> {
    fn default() -> Self {
        Self::NULL
    }
}

impl<T> Handle<T> {
    /// The handle of no object.
    pub const NULL: Handle<T> = Handle { raw: RawHandle::NULL, _class: PhantomData };

    #[inline(always)]
    pub const fn is_null(self) -> bool {
        self.raw.is_null()
    }

    /// The object, if the handle is not null. The object must still be alive.
    #[inline(always)]
    pub fn get(self) -> Option<Obj<T>> {
        (!self.raw.is_null()).then_some(Obj { raw: self.raw, _class: PhantomData })
    }

    /// The raw 64-bit handle.
    #[inline(always)]
    pub const fn raw(self) -> RawHandle {
        self.raw
    }

    /// A typed handle from a raw one.
    ///
    /// # Safety
    /// `raw` must be null or the handle of an object whose class is-a `T`.
    #[inline(always)]
    pub const unsafe fn from_raw(raw: RawHandle) -> Self {
        Handle { raw, _class: PhantomData }
    }
}

impl<T> Obj<T> {
    /// The object with handle `raw`.
    ///
    /// # Safety
    /// `raw` must be the handle of a live object whose class is-a `T`.
    #[inline(always)]
    pub const unsafe fn from_raw(raw: RawHandle) -> Self {
        Obj { raw, _class: PhantomData }
    }

    /// The object's handle, to store in a field.
    #[inline(always)]
    pub const fn handle(self) -> Handle<T> {
        Handle { raw: self.raw, _class: PhantomData }
    }

    /// A read-only view of the object.
    #[inline(always)]
    pub const fn as_ref(self) -> Ref<T> {
        Ref { raw: self.raw, _class: PhantomData }
    }

    /// The object as one of its ancestors' classes (`let a: Obj<Agent> = fish.up();`).
    #[inline(always)]
    pub fn up<P, D>(self) -> Obj<P>
    where
        T: IsA<P, D>,
    {
        Obj { raw: self.raw, _class: PhantomData }
    }

    /// The object as class `U` if its runtime class is `U` or a subclass of `U` (a checked
    /// down-cast, or a cross-cast within a hierarchy).
    #[inline(always)]
    pub fn cast<U: Registered>(self) -> Option<Obj<U>> {
        self.is::<U>().then_some(Obj { raw: self.raw, _class: PhantomData })
    }

    /// Whether the object's runtime class is `U` or a subclass of `U`.
    #[inline(always)]
    pub fn is<U: Registered>(self) -> bool {
        U::SUBTREE & (1u64 << (self.raw.type_id() & 63)) != 0
    }

    /// Whether the object's runtime class is exactly `U`.
    #[inline(always)]
    pub fn is_exactly<U: Registered>(self) -> bool {
        self.raw.type_id() == U::TYPE_ID
    }

    /// Type id of the object's runtime class.
    #[inline(always)]
    pub const fn type_id(self) -> u8 {
        self.raw.type_id()
    }
}

impl<T> Ref<T> {
    /// Whether the object's runtime class is `U` or a subclass of `U`.
    #[inline(always)]
    pub fn is<U: Registered>(self) -> bool {
        U::SUBTREE & (1u64 << (self.raw.type_id() & 63)) != 0
    }

    /// The object's handle.
    #[inline(always)]
    pub const fn handle(self) -> Handle<T> {
        Handle { raw: self.raw, _class: PhantomData }
    }
}

impl<T> From<Obj<T>> for Handle<T> {
    fn from(o: Obj<T>) -> Self {
        o.handle()
    }
}

// SAFETY: `Obj` is only made from live objects of a class that is-a `T`.
unsafe impl<T> View for Obj<T> {
    type Class = T;
    #[inline(always)]
    fn raw(self) -> RawHandle {
        self.raw
    }
}
impl<T> Writable for Obj<T> {}

// SAFETY: as for `Obj`.
unsafe impl<T> View for Ref<T> {
    type Class = T;
    #[inline(always)]
    fn raw(self) -> RawHandle {
        self.raw
    }
}

/// Read the field at `place` of the object `raw`.
///
/// # Safety
/// `place` must be the place of a field of type `V` in the layout of a class the object is-a.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn read_field<V: Plain>(raw: RawHandle, place: FieldPlace) -> V {
    let addr = raw.place_addr(place);
    // SAFETY: the address lies in the object's field array (see the caller's contract).
    unsafe { (addr as usize as *const V).read() }
}

/// Write the field at `place` of the object `raw`.
///
/// # Safety
/// As for [`read_field`].
#[doc(hidden)]
#[inline(always)]
pub unsafe fn write_field<V: Plain>(raw: RawHandle, place: FieldPlace, value: V) {
    let addr = raw.place_addr(place);
    // SAFETY: as for `read_field`.
    unsafe { (addr as usize as *mut V).write(value) }
}

/// Address of element `index` of the array field at `place` (arrays of `E`).
///
/// # Safety
/// As for [`read_field`], for a field of type `[E; len]`, and `index < len`.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn element_addr<E>(raw: RawHandle, place: FieldPlace, len: usize, index: usize) -> *mut E {
    debug_assert!(index < len);
    (raw.place_addr(place) as usize as *mut E).wrapping_add(index)
}

/// Whether the record of a `#[group]` (bytes `start..end` of its class's value) starts on and
/// takes a multiple of the largest of its fields' alignments `aligns`: then every field of
/// every slot's record is aligned (the group's array starts `N_T * start` into the data
/// segment, which is 128-byte aligned).
#[doc(hidden)]
pub const fn group_aligned(start: usize, end: usize, aligns: &[usize]) -> bool {
    let mut align = 1;
    let mut i = 0;
    while i < aligns.len() {
        if aligns[i] > align {
            align = aligns[i];
        }
        i += 1;
    }
    start.is_multiple_of(align) && (end - start).is_multiple_of(align)
}

/// Field types that can be declared `#[atomic]`: integers of 32 and 64 bits, `f32` and handles. Their accessor `<field>_atomic()` gives an [`AtomicRef`].
#[diagnostic::on_unimplemented(
    message = "an `#[atomic]` field cannot have type `{Self}`",
    note = "atomic fields are u32, i32, u64, i64, f32 or Handle<T> (use a u32 for an atomic flag)"
)]
pub trait AtomicValue: Plain {
    #[doc(hidden)]
    type Cell;
}
impl AtomicValue for u32 {
    type Cell = Atomic32;
}
impl AtomicValue for i32 {
    type Cell = Atomic32;
}
impl AtomicValue for f32 {
    type Cell = Atomic32;
}
impl AtomicValue for u64 {
    type Cell = Atomic64;
}
impl AtomicValue for i64 {
    type Cell = Atomic64;
}
impl<T: 'static> AtomicValue for Handle<T> {
    type Cell = Atomic64;
}

/// Atomic access to one field of one object (GPU-scoped, relaxed, like the allocator's own).
pub struct AtomicRef<V: AtomicValue> {
    addr: *mut V,
}

impl<V: AtomicValue> Clone for AtomicRef<V> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<V: AtomicValue> Copy for AtomicRef<V> {}

impl<V: AtomicValue> AtomicRef<V> {
    /// Atomic access to the `V` at `addr`.
    ///
    /// # Safety
    /// `addr` must be a live, aligned field of type `V` accessed only atomically meanwhile.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn new(addr: *mut V) -> Self {
        AtomicRef { addr }
    }
}

macro_rules! atomic_int_ops {
    ($t:ty, $cell:ident, $u:ty) => {
        impl AtomicRef<$t> {
            #[inline(always)]
            fn cell(self) -> &'static $cell {
                // SAFETY: `new`'s contract: a live, aligned field accessed atomically; `$t` and
                // the cell's integer have the same size.
                unsafe { $cell::from_ptr(self.addr as *mut $u) }
            }
            #[inline(always)]
            pub fn load(self) -> $t {
                self.cell().load() as $t
            }
            #[inline(always)]
            pub fn store(self, v: $t) {
                self.cell().store(v as $u)
            }
            #[inline(always)]
            pub fn swap(self, v: $t) -> $t {
                self.cell().swap(v as $u) as $t
            }
            #[inline(always)]
            pub fn fetch_add(self, v: $t) -> $t {
                self.cell().fetch_add(v as $u) as $t
            }
            #[inline(always)]
            pub fn fetch_sub(self, v: $t) -> $t {
                self.cell().fetch_sub(v as $u) as $t
            }
            #[inline(always)]
            pub fn fetch_or(self, v: $t) -> $t {
                self.cell().fetch_or(v as $u) as $t
            }
            #[inline(always)]
            pub fn fetch_and(self, v: $t) -> $t {
                self.cell().fetch_and(v as $u) as $t
            }
            /// Store `new` if the value is `current`; `Ok(previous)` or `Err(actual)`.
            #[inline(always)]
            pub fn compare_exchange(self, current: $t, new: $t) -> Result<$t, $t> {
                self.cell().compare_exchange(current as $u, new as $u).map(|v| v as $t).map_err(|v| v as $t)
            }
        }
    };
}
atomic_int_ops!(u32, Atomic32, u32);
atomic_int_ops!(i32, Atomic32, u32);
atomic_int_ops!(u64, Atomic64, u64);
atomic_int_ops!(i64, Atomic64, u64);

impl AtomicRef<u32> {
    /// Unsigned maximum; returns the previous value.
    #[inline(always)]
    pub fn fetch_max(self, v: u32) -> u32 {
        self.cell().fetch_max(v)
    }
    /// Unsigned minimum; returns the previous value.
    #[inline(always)]
    pub fn fetch_min(self, v: u32) -> u32 {
        self.cell().fetch_min(v)
    }
}

impl AtomicRef<f32> {
    #[inline(always)]
    fn cell(self) -> &'static Atomic32 {
        // SAFETY: as for the integer cells; f32 and u32 have the same size and alignment.
        unsafe { Atomic32::from_ptr(self.addr as *mut u32) }
    }
    #[inline(always)]
    pub fn load(self) -> f32 {
        f32::from_bits(self.cell().load())
    }
    #[inline(always)]
    pub fn store(self, v: f32) {
        self.cell().store(v.to_bits())
    }
    /// Atomic add; returns the previous value.
    #[inline(always)]
    pub fn fetch_add(self, v: f32) -> f32 {
        f32::from_bits(self.cell().fetch_add_f32(v))
    }
}

impl<T: 'static> AtomicRef<Handle<T>> {
    #[inline(always)]
    fn cell(self) -> &'static Atomic64 {
        // SAFETY: a handle is a u64 (`repr(transparent)`).
        unsafe { Atomic64::from_ptr(self.addr as *mut u64) }
    }
    #[inline(always)]
    pub fn load(self) -> Handle<T> {
        Handle { raw: RawHandle(self.cell().load()), _class: PhantomData }
    }
    #[inline(always)]
    pub fn store(self, h: Handle<T>) {
        self.cell().store(h.raw.0)
    }
    #[inline(always)]
    pub fn swap(self, h: Handle<T>) -> Handle<T> {
        Handle { raw: RawHandle(self.cell().swap(h.raw.0)), _class: PhantomData }
    }
    /// Store `new` if the field holds `current`; `Ok(previous)` or `Err(actual)`.
    #[inline(always)]
    pub fn compare_exchange(self, current: Handle<T>, new: Handle<T>) -> Result<Handle<T>, Handle<T>> {
        let wrap = |v| Handle { raw: RawHandle(v), _class: PhantomData };
        self.cell().compare_exchange(current.raw.0, new.raw.0).map(wrap).map_err(wrap)
    }
}
