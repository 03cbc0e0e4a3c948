use dynasoar::prelude::*;

#[soa_class]
pub struct Point(f32, f32);

fn main() {}
