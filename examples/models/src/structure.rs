//! Structure: fracture of a composite material under pull (the paper's `structure`, Table 1).
//!
//! The material is a graph of nodes joined by springs. Some nodes are *anchors*: fixed
//! (`AnchorNode`) or moving at a constant velocity (`AnchorPullNode`, pulling the material
//! apart); the others (`Node`) have a mass and move under the forces of their springs. A spring
//! pulls its two nodes together with a force proportional to how far it is stretched beyond its
//! rest length (it never pushes), and breaks when that force exceeds its limit. Material that is
//! no longer connected to an anchor falls away: those nodes and springs are removed. Every
//! object can be removed, so 4 of the 5 classes are dynamic (`NodeBase` is abstract).
//!
//! A step (as in the original DynaSOAr benchmark) is:
//!
//! 1. `AnchorPullNode::pull`: pull nodes move by their velocity;
//! 2. 40 times: `Spring::compute_force` (every spring computes its force from its nodes'
//!    positions, or breaks), then `Node::update` (every node sums the forces of its springs and
//!    moves);
//! 3. `AnchorNode::reach_out`: find every node still connected to an anchor;
//! 4. `Node::prune`: remove the nodes that were not reached, with their springs.
//!
//! Differences from the original, which make the simulation deterministic (the DSL version, the
//! two hand-written baselines and both backends compute bit-identical meshes) and keep host
//! round trips out of the step:
//!
//! - A spring does not only compute its force, it also stores the force *vector* on each of its
//!   (non-anchor) nodes, in the node's `forces` slot that belongs to the spring; `Node::update`
//!   then sums its own slots in slot order. The original's nodes read their neighbours'
//!   positions while those neighbours move in the same launch (a race), and read every spring
//!   through its handle. Slots are assigned by the mesh generator, not by an atomic counter at
//!   creation time, so the order of the sum is fixed.
//! - A node's `links` word says which slots hold a spring (bits 0-4) and in which of them the
//!   node is the spring's first end `p1` (bits 8-12). A breaking spring clears its bits in both
//!   nodes with an atomic AND; the thread that clears a node's last spring frees the node (as in
//!   the original, also an anchor that lost all its springs).
//! - Reachability is not a level-by-level BFS with a flag read back by the host after every
//!   level. Each anchor's thread *claims* the unclaimed nodes next to it (a compare-and-swap of
//!   the node's `reach` field from an older step number to the current one) and explores from
//!   the nodes it claimed, keeping them on a stack threaded through the nodes' `next` fields (so
//!   the stack never overflows). Which thread claims a node depends on timing; the set of
//!   claimed nodes (everything connected to an anchor) does not. Writing the step number
//!   instead of a "visited" flag saves resetting the flags every step. One launch, no host round
//!   trip.
//! - Removal needs one more launch: an unreached node frees the springs of which it is `p1`
//!   (the other end of such a spring is unreached too, since reachability crosses springs both
//!   ways) and then itself. A node without any spring is unreached, so nodes the generator left
//!   isolated are removed in the first step (isolated anchors stay).
//!
//! The rules live in plain functions ([`spring_step`], [`total_force`], [`integrate`],
//! [`pull`], the `links` helpers) shared by the DSL version and the baselines. The baselines
//! keep all nodes and springs in static arrays indexed by id, switched off by `active` flags:
//! a structure of arrays (per-slot arrays slot-major, so that they are read coalesced) and an
//! array of structures. Nodes are ordered by kind (plain nodes, then pull nodes, then fixed
//! anchors), so the baselines' kernels run over index ranges.

use dynasoar::arch;
use dynasoar::arch::atomic::Atomic32;
use dynasoar::prelude::*;

/// Constants of the benchmark (the original DynaSOAr `example/structure` configuration and
/// its random mesh generator).
pub mod config {
    pub const SEED: u64 = 42;
    /// Nodes of the benchmark mesh.
    pub const NODES: u32 = 1_500_000;
    pub const STEPS: u32 = 500;
    /// Force computations and moves per step.
    pub const COMPUTE_ITERATIONS: u32 = 40;
    /// Springs per node, at most.
    pub const MAX_DEGREE: usize = 5;
    pub const DT: f32 = 0.2;
    /// Share of its velocity a node loses per move (the original's is zero).
    pub const VELOCITY_DAMPENING: f32 = 0.0;
    /// Share of pull nodes, in percent (the original's 25%).
    pub const PULL_PERCENT: u32 = 25;
    /// Share of fixed anchors, in percent (10%); the other 65% are plain nodes.
    pub const ANCHOR_PERCENT: u32 = 10;
    /// Springs per 100 nodes: 70% of `MAX_DEGREE / 2` springs per node, as in the original.
    pub const SPRINGS_PER_100_NODES: u32 = 175;
    /// Node positions are uniform in `[BORDER_MARGIN, 1 - BORDER_MARGIN]^2`.
    pub const BORDER_MARGIN: f32 = 0.35;
    /// Velocity components of pull nodes are uniform in `[-PULL_SPEED, PULL_SPEED)`.
    pub const PULL_SPEED: f32 = 0.05;
    /// Spring factors are uniform in `[SPRING_FACTOR_MIN, SPRING_FACTOR_MAX)`.
    pub const SPRING_FACTOR_MIN: f32 = 3.0;
    pub const SPRING_FACTOR_MAX: f32 = 5.0;
    /// A spring breaks when its force exceeds this.
    pub const MAX_FORCE: f32 = 0.5;
    /// Mass of every plain node.
    pub const MASS: f32 = 500.0;
}

