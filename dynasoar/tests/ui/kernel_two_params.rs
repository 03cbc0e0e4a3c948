use dynasoar::prelude::*;

#[kernel]
pub fn fill(n: u32, value: f32) {
    let _ = (n, value);
}

fn main() {}
