use dynasoar::prelude::*;

#[soa_class]
pub struct Swimmer {
    pub speed: f32,
}

#[soa_class]
pub struct Flyer {
    pub height: f32,
}

#[soa_class(extends = Swimmer, extends = Flyer)]
pub struct Duck {
    pub quacks: u32,
}

fn main() {}
