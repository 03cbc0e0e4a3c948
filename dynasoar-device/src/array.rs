//! Arrays in device memory that every thread may read and write: lookup tables of handles
//! (e.g. the object of each grid cell), counters. Every access is atomic (GPU-scoped, relaxed)
//! and bounds-checked, so model code needs no `unsafe`.

use core::marker::PhantomData;

use crate::Plain;
use crate::kernel::DevPtr;
use crate::object::{AtomicRef, AtomicValue};

/// `len` values of type `T` in device memory, shared by all threads (pass it to kernels and
/// methods as, or in, a plain argument). Made on the host from a buffer it stays valid for.
#[repr(C)]
pub struct DeviceArray<T> {
    data: DevPtr<T>,
    len: u64,
    _values: PhantomData<fn() -> T>,
}

impl<T> Clone for DeviceArray<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DeviceArray<T> {}

impl<T> core::fmt::Debug for DeviceArray<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "DeviceArray({:?}, {})", self.data, self.len)
    }
}

// SAFETY: an address and a length; valid when zero (an empty array).
unsafe impl<T: 'static> Plain for DeviceArray<T> {}

impl<T> DeviceArray<T> {
    /// The array of no values: a placeholder for a model argument that has no table (every
    /// access is out of bounds).
    pub const EMPTY: DeviceArray<T> = DeviceArray { data: DevPtr::null(), len: 0, _values: PhantomData };

    /// [`EMPTY`](Self::EMPTY).
    pub const fn empty() -> Self {
        Self::EMPTY
    }
}

impl<T> Default for DeviceArray<T> {
    /// [`DeviceArray::EMPTY`].
    fn default() -> Self {
        Self::EMPTY
    }
}

impl<T: AtomicValue> DeviceArray<T> {
    /// The array of `len` values at `data`.
    ///
    /// # Safety
    /// `data` must point to `len` values of `T` in memory that stays valid while the array is
    /// used, and that is accessed only through atomic operations meanwhile.
    pub const unsafe fn from_raw(data: DevPtr<T>, len: u64) -> Self {
        DeviceArray { data, len, _values: PhantomData }
    }

    /// Number of values.
    #[inline(always)]
    pub fn len(&self) -> u64 {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Atomic access to value `index` (panics, that is traps, if out of bounds).
    #[inline(always)]
    pub fn at(&self, index: u64) -> AtomicRef<T> {
        assert!(index < self.len, "DeviceArray index out of bounds");
        // SAFETY: in bounds, and `from_raw`'s contract: valid memory accessed atomically.
        unsafe { AtomicRef::new(self.data.as_ptr().add(index as usize)) }
    }
}

macro_rules! load_store {
    ($($t:ty),*) => { $(
        impl DeviceArray<$t> {
            /// Value `index` (atomic load).
            #[inline(always)]
            pub fn get(&self, index: u64) -> $t {
                self.at(index).load()
            }

            /// Set value `index` (atomic store).
            #[inline(always)]
            pub fn set(&self, index: u64, value: $t) {
                self.at(index).store(value)
            }
        }
    )* };
}
load_store!(u32, i32, u64, i64, f32);

impl<T: 'static> DeviceArray<crate::object::Handle<T>> {
    /// Handle `index` (atomic load).
    #[inline(always)]
    pub fn get(&self, index: u64) -> crate::object::Handle<T> {
        self.at(index).load()
    }

    /// Set handle `index` (atomic store).
    #[inline(always)]
    pub fn set(&self, index: u64, value: crate::object::Handle<T>) {
        self.at(index).store(value)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::DeviceArray;

    #[test]
    fn the_empty_array_has_no_values() {
        let a = DeviceArray::<u32>::EMPTY;
        assert!(a.is_empty());
        assert_eq!(a.len(), 0);
        assert_eq!(DeviceArray::<f32>::default().len(), 0);
        assert!(DeviceArray::<u64>::empty().is_empty());
    }

    #[test]
    #[should_panic(expected = "DeviceArray index out of bounds")]
    fn reading_the_empty_array_is_out_of_bounds() {
        DeviceArray::<u32>::EMPTY.get(0);
    }
}
