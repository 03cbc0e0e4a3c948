use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

dynasoar::allocator!(pub Space: Body);

#[soa_methods]
impl Body {
    #[parallel(creates(Body), creates(Body))]
    pub fn split(this: Obj<Self>, dev: &Device<Space>) {
        let _ = dev.make_new(Body { mass: this.mass() / 2.0 });
    }
}

fn main() {}
