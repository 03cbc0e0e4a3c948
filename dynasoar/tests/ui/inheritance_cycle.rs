use dynasoar::prelude::*;

#[soa_class(extends = Chicken)]
pub struct Egg {
    pub size: f32,
}

#[soa_class(extends = Egg)]
pub struct Chicken {
    pub age: u32,
}

fn main() {}
