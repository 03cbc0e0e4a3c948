//! Barnes-Hut: n-body gravity through a quadtree whose nodes are objects, created and freed
//! every step (the original DynaSOAr repository's `barnes-hut-dynamic`).
//!
//! Bodies live in the square [-1, 1)^2. The tree's root covers the whole square; a tree node
//! splits its square into four quadrants (its four child slots), and every slot is empty, holds
//! one body, or holds a tree node for the quadrant. The abstract class `NodeBase` (parent, slot
//! in the parent) has two subclasses: `BodyNode` (a body: its position and mass, velocity,
//! force) and `TreeNode` (a square: its children, and the centre of mass and total mass of the
//! bodies below it in `pos` and `mass`).
//!
//! A step has four do-all operations:
//!
//! 1. `BodyNode::compute_force`: every body walks the tree from the root; a tree node far
//!    enough away (its side over the distance to its centre of mass below the opening angle
//!    `theta`) acts as one body at its centre of mass, nearer ones are opened;
//! 2. `BodyNode::update`: every body moves (bouncing off the walls); a body that left the
//!    quadrant of its slot empties the slot and is *detached*;
//! 3. `BodyNode::insert`: every detached body climbs from its old tree node to the first one
//!    that contains it and descends from there to an empty slot, lock-free: it claims an empty
//!    slot with a compare-and-swap, and where a slot holds another body it creates a tree node
//!    for that quadrant holding the other body (`make_new`) and swaps it in. A thread that
//!    loses a race keeps its new node for the next split and frees it if it ends up unused;
//! 4. `TreeNode::summarize`: one bottom-up pass over the tree in one launch. A tree node with
//!    no tree nodes below it starts; every node, when done, reports to its parent with an
//!    atomic counter, and the last child to report goes on with the parent. A node left empty
//!    is unlinked, one left with a single body is replaced by that body in its parent's slot
//!    (both are freed by their own thread in the next step's pass: a do-all on `TreeNode` may
//!    free only its own object); every other node sums the total mass and centre of mass of
//!    its children, and tells its body children where they are (`parent`, `child_index`).
//!
//! The tree is thereby always the *canonical* quadtree of the bodies' positions: a tree node
//! exists exactly for every quadrant (of a quadrant ...) of the square holding two or more
//! bodies, whatever order the racing insertions took. Sums over children run in slot order
//! and the force walk is depth-first in slot order, so the simulation does not depend on thread
//! timing. The hand-written baselines rebuild the same tree from scratch every step in static
//! arrays (a structure of arrays and an array of structures, paper Figure 10) with the same
//! rules and arithmetic: on the CPU backend all three compute bit-identical bodies.
//!
//! Two nearly coincident bodies would need an ever deeper tree. From depth `MAX_DEPTH` on a
//! tree node does not split its square any more: it is a *bucket* that takes bodies in any
//! free slot (and, when all four hold bodies, makes a child bucket for the same square). Only
//! there does the order of racing insertions show (which slot a body takes).
//!
//! Concurrency: the only fields written by several threads in one launch are the child slots
//! (compare-and-swap while inserting, stores while detaching and collapsing) and the summary
//! counters, all `#[atomic]`. A new tree node is written before a fence and the swap that
//! links it, and a thread that descends into a tree node fences before reading its slots. In
//! the summary pass a node's results are written before a fence and its parent's counter
//! increment, and the last child to arrive fences before reading them.
//!
//! Differences from the original: the opening test is the classic Barnes-Hut angle
//! (`theta = 0.5`) instead of the original's fixed distance of 0.25 (which opens every node
//! within a quarter of the square and makes the walk quadratic in dense regions); the
//! summaries are computed bottom-up in one launch instead of one launch per tree level with a
//! host round trip each; collapsing and summarizing are one pass; quadrants are half-open
//! (`[p1, p2)`) also in the quadrant test. Position and mass are fields of each subclass, not
//! of `NodeBase`, so that everything the force walk reads of a tree node (centre of mass,
//! mass, square, child slots) is one 64-byte record (`#[group(walk)]`) and of a body one
//! 12-byte record (`#[group(body)]`): a field group belongs to the class that declares it.

use core::mem::MaybeUninit;

use dynasoar::arch::atomic::Atomic32;
use dynasoar::arch::{self, Backoff};
use dynasoar::prelude::*;
use dynasoar::{Packed, Packer, View};

use crate::gravity;

/// Simulation constants (the original's `example/barnes-hut-dynamic/configuration.h`, except
/// `THETA`, see the module docs).
pub mod config {
    pub const SEED: u64 = 42;
    pub const BODIES: u32 = 300_000;
    pub const STEPS: u32 = 4_000;
    pub const DT: f32 = 0.0075;
    /// Initial masses are uniform in [MAX_MASS / 2, MAX_MASS).
    pub const MAX_MASS: f32 = 1000.0;
    pub const GRAVITY: f32 = 6.673e-11;
    pub const DAMPENING: f32 = 0.05;
    /// Opening angle: a tree node acts as one body when its side is below `THETA` times the
    /// distance to its centre of mass.
    pub const THETA: f32 = 0.5;
    /// Initial positions are uniform in [-SPREAD, SPREAD)^2.
    pub const SPREAD: f32 = 0.99;
}

/// Depth (root: 0) from which tree nodes are buckets: squares of side 2^-23, whose corners and
/// midpoints are exact in `f32` everywhere in [-1, 1].
pub const MAX_DEPTH: u32 = 24;

/// Entries of the force walk's stack: room for `3 * MAX_DEPTH + 4`. (A walk through deeper
/// bucket chains approximates the nodes it has no room to open.)
pub const STACK: usize = 80;

/// Largest `f32` below 1: bodies stay in [-1, UPPER].
pub const UPPER: f32 = 1.0 - f32::EPSILON / 2.0;

/// Lower corner of the root's square.
pub const ROOT_P1: Vec2 = Vec2::new(-1.0, -1.0);
/// Upper corner (exclusive) of the root's square.
pub const ROOT_P2: Vec2 = Vec2::new(1.0, 1.0);

/// `child_index` of a body that left its slot and waits to be inserted.
pub const DETACHED: u32 = u32::MAX;

/// Value of a summary counter (`sync0`/`sync1`) of a tree node that was unlinked and is freed
/// in the next pass.
pub const DEAD: u32 = u32::MAX;

/// Per-run physics, passed to every kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Plain)]
pub struct Physics {
    pub dt: f32,
    pub gravity: f32,
    pub dampening: f32,
    /// Opening angle (0: open every node, an exact but quadratic walk).
    pub theta: f32,
}

impl Default for Physics {
    fn default() -> Self {
        Physics {
            dt: config::DT,
            gravity: config::GRAVITY,
            dampening: config::DAMPENING,
            theta: config::THETA,
        }
    }
}

// ----------------------------------------------------------------------------------------
// The rules, shared by the DSL version and the baselines.

