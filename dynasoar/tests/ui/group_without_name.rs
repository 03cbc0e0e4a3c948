use dynasoar::prelude::*;

#[soa_class]
pub struct Particle {
    #[group]
    pub pos: Vec2,
    #[group]
    pub mass: f32,
}

fn main() {}
