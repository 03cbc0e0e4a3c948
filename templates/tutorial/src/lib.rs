//! Stars that pull dust and swallow it: the model of docs/tutorial.md.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use dynasoar::prelude::*;

/// Grains of dust each star emits per step.
pub const EMIT: u32 = 4;
/// Dust closer than this to a star falls in.
pub const RADIUS: f32 = 0.03;
/// The time step.
pub const DT: f32 = 0.002;

/// A star: it emits dust, and swallows the dust that comes too close.
#[soa_class]
pub struct Star {
    pub pos: Vec2,
    pub mass: f32,
    #[atomic]
    pub swallowed: u32,
    pub rng: Rng,
}

/// A grain of dust, pulled by every star.
#[soa_class]
pub struct Dust {
    pub pos: Vec2,
    pub vel: Vec2,
}

dynasoar::allocator!(pub Sky: Star, Dust);

#[soa_methods]
impl Star {
    #[parallel_new]
    pub fn place(_dev: &Device<Sky>, index: u64, seed: u64) -> Self {
        let mut rng = Rng::new(seed, index);
        let pos = Vec2::new(rng.range(-0.6, 0.6), rng.range(-0.6, 0.6));
        Star { pos, mass: rng.range(0.5, 1.5), swallowed: 0, rng }
    }

    /// Births: `EMIT` grains leave the star, sideways.
    #[parallel]
    pub fn emit(this: Obj<Self>, dev: &Device<Sky>) {
        let mut rng = this.rng();
        for _ in 0..EMIT {
            let dir = Vec2::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0));
            let pos = this.pos() + dir * (3.0 * RADIUS);
            let vel = Vec2::new(-dir.y, dir.x) * rng.range(2.0, 6.0);
            let _ = dev.make_new(Dust { pos, vel });
        }
        this.set_rng(rng);
    }
}

#[soa_methods]
impl Dust {
    /// Every star pulls the grain; one that comes too close swallows it (a death).
    #[parallel]
    pub fn fly(this: Obj<Self>, dev: &Device<Sky>) {
        let pos = this.pos();
        let (mut pull, mut swallowed) = (Vec2::ZERO, false);
        dev.device_do::<Star>(|star| {
            let d = star.pos() - pos;
            let r2 = d.length_squared();
            if r2 < RADIUS * RADIUS && !swallowed {
                swallowed = true;
                star.swallowed_atomic().fetch_add(1);
            }
            pull += d * (star.mass() / (r2 * math::sqrt(r2) + 1e-3));
        });
        if swallowed {
            dev.free(this);
        } else {
            let vel = this.vel() + pull * DT;
            this.set_vel(vel);
            this.set_pos(pos + vel * DT);
        }
    }
}
