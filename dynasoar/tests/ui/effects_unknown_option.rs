use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

dynasoar::allocator!(pub Space: Body);

#[soa_methods]
impl Body {
    #[parallel(destroys(Body))]
    pub fn vanish(this: Obj<Self>, dev: &Device<Space>) {
        dev.free(this);
    }
}

fn main() {}