/// Initial position (uniform in [-spread, spread)^2), velocity (tiny) and mass (uniform in
/// [MAX_MASS / 2, MAX_MASS)) of body `index`: a counter-based RNG per body, so every
/// implementation and backend starts from the same bodies.
pub fn initial_state(seed: u64, index: u64, spread: f32) -> (Vec2, Vec2, f32) {
    let mut rng = Rng::new(seed, index);
    let pos = Vec2::new(spread * (2.0 * rng.next_f32() - 1.0), spread * (2.0 * rng.next_f32() - 1.0));
    let vel = Vec2::new((rng.next_f32() - 0.5) / 1000.0, (rng.next_f32() - 0.5) / 1000.0);
    let mass = (rng.next_f32() / 2.0 + 0.5) * config::MAX_MASS;
    (pos, vel, mass)
}

/// Whether `pos` lies in the half-open square `[p1, p2)`.
#[inline(always)]
pub fn contains(p1: Vec2, p2: Vec2, pos: Vec2) -> bool {
    pos.x >= p1.x && pos.x < p2.x && pos.y >= p1.y && pos.y < p2.y
}

/// The quadrant of `[p1, p2)` that holds `pos`: bit 0 set for the right half, bit 1 for the
/// upper half (0: lower left, 1: lower right, 2: upper left, 3: upper right).
#[inline(always)]
pub fn quadrant(p1: Vec2, p2: Vec2, pos: Vec2) -> u32 {
    let (mx, my) = ((p1.x + p2.x) * 0.5, (p1.y + p2.y) * 0.5);
    (pos.x >= mx) as u32 | ((pos.y >= my) as u32) << 1
}

/// The square of child slot `q` of a tree node of `[p1, p2)` at `depth`: its quadrant `q`, or
/// the same square for a bucket.
#[inline(always)]
pub fn child_region(p1: Vec2, p2: Vec2, depth: u32, q: u32) -> (Vec2, Vec2) {
    if depth >= MAX_DEPTH {
        return (p1, p2);
    }
    let (mx, my) = ((p1.x + p2.x) * 0.5, (p1.y + p2.y) * 0.5);
    let (x1, x2) = if q & 1 == 0 { (p1.x, mx) } else { (mx, p2.x) };
    let (y1, y2) = if q & 2 == 0 { (p1.y, my) } else { (my, p2.y) };
    (Vec2::new(x1, y1), Vec2::new(x2, y2))
}

/// The slot a body at `pos` takes in a new tree node of `[p1, p2)` at `depth` (a new bucket:
/// slot 0).
#[inline(always)]
pub fn home_slot(p1: Vec2, p2: Vec2, depth: u32, pos: Vec2) -> u32 {
    if depth >= MAX_DEPTH { 0 } else { quadrant(p1, p2, pos) }
}

/// Whether a body at `pos` still belongs in slot `slot` of a tree node of `[p1, p2)` at
/// `depth`: in that quadrant, or (bucket) in the square.
#[inline(always)]
pub fn stays(p1: Vec2, p2: Vec2, depth: u32, slot: u32, pos: Vec2) -> bool {
    contains(p1, p2, pos) && (depth >= MAX_DEPTH || quadrant(p1, p2, pos) == slot)
}

/// In a bucket with these slots: the first empty slot, else the first holding a tree node,
/// else slot 3 (whose body moves into a new bucket below).
#[inline(always)]
pub fn bucket_slot(empty: [bool; 4], tree: [bool; 4]) -> u32 {
    if let Some(q) = empty.iter().position(|&e| e) {
        return q as u32;
    }
    tree.iter().position(|&t| t).map_or(3, |q| q as u32)
}

/// A tree node as the force walk sees it.
#[derive(Clone, Copy, Debug)]
pub struct Cell {
    /// Centre of mass of the bodies below.
    pub com: Vec2,
    /// Their total mass.
    pub mass: f32,
    /// The square `[p1, p2)`.
    pub p1: Vec2,
    pub p2: Vec2,
}

/// Whether the walk for a body at `me` opens `cell` (else the cell acts as one body at its
/// centre of mass): always for the cell holding the body, and when the cell's side is at least
/// `theta` times the distance to its centre of mass.
#[inline(always)]
pub fn opens(cell: &Cell, me: Vec2, theta: f32) -> bool {
    let side = cell.p2.x - cell.p1.x;
    contains(cell.p1, cell.p2, me) || side * side >= theta * theta * (cell.com - me).length_squared()
}

/// The gravitational force a mass at `other` exerts on a body at `me` (zero at the same place).
#[inline(always)]
pub fn force_on(me: Vec2, my_mass: f32, other: Vec2, other_mass: f32, p: &Physics) -> Vec2 {
    gravity::force_on(me, my_mass, other, other_mass, p.gravity, p.dampening)
}

/// One time step of a body under `force`: new position and velocity. A body that crosses a
/// wall is put back onto it (into [-1, UPPER]) and bounces.
#[inline(always)]
pub fn integrate(pos: Vec2, vel: Vec2, force: Vec2, mass: f32, p: &Physics) -> (Vec2, Vec2) {
    let mut vel = vel + force * (p.dt / mass);
    let mut pos = pos + vel * p.dt;
    if pos.x < -1.0 {
        pos.x = -1.0;
        vel.x = -vel.x;
    } else if pos.x >= 1.0 {
        pos.x = UPPER;
        vel.x = -vel.x;
    }
    if pos.y < -1.0 {
        pos.y = -1.0;
        vel.y = -vel.y;
    } else if pos.y >= 1.0 {
        pos.y = UPPER;
        vel.y = -vel.y;
    }
    (pos, vel)
}

/// Add a child of `mass` at `pos` to a running summary (total mass, mass-weighted position).
#[inline(always)]
pub fn accumulate(total: &mut f32, weighted: &mut Vec2, pos: Vec2, mass: f32) {
    *total += mass;
    *weighted += pos * mass;
}

/// The centre of mass of a summary (the origin for no mass).
#[inline(always)]
pub fn center_of_mass(weighted: Vec2, total: f32) -> Vec2 {
    if total > 0.0 { weighted / total } else { Vec2::ZERO }
}

/// What the force walk reads from a tree: the DSL's objects or a baseline's arrays.
pub trait TreeRead {
    /// A reference to a child: empty, a body or a tree node.
    type Node: Copy;
    fn is_empty(&self, n: Self::Node) -> bool;
    fn is_body(&self, n: Self::Node) -> bool;
    /// A body's position and mass.
    fn body(&self, n: Self::Node) -> (Vec2, f32);
    fn cell(&self, n: Self::Node) -> Cell;
    fn children(&self, n: Self::Node) -> [Self::Node; 4];
}

/// How the force walk's stack holds a node: as it is ([`AsIs`]), or packed into 32 bits (a
/// [`Packer`] of the heap's handles, [`Device::packer`]: half the local memory).
pub trait StackForm<N: Copy> {
    type Entry: Copy;
    fn entry(&self, n: N) -> Self::Entry;
    fn node(&self, e: Self::Entry) -> N;
}

/// The stack holds the nodes themselves.
pub struct AsIs;

impl<N: Copy> StackForm<N> for AsIs {
    type Entry = N;

    #[inline(always)]
    fn entry(&self, n: N) -> N {
        n
    }

    #[inline(always)]
    fn node(&self, e: N) -> N {
        e
    }
}

