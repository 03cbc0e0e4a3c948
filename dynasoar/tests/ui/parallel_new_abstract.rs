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

#[soa_methods]
impl Agent {
    #[parallel_new]
    pub fn spawn(_dev: &Device<Ocean>, index: u64) -> Self {
        Agent { energy: index as u32 }
    }
}

fn main() {}
