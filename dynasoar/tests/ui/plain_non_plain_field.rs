use dynasoar::prelude::*;

#[derive(Clone, Copy, Plain)]
#[repr(C)]
pub struct Params {
    pub dt: f32,
    pub name: &'static str,
}

fn main() {}