/// On an H200 a variant of the DSL's walk that packed its stack's handles itself took 7.9 s of
/// a 4,000-step run against 14.7 s over handles (docs/performance-log.md, "Barnes-Hut against
/// its AOS baseline").
impl StackForm<Handle<NodeBase>> for Packer<BarnesHutHeap> {
    type Entry = Packed<NodeBase>;

    #[inline(always)]
    fn entry(&self, n: Handle<NodeBase>) -> Packed<NodeBase> {
        self.pack(n)
    }

    #[inline(always)]
    fn node(&self, e: Packed<NodeBase>) -> Handle<NodeBase> {
        self.unpack(e)
    }
}

/// The force walk's stack of nodes still to visit (`STACK` entries in local memory, not
/// initialised: only pushed entries are read).
struct Stack<N> {
    entries: [MaybeUninit<N>; STACK],
    len: usize,
}

impl<N: Copy> Stack<N> {
    #[inline(always)]
    fn new() -> Self {
        Stack { entries: [const { MaybeUninit::uninit() }; STACK], len: 0 }
    }

    /// Free entries.
    #[inline(always)]
    fn room(&self) -> usize {
        STACK - self.len
    }

    /// Push `n` (ignored when full; callers check `room` first).
    #[inline(always)]
    fn push(&mut self, n: N) {
        if self.len < STACK {
            self.entries[self.len] = MaybeUninit::new(n);
            self.len += 1;
        }
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<N> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        // SAFETY: entries below `len` were written by `push`.
        Some(unsafe { self.entries[self.len].assume_init() })
    }
}

/// The force on a body at `me` of `my_mass` from the tree below `root` (Barnes-Hut walk,
/// depth-first in slot order, so every implementation sums in the same order).
#[inline(always)]
pub fn tree_force<T: TreeRead, F: StackForm<T::Node>>(
    tree: &T,
    form: &F,
    root: T::Node,
    me: Vec2,
    my_mass: f32,
    p: &Physics,
) -> Vec2 {
    let mut stack = Stack::<F::Entry>::new();
    stack.push(form.entry(root));
    let mut force = Vec2::ZERO;
    while let Some(entry) = stack.pop() {
        let n = form.node(entry);
        if tree.is_body(n) {
            let (pos, mass) = tree.body(n);
            force += force_on(me, my_mass, pos, mass, p);
            continue;
        }
        let cell = tree.cell(n);
        if stack.room() >= 4 && opens(&cell, me, p.theta) {
            let children = tree.children(n);
            for i in (0..4).rev() {
                if !tree.is_empty(children[i]) {
                    stack.push(form.entry(children[i]));
                }
            }
        } else if cell.mass > 0.0 {
            force += force_on(me, my_mass, cell.com, cell.mass, p);
        }
    }
    force
}

// ----------------------------------------------------------------------------------------
// The DSL version.

/// A node of the tree (the original's `NodeBase`): a body or a tree node.
#[soa_class(abstract)]
#[derive(Debug, PartialEq)]
pub struct NodeBase {
    /// The tree node whose slot holds this node (null for the root; a body's is set by the
    /// summary pass, so it may be stale while the body is detached).
    pub parent: Handle<TreeNode>,
    /// The slot of `parent` holding this node (`DETACHED`: a body waiting to be inserted).
    pub child_index: u32,
}

/// A body (the original's `BodyNode`).
#[soa_class(extends = NodeBase)]
#[derive(Debug, PartialEq)]
pub struct BodyNode {
    /// Position and mass, one record per body: the force walk reads the two together.
    #[group(body)]
    pub pos: Vec2,
    #[group(body)]
    pub mass: f32,
    /// Index at creation (to compare runs).
    pub id: u32,
    pub vel: Vec2,
    pub force: Vec2,
}

/// A square of the quadtree (the original's `TreeNode`).
#[soa_class(extends = NodeBase)]
#[derive(Debug, PartialEq)]
pub struct TreeNode {
    /// Centre of mass of the bodies below. This field and the next seven are one 64-byte
    /// record per tree node: the force walk reads them together.
    #[group(walk)]
    pub pos: Vec2,
    /// Total mass of the bodies below.
    #[group(walk)]
    pub mass: f32,
    /// Root: 0.
    #[group(walk)]
    pub depth: u32,
    /// The square `[p1, p2)`.
    #[group(walk)]
    pub p1: Vec2,
    #[group(walk)]
    pub p2: Vec2,
    /// Child slots (see [`quadrant`]); written with compare-and-swap during insertion.
    #[atomic]
    #[group(walk)]
    pub child0: Handle<NodeBase>,
    #[atomic]
    #[group(walk)]
    pub child1: Handle<NodeBase>,
    #[atomic]
    #[group(walk)]
    pub child2: Handle<NodeBase>,
    #[atomic]
    #[group(walk)]
    pub child3: Handle<NodeBase>,
    /// Summary-pass counters, used in alternate steps (`Step::parity`): tree-node children
    /// expected in the upper 16 bits, children done in the lower 16; `DEAD` once unlinked.
    #[atomic]
    pub sync0: u32,
    #[atomic]
    pub sync1: u32,
}

dynasoar::allocator!(
    /// The heap of Barnes-Hut.
    /// Every class 64 objects a block (docs/performance-log.md, "Uniform blocks").
    #[blocks(uniform)]
    pub BarnesHutHeap: NodeBase, BodyNode, TreeNode
);

/// Argument of the bodies' constructor.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Plain)]
pub struct Init {
    pub seed: u64,
    /// Initial positions are uniform in [-spread, spread)^2.
    pub spread: f32,
    pub _pad: u32,
}

/// Argument of the step methods.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Plain)]
pub struct Step {
    pub root: Handle<TreeNode>,
    pub physics: Physics,
    /// Which summary counters this step's insertion and summary pass use (alternating: the
    /// pass resets the other ones for the next step).
    pub parity: u32,
    pub _pad: u32,
}

/// Child slot `q` of `node`.
#[inline(always)]
fn slot(node: Obj<TreeNode>, q: u32) -> AtomicRef<Handle<NodeBase>> {
    match q & 3 {
        0 => node.child0_atomic(),
        1 => node.child1_atomic(),
        2 => node.child2_atomic(),
        _ => node.child3_atomic(),
    }
}

/// The summary counter of `node` for `parity`.
#[inline(always)]
fn sync(node: Obj<TreeNode>, parity: u32) -> AtomicRef<u32> {
    if parity & 1 == 0 { node.sync0_atomic() } else { node.sync1_atomic() }
}

/// The four child slots of `node` (atomic loads).
#[inline(always)]
fn children_of<V: View<Class = TreeNode>>(node: V) -> [Handle<NodeBase>; 4] {
    [node.child0(), node.child1(), node.child2(), node.child3()]
}

/// A node's position and mass: a body's own, a tree node's centre of mass and total mass.
#[inline(always)]
fn pos_and_mass(node: Obj<NodeBase>) -> (Vec2, f32) {
    if let Some(t) = node.cast::<TreeNode>() {
        (t.pos(), t.mass())
    } else if let Some(b) = node.cast::<BodyNode>() {
        (b.pos(), b.mass())
    } else {
        (Vec2::ZERO, 0.0)
    }
}

