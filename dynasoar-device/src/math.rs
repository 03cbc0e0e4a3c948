//! Floating-point helpers that give the same results on the GPU and the CPU backend.
//!
//! `core` has no `sqrt`/`floor` on stable, and nvptx has no libm: on the GPU these are single
//! PTX instructions with IEEE rounding (`sqrt.rn`, `cvt.rmi`), on the host the standard
//! library's correctly rounded functions, so both backends compute bit-identical results
//! (signed zeros, subnormals and infinities included). NaNs are the exception: a NaN result
//! is a NaN on both, but the GPU always gives the canonical `0x7fffffff`, where the host gives
//! the input NaN's payload (quieted) or, on x86, `0xffc00000` for an invalid operation such as
//! `sqrt(-1)`; the same holds for plain `f32` arithmetic. The tests check this module against
//! `f64`-derived references here, and `tests/tests/math.rs` checks the GPU against the CPU
//! backend bit for bit (any NaN matching any NaN).
//!
//! The one exception by choice is [`fast`] (with [`Precision`] to write a formula once for
//! both): approximate square roots and divisions on the GPU, for methods that opt in.

use crate::Plain;

/// Square root, correctly rounded.
///
/// On the GPU the `sqrt.rn.f32` instruction: a reciprocal square root estimate refined in
/// fused multiply-adds, with a branch around a slow path that only zeros, negatives, NaNs,
/// infinity and positives below `2^-101` take. Both paths computed without the branch (the same
/// bits for every input) made n-body's force loop 15% slower on an H200: the branch is never
/// taken and costs less than the selects (docs/performance-log.md, "n-body: a square root
/// without a branch").
#[inline(always)]
pub fn sqrt(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r: f32;
        // SAFETY: a pure arithmetic instruction.
        unsafe {
            core::arch::asm!("sqrt.rn.f32 {r}, {x};", r = out(reg32) r, x = in(reg32) x, options(pure, nomem, nostack))
        };
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.sqrt()
    }
}

/// Largest integer not greater than `x`.
#[inline(always)]
pub fn floor(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let r: f32;
        // SAFETY: a pure arithmetic instruction.
        unsafe {
            core::arch::asm!("cvt.rmi.f32.f32 {r}, {x};", r = out(reg32) r, x = in(reg32) x, options(pure, nomem, nostack))
        };
        r
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.floor()
    }
}

/// Approximate square root and division: the GPU's fast instructions, for methods that trade
/// the last bits of their results for speed (an opt-in, like a C compiler's fast math, but per
/// call and without reassociation or fused multiply-adds: everything else a formula does stays
/// as exact as before).
///
/// On the GPU `sqrt` is `sqrt.approx.f32` and `div` is `div.full.f32` (the PTX ISA gives the
/// latter at most 2 ulp from the exact quotient over the whole range; `tests/tests/math.rs`
/// checks both within 2 ulp on the GPU), without the branches around a slow path that the
/// correctly rounded `sqrt.rn` and `div.rn` compile to. Subnormals are kept (no flush to zero).
/// On the CPU backend they are the correctly rounded operations, so **results differ between
/// the backends** in the last bits, and simulations that amplify differences (n-body over
/// thousands of steps) drift apart: check a fast run against an exact one within a tolerance,
/// or against another fast run on the GPU, which gives the same bits for the same operations
/// in the same order.
pub mod fast {
    /// Square root, approximate on the GPU (`sqrt.approx.f32`), correctly rounded on the CPU.
    #[inline(always)]
    pub fn sqrt(x: f32) -> f32 {
        #[cfg(target_arch = "nvptx64")]
        {
            let r: f32;
            // SAFETY: a pure arithmetic instruction.
            unsafe {
                core::arch::asm!("sqrt.approx.f32 {r}, {x};", r = out(reg32) r, x = in(reg32) x,
                    options(pure, nomem, nostack))
            };
            r
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            x.sqrt()
        }
    }

    /// `a / b`, within 2 ulp on the GPU (`div.full.f32`), correctly rounded on the CPU.
    #[inline(always)]
    pub fn div(a: f32, b: f32) -> f32 {
        #[cfg(target_arch = "nvptx64")]
        {
            let r: f32;
            // SAFETY: a pure arithmetic instruction.
            unsafe {
                core::arch::asm!("div.full.f32 {r}, {a}, {b};", r = out(reg32) r, a = in(reg32) a,
                    b = in(reg32) b, options(pure, nomem, nostack))
            };
            r
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            a / b
        }
    }
}

