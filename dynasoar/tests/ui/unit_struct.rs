use dynasoar::prelude::*;

#[soa_class]
pub struct Marker;

fn main() {}
