use dynasoar::prelude::*;

#[derive(Clone, Copy, Plain)]
#[repr(C)]
pub struct Params {
    pub n: u32,
}

#[kernel]
pub fn count(p: Params) -> u32 {
    p.n
}

fn main() {}
