use dynasoar::prelude::*;

pub struct Name<'a>(&'a str);

#[soa_class]
pub struct Person {
    pub name: Name<'static>,
}

fn main() {}