/// Whether `h` refers to a tree node (the class is in the handle: no memory access).
#[inline(always)]
fn is_tree(h: Handle<NodeBase>) -> bool {
    h.get().is_some_and(|o| o.is_exactly::<TreeNode>())
}

/// A tree node's handle as a child.
#[inline(always)]
fn as_child(t: Obj<TreeNode>) -> Handle<NodeBase> {
    t.up::<NodeBase, _>().handle()
}

/// The force walk over the heap's objects.
pub struct ObjectTree<'a> {
    dev: &'a Device<BarnesHutHeap>,
}

impl TreeRead for ObjectTree<'_> {
    type Node = Handle<NodeBase>;

    #[inline(always)]
    fn is_empty(&self, n: Self::Node) -> bool {
        n.is_null()
    }

    #[inline(always)]
    fn is_body(&self, n: Self::Node) -> bool {
        n.get().is_some_and(|o| o.is_exactly::<BodyNode>())
    }

    #[inline(always)]
    fn body(&self, n: Self::Node) -> (Vec2, f32) {
        match n.get().and_then(|o| o.cast::<BodyNode>()) {
            Some(b) => (b.pos(), b.mass()),
            None => (Vec2::ZERO, 0.0),
        }
    }

    #[inline(always)]
    fn cell(&self, n: Self::Node) -> Cell {
        match n.get().and_then(|o| o.cast::<TreeNode>()) {
            Some(t) => Cell { com: t.pos(), mass: t.mass(), p1: t.p1(), p2: t.p2() },
            None => Cell { com: Vec2::ZERO, mass: 0.0, p1: Vec2::ZERO, p2: Vec2::ZERO },
        }
    }

    #[inline(always)]
    fn children(&self, n: Self::Node) -> [Self::Node; 4] {
        match n.get().and_then(|o| o.cast::<TreeNode>()) {
            // The whole value with plain loads (the compiler keeps only the children): nothing
            // changes the tree while forces are computed, and plain loads may hit the L1 cache
            // where the atomic getters of the slots may not.
            Some(t) => {
                let v = self.dev.load(t);
                [v.child0, v.child1, v.child2, v.child3]
            }
            None => [Handle::NULL; 4],
        }
    }
}

#[soa_methods]
impl BodyNode {
    /// Body `index` (detached: the first `insert` places it).
    #[parallel_new]
    pub fn create(_dev: &Device<BarnesHutHeap>, index: u64, init: Init) -> Self {
        let (pos, vel, mass) = initial_state(init.seed, index, init.spread);
        BodyNode {
            base: NodeBase { parent: Handle::NULL, child_index: DETACHED },
            pos,
            mass,
            id: index as u32,
            vel,
            force: Vec2::ZERO,
        }
    }

    /// Step 1: the force of all other bodies, through the tree. It names `dev` to read the
    /// tree and for the packer only, and says so (`creates(), frees()`: it creates and frees
    /// nothing), so that the runtime keeps the bodies' list for `update`.
    #[parallel(creates(), frees())]
    pub fn compute_force(this: Obj<Self>, dev: &Device<BarnesHutHeap>, s: Step) {
        let Some(root) = s.root.get() else { return };
        let objects = ObjectTree { dev };
        let (root, pos, mass) = (as_child(root), this.pos(), this.mass());
        // A stack of packed handles where the heap allows it (always, at the app's sizes).
        let force = match dev.packer() {
            Some(packer) => tree_force(&objects, &packer, root, pos, mass, &s.physics),
            None => tree_force(&objects, &AsIs, root, pos, mass, &s.physics),
        };
        this.set_force(force);
    }

    /// Step 2: move; leave the slot if the body is no longer in its quadrant.
    #[parallel]
    pub fn update(this: Obj<Self>, _dev: &Device<BarnesHutHeap>, s: Step) {
        let (pos, vel) = integrate(this.pos(), this.vel(), this.force(), this.mass(), &s.physics);
        this.set_pos(pos);
        this.set_vel(vel);
        let index = this.child_index();
        if index == DETACHED {
            return;
        }
        if let Some(parent) = this.parent().get()
            && !stays(parent.p1(), parent.p2(), parent.depth(), index, pos)
        {
            // Bodies of one tree node empty different slots: atomic stores.
            slot(parent, index).store(Handle::NULL);
            this.set_child_index(DETACHED);
        }
    }

    /// Step 3: a detached body goes back into the tree (lock-free, see the module docs).
    #[parallel]
    pub fn insert(this: Obj<Self>, dev: &Device<BarnesHutHeap>, s: Step) {
        if this.child_index() != DETACHED {
            return;
        }
        let Some(root) = s.root.get() else { return };
        let pos = this.pos();
        // Climb from the tree node the body left to one that contains it. Tree nodes that
        // existed before this launch keep their parent and square during it.
        let mut cur = this.parent().get().unwrap_or(root);
        let (mut p1, mut p2) = (cur.p1(), cur.p2());
        while !contains(p1, p2, pos) {
            let Some(up) = cur.parent().get() else { break };
            cur = up;
            (p1, p2) = (up.p1(), up.p2());
        }
        let mut depth = cur.depth();
        let me = this.up::<NodeBase, _>().handle();
        // A tree node made for a split that lost its race, kept for the next split.
        let mut spare: Option<Obj<TreeNode>> = None;
        let mut backoff = Backoff::new();
        loop {
            let q = if depth < MAX_DEPTH {
                quadrant(p1, p2, pos)
            } else {
                let c = children_of(cur);
                bucket_slot(c.map(|h| h.is_null()), c.map(is_tree))
            };
            let child = slot(cur, q);
            let h = child.load();
            match h.get() {
                None => {
                    if child.compare_exchange(Handle::NULL, me).is_ok() {
                        break;
                    }
                    backoff.retry();
                }
                Some(o) => {
                    let (c1, c2) = child_region(p1, p2, depth, q);
                    if let Some(t) = o.cast::<TreeNode>() {
                        // Descend. (Acquire: the node may have been made by another thread
                        // during this launch.)
                        arch::fence();
                        (cur, p1, p2, depth) = (t, c1, c2, depth + 1);
                        continue;
                    }
                    // Another body: make a tree node for the quadrant holding it, then go on
                    // inserting into the new node.
                    let mut value = TreeNode::empty(cur.handle(), q, c1, c2, depth + 1);
                    value.set_child(home_slot(c1, c2, depth + 1, pos_and_mass(o).0), h);
                    let node = match spare.take() {
                        Some(n) => {
                            dev.store(n, value);
                            n
                        }
                        None => match dev.make_new(value) {
                            Some(n) => n,
                            None => {
                                // Out of memory (the host reports it after the launch): stay
                                // detached, and start from the root next time.
                                this.set_parent(Handle::NULL);
                                return;
                            }
                        },
                    };
                    // Release: the node's fields before it is linked.
                    arch::fence();
                    if child.compare_exchange(h, as_child(node)).is_ok() {
                        sync(cur, s.parity).fetch_add(1 << 16);
                        (cur, p1, p2, depth) = (node, c1, c2, depth + 1);
                    } else {
                        spare = Some(node);
                        backoff.retry();
                    }
                }
            }
        }
        if let Some(n) = spare {
            dev.free(n);
        }
    }

