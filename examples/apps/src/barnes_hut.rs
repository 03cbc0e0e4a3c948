//! Host side of Barnes-Hut: set up and step the DSL version or a baseline, time it, render it,
//! and read the bodies and the quadtree back for checks.
//!
//! The three implementations are [`Simulation`]s: [`DslSim`] (bodies and tree nodes are objects
//! in the dynasoar heap; the tree is updated incrementally), [`SoaSim`] and [`AosSim`] (static
//! arrays; the tree is rebuilt every step). [`run`] drives any of them with timing, progress
//! and rendering, and checks the final tree ([`TreeSnapshot::check`]); tests step them one at a
//! time.

use std::cell::Cell;
use std::collections::HashMap;
use std::time::Duration;

use anyhow::Context;
use dynasoar::ClassSpec;
use dynasoar::host::{Buffer, Executor, Grid, Runtime};
use dynasoar::math::Vec2;
use dynasoar::prelude::Handle;
use dynasoar_models::barnes_hut::{
    AosBody, AosNode, AosTree, BARNES_HUT_AOS_BUILD, BARNES_HUT_AOS_FORCE, BARNES_HUT_AOS_RESET,
    BARNES_HUT_AOS_SUMMARIZE, BARNES_HUT_AOS_UPDATE, BARNES_HUT_SOA_BUILD, BARNES_HUT_SOA_FORCE,
    BARNES_HUT_SOA_RESET, BARNES_HUT_SOA_SUMMARIZE, BARNES_HUT_SOA_UPDATE, BODY, BarnesHutHeap, BodyNode,
    COUNT, EMPTY, EXPORT_NUMBERS, Export, Init, MAX_DEPTH, NO_NODE, NodeBase, OVERFLOW, Physics, ROOT_P1,
    ROOT_P2, SoaTree, Step, TreeNode, child_region, config, initial_state, stays,
};

use crate::cli::try_collect;
use crate::render::{Canvas, Recorder, heat};
use crate::{Implementation, RunOptions, progress};

/// Threads per block of the baselines' kernels.
const THREADS: u32 = 256;

/// What to simulate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    pub bodies: u32,
    pub steps: u32,
    pub seed: u64,
    /// Initial positions are uniform in [-spread, spread)^2 (at most 1).
    pub spread: f32,
    pub physics: Physics,
    /// Heap of the DSL version in bytes (default: [`Config::default_heap_bytes`]).
    pub heap_bytes: Option<u64>,
    /// Tree nodes the baselines have room for (default: [`Config::default_node_capacity`]).
    pub node_capacity: Option<u32>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            bodies: config::BODIES,
            steps: config::STEPS,
            seed: config::SEED,
            spread: config::SPREAD,
            physics: Physics::default(),
            heap_bytes: None,
            node_capacity: None,
        }
    }
}

/// Tree nodes per body the DSL version's default heap has room for. A quadtree has fewer
/// than one node per body unless bodies cluster very tightly (uniform bodies: about 0.73).
const NODES_PER_BODY: u64 = 2;

/// Tree nodes per body of the baselines' default pools: the tree, and the nodes that threads
/// made for splits they lost and never needed again (at most one per thread and step).
const POOL_NODES_PER_BODY: u64 = 3;

impl Config {
    /// Check the sizes and rules; an error says which option is wrong.
    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(self.bodies > 0, "there must be at least one body");
        // (Body indices in the baselines' child slots are tagged with `BODY`; all ones is `EMPTY`.)
        anyhow::ensure!(self.bodies < BODY - 1, "at most {} bodies", BODY - 2);
        anyhow::ensure!(
            self.spread.is_finite() && (0.0..=1.0).contains(&self.spread),
            "the spread of the initial bodies must be in [0, 1] (got {})",
            self.spread
        );
        let p = &self.physics;
        anyhow::ensure!(p.theta.is_finite() && p.theta >= 0.0, "theta must be at least 0 (got {})", p.theta);
        anyhow::ensure!(p.dt.is_finite() && p.dt >= 0.0, "the time step must be at least 0 (got {})", p.dt);
        anyhow::ensure!(p.gravity.is_finite(), "the gravitational constant must be finite");
        anyhow::ensure!(
            p.dampening.is_finite() && p.dampening > 0.0,
            "the dampening must be positive (got {})",
            p.dampening
        );
        if let Some(bytes) = self.heap_bytes {
            anyhow::ensure!(bytes > 0, "the heap needs at least one byte");
        }
        if let Some(nodes) = self.node_capacity {
            anyhow::ensure!(nodes > 0, "the node pool needs room for the root at least");
            anyhow::ensure!(nodes <= BODY, "at most {BODY} tree nodes");
        }
        Ok(())
    }

    /// A heap with room for every body and `NODES_PER_BODY` tree nodes per body, twice over
    /// for partly empty blocks, plus the allocator's bitmaps. Tree nodes are made and freed
    /// all over the tree, so their blocks stay partly empty: at the default size the 217,516
    /// tree nodes took 20,000-25,000 blocks (a quarter to a third of their slots) on an H200,
    /// where this estimate counts 17,649; with a quarter more, a default run ran out of memory
    /// once (docs/results/2026-11-28/bh-packed-stack.txt).
    pub fn default_heap_bytes(&self) -> u64 {
        let n = self.bodies as u64;
        let blocks = n.div_ceil(BodyNode::OBJECTS_PER_BLOCK as u64)
            + (NODES_PER_BODY * n + 64).div_ceil(TreeNode::OBJECTS_PER_BLOCK as u64);
        let bytes = blocks * BodyNode::BLOCK_BYTES;
        2 * bytes + (8 << 20)
    }

    /// The DSL version's heap size.
    pub fn heap_bytes(&self) -> u64 {
        self.heap_bytes.unwrap_or_else(|| self.default_heap_bytes())
    }

    /// `POOL_NODES_PER_BODY` nodes per body, and some for tiny runs.
    pub fn default_node_capacity(&self) -> u32 {
        (POOL_NODES_PER_BODY * self.bodies as u64 + 1024).min(BODY as u64) as u32
    }

    /// The baselines' node pool size.
    pub fn node_capacity(&self) -> u32 {
        self.node_capacity.unwrap_or_else(|| self.default_node_capacity())
    }

    /// The bodies' constructor argument.
    pub fn init(&self) -> Init {
        Init { seed: self.seed, spread: self.spread, _pad: 0 }
    }
}

