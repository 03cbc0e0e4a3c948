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

fn is_comet(body: Obj<Body>) -> bool {
    // `Comet` is in no allocator.
    body.is::<Comet>()
}

fn main() {}
