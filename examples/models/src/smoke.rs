//! Smoke test of the two-target pipeline: atomics and warp aggregation, end to end.
//!
//! `histogram` bins values with a warp-aggregated increment (lanes that hit the same bin elect
//! one leader, which adds their count in one atomic) and appends the even values to a list with
//! a warp-aggregated reservation. Both results are deterministic up to the order of the list,
//! so the CPU and GPU backends must agree.
//!
//! `math_check` applies [`dynasoar::math`]'s functions to many inputs, so that the host can
//! check that the GPU's results are bit-identical to the CPU backend's; `fast_math_check` applies
//! [`dynasoar::math::fast`]'s approximate ones, so that it can measure their error.

use dynasoar::arch::{self, WarpGroup, atomic::Atomic32};
use dynasoar::math::{self, Vec2};
use dynasoar::prelude::*;

/// Parameters of [`histogram`].
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct HistogramParams {
    pub values: DevPtr<u32>,
    pub len: u32,
    pub bins: u32,
    /// `bins` counters.
    pub counts: DevPtr<u32>,
    /// Room for every value; receives the even ones in some order.
    pub evens: DevPtr<u32>,
    /// Number of entries written to `evens`.
    pub even_count: DevPtr<u32>,
}

/// Histogram and even-value compaction over `values` (grid-stride).
#[kernel]
pub fn histogram(p: HistogramParams) {
    let stride = arch::global_thread_count();
    let mut i = arch::global_thread_id();
    while i < p.len as usize {
        // SAFETY: `i < len`, and `values` holds `len` elements only read here.
        let value = unsafe { p.values.read(i) };
        let bin = value % p.bins;
        // SAFETY: `bin < bins`, and `counts` holds `bins` counters updated atomically only.
        let counter = unsafe { Atomic32::from_ptr(p.counts.as_ptr().add(bin as usize)) };
        increment_aggregated(counter, bin);

        if value % 2 == 0 {
            let group = WarpGroup::current();
            // SAFETY: `even_count` is a counter updated atomically only.
            let count = unsafe { Atomic32::from_ptr(p.even_count.as_ptr()) };
            let slot = group.fetch_add_u32(count, 1);
            // SAFETY: at most `len` values are even, each gets a distinct slot below `len`.
            unsafe { p.evens.write(slot as usize, value) };
        }
        i += stride;
    }
}

/// `counter += 1`, with the lanes of the warp that target the same counter (same `key`)
/// combined into one atomic by an elected leader.
fn increment_aggregated(counter: &Atomic32, key: u32) {
    let group = WarpGroup::current();
    let mut todo = group.mask;
    while todo != 0 {
        // `todo` is the same on every lane of the group, so every lane picks the same leader
        // and executes the same collectives with `group.mask`.
        let leader = todo.trailing_zeros();
        let leader_key = arch::shfl_u32(group.mask, key, leader);
        let peers = arch::ballot(group.mask, key == leader_key) & todo;
        if arch::lane_id() == leader {
            counter.fetch_add(peers.count_ones());
        }
        todo &= !peers;
    }
}

/// Parameters of [`trap_at`].
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct TrapParams {
    /// The global thread id that panics.
    pub thread: u32,
}

/// Panics (and so traps) in one thread: used to test how the host reports failing kernels.
#[kernel]
pub fn trap_at(p: TrapParams) {
    if arch::global_thread_id() == p.thread as usize {
        panic!("trap_at: requested failure");
    }
}

/// Parameters of [`math_check`]. Values travel as `f32` bit patterns, so that nothing on the
/// way (NaN payloads, signs of zero) is changed.
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct MathCheckParams {
    /// `len` inputs.
    pub inputs: DevPtr<u32>,
    pub len: u32,
    /// `len` results each: `sqrt(x)`, `floor(x)` and `Vec2::new(x, y).length()`, where `x` is
    /// input `i` and `y` its partner, input [`math_partner`]`(i, len)`.
    pub sqrt: DevPtr<u32>,
    pub floor: DevPtr<u32>,
    pub length: DevPtr<u32>,
}

/// [`math::sqrt`], [`math::floor`] and [`Vec2::length`] of every input (grid-stride).
#[kernel]
pub fn math_check(p: MathCheckParams) {
    each_input(p.inputs, p.len, |i, x, y| {
        // SAFETY: `i < len`, the outputs' length; each output element `i` is written by this
        // thread only.
        unsafe {
            p.sqrt.write(i, math::sqrt(x).to_bits());
            p.floor.write(i, math::floor(x).to_bits());
            p.length.write(i, Vec2::new(x, y).length().to_bits());
        }
    });
}

/// `f(i, x, y)` for each input `i` of this thread (grid-stride over `len`), `x` being input `i`
/// and `y` its partner ([`math_partner`]); `inputs` holds `len` elements, only read here.
#[inline(always)]
fn each_input(inputs: DevPtr<u32>, len: u32, mut f: impl FnMut(usize, f32, f32)) {
    let len = len as usize;
    let stride = arch::global_thread_count();
    let mut i = arch::global_thread_id();
    while i < len {
        // SAFETY: `i` and its partner are below `len`, the length of `inputs`.
        let (x, y) = unsafe { (inputs.read(i), inputs.read(math_partner(i, len))) };
        f(i, f32::from_bits(x), f32::from_bits(y));
        i += stride;
    }
}

/// Parameters of [`fast_math_check`]: `len` inputs as `f32` bit patterns, and `len` results each
/// of [`math::fast::sqrt`]`(x)` and [`math::fast::div`]`(x, y)`, where `x` is input `i` and `y`
/// its partner ([`math_partner`]).
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct FastMathCheckParams {
    pub inputs: DevPtr<u32>,
    pub len: u32,
    pub sqrt: DevPtr<u32>,
    pub div: DevPtr<u32>,
}

/// [`math::fast::sqrt`] and [`math::fast::div`] of every input (grid-stride).
#[kernel]
pub fn fast_math_check(p: FastMathCheckParams) {
    each_input(p.inputs, p.len, |i, x, y| {
        // SAFETY: as in `math_check`.
        unsafe {
            p.sqrt.write(i, math::fast::sqrt(x).to_bits());
            p.div.write(i, math::fast::div(x, y).to_bits());
        }
    });
}

/// The input that [`math_check`] pairs with input `i` of `len` for a vector's length: its
/// neighbour `i ^ 1` (so that neighbouring inputs of one kind meet), or itself if it is the last
/// of an odd number.
#[inline(always)]
pub fn math_partner(i: usize, len: usize) -> usize {
    if i ^ 1 < len { i ^ 1 } else { i }
}