/// A body as the host sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyState {
    pub id: u32,
    pub pos: Vec2,
    pub vel: Vec2,
    /// The force of the last step (computed before the move).
    pub force: Vec2,
    pub mass: f32,
}

// ----------------------------------------------------------------------------------------
// The tree as the host sees it, and its invariants.

/// What a child slot (or a parent link) refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Child {
    Empty,
    /// A body, by id.
    Body(u32),
    /// A tree node, by row of the snapshot.
    Node(usize),
    /// A reference to no live body or node (a raw handle or index).
    Dangling(u64),
}

/// A tree node as the host sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeRow {
    pub com: Vec2,
    pub mass: f32,
    pub p1: Vec2,
    pub p2: Vec2,
    pub depth: u32,
    /// `Empty` for the root.
    pub parent: Child,
    pub child_index: u32,
    pub children: [Child; 4],
}

/// A copy of a quadtree.
#[derive(Clone, Debug, Default)]
pub struct TreeSnapshot {
    pub nodes: Vec<NodeRow>,
    /// DSL only: each body's `parent` and `child_index`, by id.
    pub body_links: Option<Vec<(Child, u32)>>,
    /// DSL only: tree nodes in the heap that the last summary pass unlinked (their own
    /// threads free them in the next one).
    pub unlinked: u64,
}

/// Shape of a valid tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TreeStats {
    pub nodes: u64,
    /// Deepest tree node (root: 0).
    pub depth: u32,
    /// Tree nodes at `MAX_DEPTH` or deeper (buckets).
    pub buckets: u64,
}

impl TreeSnapshot {
    /// Check every invariant of the tree over `bodies` (sorted by id, as the simulations
    /// return them): one root covering the square; every body in exactly one slot, in the
    /// slot's square; every other node in exactly one slot of its parent, with the child's
    /// square, depth, parent link and slot; no dangling references; no node that should have
    /// been collapsed (empty, or holding a single body); every node's mass and centre of mass
    /// those of the bodies below it (up to float rounding).
    pub fn check(&self, bodies: &[BodyState]) -> Result<TreeStats, String> {
        let roots: Vec<usize> =
            (0..self.nodes.len()).filter(|&r| self.nodes[r].parent == Child::Empty).collect();
        let [root] = roots[..] else {
            return Err(format!("{} roots", roots.len()));
        };
        let r = &self.nodes[root];
        if (r.p1, r.p2, r.depth) != (ROOT_P1, ROOT_P2, 0) {
            return Err(format!("the root covers {:?}..{:?} at depth {}", r.p1, r.p2, r.depth));
        }
        if bodies.iter().enumerate().any(|(i, b)| b.id as usize != i) {
            return Err("the bodies are not sorted by id".into());
        }
        let mut body_refs = vec![0u32; bodies.len()];
        let mut node_refs = vec![0u32; self.nodes.len()];
        let mut stats = TreeStats { nodes: self.nodes.len() as u64, ..TreeStats::default() };
        for (row, n) in self.nodes.iter().enumerate() {
            stats.depth = stats.depth.max(n.depth);
            stats.buckets += (n.depth >= MAX_DEPTH) as u64;
            let mut count = 0;
            let mut nodes_below = 0;
            for (q, &c) in n.children.iter().enumerate() {
                let q = q as u32;
                match c {
                    Child::Empty => continue,
                    Child::Dangling(h) => {
                        return Err(format!("node {row} slot {q}: dangling reference {h:#x}"));
                    }
                    Child::Body(id) => {
                        let b = bodies
                            .get(id as usize)
                            .ok_or_else(|| format!("node {row} slot {q}: body {id} does not exist"))?;
                        body_refs[id as usize] += 1;
                        if !stays(n.p1, n.p2, n.depth, q, b.pos) {
                            return Err(format!(
                                "body {id} at {:?} is in slot {q} of node {row} ({:?}..{:?}, depth {})",
                                b.pos, n.p1, n.p2, n.depth
                            ));
                        }
                        if let Some(links) = &self.body_links
                            && links[id as usize] != (Child::Node(row), q)
                        {
                            return Err(format!(
                                "body {id} is in slot {q} of node {row} but links to {:?}",
                                links[id as usize]
                            ));
                        }
                    }
                    Child::Node(k) => {
                        nodes_below += 1;
                        let child = self.nodes.get(k).ok_or_else(|| format!("node {row}: no node {k}"))?;
                        node_refs[k] += 1;
                        if child.parent != Child::Node(row) || child.child_index != q {
                            return Err(format!(
                                "node {k} is in slot {q} of node {row} but links to {:?} slot {}",
                                child.parent, child.child_index
                            ));
                        }
                        let (p1, p2) = child_region(n.p1, n.p2, n.depth, q);
                        if (child.p1, child.p2, child.depth) != (p1, p2, n.depth + 1) {
                            return Err(format!(
                                "node {k} in slot {q} of node {row} covers {:?}..{:?} at depth {}, \
                                 not {p1:?}..{p2:?} at depth {}",
                                child.p1,
                                child.p2,
                                child.depth,
                                n.depth + 1
                            ));
                        }
                    }
                }
                count += 1;
            }
            if row != root && (count == 0 || (count == 1 && nodes_below == 0)) {
                return Err(format!("node {row} has {count} children and was not collapsed"));
            }
        }
        if let Some(id) = body_refs.iter().position(|&n| n != 1) {
            return Err(format!("body {id} is in {} slots", body_refs[id]));
        }
        if let Some(k) = (0..self.nodes.len()).find(|&k| k != root && node_refs[k] != 1) {
            return Err(format!("node {k} is in {} slots", node_refs[k]));
        }
        // Every non-root node has a parent one level up: all are reachable from the root.
        // Summaries, bottom-up in f64.
        let mut order: Vec<usize> = (0..self.nodes.len()).collect();
        order.sort_by_key(|&k| std::cmp::Reverse(self.nodes[k].depth));
        let mut sums = vec![(0.0f64, 0.0f64, 0.0f64); self.nodes.len()];
        for k in order {
            let n = &self.nodes[k];
            let (mut m, mut x, mut y) = (0.0, 0.0, 0.0);
            for c in n.children {
                let (cm, cx, cy) = match c {
                    Child::Body(id) => {
                        let b = &bodies[id as usize];
                        (b.mass as f64, b.pos.x as f64 * b.mass as f64, b.pos.y as f64 * b.mass as f64)
                    }
                    Child::Node(j) => sums[j],
                    _ => continue,
                };
                (m, x, y) = (m + cm, x + cx, y + cy);
            }
            sums[k] = (m, x, y);
            if ((n.mass as f64) - m).abs() > 1e-4 * m {
                return Err(format!("node {k} has mass {} but the bodies below have {m}", n.mass));
            }
            if m > 0.0 {
                let (cx, cy) = (x / m, y / m);
                let side = (n.p2.x - n.p1.x) as f64;
                let tolerance = 1e-5 + 1e-4 * side;
                if (n.com.x as f64 - cx).abs() > tolerance || (n.com.y as f64 - cy).abs() > tolerance {
                    return Err(format!(
                        "node {k} has its centre of mass at {:?} but the bodies below at ({cx}, {cy})",
                        n.com
                    ));
                }
            }
        }
        Ok(stats)
    }

