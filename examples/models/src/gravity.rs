//! Gravity between point masses in the square [-1, 1]^2, shared by n-body and collision (and
//! their baselines): initial bodies, the softened force, and one integration step.

use dynasoar::math::{Exact, Precision, Vec2};
use dynasoar::rand::Rng;

/// Initial position (uniform in the square), velocity (tiny) and mass (uniform in
/// `[max_mass / 2, max_mass)`) of body `index`: a counter-based RNG per body, so every
/// implementation and backend starts from the same bodies.
pub fn initial_state(seed: u64, index: u64, max_mass: f32) -> (Vec2, Vec2, f32) {
    let mut rng = Rng::new(seed, index);
    let pos = Vec2::new(2.0 * rng.next_f32() - 1.0, 2.0 * rng.next_f32() - 1.0);
    let vel = Vec2::new((rng.next_f32() - 0.5) / 1000.0, (rng.next_f32() - 0.5) / 1000.0);
    let mass = (rng.next_f32() / 2.0 + 0.5) * max_mass;
    (pos, vel, mass)
}

/// The gravitational force a body at `other` exerts on one at `me`, softened by `dampening`;
/// zero for a body at the same place (itself).
///
/// Computed without a branch, the zero picked at the end: with the force computed only where
/// `dist2 > 0`, the compiler moved the load of `other_mass` into that branch, so each
/// interaction waited for two loads one after the other (position, then mass). The values are
/// the same (at distance 0 the unused quotient is not finite). On an H200, n-body's default run
/// took 3.94 s instead of 4.13 s and collision's 15.09 s instead of 16.67 s
/// (docs/results/2026-11-27-s3/). Every version (the DSL's and both baselines) uses this
/// function.
#[inline(always)]
pub fn force_on(me: Vec2, my_mass: f32, other: Vec2, other_mass: f32, gravity: f32, dampening: f32) -> Vec2 {
    force_with::<Exact>(me, my_mass, other, other_mass, gravity, dampening)
}

/// [`force_on`] with the square root and the two divisions of `P`: [`Exact`] is `force_on`,
/// [`Fast`](dynasoar::math::Fast) the GPU's approximate instructions (the apps' `--fast-math`).
#[inline(always)]
pub fn force_with<P: Precision>(
    me: Vec2,
    my_mass: f32,
    other: Vec2,
    other_mass: f32,
    gravity: f32,
    dampening: f32,
) -> Vec2 {
    let d = other - me;
    let dist2 = d.length_squared();
    let dist = P::sqrt(dist2);
    let f = P::div(gravity * my_mass * other_mass, dist2 + dampening);
    let force = d * P::div(f, dist);
    if dist2 > 0.0 { force } else { Vec2::ZERO }
}

/// One time step of `dt` of a body under `force`: new position and velocity, bouncing off the
/// walls of the square.
#[inline(always)]
pub fn integrate(pos: Vec2, vel: Vec2, force: Vec2, mass: f32, dt: f32) -> (Vec2, Vec2) {
    let mut vel = vel + force * (dt / mass);
    let pos = pos + vel * dt;
    if pos.x < -1.0 || pos.x > 1.0 {
        vel.x = -vel.x;
    }
    if pos.y < -1.0 || pos.y > 1.0 {
        vel.y = -vel.y;
    }
    (pos, vel)
}

/// A result the threads of a baseline's body group exchange: shuffled word by word.
pub trait LaneValue: Copy {
    /// This value of lane `src` of the lanes in `group` (all of them call it together).
    #[cfg(target_arch = "nvptx64")]
    fn shuffled(self, group: u32, src: u32) -> Self;
}

impl LaneValue for Vec2 {
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn shuffled(self, group: u32, src: u32) -> Self {
        use dynasoar::arch::shfl_u32;
        let x = f32::from_bits(shfl_u32(group, self.x.to_bits(), src));
        Vec2::new(x, f32::from_bits(shfl_u32(group, self.y.to_bits(), src)))
    }
}

/// For every body `i < count` with `wanted(i)`, on `LANES` threads (the SOA baselines' loops
/// over all bodies: n-body's forces, collision's forces and merge search; the hand-written form
/// of the DSL's `#[parallel(lanes = L)]`): thread `k` of a body's group computes `part(i, k)`
/// (its fold over bodies `k`, `k + LANES`, ...), and the parts are combined in a fixed tree,
/// halving: part `k` takes `combine(part k, part k + LANES / 2)`, then `k + LANES / 4`, ...
/// (for 8 lanes `combine(combine(combine(p0, p4), combine(p2, p6)), combine(combine(p1, p5),
/// combine(p3, p7)))`); `done(i, result)` runs on the group's first thread. The CPU backend,
/// whose warps have one lane, computes the parts in one thread and combines them in the same
/// order, so both give the same bits. `LANES` is a power of two up to 32; the grid covers
/// `count * LANES` threads in blocks of a multiple of `LANES`. (With one thread per body,
/// 20,000 threads leave the GPU waiting on each thread's loop; issue 27's tiled CUDA n-body
/// uses 16 threads per body.)
#[inline(always)]
pub fn on_soa_lanes<const LANES: usize, R: LaneValue>(
    count: u32,
    wanted: impl Fn(usize) -> bool,
    part: impl Fn(usize, usize) -> R,
    combine: impl Fn(R, R) -> R,
    mut done: impl FnMut(usize, R),
) {
    use dynasoar::arch;
    const { assert!(LANES.is_power_of_two() && LANES <= 32) };
    let lanes = LANES;
    let (n, stride) = (count as usize, arch::global_thread_count());
    let mut t = arch::global_thread_id();
    // Every thread of a body's group runs the same rounds and takes the same branches: the
    // groups are aligned runs of `LANES` threads, both `n * LANES` and the stride are multiples
    // of `LANES`, and `wanted` depends on the body only.
    while t < n * lanes {
        let i = t / lanes;
        if wanted(i) {
            #[cfg(target_arch = "nvptx64")]
            {
                let k = t % lanes;
                let mut acc = part(i, k);
                let lane = arch::lane_id();
                let group = (u32::MAX >> (32 - LANES)) << (lane & !(LANES as u32 - 1));
                let mut d = LANES as u32 / 2;
                while d > 0 {
                    // Lane `k < d` (of those still used) gets `combine(part k, part k + d)`.
                    acc = combine(acc, acc.shuffled(group, lane ^ d));
                    d /= 2;
                }
                if k == 0 {
                    done(i, acc);
                }
            }
            #[cfg(not(target_arch = "nvptx64"))]
            if t.is_multiple_of(lanes) {
                let mut parts: [R; LANES] = core::array::from_fn(|k| part(i, k));
                let mut d = lanes / 2;
                while d > 0 {
                    for k in 0..d {
                        parts[k] = combine(parts[k], parts[k + d]);
                    }
                    d /= 2;
                }
                done(i, parts[0]);
            }
        }
        t += stride;
    }
}
