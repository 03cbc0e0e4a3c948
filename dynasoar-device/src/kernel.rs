//! Kernels as typed values, and device pointers.

use core::marker::PhantomData;

use crate::Plain;

/// A kernel the host can launch: its PTX entry name and the same function for the CPU backend.
///
/// Tokens are generated next to the kernel function (by `#[kernel]` or the class macros), so the
/// host never spells a kernel name by hand. `P` is the kernel's one by-value parameter, a
/// `#[repr(C)]` plain struct, passed as one `.param` aggregate on the GPU.
pub struct Kernel<P> {
    name: &'static str,
    host_fn: fn(P),
}

impl<P: Plain> Kernel<P> {
    #[doc(hidden)]
    pub const fn new(name: &'static str, host_fn: fn(P)) -> Self {
        Kernel { name, host_fn }
    }

    /// The PTX entry point's name.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The kernel body, as the CPU backend calls it for each emulated thread.
    pub fn host_fn(&self) -> fn(P) {
        self.host_fn
    }
}

impl<P> Clone for Kernel<P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P> Copy for Kernel<P> {}

impl<P> core::fmt::Debug for Kernel<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Kernel({})", self.name)
    }
}

/// The address of a `T` (or an array of them) in device memory.
///
/// On the GPU backend this is a CUDA device address; on the CPU backend it is a host address.
/// Kernels receive it as plain data and dereference it; the host obtains it from a buffer.
#[repr(transparent)]
pub struct DevPtr<T> {
    addr: u64,
    _marker: PhantomData<*mut T>,
}

impl<T> DevPtr<T> {
    /// The null device pointer.
    pub const fn null() -> Self {
        DevPtr { addr: 0, _marker: PhantomData }
    }

    /// A device pointer from a raw address.
    pub const fn from_addr(addr: u64) -> Self {
        DevPtr { addr, _marker: PhantomData }
    }

    pub const fn addr(self) -> u64 {
        self.addr
    }

    pub const fn is_null(self) -> bool {
        self.addr == 0
    }

    /// As a raw pointer, for use in device code.
    pub const fn as_ptr(self) -> *mut T {
        self.addr as usize as *mut T
    }

    /// The pointer `count` elements further.
    pub const fn add(self, count: usize) -> Self {
        DevPtr::from_addr(self.addr + (count * core::mem::size_of::<T>()) as u64)
    }

    /// Reinterpret as a pointer to another type.
    pub const fn cast<U>(self) -> DevPtr<U> {
        DevPtr::from_addr(self.addr)
    }

    /// Read element `index`.
    ///
    /// # Safety
    /// The pointer must address at least `index + 1` initialised elements, and no other thread
    /// may write element `index` concurrently.
    #[inline(always)]
    pub unsafe fn read(self, index: usize) -> T
    where
        T: Copy,
    {
        // SAFETY: guaranteed by the caller.
        unsafe { self.as_ptr().add(index).read() }
    }

    /// Write element `index`.
    ///
    /// # Safety
    /// The pointer must address at least `index + 1` elements, and no other thread may access
    /// element `index` concurrently.
    #[inline(always)]
    pub unsafe fn write(self, index: usize, value: T) {
        // SAFETY: guaranteed by the caller.
        unsafe { self.as_ptr().add(index).write(value) }
    }
}

impl<T> Clone for DevPtr<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DevPtr<T> {}
impl<T> PartialEq for DevPtr<T> {
    fn eq(&self, other: &Self) -> bool {
        self.addr == other.addr
    }
}
impl<T> Eq for DevPtr<T> {}

impl<T> core::fmt::Debug for DevPtr<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "DevPtr({:#x})", self.addr)
    }
}

// SAFETY: a device pointer is an address; sending it between threads is sound, dereferencing
// it is what `unsafe` guards.
unsafe impl<T> Send for DevPtr<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for DevPtr<T> {}
// SAFETY: an address is plain data (valid when zero: the null pointer).
unsafe impl<T: 'static> Plain for DevPtr<T> {}
