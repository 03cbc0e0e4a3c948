use dynasoar::prelude::*;

#[soa_class]
pub fn body() {}

fn main() {}
