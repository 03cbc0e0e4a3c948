//! The host half of [`Totals`]: make the slots, each set to the start of its operation, and
//! read them back as values ([`HostTotals`]).
//!
//! ```ignore
//! // Device: #[parallel] fn tally(this: Ref<Self>, _dev: &Device<Ocean>, t: Totals) {
//! //     t.count(0); t.add_f64(1, this.energy() as f64); t.max_f64(2, this.speed() as f64);
//! // }
//! let totals = rt.totals(&[Total::Count, Total::SumF64, Total::MaxF64])?;
//! rt.parallel_do_with(Fish::tally, totals.device())?;
//! let [fish, energy, fastest] = rt.read_totals(&totals)?[..] else { unreachable!() };
//! ```

use dynasoar_device::Totals;
use dynasoar_device::totals::{from_ordered_f64, from_ordered_i64};

use crate::backend::{Buffer, Executor};
use crate::error::Result;

/// What a slot of [`Totals`] holds, and so where it starts and how it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Total {
    /// [`Totals::count`]: a `u64` count, from 0.
    Count,
    /// [`Totals::add_u64`]: a wrapping `u64` sum, from 0.
    SumU64,
    /// [`Totals::add_i64`]: a wrapping `i64` sum, from 0.
    SumI64,
    /// [`Totals::add_f64`]: an `f64` sum, from 0 (order-dependent rounding).
    SumF64,
    /// [`Totals::min_u64`]: from `u64::MAX`.
    MinU64,
    /// [`Totals::max_u64`]: from 0.
    MaxU64,
    /// [`Totals::min_i64`]: from `i64::MAX`.
    MinI64,
    /// [`Totals::max_i64`]: from `i64::MIN`.
    MaxI64,
    /// [`Totals::min_f64`]: from `+inf` (what a slot that saw no value reads).
    MinF64,
    /// [`Totals::max_f64`]: from `-inf`.
    MaxF64,
}

impl Total {
    /// The slot's word before any thread touched it.
    fn start(self) -> u64 {
        match self {
            Total::MinU64 | Total::MinI64 | Total::MinF64 => u64::MAX,
            _ => 0,
        }
    }

    /// The value of the slot's `word`.
    fn value(self, word: u64) -> TotalValue {
        match self {
            Total::Count | Total::SumU64 | Total::MinU64 | Total::MaxU64 => TotalValue::U64(word),
            Total::SumI64 => TotalValue::I64(word as i64),
            Total::MinI64 | Total::MaxI64 => TotalValue::I64(from_ordered_i64(word)),
            Total::SumF64 => TotalValue::F64(f64::from_bits(word)),
            Total::MinF64 if word == u64::MAX => TotalValue::F64(f64::INFINITY),
            Total::MaxF64 if word == 0 => TotalValue::F64(f64::NEG_INFINITY),
            Total::MinF64 | Total::MaxF64 => TotalValue::F64(from_ordered_f64(word)),
        }
    }
}

/// A slot's value, as its [`Total`] says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TotalValue {
    U64(u64),
    I64(i64),
    F64(f64),
}

impl TotalValue {
    /// The value of a `u64` slot.
    pub fn as_u64(self) -> Option<u64> {
        if let TotalValue::U64(v) = self { Some(v) } else { None }
    }
    /// The value of an `i64` slot.
    pub fn as_i64(self) -> Option<i64> {
        if let TotalValue::I64(v) = self { Some(v) } else { None }
    }
    /// The value of an `f64` slot.
    pub fn as_f64(self) -> Option<f64> {
        if let TotalValue::F64(v) = self { Some(v) } else { None }
    }
}

/// [`Totals`] in device memory with the host's record of what each slot holds.
pub struct HostTotals {
    words: Buffer<u64>,
    kinds: Vec<Total>,
}

impl HostTotals {
    /// Slots of `kinds`, each at its start.
    pub fn new(exec: &Executor, kinds: &[Total]) -> Result<Self> {
        let starts: Vec<u64> = kinds.iter().map(|k| k.start()).collect();
        let words = if starts.is_empty() { exec.alloc_zeroed(1)? } else { exec.upload(&starts)? };
        Ok(HostTotals { words, kinds: kinds.to_vec() })
    }

    /// The totals, as device code takes them.
    pub fn device(&self) -> Totals {
        // SAFETY: the buffer holds `kinds.len()` words and lives as long as `self`; device code
        // accesses them atomically only.
        unsafe { Totals::from_raw(self.words.ptr(), self.kinds.len() as u32) }
    }

    /// What each slot holds.
    pub fn kinds(&self) -> &[Total] {
        &self.kinds
    }

    /// The slots' values (waits for queued work).
    pub fn read(&self, exec: &Executor) -> Result<Vec<TotalValue>> {
        let words = exec.read(&self.words, 0, self.kinds.len())?;
        Ok(self.kinds.iter().zip(words).map(|(k, w)| k.value(w)).collect())
    }

    /// Set every slot back to its start, to reduce again.
    pub fn reset(&mut self, exec: &Executor) -> Result<()> {
        let starts: Vec<u64> = self.kinds.iter().map(|k| k.start()).collect();
        exec.write(&mut self.words, 0, &starts)
    }
}

#[cfg(test)]
mod tests {
    use super::{Total, TotalValue};
    use dynasoar_device::totals::{ordered_f64, ordered_i64};

    #[test]
    fn slots_read_as_their_kind_says() {
        assert_eq!(Total::MinF64.value(Total::MinF64.start()), TotalValue::F64(f64::INFINITY));
        assert_eq!(Total::MaxF64.value(Total::MaxF64.start()), TotalValue::F64(f64::NEG_INFINITY));
        assert_eq!(Total::MinI64.value(Total::MinI64.start()), TotalValue::I64(i64::MAX));
        assert_eq!(Total::MaxI64.value(Total::MaxI64.start()), TotalValue::I64(i64::MIN));
        assert_eq!(Total::MinF64.value(ordered_f64(-2.5)), TotalValue::F64(-2.5));
        assert_eq!(Total::MaxI64.value(ordered_i64(-3)), TotalValue::I64(-3));
        assert_eq!(Total::SumI64.value((-4i64) as u64).as_i64(), Some(-4));
        assert_eq!(Total::Count.value(9).as_u64(), Some(9));
        assert_eq!(Total::Count.value(9).as_f64(), None);
    }
}
