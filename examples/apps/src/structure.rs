//! Host side of structure: generate the mesh, set up and step the DSL version or a baseline,
//! time it, render it, and read the mesh back for checks.
//!
//! The three implementations are [`Simulation`]s: [`DslSim`] (objects in the dynasoar heap),
//! [`SoaSim`] and [`AosSim`] (static arrays with `active` flags). All three start from the same
//! [`Mesh`] made by [`generate`] and export the same [`MeshState`]; the model is deterministic,
//! so they agree bit for bit. [`run`] drives any of them with timing, progress and rendering;
//! tests step them phase by phase.

use std::cell::Cell;
use std::collections::VecDeque;
use std::time::Duration;

use anyhow::Context;
use dynasoar::ClassSpec;
use dynasoar::host::{Buffer, Executor, Grid, Runtime, StepGraph};
use dynasoar::math::Vec2;
use dynasoar::prelude::Handle;
use dynasoar::rand::Rng;
use dynasoar_models::structure::{
    ANCHOR, AnchorNode, AnchorPullNode, AosMesh, AosNode, AosSpring, DEAD, LIVE_MASK, MeshArgs, MeshNode,
    MeshSpring, NONE, Node, NodeBase, NodeRecord, PLAIN, PULL, Physics, STRUCTURE_AOS_COMPUTE,
    STRUCTURE_AOS_PRUNE, STRUCTURE_AOS_PULL, STRUCTURE_AOS_REACH_OUT, STRUCTURE_AOS_UPDATE,
    STRUCTURE_SOA_COMPUTE, STRUCTURE_SOA_PRUNE, STRUCTURE_SOA_PULL, STRUCTURE_SOA_REACH_OUT,
    STRUCTURE_SOA_UPDATE, SoaMesh, Spring, SpringRecord, StructureHeap, config, distance, live_bit, p1_bit,
    slot_in_p1, slot_in_p2, slots, spring_force,
};

use crate::render::{Canvas, Recorder, heat};
use crate::{Implementation, RunOptions, progress, run_step};

/// Springs per node, at most.
pub const MAX_DEGREE: usize = config::MAX_DEGREE;

/// Threads per block of the baselines' kernels.
const THREADS: u32 = 256;

/// What to simulate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Nodes of the mesh (plain nodes, pull nodes and fixed anchors).
    pub nodes: u32,
    /// Springs of the mesh (default: 1.75 per node, see [`Config::with_nodes`]).
    pub springs: u32,
    pub steps: u32,
    /// Force computations and moves per step.
    pub iterations: u32,
    pub seed: u64,
    pub physics: Physics,
    /// Share of pull nodes, in percent.
    pub pull_percent: u32,
    /// Share of fixed anchors, in percent (the rest are plain nodes).
    pub anchor_percent: u32,
    /// Heap of the DSL version in bytes (default: [`Config::default_heap_bytes`]).
    pub heap_bytes: Option<u64>,
}

impl Default for Config {
    fn default() -> Self {
        Config::with_nodes(config::NODES)
    }
}

impl Config {
    /// The benchmark's configuration for a mesh of `nodes` nodes (and 1.75 springs per node).
    pub fn with_nodes(nodes: u32) -> Self {
        Config {
            nodes,
            springs: Self::default_springs(nodes),
            steps: config::STEPS,
            iterations: config::COMPUTE_ITERATIONS,
            seed: config::SEED,
            physics: Physics::default(),
            pull_percent: config::PULL_PERCENT,
            anchor_percent: config::ANCHOR_PERCENT,
            heap_bytes: None,
        }
    }

    /// The original's number of springs for `nodes` nodes: 70% of `MAX_DEGREE / 2` per node.
    pub fn default_springs(nodes: u32) -> u32 {
        (nodes as u64 * config::SPRINGS_PER_100_NODES as u64 / 100).min(u32::MAX as u64) as u32
    }

    /// Check the sizes and rules; an error says which option is wrong.
    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(self.nodes > 0, "the mesh needs at least one node");
        // Ids and slot-major indices must stay below `NONE`.
        let max_nodes = (NONE - 1) / MAX_DEGREE as u32;
        anyhow::ensure!(self.nodes <= max_nodes, "{} nodes are too many (at most {max_nodes})", self.nodes);
        let slots = self.nodes as u64 * MAX_DEGREE as u64;
        anyhow::ensure!(
            2 * self.springs as u64 <= slots,
            "{} springs do not fit {} nodes (each node has {MAX_DEGREE} slots, each spring takes two)",
            self.springs,
            self.nodes
        );
        anyhow::ensure!(
            self.springs == 0 || self.nodes >= 2,
            "springs need two different nodes: give at least 2 nodes"
        );
        anyhow::ensure!(
            self.pull_percent + self.anchor_percent <= 100,
            "pull nodes ({}%) and anchors ({}%) can be at most 100% of the nodes",
            self.pull_percent,
            self.anchor_percent
        );
        let p = &self.physics;
        anyhow::ensure!(p.dt.is_finite() && p.dt >= 0.0, "the time step must be a finite number >= 0");
        anyhow::ensure!((0.0..=1.0).contains(&p.dampening), "the velocity dampening must be between 0 and 1");
        if let Some(bytes) = self.heap_bytes {
            anyhow::ensure!(bytes > 0, "the heap needs at least one byte");
        }
        Ok(())
    }

    /// Plain nodes, pull nodes and fixed anchors.
    pub fn counts(&self) -> (u32, u32, u32) {
        let n = self.nodes as u64;
        let pull = n * self.pull_percent as u64 / 100;
        let anchors = n * self.anchor_percent as u64 / 100;
        let plain = n.saturating_sub(pull + anchors);
        (plain as u32, pull as u32, anchors as u32)
    }

    /// A heap with blocks for every node and spring of the mesh (objects are only removed
    /// during the run), a slack for half-empty blocks, plus the allocator's bitmaps.
    pub fn default_heap_bytes(&self) -> u64 {
        let (plain, pull, anchors) = self.counts();
        let blocks = (plain as u64).div_ceil(Node::OBJECTS_PER_BLOCK as u64)
            + (pull as u64).div_ceil(AnchorPullNode::OBJECTS_PER_BLOCK as u64)
            + (anchors as u64).div_ceil(AnchorNode::OBJECTS_PER_BLOCK as u64)
            + (self.springs as u64).div_ceil(Spring::OBJECTS_PER_BLOCK as u64);
        let bytes = blocks * Spring::BLOCK_BYTES;
        bytes + bytes / 8 + (8 << 20)
    }

    /// The DSL version's heap size.
    pub fn heap_bytes(&self) -> u64 {
        self.heap_bytes.unwrap_or_else(|| self.default_heap_bytes())
    }
}

