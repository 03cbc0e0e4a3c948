use dynasoar::prelude::*;

#[derive(Clone, Copy, Plain)]
#[repr(C)]
pub union Bits {
    pub int: u32,
    pub float: f32,
}

fn main() {}