    /// The tree in a canonical order (depth-first from the root in slot order), every node as
    /// its square, depth, summary bits and the kinds of its children: equal for trees of the
    /// same shape over the same bodies with the same summaries, wherever their nodes are
    /// stored.
    pub fn canonical(&self) -> Vec<(u32, [u32; 7], [Option<u32>; 4])> {
        let Some(root) = self.nodes.iter().position(|n| n.parent == Child::Empty) else { return Vec::new() };
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(k) = stack.pop() {
            let n = &self.nodes[k];
            let bits = [n.com.x, n.com.y, n.mass, n.p1.x, n.p1.y, n.p2.x, n.p2.y].map(f32::to_bits);
            let kinds = n.children.map(|c| match c {
                Child::Body(id) => Some(id),
                Child::Node(_) => Some(u32::MAX),
                _ => None,
            });
            out.push((n.depth, bits, kinds));
            for c in n.children.iter().rev() {
                if let Child::Node(j) = c {
                    stack.push(*j);
                }
            }
        }
        out
    }
}

// ----------------------------------------------------------------------------------------
// Results.

/// Result of one run.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Final bodies, sorted by id.
    pub bodies: Vec<BodyState>,
    /// Shape of the final tree (checked).
    pub tree: TreeStats,
    /// Device time of all steps (setup excluded).
    pub total: Duration,
    /// Of which enumeration before do-all launches (DSL only).
    pub enumeration: Duration,
    /// Device time of creating the bodies and the first tree (DSL only; the baselines upload
    /// their bodies and build the tree in every step).
    pub setup: Duration,
    /// Heap blocks of the tree nodes at the end, and the slots they hold (DSL only): how densely
    /// the force walk's nodes lie.
    pub tree_blocks: Option<(u64, u64)>,
}

impl Outcome {
    /// The n-body benchmarks' checksum: sum of `pos.x + 2 pos.y + 3 vel.x + 4 vel.y`.
    pub fn checksum(&self) -> f64 {
        checksum(&self.bodies)
    }

    /// The checksum's scale: the sum of the absolute values of its terms (what
    /// [`FLOAT_ORDER_TOLERANCE`](crate::compare::FLOAT_ORDER_TOLERANCE) is relative to).
    pub fn checksum_scale(&self) -> f64 {
        crate::compare::body_checksum_scale(self.bodies.iter().map(|b| (b.pos, b.vel)))
    }

    /// Total momentum (mass times velocity).
    pub fn momentum(&self) -> (f64, f64) {
        self.bodies.iter().fold((0.0, 0.0), |(x, y), b| {
            (x + b.mass as f64 * b.vel.x as f64, y + b.mass as f64 * b.vel.y as f64)
        })
    }
}

/// Runs agree when they have as many bodies and their checksums are within
/// [`crate::compare::FLOAT_ORDER_TOLERANCE`]: the implementations sum forces in another order,
/// and nearly coincident bodies share buckets in racing order.
impl crate::compare::Compared for Outcome {
    fn total(&self) -> Duration {
        self.total
    }
    fn enumeration(&self) -> Duration {
        self.enumeration
    }
    fn result(&self) -> (&'static str, String) {
        ("checksum", format!("{:.6}", self.checksum()))
    }
    fn columns(&self) -> Vec<(&'static str, u64)> {
        vec![("nodes", self.tree.nodes), ("depth", self.tree.depth as u64)]
    }
    fn differs_from(&self, reference: &Self) -> Option<String> {
        if self.bodies.len() != reference.bodies.len() {
            return Some(format!("{} vs {} bodies", self.bodies.len(), reference.bodies.len()));
        }
        crate::compare::checksum_difference(
            "checksum",
            self.checksum(),
            reference.checksum(),
            self.checksum_scale(),
        )
    }
}

