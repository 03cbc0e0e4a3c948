//! GPU-scoped atomics with relaxed ordering, for all shared allocator state.
//!
//! Every operation here is *relaxed* and *device-scoped*, except `fetch_or_acquire` (the
//! reservation of slots in a block, which must be ordered before the read of the block's type).
//! Elsewhere, where an algorithm needs ordering it says so with an explicit
//! [`fence`](super::fence), exactly as CUDA code uses `__threadfence()`. This keeps the PTX free
//! of the `.sys`-scoped loads and CAS that Rust's own atomics produce on nvptx (system scope:
//! slow, and never what the allocator needs), and makes the host and loom builds check the
//! algorithms under the same weak ordering the GPU gives them.
//!
//! The types are `repr(transparent)` over an integer cell, so device memory holding plain
//! integers (bitmaps, block headers) can be viewed as atomics in place.
//!
//! On the GPU every atomic lives in global memory (the heap, buffers the host allocated):
//! the operations name the `.global` state space, which spares each one the check ptxas adds
//! to generic atomics (see `global_op!`). Nothing in dynasoar puts an atomic in shared or
//! local memory.

/// PTX for `op`, which addresses the word as `[%g]`: the global address of the generic
/// pointer `{p}`. Naming the state space makes ptxas emit global atomics (`ATOMG`, `RED`);
/// on a generic address it emits `ATOM` with a check for shared memory after each one, which
/// waits a round trip to L2 even where nobody uses the value.
#[cfg(target_arch = "nvptx64")]
macro_rules! global_op {
    ($op:expr) => {
        concat!("{{ .reg .b64 %g; cvta.to.global.u64 %g, {p}; ", $op, " }}")
    };
}

/// An atomic read-modify-write `op` on the word of `this` with operand `value`; the previous
/// value.
#[cfg(target_arch = "nvptx64")]
macro_rules! rmw {
    ($this:expr, $op:expr, $reg:ident, $value:expr) => {{
        let old;
        // SAFETY: `$this` is a live, aligned word in global memory (see the module's notes).
        unsafe {
            core::arch::asm!(global_op!(concat!($op, " {o}, [%g], {v};")),
                o = out($reg) old, p = in(reg64) $this.ptr(), v = in($reg) $value, options(nostack))
        };
        old
    }};
}

/// An atomic reduction `op` (no value returned) on the word of `this` with operand `value`.
#[cfg(target_arch = "nvptx64")]
macro_rules! red {
    ($this:expr, $op:expr, $reg:ident, $value:expr) => {
        // SAFETY: as in `rmw!`.
        unsafe {
            core::arch::asm!(global_op!(concat!($op, " [%g], {v};")),
                p = in(reg64) $this.ptr(), v = in($reg) $value, options(nostack))
        }
    };
}

