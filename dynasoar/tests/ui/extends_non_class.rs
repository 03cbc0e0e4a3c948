use dynasoar::prelude::*;

#[soa_class(extends = u32)]
pub struct Fish {
    pub age: u32,
}

fn main() {}
