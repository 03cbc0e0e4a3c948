use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

dynasoar::allocator!(pub Space: Body);

#[soa_methods]
impl Body {
    #[parallel_new]
    pub fn make(_dev: &Device<Space>, index: u64, base: f32, step: f32) -> Self {
        Body { mass: base + step * index as f32 }
    }
}

fn main() {}
