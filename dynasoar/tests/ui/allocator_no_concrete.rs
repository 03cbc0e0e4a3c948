use dynasoar::prelude::*;

#[soa_class(abstract)]
pub struct Agent {
    pub energy: u32,
}

dynasoar::allocator!(pub Zoo: Agent);

fn main() {}