// ----------------------------------------------------------------------------------------
// The mesh generator.

/// The initial mesh: nodes ordered by kind (plain nodes `0..plain`, pull nodes
/// `plain..pull_end`, fixed anchors `pull_end..`), springs between them.
#[derive(Clone, Debug, PartialEq)]
pub struct Mesh {
    pub nodes: Vec<MeshNode>,
    pub springs: Vec<MeshSpring>,
    /// Each node's springs by slot (`NONE` for an empty slot).
    pub node_springs: Vec<[u32; MAX_DEGREE]>,
    pub plain: u32,
    pub pull_end: u32,
}

impl Mesh {
    /// A mesh of `nodes` without springs; the nodes must be ordered by kind, `plain` and
    /// `pull_end` say where the kinds change (their `links` are set by [`Mesh::add_spring`]).
    pub fn new(nodes: Vec<MeshNode>, plain: u32, pull_end: u32) -> anyhow::Result<Self> {
        let n = nodes.len();
        anyhow::ensure!(
            n > 0 && n < (NONE / MAX_DEGREE as u32) as usize,
            "a mesh needs 1 to {} nodes",
            NONE / 5 - 1
        );
        anyhow::ensure!(plain <= pull_end && pull_end as usize <= n, "node kinds out of order");
        for (i, node) in nodes.iter().enumerate() {
            let kind = if (i as u32) < plain {
                PLAIN
            } else if (i as u32) < pull_end {
                PULL
            } else {
                ANCHOR
            };
            anyhow::ensure!(
                node.kind == kind && node.links == 0,
                "node {i} has kind {} where {kind} belongs, or links",
                node.kind
            );
            anyhow::ensure!(kind != PLAIN || node.mass > 0.0, "plain node {i} has no mass");
        }
        Ok(Mesh { node_springs: vec![[NONE; MAX_DEGREE]; n], nodes, springs: Vec::new(), plain, pull_end })
    }

    /// Springs of node `i` so far.
    pub fn degree(&self, i: u32) -> usize {
        (self.nodes[i as usize].links & LIVE_MASK).count_ones() as usize
    }

    /// Add a spring between nodes `p1` and `p2` at rest at their current distance; it takes the
    /// next free slot of each. Returns its id.
    pub fn add_spring(&mut self, p1: u32, p2: u32, factor: f32, max_force: f32) -> anyhow::Result<u32> {
        let n = self.nodes.len() as u32;
        anyhow::ensure!(p1 < n && p2 < n && p1 != p2, "a spring needs two different nodes of the mesh");
        let (s1, s2) = (self.degree(p1), self.degree(p2));
        anyhow::ensure!(s1 < MAX_DEGREE && s2 < MAX_DEGREE, "a node has at most {MAX_DEGREE} springs");
        let rest_length = distance(self.nodes[p1 as usize].pos, self.nodes[p2 as usize].pos);
        anyhow::ensure!(rest_length > 0.0, "the nodes of a spring must not be at the same place");
        let id = self.springs.len() as u32;
        anyhow::ensure!(id < NONE - 1, "too many springs");
        self.springs.push(MeshSpring { p1, p2, rest_length, factor, max_force, slots: slots(s1, s2) });
        self.nodes[p1 as usize].links |= live_bit(s1) | p1_bit(s1);
        self.nodes[p2 as usize].links |= live_bit(s2);
        self.node_springs[p1 as usize][s1] = id;
        self.node_springs[p2 as usize][s2] = id;
        Ok(id)
    }
}

