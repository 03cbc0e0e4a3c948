use dynasoar::prelude::*;

#[soa_class(abstract)]
pub struct Agent {
    pub energy: u32,
}

#[soa_class(extends = Agent)]
pub struct Fish {
    pub age: u32,
}

dynasoar::allocator!(pub Ocean: Agent, Fish);

fn spawn(dev: &Device<Ocean>) {
    let _ = dev.make_new(Agent { energy: 3 });
}

fn main() {}
