//! N-body: bodies attract each other by gravity (the paper's `nbody`, Table 1).
//!
//! Each step, every body sums the forces of all others (`device_do`) and then moves; bodies
//! bounce off the walls of the square [-1, 1]^2. No objects are created or freed during the
//! run. The physics lives in plain functions shared by the DSL version and the two hand-written
//! baselines (SOA and AOS arrays), so all three compute the same simulation.

use dynasoar::arch;
use dynasoar::math::{Exact, Fast, Precision};
use dynasoar::prelude::*;

use crate::gravity;

/// Simulation constants (the original DynaSOAr benchmark's).
pub mod config {
    pub const SEED: u64 = 42;
    pub const BODIES: u32 = 20_000;
    pub const STEPS: u32 = 3_000;
    pub const DT: f32 = 0.02;
    pub const MAX_MASS: f32 = 1000.0;
    pub const GRAVITY: f32 = 6.673e-11;
    pub const DAMPENING: f32 = 0.05;
}

/// Per-run parameters passed to every kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug, Plain)]
pub struct Physics {
    pub dt: f32,
    pub gravity: f32,
    pub dampening: f32,
    pub _pad: f32,
}

impl Default for Physics {
    fn default() -> Self {
        Physics { dt: config::DT, gravity: config::GRAVITY, dampening: config::DAMPENING, _pad: 0.0 }
    }
}

/// Initial position, velocity and mass of body `index` (same bodies for every implementation
/// and backend).
pub fn initial_state(seed: u64, index: u64) -> (Vec2, Vec2, f32) {
    gravity::initial_state(seed, index, config::MAX_MASS)
}

/// The gravitational force body `other` exerts on body `me`.
#[inline(always)]
pub fn force_on(me: Vec2, my_mass: f32, other: Vec2, other_mass: f32, p: &Physics) -> Vec2 {
    force_with::<Exact>(me, my_mass, other, other_mass, p)
}

/// [`force_on`] in precision `P` (see [`gravity::force_with`]).
#[inline(always)]
pub fn force_with<P: Precision>(me: Vec2, my_mass: f32, other: Vec2, other_mass: f32, p: &Physics) -> Vec2 {
    gravity::force_with::<P>(me, my_mass, other, other_mass, p.gravity, p.dampening)
}

/// One time step of a body under `force`.
#[inline(always)]
pub fn integrate(pos: Vec2, vel: Vec2, force: Vec2, mass: f32, p: &Physics) -> (Vec2, Vec2) {
    gravity::integrate(pos, vel, force, mass, p.dt)
}

// ----------------------------------------------------------------------------------------
// The DSL version.

/// A body.
#[soa_class]
#[derive(Debug, PartialEq)]
pub struct Body {
    /// Index at creation (to compare runs).
    pub id: u32,
    pub pos: Vec2,
    pub vel: Vec2,
    pub force: Vec2,
    pub mass: f32,
}

dynasoar::allocator!(pub NbodyHeap: Body);

#[soa_methods]
impl Body {
    /// Body `index` of the sequence `seed`.
    #[parallel_new]
    pub fn random(_dev: &Device<NbodyHeap>, index: u64, seed: u64) -> Self {
        let (pos, vel, mass) = initial_state(seed, index);
        Body { id: index as u32, pos, vel, force: Vec2::ZERO, mass }
    }

    /// Sum the forces of all other bodies on this one, on 8 threads per body: each sums the
    /// forces of an eighth of the bodies, and the sums are added in a fixed order. (On an H200,
    /// with the force kernel capped at 48 registers, 8 lanes took 4.14 s for the default run,
    /// 16 lanes 4.60 s and 4 lanes 6.5 s, docs/results/2026-11-27-s3/nbody-variants.txt and
    /// nbody-walk-ab.txt; one thread per body took 16.1 s before the cap.) The
    /// body itself is not skipped: `force_on` gives zero at distance 0, and comparing each
    /// other body's handle with `this` cost registers (4.77 -> 4.21 s without it, H200).
    /// `dense`: bodies are never freed, so no merge leaves free slots in their blocks, and each
    /// lane visits its slot positions one by one: 3.49 s against 3.86-3.90 s with the search of
    /// each block's bits (H200, docs/results/2026-11-27-s6/dense-ab.txt).
    #[parallel(lanes = 8, dense)]
    pub fn compute_force(this: Obj<Self>, dev: &Device<NbodyHeap>, p: Physics) {
        sum_forces::<Exact>(this, dev, p);
    }

    /// [`compute_force`](Self::compute_force) with approximate square roots and divisions
    /// ([`dynasoar::math::fast`]; the app's `--fast-math`): same walk, same order of the sums.
    #[parallel(lanes = 8, dense)]
    pub fn compute_force_fast(this: Obj<Self>, dev: &Device<NbodyHeap>, p: Physics) {
        sum_forces::<Fast>(this, dev, p);
    }

    /// Move under the computed force.
    #[parallel]
    pub fn update(this: Obj<Self>, _dev: &Device<NbodyHeap>, p: Physics) {
        let (pos, vel) = integrate(this.pos(), this.vel(), this.force(), this.mass(), &p);
        this.set_pos(pos);
        this.set_vel(vel);
    }
}

