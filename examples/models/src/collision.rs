//! Particle collisions: n-body gravity where bodies that come close merge (the paper's
//! `collision`, Table 1 and the Appendix A listing).
//!
//! Each step runs the paper's six do-all operations:
//!
//! 1. `compute_force`: every body sums the gravity of all others (`device_reduce`, on 32
//!    threads per body);
//! 2. `update`: every body moves under its force, bouncing off the walls of [-1, 1]^2;
//! 3. `initialize_merge`: every body clears its merge state;
//! 4. `prepare_merge`: every body looks (`device_reduce`, on 32 threads per body) for the
//!    nearest *heavier* body within the merge threshold and bids for it: an atomic minimum of
//!    the bidders' ids on the target;
//! 5. `perform_merge`: a body whose bid won, and whose target is not itself merging into a
//!    third body (no chains), merges into the target (perfectly inelastic collision: masses add,
//!    momentum and centre of mass are kept) and marks itself merged;
//! 6. `delete_merged`: merged bodies free themselves (the baselines clear an `active` flag
//!    instead, paper 7.1).
//!
//! The original resolves competing bids by whichever racing write lands last. Here the bid is
//! an atomic minimum of ids, "heavier" orders by (mass, id) and "nearest" by (distance, id), so
//! the merges do not depend on thread timing or on where objects sit in memory: the DSL version,
//! both baselines and both backends merge the same bodies (up to float rounding of the force
//! sums, which only matters for a pair exactly at the threshold). Every write that another
//! thread may race with is atomic (the bid); all other cross-object writes are exclusive by
//! construction:
//!
//! - in step 4 a body writes only its own `merge_target` and bids atomically on its target;
//! - in step 5 the fields of a target are written only by the one body whose bid won, and only
//!   when the target has no target of its own (so the target's thread does nothing, and nobody
//!   merges into the winner: a body with a target never receives a merge in the same step).
//!
//! So a body absorbs at most one other body per step, and no body is merged twice. `members`
//! counts the original bodies a body is made of: the sum over all bodies stays the initial
//! count, and total mass stays the initial mass up to float rounding.

use dynasoar::arch;
use dynasoar::arch::atomic::Atomic32;
use dynasoar::math::{Exact, Fast, Precision};
use dynasoar::prelude::*;

use crate::gravity;

/// Simulation constants (the original DynaSOAr benchmark's `example/collision/configuration.h`).
pub mod config {
    pub const SEED: u64 = 42;
    pub const BODIES: u32 = 40_000;
    pub const STEPS: u32 = 2_000;
    pub const DT: f32 = 0.05;
    pub const MERGE_THRESHOLD: f32 = 0.005;
    /// Initial masses are uniform in [MAX_MASS / 2, MAX_MASS).
    pub const MAX_MASS: f32 = 75.0;
    pub const GRAVITY: f32 = 6.673e-11;
    pub const DAMPENING: f32 = 0.05;
}

/// Value of `incoming` when no body bids for this one.
pub const NO_BID: u32 = u32::MAX;

/// Index of "no body" in the baselines' `merge_target` arrays.
pub const NO_TARGET: u32 = u32::MAX;

/// Per-run parameters passed to every kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Plain)]
pub struct Physics {
    pub dt: f32,
    pub gravity: f32,
    pub dampening: f32,
    /// Bodies closer than this merge.
    pub merge_threshold: f32,
}

impl Default for Physics {
    fn default() -> Self {
        Physics {
            dt: config::DT,
            gravity: config::GRAVITY,
            dampening: config::DAMPENING,
            merge_threshold: config::MERGE_THRESHOLD,
        }
    }
}

// ----------------------------------------------------------------------------------------
// The rules, shared by the DSL version and the baselines.

/// Initial position, velocity and mass of body `index` (same bodies for every implementation
/// and backend).
pub fn initial_state(seed: u64, index: u64) -> (Vec2, Vec2, f32) {
    gravity::initial_state(seed, index, config::MAX_MASS)
}

/// The gravitational force a body at `other` exerts on one at `me`; zero for itself.
#[inline(always)]
pub fn force_on(me: Vec2, my_mass: f32, other: Vec2, other_mass: f32, p: &Physics) -> Vec2 {
    force_with::<Exact>(me, my_mass, other, other_mass, p)
}