use config::MAX_DEGREE;

/// Kinds of nodes, as exported: a removed node,
pub const DEAD: u32 = 0;
/// a plain node (`Node`),
pub const PLAIN: u32 = 1;
/// a pull node (`AnchorPullNode`),
pub const PULL: u32 = 2;
/// or a fixed anchor (`AnchorNode`).
pub const ANCHOR: u32 = 3;

/// "No spring" / "no node" in the baselines' index arrays and in exports.
pub const NONE: u32 = u32::MAX;

/// The bits of `links` that say which slots hold a spring.
pub const LIVE_MASK: u32 = (1 << MAX_DEGREE) - 1;

/// The `links` bit of a spring in `slot`.
#[inline(always)]
pub const fn live_bit(slot: usize) -> u32 {
    1 << slot
}

/// The `links` bit saying that the node is the first end (`p1`) of the spring in `slot`.
#[inline(always)]
pub const fn p1_bit(slot: usize) -> u32 {
    1 << (8 + slot)
}

/// Both `links` bits of `slot` (cleared when its spring goes).
#[inline(always)]
pub const fn slot_bits(slot: usize) -> u32 {
    live_bit(slot) | p1_bit(slot)
}

/// Whether clearing `slot` from `links` (as it was before) removed the node's last spring.
#[inline(always)]
pub const fn was_last(links: u32, slot: usize) -> bool {
    links & LIVE_MASK == live_bit(slot)
}

/// The slots (as bits) whose spring has this node as its first end `p1`.
#[inline(always)]
pub const fn p1_slots(links: u32) -> u32 {
    links & (links >> 8) & LIVE_MASK
}

/// A spring's slot in its first end `p1` (a spring's `slots` word holds both). Clamped to the
/// slots that exist (a no-op for valid words), so that indexing with it needs no bounds check.
#[inline(always)]
pub const fn slot_in_p1(slots: u32) -> usize {
    let slot = (slots & 0xff) as usize;
    if slot < MAX_DEGREE { slot } else { MAX_DEGREE - 1 }
}

/// A spring's slot in its second end `p2` (clamped as in [`slot_in_p1`]).
#[inline(always)]
pub const fn slot_in_p2(slots: u32) -> usize {
    let slot = ((slots >> 8) & 0xff) as usize;
    if slot < MAX_DEGREE { slot } else { MAX_DEGREE - 1 }
}

/// A spring's `slots` word.
#[inline(always)]
pub const fn slots(in_p1: usize, in_p2: usize) -> u32 {
    in_p1 as u32 | (in_p2 as u32) << 8
}

/// Per-run parameters of the moving kernels.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Plain)]
pub struct Physics {
    pub dt: f32,
    /// Share of its velocity a node loses per move.
    pub dampening: f32,
}

impl Default for Physics {
    fn default() -> Self {
        Physics { dt: config::DT, dampening: config::VELOCITY_DAMPENING }
    }
}

// ----------------------------------------------------------------------------------------
// The rules, shared by all implementations.

/// Distance between two points (a spring's rest length is the distance of its nodes at the
/// start).
#[inline(always)]
pub fn distance(a: Vec2, b: Vec2) -> f32 {
    (b - a).length()
}

/// The force of a spring between `p1` and `p2`: its magnitude, `factor` times how far the
/// spring is stretched beyond `rest_length` (zero when it is not stretched), and the force
/// vector it exerts on `p1` (towards `p2`; `p2` feels the opposite).
#[inline(always)]
pub fn spring_force(p1: Vec2, p2: Vec2, rest_length: f32, factor: f32) -> (f32, Vec2) {
    let d = p2 - p1;
    let dist = d.length();
    let stretch = dist - rest_length;
    if stretch > 0.0 {
        let force = factor * stretch;
        // `dist > rest_length >= 0`: no division by zero.
        (force, d * (force / dist))
    } else {
        (0.0, Vec2::ZERO)
    }
}

/// Whether a spring under `force` breaks.
#[inline(always)]
pub fn breaks(force: f32, max_force: f32) -> bool {
    force > max_force
}

/// One force computation of a spring: the force vector on `p1`, or `None` if it breaks.
#[inline(always)]
pub fn spring_step(p1: Vec2, p2: Vec2, rest_length: f32, factor: f32, max_force: f32) -> Option<Vec2> {
    let (force, on_p1) = spring_force(p1, p2, rest_length, factor);
    if breaks(force, max_force) { None } else { Some(on_p1) }
}