/// Sum of `pos.x + 2 pos.y + 3 vel.x + 4 vel.y` over `bodies` (see
/// [`body_checksum`](crate::compare::body_checksum)).
pub fn checksum(bodies: &[BodyState]) -> f64 {
    crate::compare::body_checksum(bodies.iter().map(|b| (b.pos, b.vel)))
}

/// The exact forces on `bodies` (every pair, in f64; the reference for the tree's
/// approximation), with the same softened force law.
pub fn direct_forces(bodies: &[BodyState], p: &Physics) -> Vec<(f64, f64)> {
    let (g, damp) = (p.gravity as f64, p.dampening as f64);
    bodies
        .iter()
        .map(|me| {
            let (mut fx, mut fy) = (0.0, 0.0);
            for other in bodies {
                let (dx, dy) = ((other.pos.x - me.pos.x) as f64, (other.pos.y - me.pos.y) as f64);
                let d2 = dx * dx + dy * dy;
                if d2 > 0.0 {
                    let f = g * me.mass as f64 * other.mass as f64 / (d2 + damp);
                    let d = d2.sqrt();
                    (fx, fy) = (fx + dx * f / d, fy + dy * f / d);
                }
            }
            (fx, fy)
        })
        .collect()
}

// ----------------------------------------------------------------------------------------
// The implementations.

/// One implementation of Barnes-Hut, stepped from the host.
pub trait Simulation {
    /// The executor that runs it (for timing).
    fn executor(&self) -> &Executor;
    /// Queue one step.
    fn step(&self) -> dynasoar::host::Result<()>;
    /// Wait for queued steps and report their errors.
    fn sync(&self) -> anyhow::Result<()>;
    /// The bodies now, sorted by id.
    fn bodies(&self) -> anyhow::Result<Vec<BodyState>>;
    /// The tree over the bodies' current positions (the baselines build it first: they
    /// rebuild it at the start of every step).
    fn tree(&self) -> anyhow::Result<TreeSnapshot>;
    /// Enumeration time since the last call (DSL only).
    fn take_enumeration(&self) -> anyhow::Result<Duration> {
        Ok(Duration::ZERO)
    }
    /// The tree nodes' heap blocks and the slots they hold (DSL only).
    fn tree_blocks(&self) -> anyhow::Result<Option<(u64, u64)>> {
        Ok(None)
    }
    /// Check the heap's invariants at the end of the run (DSL only; see `crate::check_heap`).
    fn check_heap(&self) -> anyhow::Result<()> {
        Ok(())
    }
}

/// Barnes-Hut with bodies and tree nodes in the dynasoar heap.
pub struct DslSim {
    rt: Runtime<BarnesHutHeap>,
    root: Handle<TreeNode>,
    physics: Physics,
    bodies: u32,
    heap_bytes: u64,
    /// Steps done (their parity selects the tree nodes' summary counters).
    steps: Cell<u32>,
    /// Enumeration time of steps, set aside while exports run (their own is not counted).
    enumeration: Cell<Duration>,
}

/// `e`, with a hint at `--heap-mib` if the heap ran out.
fn out_of_heap(e: dynasoar::host::Error, heap_bytes: u64) -> anyhow::Error {
    let oom = matches!(e, dynasoar::host::Error::OutOfMemory { .. });
    let e = anyhow::Error::new(e);
    if oom {
        e.context(format!(
            "Barnes-Hut ran out of its {} MiB heap (try a larger --heap-mib)",
            heap_bytes >> 20
        ))
    } else {
        e
    }
}

impl DslSim {
    /// Create the bodies and the first tree; returns the simulation and the device time of the
    /// setup.
    pub fn new(options: impl Into<RunOptions>, cfg: &Config) -> anyhow::Result<(Self, Duration)> {
        let options: RunOptions = options.into();
        cfg.validate()?;
        let heap_bytes = cfg.heap_bytes();
        let rt = options.runtime::<BarnesHutHeap>(heap_bytes).deferred_checks(true).build()?;
        let exec = rt.executor();
        let table = exec.alloc_zeroed::<Handle<TreeNode>>(1)?;
        let ((), t_root) = exec
            .time(|| {
                rt.parallel_new(TreeNode::root, 1)?;
                rt.parallel_do_with(TreeNode::publish_root, table.device_array())
            })
            .map_err(|e| out_of_heap(e, heap_bytes))?;
        rt.sync().map_err(|e| out_of_heap(e, heap_bytes))?;
        let root = exec.read_all(&table)?[0];
        anyhow::ensure!(!root.is_null(), "the root of the tree was not created");
        let mut sim = DslSim {
            rt,
            root,
            physics: cfg.physics,
            bodies: cfg.bodies,
            heap_bytes,
            steps: Cell::new(0),
            enumeration: Cell::new(Duration::ZERO),
        };
        let first = sim.args(0);
        let rt = &sim.rt;
        // The runtime may report a full heap at any of these launches (it checks as it goes).
        let ((), t_tree) = rt
            .executor()
            .time(|| {
                rt.parallel_new_with(BodyNode::create, cfg.bodies as u64, cfg.init())?;
                rt.parallel_do_with(BodyNode::insert, first)?;
                rt.parallel_do_with(TreeNode::summarize, first)
            })
            .map_err(|e| out_of_heap(e, heap_bytes))?;
        sim.sync()?;
        sim.rt.take_timings()?;
        sim.enumeration = Cell::new(Duration::ZERO);
        Ok((sim, t_root + t_tree))
    }