/// The square root and division a formula uses, as a type parameter, so that one formula
/// compiles into an exact and a fast kernel (`fn force<P: Precision>(..)`, called as
/// `force::<Exact>` in one method and `force::<Fast>` in another).
///
/// ```
/// use dynasoar_device::math::{Exact, Fast, Precision, Vec2};
///
/// /// `1 / |d|^2`, exact or fast.
/// fn inverse_square<P: Precision>(d: Vec2) -> f32 {
///     P::div(1.0, d.length_squared())
/// }
/// let d = Vec2::new(3.0, 4.0);
/// assert_eq!(inverse_square::<Exact>(d), 1.0 / 25.0);
/// // On the CPU backend `Fast` computes exactly as well.
/// assert_eq!(inverse_square::<Fast>(d), inverse_square::<Exact>(d));
/// ```
pub trait Precision: Copy + 'static {
    /// Square root of `x`.
    fn sqrt(x: f32) -> f32;
    /// `a / b`.
    fn div(a: f32, b: f32) -> f32;
}

/// Correctly rounded square root and division ([`sqrt`] and `/`): bit-identical on the GPU
/// and the CPU backend.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Exact;

/// The GPU's approximate square root and division ([`fast`]); exact on the CPU backend.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fast;

impl Precision for Exact {
    #[inline(always)]
    fn sqrt(x: f32) -> f32 {
        sqrt(x)
    }
    #[inline(always)]
    fn div(a: f32, b: f32) -> f32 {
        a / b
    }
}

impl Precision for Fast {
    #[inline(always)]
    fn sqrt(x: f32) -> f32 {
        fast::sqrt(x)
    }
    #[inline(always)]
    fn div(a: f32, b: f32) -> f32 {
        fast::div(a, b)
    }
}

/// A 2-D vector of `f32`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vec2 {
    pub x: f32,
    pub y: f32,
}
// SAFETY: `repr(C)` pair of floats.
unsafe impl Plain for Vec2 {}

impl Vec2 {
    pub const ZERO: Vec2 = Vec2 { x: 0.0, y: 0.0 };

    #[inline(always)]
    pub const fn new(x: f32, y: f32) -> Self {
        Vec2 { x, y }
    }

    #[inline(always)]
    pub fn dot(self, o: Vec2) -> f32 {
        self.x * o.x + self.y * o.y
    }

    #[inline(always)]
    pub fn length_squared(self) -> f32 {
        self.dot(self)
    }

    #[inline(always)]
    pub fn length(self) -> f32 {
        sqrt(self.length_squared())
    }
}

macro_rules! vec_op {
    ($trait:ident, $f:ident, $assign:ident, $fa:ident, $op:tt) => {
        impl core::ops::$trait for Vec2 {
            type Output = Vec2;
            #[inline(always)]
            fn $f(self, o: Vec2) -> Vec2 {
                Vec2 { x: self.x $op o.x, y: self.y $op o.y }
            }
        }
        impl core::ops::$assign for Vec2 {
            #[inline(always)]
            fn $fa(&mut self, o: Vec2) {
                *self = *self $op o;
            }
        }
    };
}
vec_op!(Add, add, AddAssign, add_assign, +);
vec_op!(Sub, sub, SubAssign, sub_assign, -);

impl core::ops::Mul<f32> for Vec2 {
    type Output = Vec2;
    #[inline(always)]
    fn mul(self, s: f32) -> Vec2 {
        Vec2 { x: self.x * s, y: self.y * s }
    }
}

impl core::ops::Div<f32> for Vec2 {
    type Output = Vec2;
    #[inline(always)]
    fn div(self, s: f32) -> Vec2 {
        Vec2 { x: self.x / s, y: self.y / s }
    }
}

impl core::ops::Neg for Vec2 {
    type Output = Vec2;
    #[inline(always)]
    fn neg(self) -> Vec2 {
        Vec2 { x: -self.x, y: -self.y }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::format;

    /// `f32` from its bits.
    fn f(bits: u32) -> f32 {
        f32::from_bits(bits)
    }

    /// `got` is `want` bit for bit (so `-0` is not `+0`); any NaN matches a NaN.
    #[track_caller]
    fn same(got: f32, want: f32, what: &str) {
        assert!(
            got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
            "{what}: {got:e} ({:#010x}), expected {want:e} ({:#010x})",
            got.to_bits(),
            want.to_bits()
        );
    }

    /// The square root of `x` correctly rounded to `f32`, computed in `f64` (the double
    /// rounding is innocuous: `f64` has more than twice `f32`'s precision plus two bits).
    fn sqrt_reference(x: f32) -> f32 {
        (x as f64).sqrt() as f32
    }

    /// `floor` from integer truncation.
    fn floor_reference(x: f32) -> f32 {
        // From 2^23 on every f32 is an integer; infinities and NaNs stay as they are.
        if x.is_nan() || x.abs() >= 8_388_608.0 {
            return x;
        }
        let t = x as i32;
        let r = if (t as f32) > x { t - 1 } else { t };
        if r == 0 { 0.0f32.copysign(x) } else { r as f32 }
    }

    /// Every input class: zeros, subnormals, normals, the largest finite, infinities, NaNs, of
    /// both signs, plus pseudo-random bit patterns.
    fn inputs() -> impl Iterator<Item = f32> {
        let special = [
            0u32,
            1,
            2,
            3,
            0x0040_0000,
            0x007f_ffff,
            0x0080_0000,
            0x0080_0001,
            0x3f00_0000,
            0x3f7f_ffff,
            0x3f80_0000,
            0x3f80_0001,
            0x3fc0_0000,
            0x4b00_0000,
            0x4b7f_ffff,
            0x4b80_0000,
            0x7f7f_ffff,
            0x7f80_0000,
            0x7fc0_0000,
            0x7f80_0001,
        ];
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let random = (0..200_000).map(move |_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s as u32
        });
        special.into_iter().flat_map(|b| [b, b | 0x8000_0000]).chain(random).map(f32::from_bits)
    }