/// The sum of a node's spring forces: `force_at(slot)` for every slot of `links` that holds a
/// spring, in slot order (a fixed loop, unrolled: each slot's index is a constant).
#[inline(always)]
pub fn total_force(links: u32, force_at: impl Fn(usize) -> Vec2) -> Vec2 {
    let mut force = Vec2::ZERO;
    for slot in 0..MAX_DEGREE {
        if links & live_bit(slot) != 0 {
            force += force_at(slot);
        }
    }
    force
}

/// One move of a node of `mass` under `force`: new position and velocity.
#[inline(always)]
pub fn integrate(pos: Vec2, vel: Vec2, force: Vec2, mass: f32, p: &Physics) -> (Vec2, Vec2) {
    let vel = (vel + force * p.dt / mass) * (1.0 - p.dampening);
    (pos + vel * p.dt, vel)
}

/// One move of a pull node.
#[inline(always)]
pub fn pull(pos: Vec2, vel: Vec2, p: &Physics) -> Vec2 {
    pos + vel * p.dt
}

// ----------------------------------------------------------------------------------------
// The initial mesh, as generated on the host and read by every implementation's setup.

/// A node of the generated mesh (node `i` has id `i`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Plain)]
pub struct MeshNode {
    pub pos: Vec2,
    /// Velocity of a pull node (zero for the others).
    pub vel: Vec2,
    /// Mass of a plain node (zero for anchors).
    pub mass: f32,
    /// Its springs' slots (see [`live_bit`], [`p1_bit`]).
    pub links: u32,
    /// `PLAIN`, `PULL` or `ANCHOR`.
    pub kind: u32,
    pub _pad: u32,
}

/// A spring of the generated mesh (spring `i` has id `i`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Plain)]
pub struct MeshSpring {
    /// Ids of its nodes.
    pub p1: u32,
    pub p2: u32,
    pub rest_length: f32,
    pub factor: f32,
    pub max_force: f32,
    /// Its slots in `p1` and `p2` (see [`slots`]).
    pub slots: u32,
}

// ----------------------------------------------------------------------------------------
// The DSL version.

/// What all nodes have.
#[soa_class(abstract)]
#[derive(Debug, PartialEq)]
pub struct NodeBase {
    /// The springs, by slot (null where `links` has no spring).
    pub springs: [Handle<Spring>; MAX_DEGREE],
    pub pos: Vec2,
    /// Which slots hold a spring, and in which this node is the spring's `p1` (bits 0-4 and
    /// 8-12); breaking springs clear their bits concurrently.
    #[atomic]
    pub links: u32,
    /// Index in the generated mesh (to compare runs).
    pub id: u32,
}

/// A node that never moves.
#[soa_class(extends = NodeBase)]
#[derive(Debug, PartialEq)]
pub struct AnchorNode {}

/// An anchor that moves at a constant velocity, pulling the material.
#[soa_class(extends = AnchorNode)]
#[derive(Debug, PartialEq)]
pub struct AnchorPullNode {
    pub vel: Vec2,
}

/// A node of the material, moved by its springs.
#[soa_class(extends = NodeBase)]
#[derive(Debug, PartialEq)]
pub struct Node {
    /// The force of the spring in each slot (written by the spring).
    pub forces: [Vec2; MAX_DEGREE],
    pub vel: Vec2,
    pub mass: f32,
    /// The last step in which an anchor's thread reached this node (claimed by a CAS).
    #[atomic]
    pub reach: u32,
    /// The next node on the stack of the thread that claimed this one.
    pub next: Handle<Node>,
}

/// A spring between two nodes.
#[soa_class]
#[derive(Debug, PartialEq)]
pub struct Spring {
    pub p1: Handle<NodeBase>,
    pub p2: Handle<NodeBase>,
    pub rest_length: f32,
    pub factor: f32,
    pub max_force: f32,
    /// Its slots in `p1` and `p2` (see [`slots`]).
    pub slots: u32,
    /// Index in the generated mesh (to compare runs).
    pub id: u32,
}

dynasoar::allocator!(
    /// The heap of the structure: nodes of the three kinds and springs.
    /// Every class 64 objects a block (docs/performance-log.md, "Uniform blocks").
    #[blocks(uniform)]
    pub StructureHeap: NodeBase, AnchorNode, AnchorPullNode, Node, Spring
);

/// The generated mesh on the device, and the table from node ids to node objects, for the
/// setup.
#[repr(C)]
#[derive(Clone, Copy, Debug, Plain)]
pub struct MeshArgs {
    pub nodes: DevPtr<MeshNode>,
    pub springs: DevPtr<MeshSpring>,
    /// One entry per node id: the node's object (filled by `NodeBase::register`).
    pub table: DeviceArray<Handle<NodeBase>>,
    /// Number of nodes (entries of `nodes`).
    pub node_count: u32,
    /// Id of the first node a constructor creates (its `index` counts from there).
    pub first: u32,
}