    /// The runtime (to count and collect objects).
    pub fn runtime(&self) -> &Runtime<BarnesHutHeap> {
        &self.rt
    }

    /// The argument of step `step` (0: the setup).
    fn args(&self, step: u32) -> Step {
        Step { root: self.root, physics: self.physics, parity: step & 1, _pad: 0 }
    }
}

impl Simulation for DslSim {
    fn executor(&self) -> &Executor {
        self.rt.executor()
    }

    fn step(&self) -> dynasoar::host::Result<()> {
        let step = self.steps.get() + 1;
        let (rt, s) = (&self.rt, self.args(step));
        rt.parallel_do_with(BodyNode::compute_force, s)?;
        rt.parallel_do_with(BodyNode::update, s)?;
        rt.parallel_do_with(BodyNode::insert, s)?;
        rt.parallel_do_with(TreeNode::summarize, s)?;
        self.steps.set(step);
        Ok(())
    }

    fn sync(&self) -> anyhow::Result<()> {
        self.rt.sync().map_err(|e| out_of_heap(e, self.heap_bytes))
    }

    fn bodies(&self) -> anyhow::Result<Vec<BodyState>> {
        let mut v: Vec<BodyState> = self
            .rt
            .collect::<BodyNode>()?
            .into_iter()
            .map(|b| BodyState { id: b.id, pos: b.pos, vel: b.vel, force: b.force, mass: b.mass })
            .collect();
        v.sort_by_key(|b| b.id);
        Ok(v)
    }

    fn tree(&self) -> anyhow::Result<TreeSnapshot> {
        self.sync()?;
        self.enumeration.set(self.enumeration.get() + self.rt.take_timings()?.enumeration);
        let exec = self.rt.executor();
        let capacity = self.rt.count::<TreeNode>()? as usize;
        let rows = exec.alloc_zeroed::<u32>(2)?;
        let nodes = exec.alloc_zeroed::<Handle<TreeNode>>(2 * capacity)?;
        let children = exec.alloc_zeroed::<Handle<NodeBase>>(4 * capacity)?;
        let numbers = exec.alloc_zeroed::<u32>(EXPORT_NUMBERS as usize * capacity)?;
        let body_handles = exec.alloc_zeroed::<Handle<BodyNode>>(self.bodies as usize)?;
        let e = Export {
            rows: rows.device_array(),
            nodes: nodes.device_array(),
            children: children.device_array(),
            numbers: numbers.device_array(),
            bodies: body_handles.device_array(),
            next_parity: (self.steps.get() + 1) & 1,
            _pad: 0,
        };
        self.rt.parallel_do_with(TreeNode::export, e)?;
        self.rt.parallel_do_with(BodyNode::export, e)?;
        self.sync()?;
        self.rt.take_timings()?;
        let (n, unlinked) = match exec.read_all(&rows)?[..] {
            [n, unlinked] => (n as usize, unlinked as u64),
            _ => unreachable!("two counters"),
        };
        let (nodes, children, numbers) =
            (exec.read_all(&nodes)?, exec.read_all(&children)?, exec.read_all(&numbers)?);
        let body_handles = exec.read_all(&body_handles)?;
        let row_of: HashMap<u64, usize> = (0..n).map(|r| (nodes[2 * r].raw().0, r)).collect();
        let body_of: HashMap<u64, u32> =
            body_handles.iter().enumerate().map(|(id, h)| (h.raw().0, id as u32)).collect();
        let resolve = |raw: u64| -> Child {
            if raw == 0 {
                Child::Empty
            } else if let Some(&r) = row_of.get(&raw) {
                Child::Node(r)
            } else if let Some(&id) = body_of.get(&raw) {
                Child::Body(id)
            } else {
                Child::Dangling(raw)
            }
        };
        let rows = (0..n)
            .map(|r| {
                let v = &numbers[EXPORT_NUMBERS as usize * r..EXPORT_NUMBERS as usize * (r + 1)];
                let f = |i: usize| f32::from_bits(v[i]);
                NodeRow {
                    com: Vec2::new(f(0), f(1)),
                    mass: f(2),
                    p1: Vec2::new(f(3), f(4)),
                    p2: Vec2::new(f(5), f(6)),
                    depth: v[7],
                    parent: resolve(nodes[2 * r + 1].raw().0),
                    child_index: v[8],
                    children: [0, 1, 2, 3].map(|q| resolve(children[4 * r + q].raw().0)),
                }
            })
            .collect();
        let mut links = vec![(Child::Empty, 0); self.bodies as usize];
        for b in self.rt.collect::<BodyNode>()? {
            links[b.id as usize] = (resolve(b.base.parent.raw().0), b.base.child_index);
        }
        self.rt.take_timings()?;
        Ok(TreeSnapshot { nodes: rows, body_links: Some(links), unlinked })
    }

    fn take_enumeration(&self) -> anyhow::Result<Duration> {
        Ok(self.enumeration.take() + self.rt.take_timings()?.enumeration)
    }

    fn tree_blocks(&self) -> anyhow::Result<Option<(u64, u64)>> {
        if self.rt.heap().is_none() {
            return Ok(None);
        }
        let stats = self.rt.stats()?;
        Ok(stats
            .classes
            .get(<TreeNode as ClassSpec>::TYPE_ID as usize)
            .map(|c| (c.blocks, c.blocks * c.objects_per_block as u64)))
    }

