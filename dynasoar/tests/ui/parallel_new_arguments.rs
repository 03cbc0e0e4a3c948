use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

dynasoar::allocator!(pub Space: Body);

#[soa_methods]
impl Body {
    #[parallel_new(creates(Body))]
    pub fn make(_dev: &Device<Space>, _index: u64) -> Self {
        Body { mass: 1.0 }
    }
}

fn main() {}