/// Generate the mesh of `cfg`, as the original benchmark does (with our random numbers):
/// nodes at uniform positions in the centre square, pull nodes with uniform random velocities,
/// and springs between two uniformly chosen different nodes that still have a free slot, with
/// their current distance as rest length and a random factor. A spring takes the next free slot
/// of each node, in spring order.
pub fn generate(cfg: &Config) -> anyhow::Result<Mesh> {
    cfg.validate()?;
    let (plain, pull, _) = cfg.counts();
    let pull_end = plain + pull;
    let mut rng = Rng::new(cfg.seed, 0);
    let (lo, hi) = (config::BORDER_MARGIN, 1.0 - config::BORDER_MARGIN);
    let mut nodes = Vec::with_capacity(cfg.nodes as usize);
    for i in 0..cfg.nodes {
        let pos = Vec2::new(rng.range(lo, hi), rng.range(lo, hi));
        let node = if i < plain {
            MeshNode { pos, mass: config::MASS, kind: PLAIN, ..MeshNode::default() }
        } else if i < pull_end {
            let s = config::PULL_SPEED;
            let vel = Vec2::new(rng.range(-s, s), rng.range(-s, s));
            MeshNode { pos, vel, kind: PULL, ..MeshNode::default() }
        } else {
            MeshNode { pos, kind: ANCHOR, ..MeshNode::default() }
        };
        nodes.push(node);
    }
    let mut mesh = Mesh::new(nodes, plain, pull_end)?;
    mesh.springs.reserve(cfg.springs as usize);

    // Nodes with a free slot, and where each one is in that list (for O(1) removal).
    let mut open: Vec<u32> = (0..cfg.nodes).collect();
    let mut at: Vec<u32> = (0..cfg.nodes).collect();
    for id in 0..cfg.springs {
        anyhow::ensure!(
            open.len() >= 2,
            "cannot place spring {id} of {}: fewer than two nodes have a free slot",
            cfg.springs
        );
        let p1 = open[rng.below(open.len() as u32) as usize];
        let mut tries = 0;
        let p2 = loop {
            let p2 = open[rng.below(open.len() as u32) as usize];
            if p2 != p1 && distance(mesh.nodes[p1 as usize].pos, mesh.nodes[p2 as usize].pos) > 0.0 {
                break p2;
            }
            tries += 1;
            anyhow::ensure!(tries < 1_000_000, "cannot find a second node for spring {id}");
        };
        let factor = rng.range(config::SPRING_FACTOR_MIN, config::SPRING_FACTOR_MAX);
        mesh.add_spring(p1, p2, factor, config::MAX_FORCE)?;
        for p in [p1, p2] {
            if mesh.degree(p) == MAX_DEGREE {
                // Swap-remove `p` from the open list.
                let i = at[p as usize] as usize;
                let last = *open.last().unwrap();
                open[i] = last;
                at[last as usize] = i as u32;
                open.pop();
            }
        }
    }
    Ok(mesh)
}

// ----------------------------------------------------------------------------------------
// The state all implementations export.

/// A node as the host sees it (`kind == DEAD` for a removed node, with all other fields
/// default).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NodeState {
    /// `DEAD`, `PLAIN`, `PULL` or `ANCHOR`.
    pub kind: u32,
    /// Spring ids by slot (`NONE` for an empty slot).
    pub springs: [u32; MAX_DEGREE],
    pub pos: Vec2,
    pub vel: Vec2,
}

impl NodeState {
    const DEAD: NodeState =
        NodeState { kind: DEAD, springs: [NONE; MAX_DEGREE], pos: Vec2::ZERO, vel: Vec2::ZERO };

    pub fn alive(&self) -> bool {
        self.kind != DEAD
    }

    pub fn is_anchor(&self) -> bool {
        self.kind == PULL || self.kind == ANCHOR
    }
}

/// A spring as the host sees it (all fields default for a removed spring).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SpringState {
    pub alive: bool,
    pub p1: u32,
    pub p2: u32,
    pub rest_length: f32,
    pub factor: f32,
    pub max_force: f32,
    /// The spring's force at the nodes' current positions (computed on the host).
    pub force: f32,
}

/// The whole mesh: node `i` and spring `i` have id `i`.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshState {
    pub nodes: Vec<NodeState>,
    pub springs: Vec<SpringState>,
}

/// Live nodes and springs at one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Census {
    pub step: u32,
    pub nodes: u64,
    pub springs: u64,
}

impl MeshState {
    /// Fill in the springs' forces from the nodes' positions.
    fn with_forces(mut self) -> Self {
        for s in self.springs.iter_mut().filter(|s| s.alive) {
            let (a, b) = (self.nodes.get(s.p1 as usize), self.nodes.get(s.p2 as usize));
            if let (Some(a), Some(b)) = (a, b) {
                s.force = spring_force(a.pos, b.pos, s.rest_length, s.factor).0;
            }
        }
        self
    }

    pub fn live_nodes(&self) -> u64 {
        self.nodes.iter().filter(|n| n.alive()).count() as u64
    }

    pub fn live_springs(&self) -> u64 {
        self.springs.iter().filter(|s| s.alive).count() as u64
    }

    /// Live nodes and springs, as of `step`.
    pub fn census(&self, step: u32) -> Census {
        Census { step, nodes: self.live_nodes(), springs: self.live_springs() }
    }

    /// The original benchmark's checksum: the sum over live springs of `p1.x * p2.y * force`.
    pub fn checksum(&self) -> f64 {
        self.springs
            .iter()
            .filter(|s| s.alive)
            .map(|s| {
                let (a, b) = (&self.nodes[s.p1 as usize], &self.nodes[s.p2 as usize]);
                a.pos.x as f64 * b.pos.y as f64 * s.force as f64
            })
            .sum()
    }

