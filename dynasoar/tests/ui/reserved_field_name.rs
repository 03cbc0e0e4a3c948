use dynasoar::prelude::*;

#[soa_class]
pub struct Node {
    pub handle: u32,
}

fn main() {}
