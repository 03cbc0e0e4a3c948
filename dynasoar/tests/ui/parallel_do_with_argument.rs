use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

dynasoar::allocator!(pub Space: Body);

#[soa_methods]
impl Body {
    #[parallel]
    pub fn grow(this: Obj<Self>, _dev: &Device<Space>, amount: f32) {
        this.set_mass(this.mass() + amount);
    }
}

fn step(rt: &Runtime<Space>) -> dynasoar::host::Result<()> {
    // `grow` takes an argument: `rt.parallel_do_with(Body::grow, 0.5)`.
    rt.parallel_do(Body::grow)
}

fn main() {}