    /// FNV-1a over every node and spring: equal for runs that computed the same simulation.
    pub fn fingerprint(&self) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        let mut eat = |v: u64| {
            for b in v.to_le_bytes() {
                h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
            }
        };
        for n in &self.nodes {
            eat(n.kind as u64);
            for s in n.springs {
                eat(s as u64);
            }
            eat(n.pos.x.to_bits() as u64 | (n.pos.y.to_bits() as u64) << 32);
            eat(n.vel.x.to_bits() as u64 | (n.vel.y.to_bits() as u64) << 32);
        }
        for s in &self.springs {
            eat(s.alive as u64 | (s.p1 as u64) << 8 | (s.p2 as u64) << 40);
            eat(s.force.to_bits() as u64);
        }
        h
    }

    /// Which nodes are connected to an anchor through live springs (anchors are).
    pub fn reachable_from_anchors(&self) -> Vec<bool> {
        let mut reached: Vec<bool> = self.nodes.iter().map(|n| n.is_anchor()).collect();
        let mut queue: VecDeque<usize> = (0..self.nodes.len()).filter(|&i| reached[i]).collect();
        while let Some(i) = queue.pop_front() {
            for s in self.nodes[i].springs {
                let Some(spring) = self.springs.get(s as usize).filter(|s| s.alive) else { continue };
                let other = if spring.p1 as usize == i { spring.p2 } else { spring.p1 } as usize;
                if other < reached.len() && !reached[other] && self.nodes[other].alive() {
                    reached[other] = true;
                    queue.push_back(other);
                }
            }
        }
        reached
    }
}

// ----------------------------------------------------------------------------------------
// The implementations.

/// One implementation of structure, stepped from the host.
pub trait Simulation {
    /// The executor that runs it (for timing).
    fn executor(&self) -> &Executor;
    /// Queue the first part of a step: the pull, and the force computations and moves.
    fn compute(&self) -> dynasoar::host::Result<()>;
    /// Queue the second part: find what an anchor reaches and remove the rest.
    fn prune(&self) -> dynasoar::host::Result<()>;
    /// Queue one whole step.
    fn step(&self) -> dynasoar::host::Result<()> {
        self.compute()?;
        self.prune()
    }
    /// Wait for queued steps and report their errors.
    fn sync(&self) -> anyhow::Result<()>;
    /// The mesh now.
    fn state(&self) -> anyhow::Result<MeshState>;
    /// Enumeration time since the last call (DSL only).
    fn take_enumeration(&self) -> anyhow::Result<Duration> {
        Ok(Duration::ZERO)
    }
    /// Node and spring objects in the heap (DSL only).
    fn objects(&self) -> anyhow::Result<Option<(u64, u64)>> {
        Ok(None)
    }
}

/// Structure with objects in the dynasoar heap.
pub struct DslSim {
    rt: Runtime<StructureHeap>,
    physics: Physics,
    iterations: u32,
    nodes: u32,
    springs: u32,
    heap_bytes: u64,
    /// Number of the last reachability search (the `reach` value of the nodes it found).
    epoch: Cell<u32>,
    /// Enumeration time of steps, set aside while exports run (their own is not counted).
    enumeration: Cell<Duration>,
    /// The force computation as a step graph (`RunOptions::graph`; the pruning passes a new
    /// epoch each time, so it is not captured).
    graph: Option<StepGraph>,
}

/// `e`, with a hint at `--heap-mib` if the heap ran out.
fn out_of_heap(e: dynasoar::host::Error, heap_bytes: u64) -> anyhow::Error {
    let oom = matches!(e, dynasoar::host::Error::OutOfMemory { .. });
    let e = anyhow::Error::new(e);
    if oom {
        e.context(format!("structure ran out of its {} MiB heap (try a larger --heap-mib)", heap_bytes >> 20))
    } else {
        e
    }
}

impl DslSim {
    /// Create the mesh's objects; returns the simulation and the device time of the setup.
    pub fn new(
        options: impl Into<RunOptions>,
        cfg: &Config,
        mesh: &Mesh,
    ) -> anyhow::Result<(Self, Duration)> {
        let options: RunOptions = options.into();
        cfg.validate()?;
        let heap_bytes = cfg.heap_bytes();
        let rt = options.runtime::<StructureHeap>(heap_bytes).deferred_checks(true).build()?;
        let exec = rt.executor();
        let (plain, pull_end) = (mesh.plain, mesh.pull_end);
        let nodes = exec.upload(&mesh.nodes)?;
        let springs = exec.upload(&if mesh.springs.is_empty() {
            vec![MeshSpring::default()]
        } else {
            mesh.springs.clone()
        })?;
        let table = exec.alloc_zeroed::<Handle<NodeBase>>(mesh.nodes.len())?;
        let args = |first| MeshArgs {
            nodes: nodes.ptr(),
            springs: springs.ptr(),
            table: table.device_array(),
            node_count: mesh.nodes.len() as u32,
            first,
        };
        let anchors = mesh.nodes.len() as u64 - pull_end as u64;
        let ((), setup) = exec.time(|| {
            rt.parallel_new_with(Node::create, plain as u64, args(0))?;
            rt.parallel_new_with(AnchorPullNode::create, (pull_end - plain) as u64, args(plain))?;
            rt.parallel_new_with(AnchorNode::create, anchors, args(pull_end))?;
            rt.parallel_do_with(NodeBase::register, table.device_array())?;
            rt.parallel_new_with(Spring::create, mesh.springs.len() as u64, args(0))?;
            rt.parallel_do(Spring::attach)
        })?;
        // (`time` waited for the kernels: the buffers may go.)
        rt.sync().map_err(|e| out_of_heap(e, heap_bytes))?;
        rt.take_timings()?;
        let graph = options.capture(&rt, |rt| Self::queue_compute(rt, cfg.physics, cfg.iterations))?;
        let sim = DslSim {
            rt,
            graph,
            physics: cfg.physics,
            iterations: cfg.iterations,
            nodes: mesh.nodes.len() as u32,
            springs: mesh.springs.len() as u32,
            heap_bytes,
            epoch: Cell::new(0),
            enumeration: Cell::new(Duration::ZERO),
        };
        Ok((sim, setup))
    }