/// [`force_on`] in precision `P` (see [`gravity::force_with`]).
#[inline(always)]
pub fn force_with<P: Precision>(me: Vec2, my_mass: f32, other: Vec2, other_mass: f32, p: &Physics) -> Vec2 {
    gravity::force_with::<P>(me, my_mass, other, other_mass, p.gravity, p.dampening)
}

/// One time step of a body under `force` (bouncing off the walls).
#[inline(always)]
pub fn integrate(pos: Vec2, vel: Vec2, force: Vec2, mass: f32, p: &Physics) -> (Vec2, Vec2) {
    gravity::integrate(pos, vel, force, mass, p.dt)
}

/// Whether a body of `mass` is heavier than one of `than` (equal masses: `id` decides, so the
/// order is total and a body is never heavier than itself). `id` and `than_id` are read only
/// for equal masses.
#[inline(always)]
pub fn heavier(mass: f32, id: impl FnOnce() -> u32, than: f32, than_id: u32) -> bool {
    mass > than || (mass == than && id() > than_id)
}

/// The merge target a body is looking for in `prepare_merge`: the nearest heavier body within
/// the threshold (equal distances: the smaller id).
#[derive(Clone, Copy, Debug)]
pub struct Nearest {
    /// Squared distance of the best candidate so far (the squared threshold before any).
    pub dist2: f32,
    /// Its id (`u32::MAX` before any).
    pub id: u32,
}

impl Nearest {
    /// No candidate yet; candidates must be closer than `threshold`.
    #[inline(always)]
    pub fn new(threshold: f32) -> Self {
        Nearest { dist2: threshold * threshold, id: u32::MAX }
    }

    /// Offer a heavier body at squared distance `dist2` with id `id()` (read only when the body
    /// could be the new best); true if it is the new best.
    #[inline(always)]
    pub fn offer(&mut self, dist2: f32, id: impl FnOnce() -> u32) -> bool {
        if dist2 < self.dist2 {
            self.dist2 = dist2;
            self.id = id();
            return true;
        }
        // As near as the best so far: the smaller id wins. (Exactly on the threshold with no
        // candidate yet is too far; NaN is never a candidate.)
        if dist2 == self.dist2 && self.found() {
            let id = id();
            if id < self.id {
                self.id = id;
                return true;
            }
        }
        false
    }

    /// Whether `other`, the best of other bodies, is a better candidate than this one: whether
    /// [`offer`](Self::offer) would take it (nearer, or as near with a smaller id; a search
    /// that found nothing is offered at the threshold, never taken), so combining the best of
    /// parts gives the best of all, in any order.
    #[inline(always)]
    pub fn prefers(&self, other: &Nearest) -> bool {
        let mut best = *self;
        best.offer(other.dist2, || other.id)
    }

    /// Whether a candidate was found.
    #[inline(always)]
    pub fn found(&self) -> bool {
        self.id != u32::MAX
    }
}

impl gravity::LaneValue for Nearest {
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn shuffled(self, group: u32, src: u32) -> Self {
        Nearest {
            dist2: f32::from_bits(arch::shfl_u32(group, self.dist2.to_bits(), src)),
            id: arch::shfl_u32(group, self.id, src),
        }
    }
}

/// A body of `mass` at `pos` moving at `vel` merges into `into`: the merged body's position (the
/// centre of mass), velocity (momentum is kept: perfectly inelastic collision) and mass.
#[inline(always)]
pub fn merge(into: (Vec2, Vec2, f32), pos: Vec2, vel: Vec2, mass: f32) -> (Vec2, Vec2, f32) {
    let (into_pos, into_vel, into_mass) = into;
    let total = into_mass + mass;
    let pos = (into_pos * into_mass + pos * mass) / total;
    let vel = (into_vel * into_mass + vel * mass) / total;
    (pos, vel, total)
}

// ----------------------------------------------------------------------------------------
// The DSL version.

/// A body. (Named `Particle`: PTX entry points are named after the class, and n-body's
/// `Body` lives in the same PTX module.)
#[soa_class]
#[derive(Debug, PartialEq)]
pub struct Particle {
    /// Index at creation (to compare runs, and to order equal candidates).
    pub id: u32,
    pub pos: Vec2,
    pub vel: Vec2,
    pub force: Vec2,
    pub mass: f32,
    /// How many original bodies this one is made of.
    pub members: u32,
    /// The body this one will merge into (step 4), or null.
    pub merge_target: Handle<Particle>,
    /// Lowest id of the bodies that want to merge into this one (step 4), or `NO_BID`.
    #[atomic]
    pub incoming: u32,
    /// This body merged into its target in step 5, and is deleted in step 6.
    pub merged: bool,
}

