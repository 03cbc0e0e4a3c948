//! Field-access benchmark: a class with one `f32` field, `x += 1.0` on every object, against a
//! plain array kernel doing the same on a `[f32]`.

use dynasoar::arch;
use dynasoar::prelude::*;

/// Distinct initial values (below 2^24 minus the bumps, so float increments are exact).
pub const VALUES: u64 = 1 << 20;

/// One float per object.
#[soa_class]
pub struct Scalar {
    pub x: f32,
}

dynasoar::allocator!(pub ScalarHeap: Scalar);

#[soa_methods]
impl Scalar {
    /// Object `index` holds `index mod 2^20` (small enough that `+ 1.0` stays exact).
    #[parallel_new]
    pub fn create(_dev: &Device<ScalarHeap>, index: u64) -> Self {
        Scalar { x: (index % VALUES) as f32 }
    }

    #[parallel]
    pub fn bump(this: Obj<Self>, _dev: &Device<ScalarHeap>) {
        this.set_x(this.x() + 1.0);
    }
}

/// Parameters of [`array_bump`].
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct ArrayParams {
    pub values: DevPtr<f32>,
    pub len: u64,
}

/// The baseline: `values[i] += 1.0` over a plain array (grid-stride).
#[kernel]
pub fn array_bump(p: ArrayParams) {
    let stride = arch::global_thread_count() as u64;
    let mut i = arch::global_thread_id() as u64;
    while i < p.len {
        // SAFETY: `i < len`; each element is touched by one thread.
        unsafe { p.values.write(i as usize, p.values.read(i as usize) + 1.0) };
        i += stride;
    }
}
