use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

#[soa_class]
pub struct Comet {
    pub mass: f32,
}

dynasoar::allocator!(pub Space: Body);

fn spawn(dev: &Device<Space>) {
    // `Comet` is in no allocator.
    let _ = dev.make_new(Comet { mass: 1.0 });
}

fn main() {}
