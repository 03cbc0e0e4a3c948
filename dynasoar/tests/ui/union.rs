use dynasoar::prelude::*;

#[soa_class]
pub union Bits {
    f: f32,
    u: u32,
}

fn main() {}