dynasoar::allocator!(pub CollisionHeap: Particle);

#[soa_methods]
impl Particle {
    /// Body `index` of the sequence `seed`.
    #[parallel_new]
    pub fn random(_dev: &Device<CollisionHeap>, index: u64, seed: u64) -> Self {
        let (pos, vel, mass) = initial_state(seed, index);
        Particle {
            id: index as u32,
            pos,
            vel,
            force: Vec2::ZERO,
            mass,
            members: 1,
            merge_target: Handle::NULL,
            incoming: NO_BID,
            merged: false,
        }
    }

    /// Step 1: sum the forces of all other bodies on this one, on 32 threads per body (a warp):
    /// each sums the forces of a 32nd of the bodies, and the sums are added in a fixed order (as
    /// n-body's `compute_force`; its own force is zero, as `force_on` gives for distance 0).
    /// Why 32 lanes where n-body takes 8: the bodies go from 40,000 to 27,000 in the first 50
    /// steps and to 586 by the end. On an H200, in one call, the default run took 4.21 s on 8
    /// lanes, 3.88 s on 16 and 3.76 s on 32 (both methods alike;
    /// docs/results/2026-11-29-s2/lanes-ab.txt). Our reading of it, not measured: on 8 lanes
    /// the first steps need one and a half to two waves of the GPU (27,000 bodies are 6,750
    /// warps, where 48 registers a thread leave room for about 5,300 at once), and the last
    /// steps leave it mostly idle, each lane walking its eighth of the bodies alone.
    /// `pairs`: each lane folds its bodies two at a time, the next two's list entries loaded
    /// before, so the second body's fields load while the first's force is computed (the fold
    /// has no branches; step 4's, which branches, is faster one at a time): 2.01 s against
    /// 2.18 s for this loop on an H200 (docs/results/2026-11-29-s2/list-pair-c280da6.txt).
    #[parallel(lanes = 32, pairs)]
    pub fn compute_force(this: Obj<Self>, dev: &Device<CollisionHeap>, p: Physics) {
        sum_forces::<Exact>(this, dev, p);
    }

    /// [`compute_force`](Self::compute_force) with approximate square roots and divisions
    /// ([`dynasoar::math::fast`]; the app's `--fast-math`): same walk, same order of the sums.
    #[parallel(lanes = 32, pairs)]
    pub fn compute_force_fast(this: Obj<Self>, dev: &Device<CollisionHeap>, p: Physics) {
        sum_forces::<Fast>(this, dev, p);
    }

    /// Step 2: move under the computed force.
    #[parallel]
    pub fn update(this: Obj<Self>, _dev: &Device<CollisionHeap>, p: Physics) {
        let (pos, vel) = integrate(this.pos(), this.vel(), this.force(), this.mass(), &p);
        this.set_pos(pos);
        this.set_vel(vel);
    }

    /// Step 3: no target, no bids, not merged.
    #[parallel]
    pub fn initialize_merge(this: Obj<Self>, _dev: &Device<CollisionHeap>) {
        this.set_merge_target(Handle::NULL);
        this.set_incoming(NO_BID);
        this.set_merged(false);
    }

    /// Step 4: find the nearest heavier body within the threshold and bid for it, on 32 threads
    /// per body (as step 1): each finds the nearest in a 32nd of the bodies, and the nearest of
    /// theirs wins (the same body as one thread finds: the order by distance, then id, is
    /// total).
    #[parallel(lanes = 32)]
    pub fn prepare_merge(this: Obj<Self>, dev: &Device<CollisionHeap>, p: Physics) {
        let (me, my_mass, my_id) = (this.pos(), this.mass(), this.id());
        let (_, target) = dev.device_reduce::<Particle, (Nearest, Handle<Particle>)>(
            (Nearest::new(p.merge_threshold), Handle::NULL),
            |(mut nearest, target), obj, other| {
                if heavier(other.mass, || other.id, my_mass, my_id)
                    && nearest.offer((other.pos - me).length_squared(), || other.id)
                {
                    return (nearest, obj.handle());
                }
                (nearest, target)
            },
            |a, b| if a.0.prefers(&b.0) { b } else { a },
        );
        if let Some(t) = target.get() {
            this.set_merge_target(target);
            // Every lane of the body bids the same id: the minimum is the same.
            t.incoming_atomic().fetch_min(my_id);
        }
    }

