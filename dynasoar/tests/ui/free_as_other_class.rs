use dynasoar::prelude::*;

#[soa_class]
pub struct Fish {
    pub age: u32,
}

#[soa_class]
pub struct Shark {
    pub hunger: u32,
}

dynasoar::allocator!(pub Ocean: Fish, Shark);

fn eat(dev: &Device<Ocean>, fish: Obj<Fish>) {
    dev.free::<Shark>(fish);
}

fn main() {}