/// The body of [`Body::compute_force`] in precision `P`.
#[inline(always)]
fn sum_forces<P: Precision>(this: Obj<Body>, dev: &Device<NbodyHeap>, p: Physics) {
    let (me, my_mass) = (this.pos(), this.mass());
    let force = dev.device_reduce::<Body, Vec2>(
        Vec2::ZERO,
        |force, _, body| force + force_with::<P>(me, my_mass, body.pos, body.mass, &p),
        |a, b| a + b,
    );
    this.set_force(force);
}

// ----------------------------------------------------------------------------------------
// Hand-written baselines: static arrays; one thread per body, but for the SOA baseline's forces
// (`SOA_LANES` threads per body, the fastest hand-written form we have).

/// Structure-of-arrays storage of the baseline.
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct SoaBodies {
    pub pos: DevPtr<Vec2>,
    pub vel: DevPtr<Vec2>,
    pub force: DevPtr<Vec2>,
    pub mass: DevPtr<f32>,
    pub count: u32,
    pub _pad: u32,
    pub physics: Physics,
}

/// Array-of-structures element of the baseline.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Plain)]
pub struct AosBody {
    pub pos: Vec2,
    pub vel: Vec2,
    pub force: Vec2,
    pub mass: f32,
    pub _pad: f32,
}

/// Array-of-structures storage of the baseline.
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct AosBodies {
    pub bodies: DevPtr<AosBody>,
    pub count: u32,
    pub _pad: u32,
    pub physics: Physics,
}

fn each_body(count: u32, mut f: impl FnMut(usize)) {
    let stride = arch::global_thread_count();
    let mut i = arch::global_thread_id();
    while i < count as usize {
        f(i);
        i += stride;
    }
}

/// Threads per body of the SOA baseline's forces (as the DSL version's `lanes = 8`): thread
/// `k` of a body's group visits bodies `k`, `k + 8`, ... (see [`gravity::on_soa_lanes`]).
pub const SOA_LANES: u32 = 8;

/// SOA baseline: forces, on [`SOA_LANES`] threads per body (the grid covers `count *
/// SOA_LANES` threads in blocks of a multiple of 8), their sums added as
/// `((s0 + s4) + (s2 + s6)) + ((s1 + s5) + (s3 + s7))`.
#[kernel]
pub fn nbody_soa_force(b: SoaBodies) {
    soa_force::<Exact>(b);
}

/// [`nbody_soa_force`] with approximate square roots and divisions (`--fast-math`).
#[kernel]
pub fn nbody_soa_force_fast(b: SoaBodies) {
    soa_force::<Fast>(b);
}

#[inline(always)]
fn soa_force<P: Precision>(b: SoaBodies) {
    let n = b.count as usize;
    gravity::on_soa_lanes::<{ SOA_LANES as usize }, _>(
        b.count,
        |_| true,
        |i, first| {
            // SAFETY: `i < count` and every `j < count`; the arrays hold `count` bodies.
            unsafe {
                let (me, my_mass) = (b.pos.read(i), b.mass.read(i));
                let mut force = Vec2::ZERO;
                let mut j = first;
                while j < n {
                    // Body `i` itself adds nothing: `force_on` is zero at distance 0.
                    force += force_with::<P>(me, my_mass, b.pos.read(j), b.mass.read(j), &b.physics);
                    j += SOA_LANES as usize;
                }
                force
            }
        },
        |a, b| a + b,
        // SAFETY: `i < count`; body `i`'s force is written by its group's first thread only.
        |i, force| unsafe { b.force.write(i, force) },
    );
}

/// SOA baseline: moves.
#[kernel]
pub fn nbody_soa_update(b: SoaBodies) {
    each_body(b.count, |i| {
        // SAFETY: as in `nbody_soa_force`.
        unsafe {
            let (pos, vel) =
                integrate(b.pos.read(i), b.vel.read(i), b.force.read(i), b.mass.read(i), &b.physics);
            b.pos.write(i, pos);
            b.vel.write(i, vel);
        }
    });
}

/// AOS baseline: forces.
#[kernel]
pub fn nbody_aos_force(b: AosBodies) {
    aos_force::<Exact>(b);
}

/// [`nbody_aos_force`] with approximate square roots and divisions (`--fast-math`).
#[kernel]
pub fn nbody_aos_force_fast(b: AosBodies) {
    aos_force::<Fast>(b);
}

#[inline(always)]
fn aos_force<P: Precision>(b: AosBodies) {
    each_body(b.count, |i| {
        // SAFETY: as in `nbody_soa_force`.
        unsafe {
            let me = b.bodies.read(i);
            let mut force = Vec2::ZERO;
            for j in 0..b.count as usize {
                if j != i {
                    let other = b.bodies.as_ptr().add(j);
                    force += force_with::<P>(me.pos, me.mass, (*other).pos, (*other).mass, &b.physics);
                }
            }
            (*b.bodies.as_ptr().add(i)).force = force;
        }
    });
}

/// AOS baseline: moves.
#[kernel]
pub fn nbody_aos_update(b: AosBodies) {
    each_body(b.count, |i| {
        // SAFETY: as in `nbody_soa_force`.
        unsafe {
            let body = b.bodies.as_ptr().add(i);
            let (pos, vel) = integrate((*body).pos, (*body).vel, (*body).force, (*body).mass, &b.physics);
            (*body).pos = pos;
            (*body).vel = vel;
        }
    });
}