    /// Write this body's handle at index `id` of `e.bodies` (for host checks).
    #[parallel]
    pub fn export(this: Ref<Self>, _dev: &Device<BarnesHutHeap>, e: Export) {
        e.bodies.set(this.id() as u64, this.handle());
    }
}

#[soa_methods]
impl TreeNode {
    /// A tree node of `[p1, p2)` in slot `child_index` of `parent`, without children.
    #[inline(always)]
    pub fn empty(parent: Handle<TreeNode>, child_index: u32, p1: Vec2, p2: Vec2, depth: u32) -> Self {
        TreeNode {
            base: NodeBase { parent, child_index },
            pos: Vec2::ZERO,
            mass: 0.0,
            depth,
            p1,
            p2,
            child0: Handle::NULL,
            child1: Handle::NULL,
            child2: Handle::NULL,
            child3: Handle::NULL,
            sync0: 0,
            sync1: 0,
        }
    }

    /// Set child slot `q` of this value.
    #[inline(always)]
    pub fn set_child(&mut self, q: u32, child: Handle<NodeBase>) {
        match q & 3 {
            0 => self.child0 = child,
            1 => self.child1 = child,
            2 => self.child2 = child,
            _ => self.child3 = child,
        }
    }

    /// The root, covering the whole square.
    #[parallel_new]
    pub fn root(_dev: &Device<BarnesHutHeap>, _index: u64) -> Self {
        TreeNode::empty(Handle::NULL, 0, ROOT_P1, ROOT_P2, 0)
    }

    /// Write the root's handle into `table[0]`.
    #[parallel]
    pub fn publish_root(this: Ref<Self>, _dev: &Device<BarnesHutHeap>, table: DeviceArray<Handle<TreeNode>>) {
        if this.depth() == 0 && this.parent().is_null() {
            table.set(0, this.handle());
        }
    }

    /// Step 4: the bottom-up pass (collapse and summaries; see the module docs).
    #[parallel]
    pub fn summarize(this: Obj<Self>, dev: &Device<BarnesHutHeap>, s: Step) {
        let parity = s.parity & 1;
        let mine = sync(this, parity).load();
        if mine == DEAD {
            // Unlinked by the last pass: nothing refers to it any more.
            dev.free(this);
            return;
        }
        if mine >> 16 != 0 {
            // The last of its tree-node children to finish goes on with this node.
            return;
        }
        let mut node = this;
        loop {
            let Some(parent) = settle(node, parity) else { return };
            // Release this node's results, count it in at the parent; the last child to
            // arrive acquires all children's results and settles the parent.
            arch::fence();
            let before = sync(parent, parity).fetch_add(1);
            if (before & 0xFFFF) + 1 != before >> 16 {
                return;
            }
            arch::fence();
            node = parent;
        }
    }

    /// Append this node's row to `e` (for host checks; nodes unlinked by the last pass are
    /// only counted).
    #[parallel]
    pub fn export(this: Ref<Self>, _dev: &Device<BarnesHutHeap>, e: Export) {
        let next = if e.next_parity & 1 == 0 { this.sync0() } else { this.sync1() };
        if next == DEAD {
            e.rows.at(1).fetch_add(1);
            return;
        }
        let row = e.rows.at(0).fetch_add(1) as u64;
        e.nodes.set(2 * row, this.handle());
        e.nodes.set(2 * row + 1, this.parent());
        for (i, c) in children_of(this).into_iter().enumerate() {
            e.children.set(4 * row + i as u64, c);
        }
        let (pos, p1, p2) = (this.pos(), this.p1(), this.p2());
        let numbers = [
            pos.x.to_bits(),
            pos.y.to_bits(),
            this.mass().to_bits(),
            p1.x.to_bits(),
            p1.y.to_bits(),
            p2.x.to_bits(),
            p2.y.to_bits(),
            this.depth(),
            this.child_index(),
        ];
        for (i, v) in numbers.into_iter().enumerate() {
            e.numbers.set(EXPORT_NUMBERS * row + i as u64, v);
        }
    }
}

/// Settle `node` in the summary pass of `parity`, its tree-node children being settled: unlink
/// it if it is empty or holds a single body (which takes its place), else compute its summary.
/// Returns its parent (`None` for the root).
#[inline(always)]
fn settle(node: Obj<TreeNode>, parity: u32) -> Option<Obj<TreeNode>> {
    let children = children_of(node);
    let parent = node.parent().get();
    let (mut count, mut trees, mut only) = (0, 0u32, Handle::NULL);
    for &c in &children {
        if !c.is_null() {
            count += 1;
            only = c;
            trees += is_tree(c) as u32;
        }
    }
    if let Some(p) = parent
        && (count == 0 || (count == 1 && trees == 0))
    {
        slot(p, node.child_index()).store(only);
        // The node's own thread frees it in the next pass; nothing touches it after this.
        sync(node, parity ^ 1).store(DEAD);
        return parent;
    }
    let (mut mass, mut weighted) = (0.0, Vec2::ZERO);
    for (i, c) in children.into_iter().enumerate() {
        if let Some(child) = c.get() {
            let (pos, m) = pos_and_mass(child);
            accumulate(&mut mass, &mut weighted, pos, m);
            if let Some(body) = child.cast::<BodyNode>() {
                body.set_parent(node.handle());
                body.set_child_index(i as u32);
            }
        }
    }
    node.set_mass(mass);
    node.set_pos(center_of_mass(weighted, mass));
    sync(node, parity ^ 1).store(trees << 16);
    parent
}

/// Numbers per exported tree-node row: centre of mass x, y, mass, p1 x, y, p2 x, y (f32 bits),
/// depth, child index.
pub const EXPORT_NUMBERS: u64 = 9;

/// Tables the export methods fill (for host checks of the tree).
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct Export {
    /// `rows[0]`: tree-node rows written; `rows[1]`: unlinked tree nodes (not written).
    pub rows: DeviceArray<u32>,
    /// Two per row: the node, its parent.
    pub nodes: DeviceArray<Handle<TreeNode>>,
    /// Four per row: the child slots.
    pub children: DeviceArray<Handle<NodeBase>>,
    /// `EXPORT_NUMBERS` per row.
    pub numbers: DeviceArray<u32>,
    /// Each body's handle, by id.
    pub bodies: DeviceArray<Handle<BodyNode>>,
    /// Parity of the next summary pass (tells unlinked nodes apart).
    pub next_parity: u32,
    pub _pad: u32,
}

// ----------------------------------------------------------------------------------------
// Hand-written baselines: the tree is rebuilt from scratch every step in static arrays, with
// the same rules and arithmetic as the DSL version. Nodes are taken from a pool with an atomic
// counter (root: node 0). A child slot holds `EMPTY`, a node index, or `BODY | body index`.
//
// A step is five kernels: `reset` (empty root), `build` (every body inserted from the root,
// lock-free as in the DSL version), `summarize` (bottom-up, as in the DSL version; no
// collapsing: a tree built from scratch is already canonical), `force`, `update`.
//
// Safety of all baseline kernels: body indices are below `bodies` and node indices below
// `capacity`, the lengths of the arrays (node indices come from the pool counter, which never
// hands out one at or past `capacity`). Plain accesses are to fields that no other thread
// accesses during the launch: a body's own fields, a new node's fields before it is linked
// (fenced), a node's summary by the one thread settling it (published to its parent's settler
// by a fence and the atomic counter), and the tree in the launches that only read it. Shared
// fields (child slots while building, the counters) are accessed atomically.

