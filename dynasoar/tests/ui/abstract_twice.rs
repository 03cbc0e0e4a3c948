use dynasoar::prelude::*;

#[soa_class(abstract, abstract)]
pub struct Agent {
    pub energy: u32,
}

fn main() {}
