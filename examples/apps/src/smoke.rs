//! Host side of the smoke model: run `histogram` and `math_check`, and compute the same results
//! on the host.

use dynasoar::host::{Buffer, Executor, Result};
use dynasoar_models::smoke::{
    FAST_MATH_CHECK, FastMathCheckParams, HISTOGRAM, HistogramParams, MATH_CHECK, MathCheckParams,
    math_partner,
};

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
    sample_iter(seed).take(len).collect()
}

/// [`sample_values`], or an error naming `--len` when the host has not the memory.
pub fn try_sample_values(len: u64, seed: u64) -> anyhow::Result<Vec<u32>> {
    // The values, their copy for the kernel, its evens and the host's.
    crate::cli::ensure_host_memory(len.saturating_mul(4 * 4), len, "values", "--len")?;
    let mut v = crate::cli::try_with_capacity(len, "values", "--len")?;
    v.extend(sample_iter(seed).take(len as usize));
    Ok(v)
}

fn sample_iter(seed: u64) -> impl Iterator<Item = u32> {
    let mut x = seed.max(1);
    std::iter::repeat_with(move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % 1000) as u32
    })
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

/// What `math_check` computes, one `f32` bit pattern per input: `sqrt(x)`, `floor(x)` and the
/// length of the vector `(x, y)`, where `y` is the input's partner (`math_partner`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MathResults {
    pub sqrt: Vec<u32>,
    pub floor: Vec<u32>,
    pub length: Vec<u32>,
}

impl MathResults {
    /// The results computed on the host without `dynasoar::math` (see [`sqrt_reference`],
    /// [`floor_reference`], [`length_reference`]).
    pub fn reference(inputs: &[f32]) -> Self {
        let n = inputs.len();
        MathResults {
            sqrt: inputs.iter().map(|&x| sqrt_reference(x).to_bits()).collect(),
            floor: inputs.iter().map(|&x| floor_reference(x).to_bits()).collect(),
            length: (0..n)
                .map(|i| length_reference(inputs[i], inputs[math_partner(i, n)]).to_bits())
                .collect(),
        }
    }

    /// The first result that differs from `other`'s, described, or `None`. Results are
    /// compared bit for bit, except that a NaN equals any NaN (NaN payloads and signs are not
    /// the same on the two backends: `dynasoar::math` says why).
    pub fn first_difference(&self, other: &MathResults, inputs: &[f32]) -> Option<String> {
        let n = inputs.len();
        let same = |a: u32, b: u32| a == b || (f32::from_bits(a).is_nan() && f32::from_bits(b).is_nan());
        for (name, mine, theirs) in [
            ("sqrt", &self.sqrt, &other.sqrt),
            ("floor", &self.floor, &other.floor),
            ("length", &self.length, &other.length),
        ] {
            if mine.len() != n || theirs.len() != n {
                return Some(format!("{name}: {} and {} results for {n} inputs", mine.len(), theirs.len()));
            }
            if let Some(i) = (0..n).find(|&i| !same(mine[i], theirs[i])) {
                let (x, y) = (inputs[i], inputs[math_partner(i, n)]);
                let arg = if name == "length" { format!("({x:e}, {y:e})") } else { format!("({x:e})") };
                let arg_bits = if name == "length" {
                    format!("{:#010x}, {:#010x}", x.to_bits(), y.to_bits())
                } else {
                    format!("{:#010x}", x.to_bits())
                };
                return Some(format!(
                    "{name}{arg} [{arg_bits}], input {i}: {:e} ({:#010x}) vs {:e} ({:#010x})",
                    f32::from_bits(mine[i]),
                    mine[i],
                    f32::from_bits(theirs[i]),
                    theirs[i]
                ));
            }
        }
        None
    }
}

/// The square root of `x` correctly rounded to `f32`, computed in `f64`: the double rounding is
/// innocuous, since `f64` has more than twice `f32`'s precision plus two bits.
pub fn sqrt_reference(x: f32) -> f32 {
    (x as f64).sqrt() as f32
}

