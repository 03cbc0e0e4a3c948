use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

dynasoar::allocator!(
    #[blocks]
    pub Space: Body
);

fn main() {}
