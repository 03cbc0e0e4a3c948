//! Totals: counts, sums, minima and maxima that the threads of a launch reduce into, for the
//! host to read ([`Totals`]). A model's statistics (how many fish, the total energy, the
//! largest speed) then take one parallel `parallel_do` over the class, instead of a one-thread
//! `device_do` over every object.
//!
//! Each slot is a 64-bit word. Minima and maxima of signed and floating-point values are kept
//! in an order-preserving unsigned encoding ([`ordered_i64`], [`ordered_f64`]), so that every
//! minimum starts at `u64::MAX` and every maximum at 0, and one unsigned atomic serves them all.

use crate::Plain;
use crate::arch::WarpGroup;
use crate::arch::atomic::Atomic64;
use crate::kernel::DevPtr;

/// `v` as an unsigned integer of the same order (the sign bit flipped).
#[inline(always)]
pub const fn ordered_i64(v: i64) -> u64 {
    (v as u64) ^ (1 << 63)
}

/// The inverse of [`ordered_i64`].
#[inline(always)]
pub const fn from_ordered_i64(word: u64) -> i64 {
    (word ^ (1 << 63)) as i64
}

/// `v` as an unsigned integer of the same order, for every value but NaN (negative numbers
/// have all bits flipped, others the sign bit): `-0.0` orders just below `0.0`.
#[inline(always)]
pub fn ordered_f64(v: f64) -> u64 {
    let bits = v.to_bits();
    if bits >> 63 == 1 { !bits } else { bits | (1 << 63) }
}

/// The inverse of [`ordered_f64`].
#[inline(always)]
pub fn from_ordered_f64(word: u64) -> f64 {
    f64::from_bits(if word >> 63 == 1 { word & !(1 << 63) } else { !word })
}

/// Slots in device memory that every thread of a launch may add to or take the minimum or
/// maximum with; pass it to a `#[parallel]` method as (or in) its argument, and read it on the
/// host after the launch. The host makes it (`Runtime::totals`), with each slot set to the
/// start of its operation: 0 for counts, sums and maxima, `u64::MAX` for minima.
///
/// Integer counts, sums, minima and maxima are exact and do not depend on the order in which
/// threads run; so are floating-point minima and maxima (NaN is ignored). A floating-point sum
/// ([`add_f64`](Self::add_f64)) depends on the order: its last bits may differ from run to run
/// and between the GPU and the CPU backend.
///
/// A slot index out of range traps (the host reports the kernel as failed).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Totals {
    words: DevPtr<u64>,
    len: u32,
    _pad: u32,
}

// SAFETY: an address and a length.
unsafe impl Plain for Totals {}

impl Totals {
    /// The totals in the `len` words at `words`.
    ///
    /// # Safety
    /// `words` must point to `len` 64-bit words in memory that stays valid while the totals are
    /// used, and that is accessed only through atomic operations meanwhile.
    pub const unsafe fn from_raw(words: DevPtr<u64>, len: u32) -> Self {
        Totals { words, len, _pad: 0 }
    }

