use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

dynasoar::allocator!(pub Space: Body);

#[soa_methods]
impl Body {
    #[parallel]
    pub fn grow(this: Obj<Self>, amount: f32) {
        this.set_mass(this.mass() + amount);
    }
}

fn main() {}
