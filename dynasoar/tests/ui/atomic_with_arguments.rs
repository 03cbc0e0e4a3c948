use dynasoar::prelude::*;

#[soa_class]
pub struct Counter {
    #[atomic(relaxed)]
    pub hits: u32,
}

fn main() {}
