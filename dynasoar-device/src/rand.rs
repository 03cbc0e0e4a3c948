//! A small, fast random number generator with the same sequence on the GPU and the CPU: apps
//! seeded alike compute the same simulation on both backends.
//!
//! SplitMix64 (Steele, Lea, Flood: "Fast splittable pseudorandom number generators", 2014):
//! one 64-bit state, an add and a few multiply-xor-shifts per number. Seed one per object or
//! per thread with [`Rng::new`]`(seed, stream)`; different streams give independent sequences.

use crate::Plain;

/// Random number generator state (8 bytes; can be a field of an object).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rng {
    state: u64,
}
// SAFETY: `repr(C)` wrapper of a u64.
unsafe impl Plain for Rng {}

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

#[inline(always)]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator for `stream` (e.g. an object or cell index) of the sequence `seed`.
    #[inline(always)]
    pub fn new(seed: u64, stream: u64) -> Self {
        Rng { state: mix(seed ^ mix(stream.wrapping_add(GOLDEN))) }
    }

    #[inline(always)]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        mix(self.state)
    }

    #[inline(always)]
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in `0..n` (`n > 0`; multiply-shift, bias below 2^-32).
    #[inline(always)]
    pub fn below(&mut self, n: u32) -> u32 {
        ((self.next_u32() as u64 * n as u64) >> 32) as u32
    }

    /// Uniform in `[0, 1)`.
    #[inline(always)]
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / (1u32 << 24) as f32)
    }

    /// Uniform in `[lo, hi)`.
    #[inline(always)]
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next_f32()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_and_values_are_in_range() {
        let mut a = Rng::new(42, 0);
        let mut b = Rng::new(42, 1);
        assert_ne!(a.next_u64(), b.next_u64());
        let mut counts = [0u32; 10];
        for _ in 0..10_000 {
            let x = a.next_f32();
            assert!((0.0..1.0).contains(&x));
            counts[a.below(10) as usize] += 1;
        }
        assert!(counts.iter().all(|&c| c > 800), "{counts:?}");
    }

    #[test]
    fn same_seed_same_sequence() {
        let (mut a, mut b) = (Rng::new(7, 9), Rng::new(7, 9));
        for _ in 0..100 {
            assert_eq!(a.next_u32(), b.next_u32());
        }
    }
}
