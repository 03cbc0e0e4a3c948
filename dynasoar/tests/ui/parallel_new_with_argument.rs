use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

dynasoar::allocator!(pub Space: Body);

#[soa_methods]
impl Body {
    #[parallel_new]
    pub fn with_mass(_dev: &Device<Space>, _index: u64, mass: f32) -> Self {
        Body { mass }
    }
}

fn create(rt: &Runtime<Space>) -> dynasoar::host::Result<()> {
    // `with_mass` takes an argument: `rt.parallel_new_with(Body::with_mass, 100, 1.0)`.
    rt.parallel_new(Body::with_mass, 100)
}

fn main() {}
