//! Floating-point helpers that give the same results on the GPU and the CPU backend.
//!
//! `core` has no `sqrt`/`floor` on stable, and nvptx has no libm: on the GPU these are single
//! PTX instructions with IEEE rounding (`sqrt.rn`, `cvt.rmi`), on the host the standard
//! library's correctly rounded functions, so both backends compute bit-identical results.

use crate::Plain;

/// Square root, correctly rounded.
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

    #[test]
    fn vector_arithmetic() {
        let a = Vec2::new(3.0, 4.0);
        assert_eq!(a.length(), 5.0);
        assert_eq!(a + Vec2::new(1.0, 1.0), Vec2::new(4.0, 5.0));
        assert_eq!(a * 2.0 - a, a);
        assert_eq!((-a).x, -3.0);
        assert_eq!(floor(-1.5), -2.0);
        assert_eq!(sqrt(2.0), 2.0f32.sqrt());
    }
}
