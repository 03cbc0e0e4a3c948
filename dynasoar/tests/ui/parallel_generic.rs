use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

dynasoar::allocator!(pub Space: Body);

#[soa_methods]
impl Body {
    #[parallel]
    pub fn scale<T: Into<f32>>(this: Obj<Self>, _dev: &Device<Space>, by: T) {
        this.set_mass(this.mass() * by.into());
    }
}

fn main() {}