    /// Queue one force computation's launches one by one.
    fn queue_compute(rt: &Runtime<StructureHeap>, p: Physics, iterations: u32) -> dynasoar::host::Result<()> {
        rt.parallel_do_with(AnchorPullNode::pull, p)?;
        for _ in 0..iterations {
            rt.parallel_do(Spring::compute_force)?;
            rt.parallel_do_with(Node::update, p)?;
        }
        Ok(())
    }

    /// The runtime (to count and collect objects).
    pub fn runtime(&self) -> &Runtime<StructureHeap> {
        &self.rt
    }

    /// Every node and spring as exported by the model (with their handles, for checks),
    /// indexed by id. The export's own enumeration time is not counted as the steps'.
    pub fn records(&self) -> anyhow::Result<(Vec<NodeRecord>, Vec<SpringRecord>)> {
        let exec = self.rt.executor();
        let nodes = exec.alloc_zeroed::<NodeRecord>(self.nodes as usize)?;
        let springs = exec.alloc_zeroed::<SpringRecord>((self.springs as usize).max(1))?;
        self.sync()?;
        self.enumeration.set(self.enumeration.get() + self.rt.take_timings()?.enumeration);
        self.rt.parallel_do_with(NodeBase::export, nodes.ptr())?;
        self.rt.parallel_do_with(Spring::export, springs.ptr())?;
        self.sync()?;
        self.rt.take_timings()?;
        Ok((exec.read_all(&nodes)?, exec.read(&springs, 0, self.springs as usize)?))
    }
}

impl Simulation for DslSim {
    fn executor(&self) -> &Executor {
        self.rt.executor()
    }

    fn compute(&self) -> dynasoar::host::Result<()> {
        run_step(&self.rt, self.graph.as_ref(), |rt| Self::queue_compute(rt, self.physics, self.iterations))
    }

    fn prune(&self) -> dynasoar::host::Result<()> {
        let epoch = self.epoch.get() + 1;
        self.epoch.set(epoch);
        self.rt.parallel_do_with(AnchorNode::reach_out, epoch)?;
        self.rt.parallel_do_with(Node::prune, epoch)
    }

    fn sync(&self) -> anyhow::Result<()> {
        self.rt.sync().map_err(|e| out_of_heap(e, self.heap_bytes))
    }

    fn state(&self) -> anyhow::Result<MeshState> {
        let (nodes, springs) = self.records()?;
        let nodes = nodes
            .iter()
            .map(|r| match r.kind {
                DEAD => NodeState::DEAD,
                kind => NodeState { kind, springs: r.spring_ids, pos: r.pos, vel: r.vel },
            })
            .collect();
        let springs = springs
            .iter()
            .map(|r| match r.alive {
                0 => SpringState::default(),
                _ => SpringState {
                    alive: true,
                    p1: r.p1_id,
                    p2: r.p2_id,
                    rest_length: r.rest_length,
                    factor: r.factor,
                    max_force: r.max_force,
                    force: 0.0,
                },
            })
            .collect();
        Ok(MeshState { nodes, springs }.with_forces())
    }

    fn take_enumeration(&self) -> anyhow::Result<Duration> {
        Ok(self.enumeration.take() + self.rt.take_timings()?.enumeration)
    }

    fn objects(&self) -> anyhow::Result<Option<(u64, u64)>> {
        Ok(Some((self.rt.count::<NodeBase>()?, self.rt.count::<Spring>()?)))
    }
}

/// The kind of node `i` of a mesh ordered by kind.
fn kind_of(i: u32, plain: u32, pull_end: u32) -> u32 {
    if i < plain {
        PLAIN
    } else if i < pull_end {
        PULL
    } else {
        ANCHOR
    }
}

/// A live baseline node's exported state (spring slots outside `links` read as empty).
fn baseline_node(kind: u32, links: u32, springs: [u32; MAX_DEGREE], pos: Vec2, vel: Vec2) -> NodeState {
    let mut s = [NONE; MAX_DEGREE];
    for (slot, id) in springs.into_iter().enumerate() {
        if links & live_bit(slot) & LIVE_MASK != 0 {
            s[slot] = id;
        }
    }
    NodeState { kind, springs: s, pos, vel }
}

/// Structure baseline: structure of arrays.
pub struct SoaSim {
    exec: Executor,
    mesh: Cell<SoaMesh>,
    iterations: u32,
    _buffers: SoaBuffers,
}

struct SoaBuffers {
    pos: Buffer<Vec2>,
    vel: Buffer<Vec2>,
    mass: Buffer<f32>,
    links: Buffer<u32>,
    reach: Buffer<u32>,
    next: Buffer<u32>,
    springs: Buffer<u32>,
    forces: Buffer<Vec2>,
    active: Buffer<u8>,
    p1: Buffer<u32>,
    p2: Buffer<u32>,
    rest_length: Buffer<f32>,
    factor: Buffer<f32>,
    max_force: Buffer<f32>,
    slots: Buffer<u32>,
    spring_active: Buffer<u8>,
}