impl MeshArgs {
    /// Node `id` of the generated mesh (a zero node if `id` is out of range).
    #[inline(always)]
    fn node(&self, id: u32) -> MeshNode {
        if id >= self.node_count {
            return MeshNode::default();
        }
        // SAFETY: `nodes` holds `node_count` nodes and is only read during the setup.
        unsafe { self.nodes.read(id as usize) }
    }

    /// The `NodeBase` part of mesh node `id`.
    #[inline(always)]
    fn base(&self, id: u32) -> NodeBase {
        let n = self.node(id);
        NodeBase { springs: [Handle::NULL; MAX_DEGREE], pos: n.pos, links: n.links, id }
    }
}

#[soa_methods]
impl Node {
    /// Plain node `first + index` of the mesh.
    #[parallel_new]
    pub fn create(_dev: &Device<StructureHeap>, index: u64, mesh: MeshArgs) -> Self {
        let id = mesh.first + index as u32;
        let n = mesh.node(id);
        Node {
            base: mesh.base(id),
            forces: [Vec2::ZERO; MAX_DEGREE],
            vel: n.vel,
            mass: n.mass,
            reach: 0,
            next: Handle::NULL,
        }
    }

    /// Step 2b: sum the forces of this node's springs and move.
    #[parallel]
    pub fn update(this: Obj<Self>, _dev: &Device<StructureHeap>, p: Physics) {
        let force = total_force(this.links(), |slot| this.forces_at(slot));
        let (pos, vel) = integrate(this.pos(), this.vel(), force, this.mass(), &p);
        this.set_pos(pos);
        this.set_vel(vel);
    }

    /// Step 4: a node that no anchor reached in step `epoch` frees itself and the springs of
    /// which it is `p1`. (The other end of such a spring was not reached either; each of its
    /// springs is freed by its own `p1`.) Its effects are declared, so the runtime keeps the
    /// anchors' lists.
    #[parallel(frees(Spring, Node))]
    pub fn prune(this: Obj<Self>, dev: &Device<StructureHeap>, epoch: u32) {
        if this.reach() == epoch {
            return;
        }
        let mut own = p1_slots(this.links());
        while own != 0 {
            let slot = own.trailing_zeros() as usize;
            own &= own - 1;
            if let Some(spring) = this.springs_at(slot).get() {
                dev.free(spring);
            }
        }
        dev.free(this);
    }
}

#[soa_methods]
impl AnchorNode {
    /// Fixed anchor `first + index` of the mesh.
    #[parallel_new]
    pub fn create(_dev: &Device<StructureHeap>, index: u64, mesh: MeshArgs) -> Self {
        AnchorNode { base: mesh.base(mesh.first + index as u32) }
    }

    /// Step 3: claim every node connected to this anchor that no other thread claimed in step
    /// `epoch` yet, and everything connected to those, depth first.
    #[parallel]
    pub fn reach_out(this: Obj<Self>, _dev: &Device<StructureHeap>, epoch: u32) {
        let mut stack: Handle<Node> = Handle::NULL;
        claim_neighbors(this.up(), epoch, &mut stack);
        while let Some(node) = stack.get() {
            stack = node.next();
            claim_neighbors(node.up(), epoch, &mut stack);
        }
    }
}

#[soa_methods]
impl AnchorPullNode {
    /// Pull node `first + index` of the mesh.
    #[parallel_new]
    pub fn create(_dev: &Device<StructureHeap>, index: u64, mesh: MeshArgs) -> Self {
        let id = mesh.first + index as u32;
        AnchorPullNode { base: AnchorNode { base: mesh.base(id) }, vel: mesh.node(id).vel }
    }

    /// Step 1: move by this node's velocity.
    #[parallel]
    pub fn pull(this: Obj<Self>, _dev: &Device<StructureHeap>, p: Physics) {
        this.set_pos(pull(this.pos(), this.vel(), &p));
    }
}

/// Claim the unclaimed plain nodes next to `node` for step `epoch` and push them on `stack`
/// (anchors are never claimed: they are where the search starts).
#[inline(always)]
fn claim_neighbors(node: Obj<NodeBase>, epoch: u32, stack: &mut Handle<Node>) {
    let links = node.links();
    let mut live = links & LIVE_MASK;
    while live != 0 {
        let slot = live.trailing_zeros() as usize;
        live &= live - 1;
        let Some(spring) = node.springs_at(slot).get() else { continue };
        let other = if links & p1_bit(slot) != 0 { spring.p2() } else { spring.p1() };
        if let Some(n) = other.get().and_then(|o| o.cast::<Node>()) {
            let seen = n.reach();
            if seen != epoch && n.reach_atomic().compare_exchange(seen, epoch).is_ok() {
                n.set_next(*stack);
                *stack = n.handle();
            }
        }
    }
}

#[soa_methods]
impl NodeBase {
    /// Enter this node into `table` at its id (after the constructors).
    #[parallel]
    pub fn register(this: Obj<Self>, _dev: &Device<StructureHeap>, table: DeviceArray<Handle<NodeBase>>) {
        table.set(this.id() as u64, this.handle());
    }