/// The largest integer not above `x`, from integer truncation (not a floating-point `floor`).
pub fn floor_reference(x: f32) -> f32 {
    // From 2^23 on every f32 is an integer; infinities and NaNs stay as they are.
    if x.is_nan() || x.abs() >= 8_388_608.0 {
        return x;
    }
    let t = x as i32; // toward zero, exact here
    let f = if (t as f32) > x { t - 1 } else { t };
    // Only inputs in [0, 1) and -0 give 0, with their sign.
    if f == 0 { 0.0f32.copysign(x) } else { f as f32 }
}

/// The length of `(x, y)` as `Vec2::length` defines it: `x * x + y * y` with each operation
/// rounded to `f32` (no fused multiply-add), then the correctly rounded square root, all
/// computed in `f64` (innocuous double rounding, as for [`sqrt_reference`]).
pub fn length_reference(x: f32, y: f32) -> f32 {
    let xx = (x as f64 * x as f64) as f32; // the product is exact in f64
    let yy = (y as f64 * y as f64) as f32;
    sqrt_reference((xx as f64 + yy as f64) as f32)
}

/// Inputs for `math_check`: special and boundary cases, then `random` random bit patterns
/// (any exponent, NaNs included) and `random` random values in [-1000, 1000] (lengths of pairs
/// of these round in the products and the sum, so a fused multiply-add would show), from `seed`.
pub fn math_inputs(random: usize, seed: u64) -> Vec<f32> {
    let mut v: Vec<f32> = Vec::new();
    // Zeros, subnormals, normals' edges, infinities, NaNs (quiet, signalling, with payloads).
    for bits in [
        0x0000_0000u32, // +0
        0x0000_0001,    // smallest subnormal
        0x0000_0002,
        0x0000_0003,
        0x0040_0000, // a subnormal with an odd exponent's square root
        0x007f_ffff, // largest subnormal
        0x0080_0000, // smallest normal
        0x0080_0001,
        0x3f7f_ffff, // 1 - 2^-24
        0x3f80_0000, // 1
        0x3f80_0001,
        0x7f7f_ffff, // largest finite
        0x7f80_0000, // infinity
        0x7fc0_0000, // quiet NaN
        0x7fc1_2345, // quiet NaN with a payload
        0x7f80_0001, // signalling NaN
        0x7fff_ffff,
    ] {
        v.push(f32::from_bits(bits));
        v.push(-f32::from_bits(bits));
    }
    // floor's boundaries: around integers, halves, and where f32 stops having fractions.
    for k in [0.0f32, 1.0, 2.0, 3.0, 100.0, 4_194_304.0, 8_388_608.0, 16_777_216.0] {
        for x in [k, -k] {
            v.extend([x.next_down(), x, x.next_up(), x + 0.5, x - 0.5]);
        }
    }
    v.extend([8_388_607.5, -8_388_607.5, 0.999_999_94, -0.999_999_94, 1e-30, -1e-30, 1e30, -1e30]);
    // Exact squares, down to subnormal ones (2^-148 = (2^-74)^2) and up to 2^126.
    for i in 1..=64u32 {
        v.push((i * i) as f32);
    }
    v.extend([4095.0f32 * 4095.0, 0.25, 2.25, 1.0 / 1024.0, f32::from_bits(0x0000_0004)]);
    v.extend([2f32.powi(-148), 2f32.powi(-126), 2f32.powi(126), 2f32.powi(127)]);
    // Squares of midpoints between adjacent f32s: the square roots of these and their neighbours
    // lie next to a rounding boundary.
    for y in [1.0f32, 1.5, 2.0, 3.0, 1234.567, 0.1, 1e-20, 1e18, f32::from_bits(0x0080_0000)] {
        let mid = (y as f64 + y.next_up() as f64) / 2.0;
        let x = (mid * mid) as f32;
        v.extend([x.next_down(), x, x.next_up()]);
    }
    // Random bit patterns and random moderate values (xorshift).
    let mut s = seed.max(1);
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    v.extend((0..random).map(|_| f32::from_bits(next() as u32)));
    v.extend((0..random).map(|_| ((next() >> 40) as f32 / (1u64 << 24) as f32) * 2000.0 - 1000.0));
    v
}