macro_rules! atomic_type {
    ($name:ident, $int:ty, $core:ident, $bits:literal, $reg:ident) => {
        #[doc = concat!("A ", stringify!($int), " updated atomically at GPU scope (relaxed).")]
        #[repr(transparent)]
        pub struct $name(imp::$core);

        // SAFETY: all access goes through atomic operations.
        unsafe impl Sync for $name {}

        impl $name {
            #[cfg(not(loom))]
            pub const fn new(value: $int) -> Self {
                $name(imp::$core::new(value))
            }

            #[cfg(loom)]
            pub fn new(value: $int) -> Self {
                $name(imp::$core::new(value))
            }

            /// The word's address, for plain accesses where no other thread can write it.
            #[cfg(not(loom))]
            #[inline(always)]
            pub fn as_ptr(&self) -> *mut $int {
                self.0.as_ptr()
            }

            /// View a properly aligned integer that threads share as an atomic.
            ///
            /// # Safety
            /// `ptr` must be valid and aligned for the lifetime `'a`, and every concurrent access
            /// to it must be atomic. On the GPU it must point into global memory (not shared
            /// memory or a thread's stack).
            #[cfg(not(loom))]
            #[inline(always)]
            pub unsafe fn from_ptr<'a>(ptr: *mut $int) -> &'a Self {
                // SAFETY: `$name` is `repr(transparent)` over a cell of `$int`; the caller
                // guarantees validity and alignment.
                unsafe { &*(ptr as *const Self) }
            }
        }

        #[cfg(target_arch = "nvptx64")]
        impl $name {
            #[inline(always)]
            fn ptr(&self) -> *mut $int {
                self.0.as_ptr()
            }

            /// Load (`ld.relaxed.gpu`): never served stale from L1.
            #[inline(always)]
            pub fn load(&self) -> $int {
                let v: $int;
                // SAFETY: `self` points to a live, aligned value in global memory (see the
                // module's notes); the load is atomic.
                unsafe {
                    core::arch::asm!(global_op!(concat!("ld.relaxed.gpu.global.u", $bits, " {v}, [%g];")),
                        v = out($reg) v, p = in(reg64) self.ptr(), options(nostack))
                };
                v
            }

            /// Store (`st.relaxed.gpu`).
            #[inline(always)]
            pub fn store(&self, value: $int) {
                // SAFETY: as for `load`.
                unsafe {
                    core::arch::asm!(global_op!(concat!("st.relaxed.gpu.global.u", $bits, " [%g], {v};")),
                        p = in(reg64) self.ptr(), v = in($reg) value, options(nostack))
                };
            }

            #[inline(always)]
            fn rmw_or(&self, value: $int) -> $int {
                rmw!(self, concat!("atom.relaxed.gpu.global.or.b", $bits), $reg, value)
            }
            #[inline(always)]
            fn rmw_or_acquire(&self, value: $int) -> $int {
                rmw!(self, concat!("atom.acquire.gpu.global.or.b", $bits), $reg, value)
            }
            #[inline(always)]
            fn rmw_and(&self, value: $int) -> $int {
                rmw!(self, concat!("atom.relaxed.gpu.global.and.b", $bits), $reg, value)
            }
            #[inline(always)]
            fn rmw_add(&self, value: $int) -> $int {
                rmw!(self, concat!("atom.relaxed.gpu.global.add.u", $bits), $reg, value)
            }
            #[inline(always)]
            fn rmw_max(&self, value: $int) -> $int {
                rmw!(self, concat!("atom.relaxed.gpu.global.max.u", $bits), $reg, value)
            }
            #[inline(always)]
            fn rmw_min(&self, value: $int) -> $int {
                rmw!(self, concat!("atom.relaxed.gpu.global.min.u", $bits), $reg, value)
            }
            #[inline(always)]
            fn rmw_exch(&self, value: $int) -> $int {
                rmw!(self, concat!("atom.relaxed.gpu.global.exch.b", $bits), $reg, value)
            }

            #[inline(always)]
            fn rmw_cas(&self, current: $int, new: $int) -> $int {
                let old: $int;
                // SAFETY: as for `load`.
                unsafe {
                    core::arch::asm!(
                        global_op!(concat!("atom.relaxed.gpu.global.cas.b", $bits, " {o}, [%g], {c}, {n};")),
                        o = out($reg) old, p = in(reg64) self.ptr(), c = in($reg) current,
                        n = in($reg) new, options(nostack))
                };
                old
            }

            #[inline(always)]
            fn red_or(&self, value: $int) {
                red!(self, concat!("red.relaxed.gpu.global.or.b", $bits), $reg, value)
            }
            #[inline(always)]
            fn red_add(&self, value: $int) {
                red!(self, concat!("red.relaxed.gpu.global.add.u", $bits), $reg, value)
            }
            #[inline(always)]
            fn red_and(&self, value: $int) {
                red!(self, concat!("red.relaxed.gpu.global.and.b", $bits), $reg, value)
            }
        }

        #[cfg(not(target_arch = "nvptx64"))]
        impl $name {
            #[inline(always)]
            pub fn load(&self) -> $int {
                self.0.load(Relaxed)
            }
            #[inline(always)]
            pub fn store(&self, value: $int) {
                self.0.store(value, Relaxed)
            }
            #[inline(always)]
            fn rmw_or(&self, value: $int) -> $int {
                self.0.fetch_or(value, Relaxed)
            }
            #[inline(always)]
            fn rmw_or_acquire(&self, value: $int) -> $int {
                self.0.fetch_or(value, core::sync::atomic::Ordering::Acquire)
            }
            #[inline(always)]
            fn rmw_and(&self, value: $int) -> $int {
                self.0.fetch_and(value, Relaxed)
            }
            #[inline(always)]
            fn rmw_add(&self, value: $int) -> $int {
                self.0.fetch_add(value, Relaxed)
            }
            #[inline(always)]
            fn rmw_max(&self, value: $int) -> $int {
                self.0.fetch_max(value, Relaxed)
            }
            #[inline(always)]
            fn rmw_min(&self, value: $int) -> $int {
                self.0.fetch_min(value, Relaxed)
            }
            #[inline(always)]
            fn rmw_exch(&self, value: $int) -> $int {
                self.0.swap(value, Relaxed)
            }
            #[inline(always)]
            fn rmw_cas(&self, current: $int, new: $int) -> $int {
                match self.0.compare_exchange(current, new, Relaxed, Relaxed) {
                    Ok(v) | Err(v) => v,
                }
            }
            #[inline(always)]
            fn red_or(&self, value: $int) {
                self.0.fetch_or(value, Relaxed);
            }
            #[inline(always)]
            fn red_add(&self, value: $int) {
                self.0.fetch_add(value, Relaxed);
            }
            #[inline(always)]
            fn red_and(&self, value: $int) {
                self.0.fetch_and(value, Relaxed);
            }
        }

        impl $name {
            /// Atomic OR; returns the previous value.
            #[inline(always)]
            pub fn fetch_or(&self, value: $int) -> $int {
                self.rmw_or(value)
            }
            /// Atomic OR with acquire semantics (`atom.acquire.gpu`): what a thread did before a
            /// release (a fence, then the write this reads from) happens before what follows
            /// here, without the full fence's wait for this thread's own writes in flight.
            #[inline(always)]
            pub fn fetch_or_acquire(&self, value: $int) -> $int {
                self.rmw_or_acquire(value)
            }
            /// Atomic AND; returns the previous value.
            #[inline(always)]
            pub fn fetch_and(&self, value: $int) -> $int {
                self.rmw_and(value)
            }
            /// Atomic wrapping add; returns the previous value.
            #[inline(always)]
            pub fn fetch_add(&self, value: $int) -> $int {
                self.rmw_add(value)
            }
            /// Atomic wrapping subtract; returns the previous value.
            #[inline(always)]
            pub fn fetch_sub(&self, value: $int) -> $int {
                self.rmw_add(value.wrapping_neg())
            }
            /// Atomic unsigned maximum; returns the previous value.
            #[inline(always)]
            pub fn fetch_max(&self, value: $int) -> $int {
                self.rmw_max(value)
            }
            /// Atomic unsigned minimum; returns the previous value.
            #[inline(always)]
            pub fn fetch_min(&self, value: $int) -> $int {
                self.rmw_min(value)
            }
            /// Atomic exchange; returns the previous value.
            #[inline(always)]
            pub fn swap(&self, value: $int) -> $int {
                self.rmw_exch(value)
            }
            /// Store `new` if the value is `current`. `Ok(previous)` on success, else
            /// `Err(actual)`.
            #[inline(always)]
            pub fn compare_exchange(&self, current: $int, new: $int) -> Result<$int, $int> {
                let old = self.rmw_cas(current, new);
                if old == current { Ok(old) } else { Err(old) }
            }
            /// Atomic OR whose previous value nobody waits for (`red`): the thread goes on at
            /// once, where a `fetch_or` waits a round trip to L2 for the value.
            #[inline(always)]
            pub fn reduce_or(&self, value: $int) {
                self.red_or(value)
            }
            /// Atomic AND without the previous value (see [`reduce_or`](Self::reduce_or)).
            #[inline(always)]
            pub fn reduce_and(&self, value: $int) {
                self.red_and(value)
            }
            /// Atomic wrapping add without the previous value (see
            /// [`reduce_or`](Self::reduce_or)).
            #[inline(always)]
            pub fn reduce_add(&self, value: $int) {
                self.red_add(value)
            }
            /// Atomic wrapping subtract without the previous value (see
            /// [`reduce_or`](Self::reduce_or)).
            #[inline(always)]
            pub fn reduce_sub(&self, value: $int) {
                self.red_add(value.wrapping_neg())
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                core::fmt::Debug::fmt(&self.load(), f)
            }
        }
    };
}

