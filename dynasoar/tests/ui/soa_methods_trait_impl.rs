use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

dynasoar::allocator!(pub Space: Body);

#[soa_methods]
impl Default for Body {
    fn default() -> Self {
        Body { mass: 0.0 }
    }
}

fn main() {}