    /// Copy this node's state into `out[id]` (for the host).
    #[parallel]
    pub fn export(this: Obj<Self>, _dev: &Device<StructureHeap>, out: DevPtr<NodeRecord>) {
        let links = this.links();
        let mut r = NodeRecord {
            handle: this.handle(),
            pos: this.pos(),
            links,
            id: this.id(),
            kind: ANCHOR,
            ..NodeRecord::default()
        };
        for slot in 0..MAX_DEGREE {
            let spring = this.springs_at(slot);
            r.springs[slot] = spring;
            r.spring_ids[slot] = NONE;
            // Only a live slot's spring is read (the handle of any other would be a bug, which
            // the host finds from the handles).
            if links & live_bit(slot) != 0
                && let Some(s) = spring.get()
            {
                r.spring_ids[slot] = s.id();
            }
        }
        if let Some(node) = this.cast::<Node>() {
            r.kind = PLAIN;
            r.vel = node.vel();
        } else if let Some(node) = this.cast::<AnchorPullNode>() {
            r.kind = PULL;
            r.vel = node.vel();
        }
        // SAFETY: `out` has one entry per node id (ids are below the mesh's node count), and
        // each node writes its own.
        unsafe { out.write(r.id as usize, r) };
    }
}

#[soa_methods]
impl Spring {
    /// Spring `index` of the mesh, between the nodes `table` holds for its ends.
    #[parallel_new]
    pub fn create(_dev: &Device<StructureHeap>, index: u64, mesh: MeshArgs) -> Self {
        // SAFETY: the host creates as many springs as `springs` holds; only read in the setup.
        let s = unsafe { mesh.springs.read(index as usize) };
        Spring {
            p1: mesh.table.get(s.p1 as u64),
            p2: mesh.table.get(s.p2 as u64),
            rest_length: s.rest_length,
            factor: s.factor,
            max_force: s.max_force,
            slots: s.slots,
            id: index as u32,
        }
    }

    /// Enter this spring into its slots in both nodes (after `create`; every slot has one
    /// spring, so no two threads write the same slot).
    #[parallel]
    pub fn attach(this: Obj<Self>, _dev: &Device<StructureHeap>) {
        let slots = this.slots();
        if let Some(p1) = this.p1().get() {
            p1.set_springs_at(slot_in_p1(slots), this.handle());
        }
        if let Some(p2) = this.p2().get() {
            p2.set_springs_at(slot_in_p2(slots), this.handle());
        }
    }

    /// Step 2a: compute this spring's force and hand it to its (plain) nodes, or break: leave
    /// both nodes (a node that loses its last spring is freed) and free this spring.
    #[parallel(frees(Spring, NodeBase))]
    pub fn compute_force(this: Obj<Self>, dev: &Device<StructureHeap>) {
        let (Some(p1), Some(p2)) = (this.p1().get(), this.p2().get()) else { return };
        let step = spring_step(p1.pos(), p2.pos(), this.rest_length(), this.factor(), this.max_force());
        let slots = this.slots();
        match step {
            Some(on_p1) => {
                if let Some(n) = p1.cast::<Node>() {
                    n.set_forces_at(slot_in_p1(slots), on_p1);
                }
                if let Some(n) = p2.cast::<Node>() {
                    n.set_forces_at(slot_in_p2(slots), -on_p1);
                }
            }
            None => {
                detach(dev, p1, slot_in_p1(slots));
                detach(dev, p2, slot_in_p2(slots));
                dev.free(this);
            }
        }
    }

    /// Copy this spring's state into `out[id]` (for the host).
    #[parallel]
    pub fn export(this: Obj<Self>, _dev: &Device<StructureHeap>, out: DevPtr<SpringRecord>) {
        let (p1, p2) = (this.p1(), this.p2());
        let r = SpringRecord {
            handle: this.handle(),
            p1,
            p2,
            p1_id: p1.get().map_or(NONE, |n| n.id()),
            p2_id: p2.get().map_or(NONE, |n| n.id()),
            id: this.id(),
            slots: this.slots(),
            rest_length: this.rest_length(),
            factor: this.factor(),
            max_force: this.max_force(),
            alive: 1,
        };
        // SAFETY: `out` has one entry per spring id, and each spring writes its own.
        unsafe { out.write(r.id as usize, r) };
    }
}

/// Remove the spring in `slot` from `node`; free the node if that was its last spring.
#[inline(always)]
fn detach(dev: &Device<StructureHeap>, node: Obj<NodeBase>, slot: usize) {
    // Only this thread touches this slot; the links word is shared with the node's other
    // springs.
    node.set_springs_at(slot, Handle::NULL);
    let before = node.links_atomic().fetch_and(!slot_bits(slot));
    if was_last(before, slot) {
        dev.free(node);
    }
}

