//! Gravity between point masses in the square [-1, 1]^2, shared by n-body and collision (and
//! their baselines): initial bodies, the softened force, and one integration step.

use dynasoar::math::{self, Vec2};
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
    let d = other - me;
    let dist2 = d.length_squared();
    let dist = math::sqrt(dist2);
    let f = gravity * my_mass * other_mass / (dist2 + dampening);
    let force = d * (f / dist);
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