    /// Step 5: merge into the target if this body's bid won and the target stays put.
    #[parallel]
    pub fn perform_merge(this: Obj<Self>, _dev: &Device<CollisionHeap>) {
        let Some(t) = this.merge_target().get() else { return };
        if t.incoming() == this.id() && t.merge_target().is_null() {
            let (pos, vel, mass) = merge((t.pos(), t.vel(), t.mass()), this.pos(), this.vel(), this.mass());
            t.set_pos(pos);
            t.set_vel(vel);
            t.set_mass(mass);
            t.set_members(t.members() + this.members());
            this.set_merged(true);
        }
    }

    /// Step 6: a merged body deletes itself.
    #[parallel]
    pub fn delete_merged(this: Obj<Self>, dev: &Device<CollisionHeap>) {
        if this.merged() {
            dev.free(this);
        }
    }
}

// ----------------------------------------------------------------------------------------
// Hand-written baselines: static arrays of all bodies ever created, one thread per index (the
// SOA baseline's loops over all bodies, steps 1 and 4, on `SOA_LANES` threads per index);
// merged bodies are switched off with an `active` flag, which every loop reads.

/// Threads per body of the SOA baseline's loops over all bodies, steps 1 and 4 (as the DSL
/// version's `lanes = 32`): thread `k` of a body's group visits indices `k`, `k + 32`, ... (see
/// [`gravity::on_soa_lanes`]).
pub const SOA_LANES: u32 = 32;

