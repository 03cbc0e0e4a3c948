use dynasoar::prelude::*;

#[derive(Clone, Copy, Plain)]
pub struct Params {
    pub dt: f32,
    pub steps: u32,
}

fn main() {}