/// A node as exported by `NodeBase::export` (for checks on the host).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Plain)]
pub struct NodeRecord {
    pub handle: Handle<NodeBase>,
    pub springs: [Handle<Spring>; MAX_DEGREE],
    /// Ids of the springs in live slots (`NONE` elsewhere).
    pub spring_ids: [u32; MAX_DEGREE],
    pub links: u32,
    pub pos: Vec2,
    pub vel: Vec2,
    pub id: u32,
    /// `DEAD` (no node wrote this entry), `PLAIN`, `PULL` or `ANCHOR`.
    pub kind: u32,
}

/// A spring as exported by `Spring::export` (for checks on the host).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Plain)]
pub struct SpringRecord {
    pub handle: Handle<Spring>,
    pub p1: Handle<NodeBase>,
    pub p2: Handle<NodeBase>,
    pub p1_id: u32,
    pub p2_id: u32,
    pub id: u32,
    pub slots: u32,
    pub rest_length: f32,
    pub factor: f32,
    pub max_force: f32,
    /// 1 for an exported spring, 0 for an entry no spring wrote.
    pub alive: u32,
}

// ----------------------------------------------------------------------------------------
// Hand-written baselines: static arrays of all nodes and springs, indexed by id, switched off
// by `active` flags; one thread per index of a range. Nodes `0..plain` are plain nodes,
// `plain..pull_end` pull nodes, `pull_end..nodes` fixed anchors.

/// Structure-of-arrays storage of the baseline. Per-slot arrays hold `MAX_DEGREE * nodes`
/// values, slot-major: slot `k` of node `i` is element `k * nodes + i`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Plain)]
pub struct SoaMesh {
    pub pos: DevPtr<Vec2>,
    pub vel: DevPtr<Vec2>,
    pub mass: DevPtr<f32>,
    /// Updated atomically by breaking springs.
    pub links: DevPtr<u32>,
    /// Updated atomically (claims).
    pub reach: DevPtr<u32>,
    pub next: DevPtr<u32>,
    /// Per slot: the spring's index, or `NONE`.
    pub springs: DevPtr<u32>,
    /// Per slot: the spring's force on the node.
    pub forces: DevPtr<Vec2>,
    pub active: DevPtr<u8>,
    pub p1: DevPtr<u32>,
    pub p2: DevPtr<u32>,
    pub rest_length: DevPtr<f32>,
    pub factor: DevPtr<f32>,
    pub max_force: DevPtr<f32>,
    pub slots: DevPtr<u32>,
    pub spring_active: DevPtr<u8>,
    pub plain: u32,
    pub pull_end: u32,
    pub nodes: u32,
    pub spring_count: u32,
    pub physics: Physics,
    /// The step number of the reachability search.
    pub epoch: u32,
    pub _pad: u32,
}

/// Array-of-structures node of the baseline.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Plain)]
pub struct AosNode {
    pub pos: Vec2,
    pub vel: Vec2,
    pub forces: [Vec2; MAX_DEGREE],
    /// Per slot: the spring's index, or `NONE`.
    pub springs: [u32; MAX_DEGREE],
    pub mass: f32,
    /// Updated atomically by breaking springs.
    pub links: u32,
    /// Updated atomically (claims).
    pub reach: u32,
    pub next: u32,
    pub active: u8,
    pub _pad: [u8; 3],
}

/// Array-of-structures spring of the baseline.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Plain)]
pub struct AosSpring {
    pub p1: u32,
    pub p2: u32,
    pub rest_length: f32,
    pub factor: f32,
    pub max_force: f32,
    pub slots: u32,
    pub active: u8,
    pub _pad: [u8; 7],
}

/// Array-of-structures storage of the baseline.
#[repr(C)]
#[derive(Clone, Copy, Debug, Plain)]
pub struct AosMesh {
    pub nodes: DevPtr<AosNode>,
    pub springs: DevPtr<AosSpring>,
    pub plain: u32,
    pub pull_end: u32,
    pub node_count: u32,
    pub spring_count: u32,
    pub physics: Physics,
    /// The step number of the reachability search.
    pub epoch: u32,
    pub _pad: u32,
}

