use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

#[soa_class]
pub struct Planet {
    pub radius: f32,
}

dynasoar::allocator!(pub Space: Body);
dynasoar::allocator!(pub Sky: Planet);

#[soa_methods]
impl Body {
    #[parallel(creates(Planet))]
    pub fn spawn(this: Obj<Self>, dev: &Device<Space>) {
        let _ = dev.make_new(Body { mass: this.mass() });
    }
}

fn main() {}