    /// Number of slots.
    #[inline(always)]
    pub fn len(&self) -> u32 {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn word(&self, slot: u32) -> &Atomic64 {
        assert!(slot < self.len, "Totals slot out of range");
        // SAFETY: in range, and `from_raw`'s contract: valid words, accessed atomically.
        unsafe { Atomic64::from_ptr(self.words.as_ptr().add(slot as usize)) }
    }

    /// Count one in `slot`. The lanes of a warp that count in the same slot together add once.
    #[inline(always)]
    pub fn count(&self, slot: u32) {
        let word = self.word(slot);
        WarpGroup::current_with_key(slot).fetch_add_one_u64(word);
    }

    /// Add `value` to `slot` (wrapping).
    #[inline(always)]
    pub fn add_u64(&self, slot: u32, value: u64) {
        self.word(slot).reduce_add(value);
    }

    /// Add `value` to `slot` (wrapping; a slot holds a two's-complement sum).
    #[inline(always)]
    pub fn add_i64(&self, slot: u32, value: i64) {
        self.word(slot).reduce_add(value as u64);
    }

    /// Add `value` to the `f64` in `slot` (order-dependent rounding, see the type's docs).
    #[inline(always)]
    pub fn add_f64(&self, slot: u32, value: f64) {
        let word = self.word(slot);
        let mut current = word.load();
        loop {
            let new = (f64::from_bits(current) + value).to_bits();
            match word.compare_exchange(current, new) {
                Ok(_) => return,
                Err(actual) => current = actual,
            }
        }
    }

    /// Take the minimum of `slot` and `value`.
    #[inline(always)]
    pub fn min_u64(&self, slot: u32, value: u64) {
        self.word(slot).fetch_min(value);
    }

    /// Take the maximum of `slot` and `value`.
    #[inline(always)]
    pub fn max_u64(&self, slot: u32, value: u64) {
        self.word(slot).fetch_max(value);
    }

    /// Take the minimum of `slot` and `value` (kept as [`ordered_i64`]).
    #[inline(always)]
    pub fn min_i64(&self, slot: u32, value: i64) {
        self.word(slot).fetch_min(ordered_i64(value));
    }

    /// Take the maximum of `slot` and `value` (kept as [`ordered_i64`]).
    #[inline(always)]
    pub fn max_i64(&self, slot: u32, value: i64) {
        self.word(slot).fetch_max(ordered_i64(value));
    }

    /// Take the minimum of `slot` and `value` (kept as [`ordered_f64`]); NaN is ignored.
    #[inline(always)]
    pub fn min_f64(&self, slot: u32, value: f64) {
        if !value.is_nan() {
            self.word(slot).fetch_min(ordered_f64(value));
        }
    }

    /// Take the maximum of `slot` and `value` (kept as [`ordered_f64`]); NaN is ignored.
    #[inline(always)]
    pub fn max_f64(&self, slot: u32, value: f64) {
        if !value.is_nan() {
            self.word(slot).fetch_max(ordered_f64(value));
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_encodings_keep_the_order_and_invert() {
        let ints = [i64::MIN, -5, -1, 0, 1, 7, i64::MAX];
        for w in ints.windows(2) {
            assert!(ordered_i64(w[0]) < ordered_i64(w[1]), "{w:?}");
        }
        assert!(ints.iter().all(|&v| from_ordered_i64(ordered_i64(v)) == v));
        let floats = [f64::NEG_INFINITY, -1e300, -2.5, -0.0, 0.0, 1e-300, 3.0, f64::INFINITY];
        for w in floats.windows(2) {
            assert!(ordered_f64(w[0]) < ordered_f64(w[1]), "{w:?}");
        }
        assert!(floats.iter().all(|&v| from_ordered_f64(ordered_f64(v)).to_bits() == v.to_bits()));
        // The starting values: every encoded value lies between them.
        assert!(floats.iter().all(|&v| ordered_f64(v) > 0 && ordered_f64(v) < u64::MAX));
    }

    #[test]
    fn every_operation_reduces_into_its_slot() {
        let mut words = [0u64, 0, 0, u64::MAX, 0, u64::MAX, 0, 0];
        // SAFETY: eight words on this stack, accessed through the totals only.
        let t = unsafe { Totals::from_raw(DevPtr::from_addr(words.as_mut_ptr() as u64), 8) };
        for v in [3i64, -7, 12] {
            t.count(0);
            t.add_i64(1, v);
            t.add_f64(2, v as f64 * 0.5);
            t.min_i64(3, v);
            t.max_i64(4, v);
            t.min_f64(5, v as f64);
            t.max_f64(6, v as f64);
            t.add_u64(7, v.unsigned_abs());
        }
        t.max_f64(6, f64::NAN);
        assert_eq!(words[0], 3);
        assert_eq!(words[1] as i64, 8);
        assert_eq!(f64::from_bits(words[2]), 4.0);
        assert_eq!((from_ordered_i64(words[3]), from_ordered_i64(words[4])), (-7, 12));
        assert_eq!((from_ordered_f64(words[5]), from_ordered_f64(words[6])), (-7.0, 12.0));
        assert_eq!(words[7], 22);
    }

    #[test]
    #[should_panic(expected = "Totals slot out of range")]
    fn a_slot_out_of_range_panics() {
        let mut word = 0u64;
        // SAFETY: one word on this stack.
        let t = unsafe { Totals::from_raw(DevPtr::from_addr(&mut word as *mut u64 as u64), 1) };
        t.count(1);
    }
}