/// Call `f` with every index of `first..end`, grid-stride.
#[inline(always)]
fn each_index(first: u32, end: u32, mut f: impl FnMut(usize)) {
    let stride = arch::global_thread_count();
    let mut i = first as usize + arch::global_thread_id();
    while i < end as usize {
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

/// Claim node `n` for step `epoch` if it is a plain node no thread claimed yet; `true` if this
/// thread did.
///
/// # Safety
/// `reach` points to a live `u32` accessed only atomically in the launch.
#[inline(always)]
unsafe fn claim(reach: *mut u32, epoch: u32) -> bool {
    // SAFETY: the caller's contract.
    let r = unsafe { atomic_u32(reach) };
    let seen = r.load();
    seen != epoch && r.compare_exchange(seen, epoch).is_ok()
}

// Safety of the baseline kernels: every array holds the number of elements the mesh says and
// the kernels touch indices below it only (the generator's ids and slots are in range). In a
// launch, a thread writes only its own element, except: (a) a breaking spring clears its slot
// in both nodes (slots are owned by their spring) and their `links` atomically, and the thread
// that clears the last bit deactivates the node (once); (b) a spring writes the force slots it
// owns; (c) claims are atomic, and only the claiming thread writes and reads the claimed node's
// `next`; (d) a pruned node deactivates the springs it is `p1` of, which no other thread
// touches then. Reads of other elements read values that no thread writes in the launch.

/// SOA baseline, step 1.
#[kernel]
pub fn structure_soa_pull(m: SoaMesh) {
    each_index(m.plain, m.pull_end, |i| {
        // SAFETY: see above.
        unsafe {
            if m.active.read(i) != 0 {
                m.pos.write(i, pull(m.pos.read(i), m.vel.read(i), &m.physics));
            }
        }
    });
}

/// SOA: remove the spring in `slot` from node `n`; deactivate the node if that was its last.
///
/// # Safety
/// As for the baseline kernels (see above).
#[inline(always)]
unsafe fn soa_detach(m: &SoaMesh, n: usize, slot: usize) {
    // SAFETY: guaranteed by the caller.
    unsafe {
        m.springs.write(slot * m.nodes as usize + n, NONE);
        let before = atomic_u32(m.links.as_ptr().add(n)).fetch_and(!slot_bits(slot));
        if was_last(before, slot) {
            m.active.write(n, 0);
        }
    }
}

/// SOA baseline, step 2a.
#[kernel]
pub fn structure_soa_compute(m: SoaMesh) {
    each_index(0, m.spring_count, |i| {
        // SAFETY: see above.
        unsafe {
            if m.spring_active.read(i) == 0 {
                return;
            }
            let (a, b) = (m.p1.read(i) as usize, m.p2.read(i) as usize);
            let step = spring_step(
                m.pos.read(a),
                m.pos.read(b),
                m.rest_length.read(i),
                m.factor.read(i),
                m.max_force.read(i),
            );
            let slots = m.slots.read(i);
            let nodes = m.nodes as usize;
            match step {
                Some(on_p1) => {
                    if a < m.plain as usize {
                        m.forces.write(slot_in_p1(slots) * nodes + a, on_p1);
                    }
                    if b < m.plain as usize {
                        m.forces.write(slot_in_p2(slots) * nodes + b, -on_p1);
                    }
                }
                None => {
                    soa_detach(&m, a, slot_in_p1(slots));
                    soa_detach(&m, b, slot_in_p2(slots));
                    m.spring_active.write(i, 0);
                }
            }
        }
    });
}

/// SOA baseline, step 2b.
#[kernel]
pub fn structure_soa_update(m: SoaMesh) {
    let nodes = m.nodes as usize;
    each_index(0, m.plain, |i| {
        // SAFETY: see above.
        unsafe {
            if m.active.read(i) == 0 {
                return;
            }
            let force = total_force(m.links.read(i), |slot| m.forces.read(slot * nodes + i));
            let (pos, vel) = integrate(m.pos.read(i), m.vel.read(i), force, m.mass.read(i), &m.physics);
            m.pos.write(i, pos);
            m.vel.write(i, vel);
        }
    });
}

/// SOA: claim the unclaimed plain nodes next to node `n` and push them on `stack`.
///
/// # Safety
/// As for the baseline kernels (see above).
#[inline(always)]
unsafe fn soa_claim_neighbors(m: &SoaMesh, n: usize, stack: &mut u32) {
    // SAFETY: guaranteed by the caller.
    unsafe {
        let links = m.links.read(n);
        let mut live = links & LIVE_MASK;
        while live != 0 {
            let slot = live.trailing_zeros() as usize;
            live &= live - 1;
            let s = m.springs.read(slot * m.nodes as usize + n) as usize;
            let other = if links & p1_bit(slot) != 0 { m.p2.read(s) } else { m.p1.read(s) };
            if other < m.plain && claim(m.reach.as_ptr().add(other as usize), m.epoch) {
                m.next.write(other as usize, *stack);
                *stack = other;
            }
        }
    }
}

/// SOA baseline, step 3.
#[kernel]
pub fn structure_soa_reach_out(m: SoaMesh) {
    each_index(m.plain, m.nodes, |i| {
        // SAFETY: see above.
        unsafe {
            if m.active.read(i) == 0 {
                return;
            }
            let mut stack = NONE;
            soa_claim_neighbors(&m, i, &mut stack);
            while stack != NONE {
                let n = stack as usize;
                stack = m.next.read(n);
                soa_claim_neighbors(&m, n, &mut stack);
            }
        }
    });
}

/// SOA baseline, step 4.
#[kernel]
pub fn structure_soa_prune(m: SoaMesh) {
    let nodes = m.nodes as usize;
    each_index(0, m.plain, |i| {
        // SAFETY: see above.
        unsafe {
            if m.active.read(i) == 0 || atomic_u32(m.reach.as_ptr().add(i)).load() == m.epoch {
                return;
            }
            let mut own = p1_slots(m.links.read(i));
            while own != 0 {
                let slot = own.trailing_zeros() as usize;
                own &= own - 1;
                m.spring_active.write(m.springs.read(slot * nodes + i) as usize, 0);
            }
            m.active.write(i, 0);
        }
    });
}

/// AOS baseline, step 1.
#[kernel]
pub fn structure_aos_pull(m: AosMesh) {
    each_index(m.plain, m.pull_end, |i| {
        // SAFETY: see above.
        unsafe {
            let node = m.nodes.as_ptr().add(i);
            if (*node).active != 0 {
                (*node).pos = pull((*node).pos, (*node).vel, &m.physics);
            }
        }
    });
}

/// AOS: remove the spring in `slot` from node `n`; deactivate the node if that was its last.
///
/// # Safety
/// As for the baseline kernels (see above).
#[inline(always)]
unsafe fn aos_detach(m: &AosMesh, n: usize, slot: usize) {
    // SAFETY: guaranteed by the caller.
    unsafe {
        let node = m.nodes.as_ptr().add(n);
        (*node).springs[slot] = NONE;
        let before = atomic_u32(&raw mut (*node).links).fetch_and(!slot_bits(slot));
        if was_last(before, slot) {
            (*node).active = 0;
        }
    }
}

/// AOS baseline, step 2a.
#[kernel]
pub fn structure_aos_compute(m: AosMesh) {
    each_index(0, m.spring_count, |i| {
        // SAFETY: see above.
        unsafe {
            let spring = m.springs.as_ptr().add(i);
            if (*spring).active == 0 {
                return;
            }
            let s = *spring;
            let (a, b) = (m.nodes.as_ptr().add(s.p1 as usize), m.nodes.as_ptr().add(s.p2 as usize));
            match spring_step((*a).pos, (*b).pos, s.rest_length, s.factor, s.max_force) {
                Some(on_p1) => {
                    if s.p1 < m.plain {
                        (*a).forces[slot_in_p1(s.slots)] = on_p1;
                    }
                    if s.p2 < m.plain {
                        (*b).forces[slot_in_p2(s.slots)] = -on_p1;
                    }
                }
                None => {
                    aos_detach(&m, s.p1 as usize, slot_in_p1(s.slots));
                    aos_detach(&m, s.p2 as usize, slot_in_p2(s.slots));
                    (*spring).active = 0;
                }
            }
        }
    });
}

/// AOS baseline, step 2b.
#[kernel]
pub fn structure_aos_update(m: AosMesh) {
    each_index(0, m.plain, |i| {
        // SAFETY: see above.
        unsafe {
            let node = m.nodes.as_ptr().add(i);
            if (*node).active == 0 {
                return;
            }
            let force = total_force((*node).links, |slot| (*node).forces[slot]);
            let (pos, vel) = integrate((*node).pos, (*node).vel, force, (*node).mass, &m.physics);
            (*node).pos = pos;
            (*node).vel = vel;
        }
    });
}

/// AOS: claim the unclaimed plain nodes next to node `n` and push them on `stack`.
///
/// # Safety
/// As for the baseline kernels (see above).
#[inline(always)]
unsafe fn aos_claim_neighbors(m: &AosMesh, n: usize, stack: &mut u32) {
    // SAFETY: guaranteed by the caller.
    unsafe {
        let node = m.nodes.as_ptr().add(n);
        let links = (*node).links;
        let mut live = links & LIVE_MASK;
        while live != 0 {
            let slot = live.trailing_zeros() as usize;
            live &= live - 1;
            let s = m.springs.as_ptr().add((*node).springs[slot] as usize);
            let other = if links & p1_bit(slot) != 0 { (*s).p2 } else { (*s).p1 };
            if other < m.plain {
                let o = m.nodes.as_ptr().add(other as usize);
                if claim(&raw mut (*o).reach, m.epoch) {
                    (*o).next = *stack;
                    *stack = other;
                }
            }
        }
    }
}

/// AOS baseline, step 3.
#[kernel]
pub fn structure_aos_reach_out(m: AosMesh) {
    each_index(m.plain, m.node_count, |i| {
        // SAFETY: see above.
        unsafe {
            if (*m.nodes.as_ptr().add(i)).active == 0 {
                return;
            }
            let mut stack = NONE;
            aos_claim_neighbors(&m, i, &mut stack);
            while stack != NONE {
                let n = stack as usize;
                stack = (*m.nodes.as_ptr().add(n)).next;
                aos_claim_neighbors(&m, n, &mut stack);
            }
        }
    });
}

/// AOS baseline, step 4.
#[kernel]
pub fn structure_aos_prune(m: AosMesh) {
    each_index(0, m.plain, |i| {
        // SAFETY: see above.
        unsafe {
            let node = m.nodes.as_ptr().add(i);
            if (*node).active == 0 || atomic_u32(&raw mut (*node).reach).load() == m.epoch {
                return;
            }
            let mut own = p1_slots((*node).links);
            while own != 0 {
                let slot = own.trailing_zeros() as usize;
                own &= own - 1;
                (*m.springs.as_ptr().add((*node).springs[slot] as usize)).active = 0;
            }
            (*node).active = 0;
        }
    });
}
