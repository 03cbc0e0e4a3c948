use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

#[soa_class]
pub struct Star {
    pub heat: f32,
}

dynasoar::allocator!(pub Space: Body, Star, Body);

fn main() {}
