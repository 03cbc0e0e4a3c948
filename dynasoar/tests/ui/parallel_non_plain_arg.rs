use dynasoar::prelude::*;

#[soa_class]
pub struct Body {
    pub mass: f32,
}

dynasoar::allocator!(pub Space: Body);

#[soa_methods]
impl Body {
    #[parallel]
    pub fn rename(this: Obj<Self>, _dev: &Device<Space>, name: String) {
        let _ = (this, name);
    }
}

fn main() {}
