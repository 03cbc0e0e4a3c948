//! `device_reduce`: one object's loop over a class, spread over the lanes that a method with
//! `#[parallel(lanes = L)]` runs on, and combined in a fixed order.
//!
//! A `device_do` runs in the one thread of its object. Where a class has few objects and each
//! visits all others (n-body: 20k bodies, 20k interactions each), few threads run and each
//! waits on its loop's latency. A method with `lanes = L` runs every object on L consecutive
//! lanes of a warp (the same `this` and arguments); [`Device::device_reduce`](crate::Device::device_reduce)
//! gives each lane one *part* of the iterated objects, folds it into its own accumulator, and
//! combines the L accumulators with shuffles.
//!
//! The result is the same on the GPU and on the CPU backend, bit for bit, whatever the float
//! operations: the parts are fixed by the store (in the heap, the `r`-th object of the class in
//! the order a `device_do` visits them is in part `r % L`; for a method declared `dense`, the
//! objects in slots `s` with `s % L == part`), each part is folded in that order, and the L
//! partial results are combined as a tree, lower part first: with `L = 4`,
//! `combine(combine(p0, p2), combine(p1, p3))`. The CPU backend, whose warps have one lane,
//! folds all L parts in one thread and combines them with the same tree. On the GPU a lane
//! reads its part of the launch's class from the heap's ranked list where the runtime built one
//! (`heap::ranked`), else it walks the class's blocks.

#[cfg(target_arch = "nvptx64")]
use core::mem::{MaybeUninit, size_of};

/// Most lanes a method can run each object on: a warp.
pub const MAX_LANES: u32 = 32;

/// Whether `lanes` is a lane count a method can have: a power of two from 1 to [`MAX_LANES`].
pub const fn valid_lanes(lanes: u32) -> bool {
    lanes.is_power_of_two() && lanes <= MAX_LANES
}

/// The bits of a 64-bit slot mask whose slot `s` has `s % parts == part` (`parts` a valid lane
/// count, `part < parts`).
#[inline(always)]
pub const fn part_mask(parts: u32, part: u32) -> u64 {
    // Bits 0, parts, 2 * parts, ...: all ones divided by a run of `parts` ones (parts < 64).
    let every = u64::MAX / ((1u64 << parts) - 1);
    every << part
}

/// The position of the set bit of `x` that has `rank` set bits below it; 64 where `x` has no
/// more than `rank` set bits: a population count per half, then a binary search of five
/// steps in one 32-bit half (selects; the one branch is for a rank past the last set bit). A
/// do-all with lanes finds the object of its run with it (`heap::listed::for_each_listed`).
#[inline(always)]
pub const fn select_bit(x: u64, rank: u32) -> u32 {
    let low = x as u32;
    let in_low = low.count_ones();
    let (mut word, mut rank, mut at) =
        if rank < in_low { (low, rank, 0) } else { ((x >> 32) as u32, rank - in_low, 32) };
    if rank >= word.count_ones() {
        return 64;
    }
    let mut width = 16;
    while width > 0 {
        let here = (word & ((1u32 << width) - 1)).count_ones();
        if rank >= here {
            rank -= here;
            word >>= width;
            at += width;
        }
        width /= 2;
    }
    at
}

/// The bits of `x` at slots `0, parts, 2 * parts, ...` gathered into the low bits (bit `k` of
/// the result is bit `k * parts` of `x`); `x` has no other bits set, `parts` is a valid lane
/// count of at least 2. A lane of a `device_reduce` then walks its part of a block's slots
/// with 32-bit operations (its part holds at most 32 of the 64). Neighbouring groups of bits
/// are merged, doubling their width, until one is left: log2(64 / parts) steps of a shift and
/// two masks, whose amounts and masks fold to constants where `parts` is a constant of the
/// kernel (a method's `lanes`).
#[inline(always)]
pub const fn gather_every(x: u64, parts: u32) -> u32 {
    let (mut x, mut width, mut spacing) = (x, 1u32, parts);
    while spacing < 64 {
        // The group at `spacing * (2j + 1)` moves down next to the one at `spacing * 2j`.
        x = (x | x >> (spacing - width)) & repeat_bits(2 * width, 2 * spacing);
        width *= 2;
        spacing *= 2;
    }
    x as u32
}