    fn check_heap(&self) -> anyhow::Result<()> {
        crate::check_heap(&self.rt)
    }
}

/// Bodies of `cfg` at the start.
fn initial_bodies(cfg: &Config) -> anyhow::Result<Vec<(Vec2, Vec2, f32)>> {
    try_collect(cfg.bodies as u64, "bodies", "--bodies", |i| initial_state(cfg.seed, i, cfg.spread))
}

/// One field of each body, in a vector of its own (for the SOA baseline's arrays).
fn field<T>(init: &[(Vec2, Vec2, f32)], f: impl Fn(&(Vec2, Vec2, f32)) -> T) -> anyhow::Result<Vec<T>> {
    try_collect(init.len() as u64, "bodies", "--bodies", |i| f(&init[i as usize]))
}

/// Turn a baseline's child slot into a [`Child`] (`row_of`: rows of the linked nodes).
fn array_child(c: u32, row_of: &[Option<usize>]) -> Child {
    if c == EMPTY {
        Child::Empty
    } else if c & BODY != 0 {
        Child::Body(c & !BODY)
    } else {
        match row_of.get(c as usize) {
            Some(&Some(r)) => Child::Node(r),
            _ => Child::Dangling(c as u64),
        }
    }
}

/// The error for a baseline whose node pool ran out.
fn pool_overflow(capacity: u32) -> anyhow::Error {
    anyhow::anyhow!("the baseline's pool of {capacity} tree nodes ran out (try a larger --node-capacity)")
}

/// Fields of a baseline's tree node, in a layout-independent form.
struct ArrayNode {
    com: Vec2,
    mass: f32,
    p1: Vec2,
    p2: Vec2,
    depth: u32,
    parent: u32,
    child_index: u32,
    children: [u32; 4],
    dead: bool,
}

/// The snapshot of a baseline's tree (nodes `0..count` of its pool).
fn array_snapshot(nodes: Vec<ArrayNode>) -> TreeSnapshot {
    let mut row_of = vec![None; nodes.len()];
    let mut rows = 0;
    for (i, n) in nodes.iter().enumerate() {
        if !n.dead {
            row_of[i] = Some(rows);
            rows += 1;
        }
    }
    let rows = nodes
        .iter()
        .filter(|n| !n.dead)
        .map(|n| NodeRow {
            com: n.com,
            mass: n.mass,
            p1: n.p1,
            p2: n.p2,
            depth: n.depth,
            parent: if n.parent == NO_NODE { Child::Empty } else { array_child(n.parent, &row_of) },
            child_index: n.child_index,
            children: n.children.map(|c| array_child(c, &row_of)),
        })
        .collect();
    TreeSnapshot { nodes: rows, body_links: None, unlinked: 0 }
}

/// The hand-written structure-of-arrays baseline.
pub struct SoaSim {
    exec: Executor,
    pos: Buffer<Vec2>,
    vel: Buffer<Vec2>,
    force: Buffer<Vec2>,
    mass: Buffer<f32>,
    children: Buffer<u32>,
    com: Buffer<Vec2>,
    node_mass: Buffer<f32>,
    p1: Buffer<Vec2>,
    p2: Buffer<Vec2>,
    depth: Buffer<u32>,
    parent: Buffer<u32>,
    child_index: Buffer<u32>,
    dead: Buffer<u32>,
    counters: Buffer<u32>,
    // Written by the kernels only; kept alive here.
    _expect: Buffer<u32>,
    _arrived: Buffer<u32>,
    tree: SoaTree,
    grid: Grid,
}

impl SoaSim {
    pub fn new(options: impl Into<RunOptions>, cfg: &Config) -> anyhow::Result<Self> {
        let options: RunOptions = options.into();
        cfg.validate()?;
        let exec = options.executor()?;
        let init = initial_bodies(cfg)?;
        let cap = cfg.node_capacity() as usize;
        let pos = exec.upload(&field(&init, |b| b.0)?)?;
        let vel = exec.upload(&field(&init, |b| b.1)?)?;
        let mass = exec.upload(&field(&init, |b| b.2)?)?;
        let force = exec.alloc_zeroed::<Vec2>(init.len())?;
        let children = exec.alloc_zeroed::<u32>(4 * cap)?;
        let (com, node_mass) = (exec.alloc_zeroed::<Vec2>(cap)?, exec.alloc_zeroed::<f32>(cap)?);
        let (p1, p2) = (exec.alloc_zeroed::<Vec2>(cap)?, exec.alloc_zeroed::<Vec2>(cap)?);
        let (depth, parent, child_index) =
            (exec.alloc_zeroed::<u32>(cap)?, exec.alloc_zeroed::<u32>(cap)?, exec.alloc_zeroed::<u32>(cap)?);
        let (expect, arrived, dead) =
            (exec.alloc_zeroed::<u32>(cap)?, exec.alloc_zeroed::<u32>(cap)?, exec.alloc_zeroed::<u32>(cap)?);
        let counters = exec.alloc_zeroed::<u32>(2)?;
        let tree = SoaTree {
            pos: pos.ptr(),
            vel: vel.ptr(),
            force: force.ptr(),
            mass: mass.ptr(),
            children: children.ptr(),
            com: com.ptr(),
            node_mass: node_mass.ptr(),
            p1: p1.ptr(),
            p2: p2.ptr(),
            depth: depth.ptr(),
            parent: parent.ptr(),
            child_index: child_index.ptr(),
            expect: expect.ptr(),
            arrived: arrived.ptr(),
            dead: dead.ptr(),
            counters: counters.ptr(),
            bodies: cfg.bodies,
            capacity: cap as u32,
            physics: cfg.physics,
        };
        let grid = Grid::for_elements(cfg.bodies as usize, THREADS);
        Ok(SoaSim {
            exec,
            pos,
            vel,
            force,
            mass,
            children,
            com,
            node_mass,
            p1,
            p2,
            depth,
            parent,
            child_index,
            dead,
            counters,
            _expect: expect,
            _arrived: arrived,
            tree,
            grid,
        })
    }

