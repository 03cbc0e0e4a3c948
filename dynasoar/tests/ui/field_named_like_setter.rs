use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub pos: f32,
    pub set_pos: f32,
}

fn main() {}