/// `width` ones every `spacing` bits from bit 0 (`width <= 32`, `spacing` a power of two from
/// 2 to 64).
#[inline(always)]
const fn repeat_bits(width: u32, spacing: u32) -> u64 {
    let ones = (1u64 << width) - 1;
    if spacing >= 64 { ones } else { u64::MAX / ((1u64 << spacing) - 1) * ones }
}

/// Combine `L = accs.len()` partial results as the lanes' shuffles do (the CPU backend's form):
/// at each step `d = L/2, L/4, .., 1`, part `i < d` becomes `combine(part i, part i + d)`.
#[inline(always)]
pub fn combine_parts<R: Copy>(accs: &mut [R], combine: &impl Fn(R, R) -> R) -> R {
    let mut d = accs.len() / 2;
    while d > 0 {
        for i in 0..d {
            accs[i] = combine(accs[i], accs[i + d]);
        }
        d /= 2;
    }
    accs[0]
}

/// Combine the partial results of a lane group of `parts` lanes (`parts` > 1, a valid lane
/// count; the group is the aligned run of `parts` lanes holding this lane, and every lane of it
/// calls this together): every lane gets the value [`combine_parts`] computes from the parts in
/// lane order. At step `d`, lanes `i` and `i ^ d` swap values, and each combines the lower
/// lane's value with the upper's, so both hold the same.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn combine_lanes<R: Copy>(acc: R, parts: u32, combine: &impl Fn(R, R) -> R) -> R {
    let lane = crate::arch::lane_id();
    let part = lane & (parts - 1);
    let group = (u32::MAX >> (32 - parts)) << (lane & !(parts - 1));
    let mut acc = acc;
    let mut d = parts / 2;
    while d > 0 {
        let other = shfl_value(group, acc, lane ^ d);
        acc = if part & d == 0 { combine(acc, other) } else { combine(other, acc) };
        d /= 2;
    }
    acc
}

/// `value` of lane `src`, for any `Copy` type: its bytes, shuffled a 32-bit word at a time.
/// Every lane of `mask` must execute this call and `src` must be in it.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn shfl_value<R: Copy>(mask: u32, value: R, src: u32) -> R {
    /// Room for `R` and a partial last word.
    #[repr(C)]
    struct Padded<R> {
        value: MaybeUninit<R>,
        _tail: [u8; 3],
    }
    let words = size_of::<R>().div_ceil(4);
    let from = Padded { value: MaybeUninit::new(value), _tail: [0; 3] };
    let mut to = Padded::<R> { value: MaybeUninit::uninit(), _tail: [0; 3] };
    let (src_words, dst_words) =
        (&from as *const Padded<R> as *const u32, &mut to as *mut Padded<R> as *mut u32);
    let mut i = 0;
    while i < words {
        // SAFETY: `Padded<R>` has at least `size_of::<R>() + 3` bytes, so word `i` of either
        // lies inside it; unaligned accesses, as `R` may be aligned to less than 4. The bytes of
        // `R` that `value` leaves uninitialised (padding) are copied, never read as `R`'s.
        unsafe {
            let word = src_words.add(i).read_unaligned();
            dst_words.add(i).write_unaligned(crate::arch::shfl_u32(mask, word, src));
        }
        i += 1;
    }
    // SAFETY: the first `size_of::<R>()` bytes of `to` are lane `src`'s `value`, a valid `R`
    // (every lane of the group holds an `R`, and `R: Copy` has no drop).
    unsafe { to.value.assume_init() }
}

