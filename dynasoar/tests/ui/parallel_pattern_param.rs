use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

dynasoar::allocator!(pub Space: Body);

#[derive(Clone, Copy, Plain)]
#[repr(C)]
pub struct Range {
    pub low: f32,
    pub high: f32,
}

#[soa_methods]
impl Body {
    #[parallel]
    pub fn clamp(this: Obj<Self>, _dev: &Device<Space>, Range { low, high }: Range) {
        this.set_mass(this.mass().clamp(low, high));
    }
}

fn main() {}
