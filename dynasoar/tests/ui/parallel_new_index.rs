use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

dynasoar::allocator!(pub Space: Body);

#[soa_methods]
impl Body {
    #[parallel_new]
    pub fn make(_dev: &Device<Space>, index: u32) -> Self {
        Body { mass: index as f32 }
    }
}

fn main() {}