/// Structure-of-arrays storage of the baseline.
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct SoaBodies {
    pub pos: DevPtr<Vec2>,
    pub vel: DevPtr<Vec2>,
    pub force: DevPtr<Vec2>,
    pub mass: DevPtr<f32>,
    pub members: DevPtr<u32>,
    /// Index of the target, or `NO_TARGET`.
    pub merge_target: DevPtr<u32>,
    /// Lowest index bidding for this body, or `NO_BID` (updated atomically).
    pub incoming: DevPtr<u32>,
    pub merged: DevPtr<u8>,
    pub active: DevPtr<u8>,
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
    pub members: u32,
    /// Index of the target, or `NO_TARGET`.
    pub merge_target: u32,
    /// Lowest index bidding for this body, or `NO_BID` (updated atomically).
    pub incoming: u32,
    pub merged: u8,
    pub active: u8,
    pub _pad: [u8; 6],
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

/// Call `f` with every index below `count`, grid-stride.
#[inline(always)]
fn each_index(count: u32, mut f: impl FnMut(usize)) {
    let stride = arch::global_thread_count();
    let mut i = arch::global_thread_id();
    while i < count as usize {
        f(i);
        i += stride;
    }
}

/// The atomic view of a `u32` in device memory.
///
/// # Safety
/// `ptr` must be a live, aligned `u32` that is accessed only atomically while the view is used.
#[inline(always)]
unsafe fn atomic_u32<'a>(ptr: *mut u32) -> &'a Atomic32 {
    // SAFETY: the caller's contract.
    unsafe { Atomic32::from_ptr(ptr) }
}

/// The body of [`Particle::compute_force`] in precision `P`.
#[inline(always)]
fn sum_forces<P: Precision>(this: Obj<Particle>, dev: &Device<CollisionHeap>, p: Physics) {
    let (me, my_mass) = (this.pos(), this.mass());
    let force = dev.device_reduce::<Particle, Vec2>(
        Vec2::ZERO,
        |force, _, other| force + force_with::<P>(me, my_mass, other.pos, other.mass, &p),
        |a, b| a + b,
    );
    this.set_force(force);
}

// Safety of all baseline kernels: every array holds `count` elements and the kernels only touch
// indices below `count`. Thread `i` (the first of body `i`'s threads in steps 1 and 4) writes
// only body `i`'s fields, except (a) its atomic bid on
// its target's `incoming` in step 4, and (b) in step 5 the fields of its target, which no other
// thread accesses then (see the module docs).

/// SOA baseline, step 1, on [`SOA_LANES`] threads per body (the grid covers `count *
/// SOA_LANES` threads in blocks of a multiple of 32), as n-body's SOA baseline.
#[kernel]
pub fn collision_soa_force(b: SoaBodies) {
    soa_force::<Exact>(b);
}

/// [`collision_soa_force`] with approximate square roots and divisions (`--fast-math`).
#[kernel]
pub fn collision_soa_force_fast(b: SoaBodies) {
    soa_force::<Fast>(b);
}

#[inline(always)]
fn soa_force<P: Precision>(b: SoaBodies) {
    let n = b.count as usize;
    gravity::on_soa_lanes::<{ SOA_LANES as usize }, _>(
        b.count,
        // SAFETY (each closure): `i < count` and every `j < count`; see above.
        |i| unsafe { b.active.read(i) != 0 },
        |i, first| unsafe {
            let (me, my_mass) = (b.pos.read(i), b.mass.read(i));
            let mut force = Vec2::ZERO;
            let mut j = first;
            while j < n {
                if b.active.read(j) != 0 {
                    force += force_with::<P>(me, my_mass, b.pos.read(j), b.mass.read(j), &b.physics);
                }
                j += SOA_LANES as usize;
            }
            force
        },
        |a, b| a + b,
        |i, force| unsafe { b.force.write(i, force) },
    );
}

/// SOA baseline, step 2.
#[kernel]
pub fn collision_soa_update(b: SoaBodies) {
    each_index(b.count, |i| {
        // SAFETY: see above.
        unsafe {
            if b.active.read(i) == 0 {
                return;
            }
            let (pos, vel) =
                integrate(b.pos.read(i), b.vel.read(i), b.force.read(i), b.mass.read(i), &b.physics);
            b.pos.write(i, pos);
            b.vel.write(i, vel);
        }
    });
}

/// SOA baseline, step 3.
#[kernel]
pub fn collision_soa_initialize_merge(b: SoaBodies) {
    each_index(b.count, |i| {
        // SAFETY: see above.
        unsafe {
            if b.active.read(i) == 0 {
                return;
            }
            b.merge_target.write(i, NO_TARGET);
            b.incoming.write(i, NO_BID);
            b.merged.write(i, 0);
        }
    });
}

/// SOA baseline, step 4, on [`SOA_LANES`] threads per body, as step 1: each finds the nearest
/// heavier body among every 32nd, and the nearest of theirs wins (the same body as one thread
/// finds: the order by distance, then id, is total).
#[kernel]
pub fn collision_soa_prepare_merge(b: SoaBodies) {
    let n = b.count as usize;
    gravity::on_soa_lanes::<{ SOA_LANES as usize }, _>(
        b.count,
        // SAFETY (each closure): `i < count` and every `j < count`; see above.
        |i| unsafe { b.active.read(i) != 0 },
        |i, first| unsafe {
            let (me, my_mass, my_id) = (b.pos.read(i), b.mass.read(i), i as u32);
            let mut nearest = Nearest::new(b.physics.merge_threshold);
            let mut j = first;
            while j < n {
                if b.active.read(j) != 0 && heavier(b.mass.read(j), || j as u32, my_mass, my_id) {
                    nearest.offer((b.pos.read(j) - me).length_squared(), || j as u32);
                }
                j += SOA_LANES as usize;
            }
            nearest
        },
        |a, b| if a.prefers(&b) { b } else { a },
        |i, nearest| {
            if nearest.found() {
                unsafe {
                    b.merge_target.write(i, nearest.id);
                    atomic_u32(b.incoming.as_ptr().add(nearest.id as usize)).fetch_min(i as u32);
                }
            }
        },
    );
}

/// SOA baseline, step 5.
#[kernel]
pub fn collision_soa_perform_merge(b: SoaBodies) {
    each_index(b.count, |i| {
        // SAFETY: see above.
        unsafe {
            if b.active.read(i) == 0 {
                return;
            }
            let t = b.merge_target.read(i);
            if t == NO_TARGET {
                return;
            }
            let t = t as usize;
            let bid = atomic_u32(b.incoming.as_ptr().add(t)).load();
            if bid == i as u32 && b.merge_target.read(t) == NO_TARGET {
                let into = (b.pos.read(t), b.vel.read(t), b.mass.read(t));
                let (pos, vel, mass) = merge(into, b.pos.read(i), b.vel.read(i), b.mass.read(i));
                b.pos.write(t, pos);
                b.vel.write(t, vel);
                b.mass.write(t, mass);
                b.members.write(t, b.members.read(t) + b.members.read(i));
                b.merged.write(i, 1);
            }
        }
    });
}

/// SOA baseline, step 6.
#[kernel]
pub fn collision_soa_delete_merged(b: SoaBodies) {
    each_index(b.count, |i| {
        // SAFETY: see above.
        unsafe {
            if b.active.read(i) != 0 && b.merged.read(i) != 0 {
                b.active.write(i, 0);
            }
        }
    });
}

/// AOS baseline, step 1.
#[kernel]
pub fn collision_aos_force(b: AosBodies) {
    aos_force::<Exact>(b);
}

/// [`collision_aos_force`] with approximate square roots and divisions (`--fast-math`).
#[kernel]
pub fn collision_aos_force_fast(b: AosBodies) {
    aos_force::<Fast>(b);
}

#[inline(always)]
fn aos_force<P: Precision>(b: AosBodies) {
    each_index(b.count, |i| {
        // SAFETY: see above.
        unsafe {
            let body = b.bodies.as_ptr().add(i);
            if (*body).active == 0 {
                return;
            }
            let (me, my_mass) = ((*body).pos, (*body).mass);
            let mut force = Vec2::ZERO;
            for j in 0..b.count as usize {
                let other = b.bodies.as_ptr().add(j);
                if (*other).active != 0 {
                    force += force_with::<P>(me, my_mass, (*other).pos, (*other).mass, &b.physics);
                }
            }
            (*body).force = force;
        }
    });
}

/// AOS baseline, step 2.
#[kernel]
pub fn collision_aos_update(b: AosBodies) {
    each_index(b.count, |i| {
        // SAFETY: see above.
        unsafe {
            let body = b.bodies.as_ptr().add(i);
            if (*body).active == 0 {
                return;
            }
            let (pos, vel) = integrate((*body).pos, (*body).vel, (*body).force, (*body).mass, &b.physics);
            (*body).pos = pos;
            (*body).vel = vel;
        }
    });
}

/// AOS baseline, step 3.
#[kernel]
pub fn collision_aos_initialize_merge(b: AosBodies) {
    each_index(b.count, |i| {
        // SAFETY: see above.
        unsafe {
            let body = b.bodies.as_ptr().add(i);
            if (*body).active == 0 {
                return;
            }
            (*body).merge_target = NO_TARGET;
            (*body).incoming = NO_BID;
            (*body).merged = 0;
        }
    });
}

/// AOS baseline, step 4.
#[kernel]
pub fn collision_aos_prepare_merge(b: AosBodies) {
    each_index(b.count, |i| {
        // SAFETY: see above.
        unsafe {
            let body = b.bodies.as_ptr().add(i);
            if (*body).active == 0 {
                return;
            }
            let (me, my_mass, my_id) = ((*body).pos, (*body).mass, i as u32);
            let mut nearest = Nearest::new(b.physics.merge_threshold);
            for j in 0..b.count as usize {
                let other = b.bodies.as_ptr().add(j);
                if (*other).active != 0 && heavier((*other).mass, || j as u32, my_mass, my_id) {
                    nearest.offer(((*other).pos - me).length_squared(), || j as u32);
                }
            }
            if nearest.found() {
                (*body).merge_target = nearest.id;
                let target = b.bodies.as_ptr().add(nearest.id as usize);
                atomic_u32(&raw mut (*target).incoming).fetch_min(my_id);
            }
        }
    });
}

/// AOS baseline, step 5.
#[kernel]
pub fn collision_aos_perform_merge(b: AosBodies) {
    each_index(b.count, |i| {
        // SAFETY: see above.
        unsafe {
            let body = b.bodies.as_ptr().add(i);
            if (*body).active == 0 || (*body).merge_target == NO_TARGET {
                return;
            }
            let target = b.bodies.as_ptr().add((*body).merge_target as usize);
            let bid = atomic_u32(&raw mut (*target).incoming).load();
            if bid == i as u32 && (*target).merge_target == NO_TARGET {
                let into = ((*target).pos, (*target).vel, (*target).mass);
                let (pos, vel, mass) = merge(into, (*body).pos, (*body).vel, (*body).mass);
                (*target).pos = pos;
                (*target).vel = vel;
                (*target).mass = mass;
                (*target).members += (*body).members;
                (*body).merged = 1;
            }
        }
    });
}

/// AOS baseline, step 6.
#[kernel]
pub fn collision_aos_delete_merged(b: AosBodies) {
    each_index(b.count, |i| {
        // SAFETY: see above.
        unsafe {
            let body = b.bodies.as_ptr().add(i);
            if (*body).active != 0 && (*body).merged != 0 {
                (*body).active = 0;
            }
        }
    });
}
