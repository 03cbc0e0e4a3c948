use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

dynasoar::allocator!(pub Space: Body);

#[soa_methods]
impl Body {
    #[parallel]
    pub fn grow_by(this: Obj<Self>, _dev: &Device<Space>, amount: f32, times: u32) {
        this.set_mass(this.mass() + amount * times as f32);
    }
}

fn main() {}
