use dynasoar::prelude::*;

#[soa_class]
pub struct Particle {
    #[group(a)]
    #[group(b)]
    pub pos: Vec2,
    #[group(a)]
    pub mass: f32,
}

fn main() {}
