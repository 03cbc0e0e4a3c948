use dynasoar::prelude::*;

#[soa_class]
pub struct Tiny {
    pub flag: u8,
}

#[soa_class]
pub struct Huge {
    pub data: [u8; 65],
}

dynasoar::allocator!(pub Space: Tiny, Huge);

fn main() {}
