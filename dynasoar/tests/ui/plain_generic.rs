use dynasoar::prelude::*;

#[derive(Clone, Copy, Plain)]
#[repr(C)]
pub struct Pair<T> {
    pub a: T,
    pub b: T,
}

fn main() {}
