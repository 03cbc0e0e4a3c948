use dynasoar::prelude::*;

#[derive(Clone, Copy, Plain)]
#[repr(C)]
pub struct Params {
    pub n: u32,
}

#[kernel]
pub unsafe fn fill(p: Params) {
    let _ = p;
}

fn main() {}
