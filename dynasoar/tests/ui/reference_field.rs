use dynasoar::prelude::*;

#[soa_class]
pub struct Node {
    pub next: &'static Node,
}

fn main() {}
