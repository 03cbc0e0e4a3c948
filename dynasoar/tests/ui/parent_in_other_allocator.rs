use dynasoar::prelude::*;

#[soa_class(abstract)]
pub struct Agent {
    pub energy: u32,
}

#[soa_class]
pub struct Fish {
    pub fins: u32,
}

#[soa_class(extends = Agent)]
pub struct Shark {
    pub teeth: u32,
}

dynasoar::allocator!(pub Land: Agent, Fish);
dynasoar::allocator!(pub Sea: Shark);

fn main() {}
