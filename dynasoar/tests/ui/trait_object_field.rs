use dynasoar::prelude::*;

#[soa_class]
pub struct Shape {
    pub area: dyn Fn() -> f32,
}

fn main() {}