impl SoaSim {
    /// Copy the mesh into arrays; returns the simulation and the device time of the setup.
    pub fn new(
        options: impl Into<RunOptions>,
        cfg: &Config,
        mesh: &Mesh,
    ) -> anyhow::Result<(Self, Duration)> {
        let options: RunOptions = options.into();
        cfg.validate()?;
        let exec = options.executor()?;
        let n = mesh.nodes.len();
        let ns = &mesh.nodes;
        let ss = &mesh.springs;
        // At least one element per array, so that every buffer exists.
        let up = |v: Vec<u32>| exec.upload(&if v.is_empty() { vec![0] } else { v });
        let upf = |v: Vec<f32>| exec.upload(&if v.is_empty() { vec![0.0] } else { v });
        let slot_major: Vec<u32> =
            (0..MAX_DEGREE).flat_map(|k| mesh.node_springs.iter().map(move |s| s[k])).collect();
        let (b, setup) = exec.time(|| {
            Ok(SoaBuffers {
                pos: exec.upload(&ns.iter().map(|x| x.pos).collect::<Vec<_>>())?,
                vel: exec.upload(&ns.iter().map(|x| x.vel).collect::<Vec<_>>())?,
                mass: exec.upload(&ns.iter().map(|x| x.mass).collect::<Vec<_>>())?,
                links: exec.upload(&ns.iter().map(|x| x.links).collect::<Vec<_>>())?,
                reach: exec.alloc_zeroed(n)?,
                next: exec.alloc_zeroed(n)?,
                springs: exec.upload(&slot_major)?,
                forces: exec.alloc_zeroed(MAX_DEGREE * n)?,
                active: exec.upload(&vec![1u8; n])?,
                p1: up(ss.iter().map(|s| s.p1).collect())?,
                p2: up(ss.iter().map(|s| s.p2).collect())?,
                rest_length: upf(ss.iter().map(|s| s.rest_length).collect())?,
                factor: upf(ss.iter().map(|s| s.factor).collect())?,
                max_force: upf(ss.iter().map(|s| s.max_force).collect())?,
                slots: up(ss.iter().map(|s| s.slots).collect())?,
                spring_active: exec.upload(&vec![1u8; ss.len().max(1)])?,
            })
        })?;
        let m = SoaMesh {
            pos: b.pos.ptr(),
            vel: b.vel.ptr(),
            mass: b.mass.ptr(),
            links: b.links.ptr(),
            reach: b.reach.ptr(),
            next: b.next.ptr(),
            springs: b.springs.ptr(),
            forces: b.forces.ptr(),
            active: b.active.ptr(),
            p1: b.p1.ptr(),
            p2: b.p2.ptr(),
            rest_length: b.rest_length.ptr(),
            factor: b.factor.ptr(),
            max_force: b.max_force.ptr(),
            slots: b.slots.ptr(),
            spring_active: b.spring_active.ptr(),
            plain: mesh.plain,
            pull_end: mesh.pull_end,
            nodes: n as u32,
            spring_count: ss.len() as u32,
            physics: cfg.physics,
            epoch: 0,
            _pad: 0,
        };
        let sim = SoaSim { exec, mesh: Cell::new(m), iterations: cfg.iterations, _buffers: b };
        Ok((sim, setup))
    }
}

impl Simulation for SoaSim {
    fn executor(&self) -> &Executor {
        &self.exec
    }

    fn compute(&self) -> dynasoar::host::Result<()> {
        let (e, m) = (&self.exec, self.mesh.get());
        let grid = |count: u32| Grid::for_elements(count as usize, THREADS);
        e.launch(&STRUCTURE_SOA_PULL, grid(m.pull_end - m.plain), m)?;
        for _ in 0..self.iterations {
            e.launch(&STRUCTURE_SOA_COMPUTE, grid(m.spring_count), m)?;
            e.launch(&STRUCTURE_SOA_UPDATE, grid(m.plain), m)?;
        }
        Ok(())
    }

    fn prune(&self) -> dynasoar::host::Result<()> {
        let mut m = self.mesh.get();
        m.epoch += 1;
        self.mesh.set(m);
        let grid = |count: u32| Grid::for_elements(count as usize, THREADS);
        self.exec.launch(&STRUCTURE_SOA_REACH_OUT, grid(m.nodes - m.plain), m)?;
        self.exec.launch(&STRUCTURE_SOA_PRUNE, grid(m.plain), m)
    }

    fn sync(&self) -> anyhow::Result<()> {
        Ok(self.exec.synchronize()?)
    }

