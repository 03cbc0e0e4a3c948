use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

dynasoar::allocator!(pub Space: Body);

#[soa_methods]
impl Body {
    #[parallel]
    pub unsafe fn reset(this: Obj<Self>, _dev: &Device<Space>) {
        this.set_mass(0.0);
    }
}

fn main() {}
