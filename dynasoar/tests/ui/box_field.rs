use dynasoar::prelude::*;

#[soa_class]
pub struct Node {
    pub payload: Box<u64>,
}

fn main() {}
