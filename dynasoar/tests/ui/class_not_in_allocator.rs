use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

#[soa_class]
pub struct Star {
    pub mass: f32,
}

dynasoar::allocator!(pub Space: Body);
dynasoar::allocator!(pub Galaxy: Star);

#[soa_methods]
impl Star {
    #[parallel]
    pub fn shine(this: Obj<Self>, _dev: &Device<Galaxy>) {
        this.set_mass(this.mass() * 0.99);
    }
}

fn run(rt: &dynasoar::host::Runtime<Space>) {
    // `Star` belongs to `Galaxy`, not to `Space`.
    let _ = rt.parallel_do(Star::shine);
}

fn main() {}