/// How a method's objects run on GPU threads and how its `device_reduce` splits and walks the
/// objects it folds: the method's `#[parallel(lanes = L, dense, pairs)]`, constants of its
/// kernels.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lanes {
    /// How many consecutive GPU threads run each object (1 without `lanes`), among which its
    /// `device_reduce` splits the objects it folds (the CPU backend runs each object once and
    /// folds the parts in that thread).
    pub lanes: u32,
    /// `dense`: the walk by positions (see [`ClassShape::dense`](crate::block::ClassShape)).
    pub dense: bool,
    /// `pairs`: a ranked list folded two objects at a time (see
    /// [`ClassShape::pairs`](crate::block::ClassShape)).
    pub pairs: bool,
}

impl Lanes {
    /// One thread per object: a `device_reduce` folds everything in it, walking blocks.
    pub const ONE: Lanes = Lanes { lanes: 1, dense: false, pairs: false };
}

/// Lanes a method's do-all kernel runs each object on in this build: its `lanes` on the GPU,
/// 1 on the CPU backend, whose warps have one lane (it folds every part in the one thread).
#[inline(always)]
pub const fn threads_per_object(lanes: u32) -> u32 {
    if crate::arch::WARP_SIZE == 1 { 1 } else { lanes }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    #[test]
    fn gather_every_keeps_every_parts_th_bit_in_order() {
        for x in masks() {
            for parts in [2u32, 4, 8, 16, 32] {
                let picked = x & part_mask(parts, 0);
                let want = (0..64 / parts).fold(0u32, |w, k| w | ((picked >> (k * parts) & 1) as u32) << k);
                assert_eq!(gather_every(picked, parts), want, "{x:#x} parts {parts}");
            }
        }
        assert_eq!(gather_every(part_mask(2, 0), 2), u32::MAX);
        assert_eq!(gather_every(part_mask(32, 0), 32), 0b11);
    }

    #[test]
    fn part_masks_tile_the_slots() {
        for parts in [1u32, 2, 4, 8, 16, 32] {
            let mut all = 0u64;
            for part in 0..parts {
                let m = part_mask(parts, part);
                assert_eq!(all & m, 0, "parts {parts} overlap at part {part}");
                all |= m;
                for s in 0..64 {
                    assert_eq!(m >> s & 1 == 1, s % parts == part, "parts {parts} part {part} slot {s}");
                }
            }
            assert_eq!(all, u64::MAX);
        }
    }

    /// A xorshift sequence of 64-bit masks, with the edge cases first.
    fn masks() -> impl Iterator<Item = u64> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        [0u64, 1, u64::MAX, 1 << 63, 0xffff_ffff, 0xffff_ffff_0000_0000].into_iter().chain((0..3000).map(
            move |i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Sparse and dense masks too.
                match i % 3 {
                    0 => x,
                    1 => x & (x >> 1) & (x >> 2),
                    _ => x | (x >> 3),
                }
            },
        ))
    }

    #[test]
    fn select_bit_finds_the_set_bit_of_each_rank() {
        for x in masks() {
            let set: Vec<u32> = (0..64).filter(|&b| x >> b & 1 == 1).collect();
            for rank in 0..=65u32 {
                let want = set.get(rank as usize).copied().unwrap_or(64);
                assert_eq!(select_bit(x, rank), want, "{x:#x} rank {rank}");
            }
        }
    }

    #[test]
    fn parts_combine_as_a_tree_lower_first() {
        // A non-commutative, non-associative combination shows the exact tree.
        let combine = |a: u64, b: u64| a * 31 + b + 1;
        let mut accs = [10u64, 11, 12, 13];
        let expect = combine(combine(10, 12), combine(11, 13));
        assert_eq!(combine_parts(&mut accs, &combine), expect);
        let mut one = [7u64];
        assert_eq!(combine_parts(&mut one, &combine), 7);
    }

    #[test]
    fn lane_counts() {
        assert!(valid_lanes(1) && valid_lanes(16) && valid_lanes(32));
        assert!(!valid_lanes(0) && !valid_lanes(3) && !valid_lanes(64));
    }
}