/// `inputs` as bit patterns on `exec`'s device, and their count.
fn upload_inputs(exec: &Executor, inputs: &[f32]) -> Result<(Buffer<u32>, u32)> {
    let len = u32::try_from(inputs.len())
        .map_err(|_| dynasoar::host::Error::InvalidArgument("at most u32::MAX inputs".into()))?;
    let bits: Vec<u32> = inputs.iter().map(|x| x.to_bits()).collect();
    Ok((exec.upload(&bits)?, len))
}

/// Run `math_check` on `exec` over `inputs`.
pub fn run_math_check(exec: &Executor, inputs: &[f32]) -> Result<MathResults> {
    let (input, len) = upload_inputs(exec, inputs)?;
    let sqrt = exec.alloc_zeroed::<u32>(inputs.len())?;
    let floor = exec.alloc_zeroed::<u32>(inputs.len())?;
    let length = exec.alloc_zeroed::<u32>(inputs.len())?;
    let params = MathCheckParams {
        inputs: input.ptr(),
        len,
        sqrt: sqrt.ptr(),
        floor: floor.ptr(),
        length: length.ptr(),
    };
    exec.launch(&MATH_CHECK, exec.full_grid(256), params)?;
    Ok(MathResults {
        sqrt: exec.read_all(&sqrt)?,
        floor: exec.read_all(&floor)?,
        length: exec.read_all(&length)?,
    })
}

/// What `fast_math_check` computes, one `f32` bit pattern per input: `fast::sqrt(x)` and
/// `fast::div(x, y)`, where `y` is the input's partner (`math_partner`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FastMathResults {
    pub sqrt: Vec<u32>,
    pub div: Vec<u32>,
}

/// Run `fast_math_check` on `exec` over `inputs`.
pub fn run_fast_math_check(exec: &Executor, inputs: &[f32]) -> Result<FastMathResults> {
    let (input, len) = upload_inputs(exec, inputs)?;
    let sqrt = exec.alloc_zeroed::<u32>(inputs.len())?;
    let div = exec.alloc_zeroed::<u32>(inputs.len())?;
    let params = FastMathCheckParams { inputs: input.ptr(), len, sqrt: sqrt.ptr(), div: div.ptr() };
    exec.launch(&FAST_MATH_CHECK, exec.full_grid(256), params)?;
    Ok(FastMathResults { sqrt: exec.read_all(&sqrt)?, div: exec.read_all(&div)? })
}

/// The quotient `x / y` correctly rounded to `f32`, computed in `f64` (innocuous double
/// rounding where the quotient is normal, as for [`sqrt_reference`]; subnormal quotients may
/// round twice).
pub fn div_reference(x: f32, y: f32) -> f32 {
    (x as f64 / y as f64) as f32
}

/// Units in the last place between two finite `f32` of the same sign or zero: the distance of
/// their bit patterns on the line of `f32` values (subnormals included), or `None` where either
/// is not finite.
pub fn ulps_apart(a: f32, b: f32) -> Option<u32> {
    if !a.is_finite() || !b.is_finite() {
        return None;
    }
    // Bit patterns as a monotone line: negative values mirrored below zero.
    let line = |x: f32| {
        let b = x.to_bits() as i64;
        if b & 0x8000_0000 != 0 { -(b & 0x7fff_ffff) } else { b }
    };
    Some((line(a) - line(b)).unsigned_abs().min(u32::MAX as u64) as u32)
}
