use dynasoar::prelude::*;

#[soa_class]
pub struct Polygon {
    pub corners: [f32],
}

fn main() {}
