use dynasoar::prelude::*;

#[kernel]
pub fn fill<T: Plain>(p: T) {
    let _ = p;
}

fn main() {}
