//! Host side of the smoke model: run `histogram` and compute the same result on the host.

use dynasoar::host::{Executor, Result};
use dynasoar_models::smoke::{HISTOGRAM, HistogramParams};

/// What `histogram` computes: bin counts, and the even values (sorted, since the kernel appends
/// them in no particular order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SmokeResult {
    pub counts: Vec<u32>,
    pub evens: Vec<u32>,
}

impl SmokeResult {
    /// The result computed plainly on the host.
    pub fn reference(values: &[u32], bins: u32) -> Self {
        let mut counts = vec![0u32; bins as usize];
        let mut evens = Vec::new();
        for &v in values {
            counts[(v % bins) as usize] += 1;
            if v % 2 == 0 {
                evens.push(v);
            }
        }
        evens.sort_unstable();
        SmokeResult { counts, evens }
    }
}

/// Deterministic pseudo-random values (xorshift), with many repeats so that lanes of a warp
/// often share a bin.
pub fn sample_values(len: usize, seed: u64) -> Vec<u32> {
    let mut x = seed.max(1);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 1000) as u32
        })
        .collect()
}

/// Run `histogram` on `exec` over `values` into `bins` bins.
pub fn run_histogram(exec: &Executor, values: &[u32], bins: u32) -> Result<SmokeResult> {
    if bins == 0 {
        return Err(dynasoar::host::Error::InvalidArgument("bins must be at least 1".into()));
    }
    let len = u32::try_from(values.len())
        .map_err(|_| dynasoar::host::Error::InvalidArgument("at most u32::MAX values".into()))?;
    let input = exec.upload(values)?;
    let counts = exec.alloc_zeroed::<u32>(bins as usize)?;
    let evens = exec.alloc_zeroed::<u32>(values.len())?;
    let even_count = exec.alloc_zeroed::<u32>(1)?;
    let params = HistogramParams {
        values: input.ptr(),
        len,
        bins,
        counts: counts.ptr(),
        evens: evens.ptr(),
        even_count: even_count.ptr(),
    };
    exec.launch(&HISTOGRAM, exec.full_grid(256), params)?;
    let n = exec.read_all(&even_count)?[0] as usize;
    let mut evens = exec.read(&evens, 0, n)?;
    evens.sort_unstable();
    Ok(SmokeResult { counts: exec.read_all(&counts)?, evens })
}
