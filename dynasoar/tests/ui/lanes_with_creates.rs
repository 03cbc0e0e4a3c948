use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
    pub pull: f32,
}

dynasoar::allocator!(pub Space: Body);

#[soa_methods]
impl Body {
    #[parallel(lanes = 16, creates(Body))]
    pub fn pull_and_split(this: Obj<Self>, dev: &Device<Space>) {
        let pull = dev.device_reduce::<Body, f32>(0.0, |sum, _, other| sum + other.mass, |a, b| a + b);
        this.set_pull(pull);
        let _ = dev.make_new(Body { mass: this.mass() / 2.0, pull });
    }
}

fn main() {}
