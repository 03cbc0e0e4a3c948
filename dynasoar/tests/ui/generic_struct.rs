use dynasoar::prelude::*;

#[soa_class]
pub struct Cell<T> {
    pub value: T,
}

fn main() {}
