use dynasoar::prelude::*;

#[soa_class]
pub struct Polygon {
    pub corners: Vec<Vec2>,
}

fn main() {}
