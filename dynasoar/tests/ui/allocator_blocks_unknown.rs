use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

dynasoar::allocator!(
    #[blocks(dense)]
    pub Space: Body
);

fn main() {}
