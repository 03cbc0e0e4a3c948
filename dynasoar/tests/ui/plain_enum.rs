use dynasoar::prelude::*;

#[derive(Clone, Copy, Plain)]
#[repr(u8)]
pub enum Color {
    Red,
    Green,
}

fn main() {}
