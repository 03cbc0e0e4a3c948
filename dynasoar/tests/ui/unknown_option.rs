use dynasoar::prelude::*;

#[soa_class(shared)]
pub struct Body {
    pub mass: f32,
}

fn main() {}
