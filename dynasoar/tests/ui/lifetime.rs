use dynasoar::prelude::*;

#[soa_class]
pub struct Borrowed<'a> {
    pub name: &'a str,
}

fn main() {}
