use dynasoar::prelude::*;

#[soa_class]
pub struct Particle {
    #[group(motion)]
    pub pos: Vec2,
    pub mass: f32,
    #[group(motion)]
    pub vel: Vec2,
}

fn main() {}
