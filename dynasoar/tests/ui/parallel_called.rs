use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

dynasoar::allocator!(pub Space: Body);

#[soa_methods]
impl Body {
    #[parallel]
    pub fn grow(this: Obj<Self>, dev: &Device<Space>) {
        this.set_mass(this.mass() + 1.0);
        let _ = dev;
    }

    #[parallel]
    pub fn grow_twice(this: Obj<Self>, dev: &Device<Space>) {
        Self::grow(this, dev);
        Self::grow(this, dev);
    }
}

fn main() {}