    fn state(&self) -> anyhow::Result<MeshState> {
        let (e, b, m) = (&self.exec, &self._buffers, self.mesh.get());
        let n = m.nodes as usize;
        let (pos, vel, links, springs, active) = (
            e.read_all(&b.pos)?,
            e.read_all(&b.vel)?,
            e.read_all(&b.links)?,
            e.read_all(&b.springs)?,
            e.read_all(&b.active)?,
        );
        let nodes = (0..n)
            .map(|i| {
                if active[i] == 0 {
                    return NodeState::DEAD;
                }
                let slots = std::array::from_fn(|k| springs[k * n + i]);
                baseline_node(kind_of(i as u32, m.plain, m.pull_end), links[i], slots, pos[i], vel[i])
            })
            .collect();
        let count = m.spring_count as usize;
        let (p1, p2, rest, factor, max_force, alive) = (
            e.read(&b.p1, 0, count)?,
            e.read(&b.p2, 0, count)?,
            e.read(&b.rest_length, 0, count)?,
            e.read(&b.factor, 0, count)?,
            e.read(&b.max_force, 0, count)?,
            e.read(&b.spring_active, 0, count)?,
        );
        let springs = (0..count)
            .map(|i| match alive[i] {
                0 => SpringState::default(),
                _ => SpringState {
                    alive: true,
                    p1: p1[i],
                    p2: p2[i],
                    rest_length: rest[i],
                    factor: factor[i],
                    max_force: max_force[i],
                    force: 0.0,
                },
            })
            .collect();
        Ok(MeshState { nodes, springs }.with_forces())
    }
}

/// Structure baseline: array of structures.
pub struct AosSim {
    exec: Executor,
    mesh: Cell<AosMesh>,
    iterations: u32,
    nodes: Buffer<AosNode>,
    springs: Buffer<AosSpring>,
}

impl AosSim {
    /// Copy the mesh into arrays; returns the simulation and the device time of the setup.
    pub fn new(
        options: impl Into<RunOptions>,
        cfg: &Config,
        mesh: &Mesh,
    ) -> anyhow::Result<(Self, Duration)> {
        let options: RunOptions = options.into();
        cfg.validate()?;
        let exec = options.executor()?;
        let nodes: Vec<AosNode> = mesh
            .nodes
            .iter()
            .zip(&mesh.node_springs)
            .map(|(n, &springs)| AosNode {
                pos: n.pos,
                vel: n.vel,
                springs,
                mass: n.mass,
                links: n.links,
                active: 1,
                ..AosNode::default()
            })
            .collect();
        let mut springs: Vec<AosSpring> = mesh
            .springs
            .iter()
            .map(|s| AosSpring {
                p1: s.p1,
                p2: s.p2,
                rest_length: s.rest_length,
                factor: s.factor,
                max_force: s.max_force,
                slots: s.slots,
                active: 1,
                _pad: [0; 7],
            })
            .collect();
        let spring_count = springs.len() as u32;
        if springs.is_empty() {
            springs.push(AosSpring::default());
        }
        let ((node_buf, spring_buf), setup) =
            exec.time(|| Ok((exec.upload(&nodes)?, exec.upload(&springs)?)))?;
        let m = AosMesh {
            nodes: node_buf.ptr(),
            springs: spring_buf.ptr(),
            plain: mesh.plain,
            pull_end: mesh.pull_end,
            node_count: nodes.len() as u32,
            spring_count,
            physics: cfg.physics,
            epoch: 0,
            _pad: 0,
        };
        let sim = AosSim {
            exec,
            mesh: Cell::new(m),
            iterations: cfg.iterations,
            nodes: node_buf,
            springs: spring_buf,
        };
        Ok((sim, setup))
    }
}

impl Simulation for AosSim {
    fn executor(&self) -> &Executor {
        &self.exec
    }

    fn compute(&self) -> dynasoar::host::Result<()> {
        let (e, m) = (&self.exec, self.mesh.get());
        let grid = |count: u32| Grid::for_elements(count as usize, THREADS);
        e.launch(&STRUCTURE_AOS_PULL, grid(m.pull_end - m.plain), m)?;
        for _ in 0..self.iterations {
            e.launch(&STRUCTURE_AOS_COMPUTE, grid(m.spring_count), m)?;
            e.launch(&STRUCTURE_AOS_UPDATE, grid(m.plain), m)?;
        }
        Ok(())
    }

    fn prune(&self) -> dynasoar::host::Result<()> {
        let mut m = self.mesh.get();
        m.epoch += 1;
        self.mesh.set(m);
        let grid = |count: u32| Grid::for_elements(count as usize, THREADS);
        self.exec.launch(&STRUCTURE_AOS_REACH_OUT, grid(m.node_count - m.plain), m)?;
        self.exec.launch(&STRUCTURE_AOS_PRUNE, grid(m.plain), m)
    }

    fn sync(&self) -> anyhow::Result<()> {
        Ok(self.exec.synchronize()?)
    }

    fn state(&self) -> anyhow::Result<MeshState> {
        let m = self.mesh.get();
        let nodes = self
            .exec
            .read_all(&self.nodes)?
            .into_iter()
            .enumerate()
            .map(|(i, n)| match n.active {
                0 => NodeState::DEAD,
                _ => baseline_node(kind_of(i as u32, m.plain, m.pull_end), n.links, n.springs, n.pos, n.vel),
            })
            .collect();
        let springs = self
            .exec
            .read(&self.springs, 0, m.spring_count as usize)?
            .into_iter()
            .map(|s| match s.active {
                0 => SpringState::default(),
                _ => SpringState {
                    alive: true,
                    p1: s.p1,
                    p2: s.p2,
                    rest_length: s.rest_length,
                    factor: s.factor,
                    max_force: s.max_force,
                    force: 0.0,
                },
            })
            .collect();
        Ok(MeshState { nodes, springs }.with_forces())
    }
}