    #[test]
    fn sqrt_known_values() {
        for (x, want) in [
            (0.0, 0.0),
            (1.0, 1.0),
            (4.0, 2.0),
            (0.25, 0.5),
            (16_769_025.0, 4095.0), // an exact square with a 24-bit root
            (2.0, f(0x3fb5_04f3)),  // 1.41421353816986083984375 (the next f32 is further from √2)
            (0.5, f(0x3f35_04f3)),
            (3.0, f(0x3fdd_b3d7)),
            (f(1), f(0x1a35_04f3)), // the smallest subnormal, 2^-149: √2 · 2^-75
            (f(2), f(0x1a80_0000)), // 2^-148 = (2^-74)^2, a subnormal exact square
            (f(0x007f_ffff), f(0x1fff_ffff)),
            (f32::MAX, f(0x5f7f_ffff)),
            (f32::INFINITY, f32::INFINITY),
        ] {
            same(sqrt(x), want, &format!("sqrt({x:e})"));
        }
        same(sqrt(-0.0), -0.0, "sqrt(-0)");
        for x in [-1.0, -f(1), f32::NEG_INFINITY, f32::NAN, -f32::NAN] {
            assert!(sqrt(x).is_nan(), "sqrt({x:e}) = {:e}, expected NaN", sqrt(x));
        }
    }

    #[test]
    fn floor_known_values() {
        for (x, want) in [
            (0.0, 0.0),
            (-0.0, -0.0),
            (0.3, 0.0),
            (-0.3, -1.0),
            (f(1), 0.0),
            (-f(1), -1.0),
            (0.999_999_94, 0.0),
            (-0.999_999_94, -1.0),
            (1.0, 1.0),
            (-1.0, -1.0),
            (-1.5, -2.0),
            (2.5, 2.0),
            (8_388_607.5, 8_388_607.0),
            (-8_388_607.5, -8_388_608.0),
            (16_777_218.0, 16_777_218.0), // from 2^23 on every f32 is whole
            (1e30, 1e30),
            (-f32::MAX, -f32::MAX),
            (f32::INFINITY, f32::INFINITY),
            (f32::NEG_INFINITY, f32::NEG_INFINITY),
        ] {
            same(floor(x), want, &format!("floor({x:e})"));
        }
        assert!(floor(f32::NAN).is_nan() && floor(-f32::NAN).is_nan());
    }

    #[test]
    fn sqrt_is_correctly_rounded() {
        for x in inputs() {
            same(sqrt(x), sqrt_reference(x), &format!("sqrt({x:e}) [{:#010x}]", x.to_bits()));
        }
        // Next to rounding boundaries: around the squares of midpoints between adjacent f32s.
        for y in [1.0f32, 1.5, 3.0, 1234.567, 0.1, 1e-20, 1e18, f(0x0080_0000)] {
            let mid = (y as f64 + y.next_up() as f64) / 2.0;
            let x = (mid * mid) as f32;
            for x in [x.next_down(), x, x.next_up()] {
                same(sqrt(x), sqrt_reference(x), &format!("sqrt({x:e}) [{:#010x}]", x.to_bits()));
            }
        }
    }

    #[test]
    fn floor_is_exact() {
        let near_integers = [0.0f32, 1.0, 2.0, 100.0, 4_194_304.0, 8_388_608.0, 16_777_216.0]
            .into_iter()
            .flat_map(|k| [k, -k])
            .flat_map(|k| [k.next_down(), k, k.next_up(), k + 0.5, k - 0.5]);
        for x in inputs().chain(near_integers) {
            same(floor(x), floor_reference(x), &format!("floor({x:e}) [{:#010x}]", x.to_bits()));
        }
    }

    #[test]
    fn vector_arithmetic() {
        let a = Vec2::new(3.0, 4.0);
        assert_eq!(a.length(), 5.0);
        assert_eq!(a.length_squared(), 25.0);
        assert_eq!(Vec2::new(1.0, 1.0).length(), f(0x3fb5_04f3));
        assert_eq!(a + Vec2::new(1.0, 1.0), Vec2::new(4.0, 5.0));
        assert_eq!(a * 2.0 - a, a);
        assert_eq!(a / 2.0, Vec2::new(1.5, 2.0));
        assert_eq!((-a).x, -3.0);
        assert_eq!(a.dot(Vec2::new(-4.0, 3.0)), 0.0);
    }
}