    /// Queue building the tree over the current positions.
    fn build(&self) -> dynasoar::host::Result<()> {
        let (e, g, t) = (&self.exec, self.grid, self.tree);
        e.launch(&BARNES_HUT_SOA_RESET, Grid::for_elements(1, 32), t)?;
        e.launch(&BARNES_HUT_SOA_BUILD, g, t)?;
        e.launch(&BARNES_HUT_SOA_SUMMARIZE, g, t)
    }
}

impl Simulation for SoaSim {
    fn executor(&self) -> &Executor {
        &self.exec
    }

    fn step(&self) -> dynasoar::host::Result<()> {
        self.build()?;
        self.exec.launch(&BARNES_HUT_SOA_FORCE, self.grid, self.tree)?;
        self.exec.launch(&BARNES_HUT_SOA_UPDATE, self.grid, self.tree)
    }

    fn sync(&self) -> anyhow::Result<()> {
        self.exec.synchronize()?;
        if self.exec.read_all(&self.counters)?[OVERFLOW] != 0 {
            return Err(pool_overflow(self.tree.capacity));
        }
        Ok(())
    }

    fn bodies(&self) -> anyhow::Result<Vec<BodyState>> {
        let e = &self.exec;
        let (pos, vel, force, mass) = (
            e.read_all(&self.pos)?,
            e.read_all(&self.vel)?,
            e.read_all(&self.force)?,
            e.read_all(&self.mass)?,
        );
        Ok((0..pos.len())
            .map(|i| BodyState { id: i as u32, pos: pos[i], vel: vel[i], force: force[i], mass: mass[i] })
            .collect())
    }

    fn tree(&self) -> anyhow::Result<TreeSnapshot> {
        self.build()?;
        self.sync()?;
        let e = &self.exec;
        let n = (e.read_all(&self.counters)?[COUNT] as usize).min(self.tree.capacity as usize);
        let cap = self.tree.capacity as usize;
        let children = e.read_all(&self.children)?;
        let (com, node_mass) = (e.read(&self.com, 0, n)?, e.read(&self.node_mass, 0, n)?);
        let (p1, p2) = (e.read(&self.p1, 0, n)?, e.read(&self.p2, 0, n)?);
        let (depth, parent) = (e.read(&self.depth, 0, n)?, e.read(&self.parent, 0, n)?);
        let (child_index, dead) = (e.read(&self.child_index, 0, n)?, e.read(&self.dead, 0, n)?);
        Ok(array_snapshot(
            (0..n)
                .map(|i| ArrayNode {
                    com: com[i],
                    mass: node_mass[i],
                    p1: p1[i],
                    p2: p2[i],
                    depth: depth[i],
                    parent: parent[i],
                    child_index: child_index[i],
                    children: [0, 1, 2, 3].map(|q| children[q * cap + i]),
                    dead: dead[i] != 0,
                })
                .collect(),
        ))
    }
}

/// The hand-written array-of-structures baseline.
pub struct AosSim {
    exec: Executor,
    bodies: Buffer<AosBody>,
    nodes: Buffer<AosNode>,
    counters: Buffer<u32>,
    tree: AosTree,
    grid: Grid,
}

impl AosSim {
    pub fn new(options: impl Into<RunOptions>, cfg: &Config) -> anyhow::Result<Self> {
        let options: RunOptions = options.into();
        cfg.validate()?;
        let exec = options.executor()?;
        let init: Vec<AosBody> = try_collect(cfg.bodies as u64, "bodies", "--bodies", |i| {
            let (pos, vel, mass) = initial_state(cfg.seed, i, cfg.spread);
            AosBody { pos, vel, force: Vec2::ZERO, mass, _pad: 0.0 }
        })?;
        let bodies = exec.upload(&init)?;
        let nodes = exec.alloc_zeroed::<AosNode>(cfg.node_capacity() as usize)?;
        let counters = exec.alloc_zeroed::<u32>(2)?;
        let tree = AosTree {
            bodies: bodies.ptr(),
            nodes: nodes.ptr(),
            counters: counters.ptr(),
            count: cfg.bodies,
            capacity: cfg.node_capacity(),
            physics: cfg.physics,
        };
        let grid = Grid::for_elements(cfg.bodies as usize, THREADS);
        Ok(AosSim { exec, bodies, nodes, counters, tree, grid })
    }

    /// Queue building the tree over the current positions.
    fn build(&self) -> dynasoar::host::Result<()> {
        let (e, g, t) = (&self.exec, self.grid, self.tree);
        e.launch(&BARNES_HUT_AOS_RESET, Grid::for_elements(1, 32), t)?;
        e.launch(&BARNES_HUT_AOS_BUILD, g, t)?;
        e.launch(&BARNES_HUT_AOS_SUMMARIZE, g, t)
    }
}

impl Simulation for AosSim {
    fn executor(&self) -> &Executor {
        &self.exec
    }

    fn step(&self) -> dynasoar::host::Result<()> {
        self.build()?;
        self.exec.launch(&BARNES_HUT_AOS_FORCE, self.grid, self.tree)?;
        self.exec.launch(&BARNES_HUT_AOS_UPDATE, self.grid, self.tree)
    }

