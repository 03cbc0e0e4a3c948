use dynasoar::prelude::*;

#[soa_class]
pub enum Shape {
    Circle,
    Square,
}

fn main() {}