/// Set up `implementation` of `mesh`; returns it and the device time of the setup.
pub fn simulation(
    implementation: Implementation,
    options: impl Into<RunOptions>,
    cfg: &Config,
    mesh: &Mesh,
) -> anyhow::Result<(Box<dyn Simulation>, Duration)> {
    let options: RunOptions = options.into();
    Ok(match implementation {
        Implementation::Dynasoar => {
            let (s, t) = DslSim::new(options, cfg, mesh)?;
            (Box::new(s), t)
        }
        Implementation::Soa => {
            let (s, t) = SoaSim::new(options, cfg, mesh)?;
            (Box::new(s), t)
        }
        Implementation::Aos => {
            let (s, t) = AosSim::new(options, cfg, mesh)?;
            (Box::new(s), t)
        }
    })
}

// ----------------------------------------------------------------------------------------
// Running and rendering.

/// Result of one run.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The final mesh.
    pub state: MeshState,
    /// Live nodes and springs at the start, at every rendered step and at the end.
    pub history: Vec<Census>,
    /// DSL only: node and spring objects in the heap at the end, as the allocator counts them.
    pub objects: Option<(u64, u64)>,
    /// Device time of all steps (setup excluded, as in the paper).
    pub total: Duration,
    /// Of which enumeration before do-all launches (DSL only).
    pub enumeration: Duration,
    /// Device time of setting up the initial mesh.
    pub setup: Duration,
}

impl Outcome {
    pub fn nodes(&self) -> u64 {
        self.state.live_nodes()
    }

    pub fn springs(&self) -> u64 {
        self.state.live_springs()
    }

    pub fn checksum(&self) -> f64 {
        self.state.checksum()
    }

    pub fn fingerprint(&self) -> u64 {
        self.state.fingerprint()
    }
}

/// Run `implementation` of `cfg` on the backend of `options`.
pub fn run(
    implementation: Implementation,
    options: impl Into<RunOptions>,
    cfg: &Config,
    recorder: &mut Recorder,
    show_progress: bool,
) -> anyhow::Result<Outcome> {
    let options: RunOptions = options.into();
    let mesh = generate(cfg)?;
    let label = options.label(implementation);
    let (sim, setup) = simulation(implementation, options, cfg, &mesh)
        .with_context(|| format!("setting up the {label} version"))?;
    drop(mesh);
    let bar = progress::steps(cfg.steps as u64, label, show_progress);
    let mut total = Duration::ZERO;
    let mut enumeration = Duration::ZERO;
    let first = sim.state()?;
    let mut history = vec![first.census(0)];
    if recorder.wants(0, cfg.steps) {
        recorder.record(0, draw(&first, recorder.width()))?;
    }
    drop(first);
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
        if recorder.wants(step, cfg.steps) && step < cfg.steps {
            let state = sim.state()?;
            history.push(state.census(step));
            recorder.record(step, draw(&state, recorder.width()))?;
        }
    }
    bar.finish_and_clear();
    let state = sim.state()?;
    if cfg.steps > 0 {
        history.push(state.census(cfg.steps));
        if recorder.wants(cfg.steps, cfg.steps) {
            recorder.record(cfg.steps, draw(&state, recorder.width()))?;
        }
    }
    let objects = sim.objects()?;
    Ok(Outcome { state, history, objects, total, enumeration, setup })
}

const BACKGROUND: [u8; 3] = [8, 8, 24];
const PULL_COLOR: [u8; 3] = [255, 255, 255];
const ANCHOR_COLOR: [u8; 3] = [160, 160, 160];

/// A picture of the mesh, `width` pixels square, showing the unit square (the material starts
/// in its centre): springs as lines colored by their load (blue: relaxed, red: about to break),
/// pull nodes white, fixed anchors grey.
pub fn draw(state: &MeshState, width: u32) -> Canvas {
    let width = width.max(1);
    let mut canvas = Canvas::new(width, width, BACKGROUND);
    let scale = width as f32;
    // Image rows go down, y goes up.
    let at = |p: Vec2| (p.x * scale, (1.0 - p.y) * scale);
    for s in state.springs.iter().filter(|s| s.alive) {
        let (Some(a), Some(b)) = (state.nodes.get(s.p1 as usize), state.nodes.get(s.p2 as usize)) else {
            continue;
        };
        let ((x0, y0), (x1, y1)) = (at(a.pos), at(b.pos));
        // Skip lines that run far outside the picture (nodes that flew away).
        if [x0, y0, x1, y1].iter().any(|v| !v.is_finite() || v.abs() > 4.0 * scale) {
            continue;
        }
        let load = if s.max_force > 0.0 { s.force / s.max_force } else { 0.0 };
        canvas.line(x0, y0, x1, y1, heat(load));
    }
    for n in &state.nodes {
        let color = match n.kind {
            PULL => PULL_COLOR,
            ANCHOR => ANCHOR_COLOR,
            _ => continue,
        };
        let (x, y) = at(n.pos);
        if x.is_finite() && y.is_finite() {
            canvas.set(x as i64, y as i64, color);
        }
    }
    canvas
}

/// Check that `springs` slots and `slot_in_p1`/`slot_in_p2` agree (used by the tests of the
/// generator): spring `id` sits in the slots its `slots` word names.
pub fn slots_agree(mesh: &Mesh) -> bool {
    mesh.springs.iter().enumerate().all(|(id, s)| {
        mesh.node_springs[s.p1 as usize][slot_in_p1(s.slots)] == id as u32
            && mesh.node_springs[s.p2 as usize][slot_in_p2(s.slots)] == id as u32
    })
}

crate::impl_compared!(Outcome { "nodes" => |o| o.nodes(), "springs" => |o| o.springs() });
