use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
    pub pull: f32,
}

dynasoar::allocator!(pub Space: Body);

#[soa_methods]
impl Body {
    #[parallel(lanes = 32, pairs, pairs)]
    pub fn pull(this: Obj<Self>, dev: &Device<Space>) {
        let pull = dev.device_reduce::<Body, f32>(0.0, |sum, _, other| sum + other.mass, |a, b| a + b);
        this.set_pull(pull);
    }
}

fn main() {}
