//! Random walkers that are born and die: the model, compiled for the host and the GPU.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use dynasoar::prelude::*;

/// Steps a walker lives.
pub const LIFETIME: u32 = 16;

/// A walker on a line, with its own random numbers.
#[soa_class]
pub struct Walker {
    pub pos: i32,
    pub age: u32,
    pub rng: Rng,
}

dynasoar::allocator!(pub World: Walker);

#[soa_methods]
impl Walker {
    #[parallel_new]
    pub fn spawn(_dev: &Device<World>, index: u64, seed: u64) -> Self {
        Walker { pos: 0, age: 0, rng: Rng::new(seed, index) }
    }

    /// A step left or right; one child in `LIFETIME` steps on average; death at `LIFETIME`.
    #[parallel]
    pub fn step(this: Obj<Self>, dev: &Device<World>) {
        let mut rng = this.rng();
        let pos = this.pos() + if rng.below(2) == 0 { -1 } else { 1 };
        if rng.below(LIFETIME) == 0 {
            let _ = dev.make_new(Walker { pos, age: 0, rng: Rng::new(rng.next_u64(), 0) });
        }
        if this.age() + 1 == LIFETIME {
            dev.free(this);
        } else {
            this.set_pos(pos);
            this.set_age(this.age() + 1);
            this.set_rng(rng);
        }
    }
}