/// An empty child slot in the baselines.
pub const EMPTY: u32 = u32::MAX;
/// Tag of a body in a baseline child slot (`BODY | index`).
pub const BODY: u32 = 1 << 31;
/// The root's parent in the baselines.
pub const NO_NODE: u32 = u32::MAX;

/// `counters[COUNT]`: nodes taken from the pool.
pub const COUNT: usize = 0;
/// `counters[OVERFLOW]`: nonzero once the node pool ran out.
pub const OVERFLOW: usize = 1;

/// Structure-of-arrays storage of the baselines.
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct SoaTree {
    pub pos: DevPtr<Vec2>,
    pub vel: DevPtr<Vec2>,
    pub force: DevPtr<Vec2>,
    pub mass: DevPtr<f32>,
    /// `4 * capacity`: slot `q` of node `n` at `q * capacity + n`.
    pub children: DevPtr<u32>,
    pub com: DevPtr<Vec2>,
    pub node_mass: DevPtr<f32>,
    pub p1: DevPtr<Vec2>,
    pub p2: DevPtr<Vec2>,
    pub depth: DevPtr<u32>,
    pub parent: DevPtr<u32>,
    pub child_index: DevPtr<u32>,
    /// Tree-node children (counted while building).
    pub expect: DevPtr<u32>,
    /// Children settled (summary pass).
    pub arrived: DevPtr<u32>,
    /// Nonzero for pool nodes that were never linked.
    pub dead: DevPtr<u32>,
    /// `[COUNT, OVERFLOW]`.
    pub counters: DevPtr<u32>,
    pub bodies: u32,
    pub capacity: u32,
    pub physics: Physics,
}

/// Array-of-structures body of the baselines.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Plain)]
pub struct AosBody {
    pub pos: Vec2,
    pub vel: Vec2,
    pub force: Vec2,
    pub mass: f32,
    pub _pad: f32,
}

/// Array-of-structures tree node of the baselines.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Plain)]
pub struct AosNode {
    pub com: Vec2,
    pub mass: f32,
    pub depth: u32,
    pub p1: Vec2,
    pub p2: Vec2,
    pub children: [u32; 4],
    pub parent: u32,
    pub child_index: u32,
    pub expect: u32,
    pub arrived: u32,
    pub dead: u32,
    pub _pad: u32,
}

/// Array-of-structures storage of the baselines.
#[repr(C)]
#[derive(Clone, Copy, Plain)]
pub struct AosTree {
    pub bodies: DevPtr<AosBody>,
    pub nodes: DevPtr<AosNode>,
    /// `[COUNT, OVERFLOW]`.
    pub counters: DevPtr<u32>,
    pub count: u32,
    pub capacity: u32,
    pub physics: Physics,
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

/// A new node's fields.
#[derive(Clone, Copy)]
struct NewNode {
    p1: Vec2,
    p2: Vec2,
    depth: u32,
    parent: u32,
    child_index: u32,
    children: [u32; 4],
}

/// The array storage of a baseline, as the shared algorithms use it (see the safety notes
/// above for what the implementations may assume).
trait ArrayTree: Copy {
    fn bodies(&self) -> u32;
    fn capacity(&self) -> u32;
    fn physics(&self) -> Physics;
    fn counter(&self, which: usize) -> &Atomic32;
    fn pos(&self, b: u32) -> Vec2;
    fn body_mass(&self, b: u32) -> f32;
    /// Position, velocity, force and mass of body `b`.
    fn motion(&self, b: u32) -> (Vec2, Vec2, Vec2, f32);
    fn set_motion(&self, b: u32, pos: Vec2, vel: Vec2);
    fn set_force(&self, b: u32, force: Vec2);
    /// Child slot `q` of node `n`, atomically (while building).
    fn slot(&self, n: u32, q: u32) -> &Atomic32;
    /// All child slots of node `n` (plain loads: in launches that do not change them).
    fn children(&self, n: u32) -> [u32; 4];
    fn expect(&self, n: u32) -> &Atomic32;
    fn arrived(&self, n: u32) -> &Atomic32;
    fn init(&self, n: u32, node: NewNode);
    fn parent(&self, n: u32) -> u32;
    fn is_dead(&self, n: u32) -> bool;
    fn set_dead(&self, n: u32);
    fn summary(&self, n: u32) -> (Vec2, f32);
    fn set_summary(&self, n: u32, com: Vec2, mass: f32);
    fn cell(&self, n: u32) -> Cell;
}

/// The force walk over a baseline's arrays.
#[derive(Clone, Copy)]
struct ArrayWalk<T>(T);

impl<T: ArrayTree> TreeRead for ArrayWalk<T> {
    type Node = u32;

    #[inline(always)]
    fn is_empty(&self, n: u32) -> bool {
        n == EMPTY
    }

    #[inline(always)]
    fn is_body(&self, n: u32) -> bool {
        n & BODY != 0
    }

    #[inline(always)]
    fn body(&self, n: u32) -> (Vec2, f32) {
        let b = n & !BODY;
        (self.0.pos(b), self.0.body_mass(b))
    }

    #[inline(always)]
    fn cell(&self, n: u32) -> Cell {
        self.0.cell(n)
    }