    fn sync(&self) -> anyhow::Result<()> {
        self.exec.synchronize()?;
        if self.exec.read_all(&self.counters)?[OVERFLOW] != 0 {
            return Err(pool_overflow(self.tree.capacity));
        }
        Ok(())
    }

    fn bodies(&self) -> anyhow::Result<Vec<BodyState>> {
        Ok(self
            .exec
            .read_all(&self.bodies)?
            .into_iter()
            .enumerate()
            .map(|(i, b)| BodyState { id: i as u32, pos: b.pos, vel: b.vel, force: b.force, mass: b.mass })
            .collect())
    }

    fn tree(&self) -> anyhow::Result<TreeSnapshot> {
        self.build()?;
        self.sync()?;
        let n = (self.exec.read_all(&self.counters)?[COUNT] as usize).min(self.tree.capacity as usize);
        let nodes = self.exec.read(&self.nodes, 0, n)?;
        Ok(array_snapshot(
            nodes
                .into_iter()
                .map(|n| ArrayNode {
                    com: n.com,
                    mass: n.mass,
                    p1: n.p1,
                    p2: n.p2,
                    depth: n.depth,
                    parent: n.parent,
                    child_index: n.child_index,
                    children: n.children,
                    dead: n.dead != 0,
                })
                .collect(),
        ))
    }
}

/// Create `implementation` of `cfg`; returns it and the device time of its setup.
pub fn simulation(
    implementation: Implementation,
    options: impl Into<RunOptions>,
    cfg: &Config,
) -> anyhow::Result<(Box<dyn Simulation>, Duration)> {
    let options: RunOptions = options.into();
    Ok(match implementation {
        Implementation::Dynasoar => {
            let (s, t) = DslSim::new(options, cfg)?;
            (Box::new(s), t)
        }
        Implementation::Soa => (Box::new(SoaSim::new(options, cfg)?), Duration::ZERO),
        Implementation::Aos => (Box::new(AosSim::new(options, cfg)?), Duration::ZERO),
    })
}

// ----------------------------------------------------------------------------------------
// Running and rendering.

/// Run `implementation` of `cfg` on the backend of `options`; the final tree is checked.
pub fn run(
    implementation: Implementation,
    options: impl Into<RunOptions>,
    cfg: &Config,
    recorder: &mut Recorder,
    show_progress: bool,
) -> anyhow::Result<Outcome> {
    let options: RunOptions = options.into();
    let label = options.label(implementation);
    if implementation != Implementation::Dynasoar {
        // The baselines' host and device arrays (the DSL version's heap checks itself).
        let bytes = cfg.bodies as u64 * 96 + cfg.node_capacity() as u64 * 64;
        crate::cli::ensure_host_memory(bytes, cfg.bodies as u64, "bodies", "--bodies")?;
    }
    let (sim, setup) = simulation(implementation, options, cfg)
        .with_context(|| format!("setting up the {label} version"))?;
    let bar = progress::steps(cfg.steps as u64, label, show_progress);
    let mut total = Duration::ZERO;
    let mut enumeration = Duration::ZERO;
    if recorder.wants(0, cfg.steps) {
        recorder.record(0, draw(&sim.bodies()?, &sim.tree()?, recorder.width()))?;
    }
    let mut step = 0;
    while step < cfg.steps {
        // Run up to the next rendered step (or the end) without a host round trip.
        let mut until = step + 1;
        while until < cfg.steps && !recorder.wants(until, cfg.steps) {
            until += 1;
        }
        let ((), t) = sim.executor().time(|| {
            for _ in step..until {
                sim.step()?;
                bar.inc(1);
            }
            Ok(())
        })?;
        sim.sync()?;
        total += t;
        enumeration += sim.take_enumeration()?;
        step = until;
        if recorder.wants(step, cfg.steps) {
            recorder.record(step, draw(&sim.bodies()?, &sim.tree()?, recorder.width()))?;
        }
    }
    bar.finish_and_clear();
    let bodies = sim.bodies()?;
    let tree = sim
        .tree()?
        .check(&bodies)
        .map_err(|e| anyhow::anyhow!("the {} version's final tree is broken: {e}", implementation.name()))?;
    sim.check_heap()?;
    let tree_blocks = sim.tree_blocks()?;
    Ok(Outcome { bodies, tree, total, enumeration, setup, tree_blocks })
}

const SPACE: [u8; 3] = [8, 8, 24];
const GRID: [u8; 3] = [30, 42, 84];

/// A picture of the square: the tree's squares (those at least two pixels wide) and the
/// bodies, colored by mass (discs when there are few).
pub fn draw(bodies: &[BodyState], tree: &TreeSnapshot, width: u32) -> Canvas {
    let mut canvas = Canvas::new(width, width, SPACE);
    let scale = width as f32 / 2.0;
    let to_px = |v: Vec2| ((v.x + 1.0) * scale, (1.0 - v.y) * scale);
    for n in &tree.nodes {
        if (n.p2.x - n.p1.x) * scale < 2.0 {
            continue;
        }
        let ((x1, y1), (x2, y2)) = (to_px(n.p1), to_px(n.p2));
        canvas.line(x1, y1, x2, y1, GRID);
        canvas.line(x1, y2, x2, y2, GRID);
        canvas.line(x1, y1, x1, y2, GRID);
        canvas.line(x2, y1, x2, y2, GRID);
    }
    let discs = (bodies.len() as u64) * 16 < width as u64 * width as u64;
    for b in bodies {
        let (x, y) = to_px(b.pos);
        let color = heat((b.mass / config::MAX_MASS - 0.5) * 2.0);
        if discs {
            canvas.disc(x, y, 1.2, color);
        } else {
            canvas.set(x as i64, y as i64, color);
        }
    }
    canvas
}
