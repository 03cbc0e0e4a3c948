use dynasoar::prelude::*;

#[soa_class]
pub struct Counter {
    #[atomic]
    pub hits: u8,
}

fn main() {}
