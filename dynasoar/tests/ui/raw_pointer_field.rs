use dynasoar::prelude::*;

#[soa_class]
pub struct Node {
    pub next: *const u32,
}

fn main() {}