    #[inline(always)]
    fn children(&self, n: u32) -> [u32; 4] {
        self.0.children(n)
    }
}

/// Call `f` with every index below `count`, grid-stride.
#[inline(always)]
fn each_index(count: u32, mut f: impl FnMut(u32)) {
    let stride = arch::global_thread_count();
    let mut i = arch::global_thread_id();
    while i < count as usize {
        f(i as u32);
        i += stride;
    }
}

/// Kernel `reset`: an empty root, an empty pool.
#[inline(always)]
fn array_reset<T: ArrayTree>(t: T) {
    if arch::global_thread_id() == 0 {
        let root = NewNode {
            p1: ROOT_P1,
            p2: ROOT_P2,
            depth: 0,
            parent: NO_NODE,
            child_index: 0,
            children: [EMPTY; 4],
        };
        t.init(0, root);
        t.counter(COUNT).store(1);
    }
}

/// A node from the pool (`None`, and the overflow flag set, if it is used up).
#[inline(always)]
fn take_node<T: ArrayTree>(t: T) -> Option<u32> {
    let n = t.counter(COUNT).fetch_add(1);
    if n < t.capacity() {
        Some(n)
    } else {
        t.counter(OVERFLOW).store(1);
        None
    }
}

/// Kernel `build`: insert every body from the root (lock-free, as `BodyNode::insert`).
#[inline(always)]
fn array_build<T: ArrayTree>(t: T) {
    each_index(t.bodies(), |b| {
        let pos = t.pos(b);
        let (mut cur, mut p1, mut p2, mut depth) = (0u32, ROOT_P1, ROOT_P2, 0u32);
        let mut spare = NO_NODE;
        let mut backoff = Backoff::new();
        loop {
            let q = if depth < MAX_DEPTH {
                quadrant(p1, p2, pos)
            } else {
                let c = [0, 1, 2, 3].map(|q| t.slot(cur, q).load());
                bucket_slot(c.map(|c| c == EMPTY), c.map(|c| c != EMPTY && c & BODY == 0))
            };
            let child = t.slot(cur, q);
            let c = child.load();
            if c == EMPTY {
                if child.compare_exchange(EMPTY, BODY | b).is_ok() {
                    break;
                }
                backoff.retry();
                continue;
            }
            let (c1, c2) = child_region(p1, p2, depth, q);
            if c & BODY == 0 {
                arch::fence();
                (cur, p1, p2, depth) = (c, c1, c2, depth + 1);
                continue;
            }
            let mut children = [EMPTY; 4];
            children[home_slot(c1, c2, depth + 1, t.pos(c & !BODY)) as usize] = c;
            let node = if spare != NO_NODE {
                spare
            } else {
                match take_node(t) {
                    Some(n) => n,
                    None => return,
                }
            };
            t.init(node, NewNode { p1: c1, p2: c2, depth: depth + 1, parent: cur, child_index: q, children });
            arch::fence();
            if child.compare_exchange(c, node).is_ok() {
                t.expect(cur).fetch_add(1);
                (cur, p1, p2, depth) = (node, c1, c2, depth + 1);
                spare = NO_NODE;
            } else {
                spare = node;
                backoff.retry();
            }
        }
        if spare != NO_NODE {
            t.set_dead(spare);
        }
    });
}

/// Kernel `summarize`: bottom-up summaries (as `TreeNode::summarize`, without collapsing).
#[inline(always)]
fn array_summarize<T: ArrayTree>(t: T) {
    let count = t.counter(COUNT).load().min(t.capacity());
    each_index(count, |n| {
        if t.is_dead(n) || t.expect(n).load() != 0 {
            return;
        }
        let mut node = n;
        loop {
            let (mut mass, mut weighted) = (0.0, Vec2::ZERO);
            for c in t.children(node) {
                if c == EMPTY {
                    continue;
                }
                let (pos, m) =
                    if c & BODY != 0 { (t.pos(c & !BODY), t.body_mass(c & !BODY)) } else { t.summary(c) };
                accumulate(&mut mass, &mut weighted, pos, m);
            }
            t.set_summary(node, center_of_mass(weighted, mass), mass);
            let parent = t.parent(node);
            if parent == NO_NODE {
                return;
            }
            arch::fence();
            if t.arrived(parent).fetch_add(1) + 1 != t.expect(parent).load() {
                return;
            }
            arch::fence();
            node = parent;
        }
    });
}

/// Kernel `force`.
#[inline(always)]
fn array_force<T: ArrayTree>(t: T) {
    let p = t.physics();
    each_index(t.bodies(), |b| {
        let force = tree_force(&ArrayWalk(t), &AsIs, 0, t.pos(b), t.body_mass(b), &p);
        t.set_force(b, force);
    });
}

/// Kernel `update`.
#[inline(always)]
fn array_update<T: ArrayTree>(t: T) {
    let p = t.physics();
    each_index(t.bodies(), |b| {
        let (pos, vel, force, mass) = t.motion(b);
        let (pos, vel) = integrate(pos, vel, force, mass, &p);
        t.set_motion(b, pos, vel);
    });
}

// SAFETY (every `unsafe` block of the two implementations): see the baselines' safety notes
// above.
impl ArrayTree for SoaTree {
    #[inline(always)]
    fn bodies(&self) -> u32 {
        self.bodies
    }
    #[inline(always)]
    fn capacity(&self) -> u32 {
        self.capacity
    }
    #[inline(always)]
    fn physics(&self) -> Physics {
        self.physics
    }
    #[inline(always)]
    fn counter(&self, which: usize) -> &Atomic32 {
        // SAFETY: see above.
        unsafe { atomic_u32(self.counters.as_ptr().add(which)) }
    }
    #[inline(always)]
    fn pos(&self, b: u32) -> Vec2 {
        // SAFETY: see above.
        unsafe { self.pos.read(b as usize) }
    }
    #[inline(always)]
    fn body_mass(&self, b: u32) -> f32 {
        // SAFETY: see above.
        unsafe { self.mass.read(b as usize) }
    }
    #[inline(always)]
    fn motion(&self, b: u32) -> (Vec2, Vec2, Vec2, f32) {
        let b = b as usize;
        // SAFETY: see above.
        unsafe { (self.pos.read(b), self.vel.read(b), self.force.read(b), self.mass.read(b)) }
    }
    #[inline(always)]
    fn set_motion(&self, b: u32, pos: Vec2, vel: Vec2) {
        // SAFETY: see above.
        unsafe {
            self.pos.write(b as usize, pos);
            self.vel.write(b as usize, vel);
        }
    }
    #[inline(always)]
    fn set_force(&self, b: u32, force: Vec2) {
        // SAFETY: see above.
        unsafe { self.force.write(b as usize, force) }
    }
    #[inline(always)]
    fn slot(&self, n: u32, q: u32) -> &Atomic32 {
        let at = (q & 3) as usize * self.capacity as usize + n as usize;
        // SAFETY: see above.
        unsafe { atomic_u32(self.children.as_ptr().add(at)) }
    }
    #[inline(always)]
    fn children(&self, n: u32) -> [u32; 4] {
        let (c, n) = (self.capacity as usize, n as usize);
        // SAFETY: see above.
        unsafe {
            [
                self.children.read(n),
                self.children.read(c + n),
                self.children.read(2 * c + n),
                self.children.read(3 * c + n),
            ]
        }
    }
    #[inline(always)]
    fn expect(&self, n: u32) -> &Atomic32 {
        // SAFETY: see above.
        unsafe { atomic_u32(self.expect.as_ptr().add(n as usize)) }
    }
    #[inline(always)]
    fn arrived(&self, n: u32) -> &Atomic32 {
        // SAFETY: see above.
        unsafe { atomic_u32(self.arrived.as_ptr().add(n as usize)) }
    }
    #[inline(always)]
    fn init(&self, n: u32, node: NewNode) {
        let (c, i) = (self.capacity as usize, n as usize);
        // SAFETY: see above.
        unsafe {
            for (q, child) in node.children.into_iter().enumerate() {
                self.children.write(q * c + i, child);
            }
            self.com.write(i, Vec2::ZERO);
            self.node_mass.write(i, 0.0);
            self.p1.write(i, node.p1);
            self.p2.write(i, node.p2);
            self.depth.write(i, node.depth);
            self.parent.write(i, node.parent);
            self.child_index.write(i, node.child_index);
            self.expect.write(i, 0);
            self.arrived.write(i, 0);
            self.dead.write(i, 0);
        }
    }
    #[inline(always)]
    fn parent(&self, n: u32) -> u32 {
        // SAFETY: see above.
        unsafe { self.parent.read(n as usize) }
    }
    #[inline(always)]
    fn is_dead(&self, n: u32) -> bool {
        // SAFETY: see above.
        unsafe { self.dead.read(n as usize) != 0 }
    }
    #[inline(always)]
    fn set_dead(&self, n: u32) {
        // SAFETY: see above.
        unsafe { self.dead.write(n as usize, 1) }
    }
    #[inline(always)]
    fn summary(&self, n: u32) -> (Vec2, f32) {
        // SAFETY: see above.
        unsafe { (self.com.read(n as usize), self.node_mass.read(n as usize)) }
    }
    #[inline(always)]
    fn set_summary(&self, n: u32, com: Vec2, mass: f32) {
        // SAFETY: see above.
        unsafe {
            self.com.write(n as usize, com);
            self.node_mass.write(n as usize, mass);
        }
    }
    #[inline(always)]
    fn cell(&self, n: u32) -> Cell {
        let n = n as usize;
        // SAFETY: see above.
        unsafe {
            Cell {
                com: self.com.read(n),
                mass: self.node_mass.read(n),
                p1: self.p1.read(n),
                p2: self.p2.read(n),
            }
        }
    }
}

impl AosTree {
    #[inline(always)]
    fn body_ptr(&self, b: u32) -> *mut AosBody {
        self.bodies.as_ptr().wrapping_add(b as usize)
    }
    #[inline(always)]
    fn node_ptr(&self, n: u32) -> *mut AosNode {
        self.nodes.as_ptr().wrapping_add(n as usize)
    }
}

impl ArrayTree for AosTree {
    #[inline(always)]
    fn bodies(&self) -> u32 {
        self.count
    }
    #[inline(always)]
    fn capacity(&self) -> u32 {
        self.capacity
    }
    #[inline(always)]
    fn physics(&self) -> Physics {
        self.physics
    }
    #[inline(always)]
    fn counter(&self, which: usize) -> &Atomic32 {
        // SAFETY: see above.
        unsafe { atomic_u32(self.counters.as_ptr().add(which)) }
    }
    #[inline(always)]
    fn pos(&self, b: u32) -> Vec2 {
        // SAFETY: see above.
        unsafe { (*self.body_ptr(b)).pos }
    }
    #[inline(always)]
    fn body_mass(&self, b: u32) -> f32 {
        // SAFETY: see above.
        unsafe { (*self.body_ptr(b)).mass }
    }
    #[inline(always)]
    fn motion(&self, b: u32) -> (Vec2, Vec2, Vec2, f32) {
        let body = self.body_ptr(b);
        // SAFETY: see above.
        unsafe { ((*body).pos, (*body).vel, (*body).force, (*body).mass) }
    }
    #[inline(always)]
    fn set_motion(&self, b: u32, pos: Vec2, vel: Vec2) {
        let body = self.body_ptr(b);
        // SAFETY: see above.
        unsafe {
            (*body).pos = pos;
            (*body).vel = vel;
        }
    }
    #[inline(always)]
    fn set_force(&self, b: u32, force: Vec2) {
        // SAFETY: see above.
        unsafe { (*self.body_ptr(b)).force = force }
    }
    #[inline(always)]
    fn slot(&self, n: u32, q: u32) -> &Atomic32 {
        // SAFETY: see above.
        unsafe { atomic_u32((&raw mut (*self.node_ptr(n)).children).cast::<u32>().add((q & 3) as usize)) }
    }
    #[inline(always)]
    fn children(&self, n: u32) -> [u32; 4] {
        // SAFETY: see above.
        unsafe { (*self.node_ptr(n)).children }
    }
    #[inline(always)]
    fn expect(&self, n: u32) -> &Atomic32 {
        // SAFETY: see above.
        unsafe { atomic_u32(&raw mut (*self.node_ptr(n)).expect) }
    }
    #[inline(always)]
    fn arrived(&self, n: u32) -> &Atomic32 {
        // SAFETY: see above.
        unsafe { atomic_u32(&raw mut (*self.node_ptr(n)).arrived) }
    }
    #[inline(always)]
    fn init(&self, n: u32, node: NewNode) {
        let value = AosNode {
            com: Vec2::ZERO,
            mass: 0.0,
            depth: node.depth,
            p1: node.p1,
            p2: node.p2,
            children: node.children,
            parent: node.parent,
            child_index: node.child_index,
            expect: 0,
            arrived: 0,
            dead: 0,
            _pad: 0,
        };
        // SAFETY: see above.
        unsafe { self.node_ptr(n).write(value) }
    }
    #[inline(always)]
    fn parent(&self, n: u32) -> u32 {
        // SAFETY: see above.
        unsafe { (*self.node_ptr(n)).parent }
    }
    #[inline(always)]
    fn is_dead(&self, n: u32) -> bool {
        // SAFETY: see above.
        unsafe { (*self.node_ptr(n)).dead != 0 }
    }
    #[inline(always)]
    fn set_dead(&self, n: u32) {
        // SAFETY: see above.
        unsafe { (*self.node_ptr(n)).dead = 1 }
    }
    #[inline(always)]
    fn summary(&self, n: u32) -> (Vec2, f32) {
        let node = self.node_ptr(n);
        // SAFETY: see above.
        unsafe { ((*node).com, (*node).mass) }
    }
    #[inline(always)]
    fn set_summary(&self, n: u32, com: Vec2, mass: f32) {
        let node = self.node_ptr(n);
        // SAFETY: see above.
        unsafe {
            (*node).com = com;
            (*node).mass = mass;
        }
    }
    #[inline(always)]
    fn cell(&self, n: u32) -> Cell {
        let node = self.node_ptr(n);
        // SAFETY: see above.
        unsafe { Cell { com: (*node).com, mass: (*node).mass, p1: (*node).p1, p2: (*node).p2 } }
    }
}

/// SOA baseline: empty the tree.
#[kernel]
pub fn barnes_hut_soa_reset(t: SoaTree) {
    array_reset(t);
}

/// SOA baseline: insert every body.
#[kernel]
pub fn barnes_hut_soa_build(t: SoaTree) {
    array_build(t);
}

/// SOA baseline: summaries.
#[kernel]
pub fn barnes_hut_soa_summarize(t: SoaTree) {
    array_summarize(t);
}

/// SOA baseline: forces.
#[kernel]
pub fn barnes_hut_soa_force(t: SoaTree) {
    array_force(t);
}

/// SOA baseline: moves.
#[kernel]
pub fn barnes_hut_soa_update(t: SoaTree) {
    array_update(t);
}

/// AOS baseline: empty the tree.
#[kernel]
pub fn barnes_hut_aos_reset(t: AosTree) {
    array_reset(t);
}

/// AOS baseline: insert every body.
#[kernel]
pub fn barnes_hut_aos_build(t: AosTree) {
    array_build(t);
}

/// AOS baseline: summaries.
#[kernel]
pub fn barnes_hut_aos_summarize(t: AosTree) {
    array_summarize(t);
}

/// AOS baseline: forces.
#[kernel]
pub fn barnes_hut_aos_force(t: AosTree) {
    array_force(t);
}

/// AOS baseline: moves.
#[kernel]
pub fn barnes_hut_aos_update(t: AosTree) {
    array_update(t);
}
