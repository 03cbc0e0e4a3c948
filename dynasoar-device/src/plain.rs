//! Plain data: values that may live in device memory and cross between host and GPU.

/// Plain data: `Copy`, no references or pointers, valid when all bytes are zero, and laid out
/// the same on the host and on the GPU.
///
/// Fields of SOA classes, kernel parameters and buffer elements are plain data. Implemented for
/// integers, floats, `bool`, fixed arrays of plain data and [`DevPtr`](crate::DevPtr); user
/// structs get it with `#[derive(Plain)]`, which requires `#[repr(C)]` and plain fields.
///
/// # Safety
/// Implementors must be valid for the all-zero bit pattern, contain no references, pointers
/// or interior mutability, and have a layout that does not depend on the target (`repr(C)` or a
/// primitive).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not plain data",
    label = "not plain data",
    note = "device memory holds plain data only: integers, floats, bool, `Handle<T>`, fixed arrays \
            of these, and `#[repr(C)]` structs with `#[derive(Plain)]`; references, pointers, \
            `Box` and `Vec` cannot live on the GPU"
)]
pub unsafe trait Plain: Copy + Send + Sync + 'static {}

macro_rules! plain {
    ($($t:ty),*) => { $(
        // SAFETY: primitives are valid when zero and have target-independent layout here
        // (both targets are 64-bit little-endian).
        unsafe impl Plain for $t {}
    )* };
}
plain!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64, bool, ());

// SAFETY: an array of plain data is plain data.
unsafe impl<T: Plain, const N: usize> Plain for [T; N] {}
