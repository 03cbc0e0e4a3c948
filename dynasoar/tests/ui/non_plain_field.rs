use dynasoar::prelude::*;

/// Not marked plain: no `#[repr(C)]`, no `#[derive(Plain)]`.
#[derive(Clone, Copy)]
pub struct Color {
    pub rgb: [u8; 3],
}

#[soa_class]
pub struct Pixel {
    pub color: Color,
}

fn main() {}