#[cfg(not(target_arch = "nvptx64"))]
use core::sync::atomic::Ordering::Relaxed;

mod imp {
    #[cfg(not(loom))]
    pub use core::sync::atomic::{AtomicU32, AtomicU64};
    #[cfg(loom)]
    pub use loom::sync::atomic::{AtomicU32, AtomicU64};
}

atomic_type!(Atomic64, u64, AtomicU64, "64", reg64);
atomic_type!(Atomic32, u32, AtomicU32, "32", reg32);

impl Atomic32 {
    /// Atomic `f32` add on the word's bits (`atom.add.f32`); returns the previous bits.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub fn fetch_add_f32(&self, value: f32) -> u32 {
        let old: f32;
        // SAFETY: as for the other atomics: `self` is a live, aligned word.
        unsafe {
            core::arch::asm!(global_op!("atom.relaxed.gpu.global.add.f32 {o}, [%g], {v};"),
                o = out(reg32) old, p = in(reg64) self.0.as_ptr(), v = in(reg32) value, options(nostack))
        };
        old.to_bits()
    }

    /// Atomic `f32` add on the word's bits (a CAS loop on the host); returns the previous bits.
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    pub fn fetch_add_f32(&self, value: f32) -> u32 {
        let mut current = self.load();
        loop {
            let new = (f32::from_bits(current) + value).to_bits();
            match self.compare_exchange(current, new) {
                Ok(old) => return old,
                Err(actual) => current = actual,
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn operations_return_previous_values() {
        let a = Atomic64::new(0b1010);
        assert_eq!(a.fetch_or(0b0101), 0b1010);
        assert_eq!(a.fetch_and(0b0011), 0b1111);
        assert_eq!(a.fetch_add(5), 0b0011);
        assert_eq!(a.fetch_sub(1), 8);
        assert_eq!(a.fetch_max(3), 7);
        assert_eq!(a.fetch_min(2), 7);
        assert_eq!(a.swap(9), 2);
        assert_eq!(a.compare_exchange(9, 4), Ok(9));
        assert_eq!(a.compare_exchange(9, 5), Err(4));
        assert_eq!(a.load(), 4);
        let b = Atomic32::new(u32::MAX);
        assert_eq!(b.fetch_add(1), u32::MAX);
        assert_eq!(b.load(), 0);
        let f = Atomic32::new(1.5f32.to_bits());
        assert_eq!(f32::from_bits(f.fetch_add_f32(2.25)), 1.5);
        assert_eq!(f32::from_bits(f.load()), 3.75);
    }

    #[test]
    fn from_ptr_views_plain_memory() {
        let mut words = [0u64; 2];
        // SAFETY: `words` outlives the views and is only accessed through them meanwhile.
        let w1 = unsafe { Atomic64::from_ptr(&mut words[1]) };
        w1.store(42);
        assert_eq!(words[1], 42);
    }
}
