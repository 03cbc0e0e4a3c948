//! Host side of Sugarscape: set up and step the DSL version or a baseline, time it, render it,
//! and read the grid back for checks.
//!
//! The three implementations are [`Simulation`]s: [`DslSim`] (objects in the dynasoar heap),
//! [`SoaSim`] and [`AosSim`] (agents stored inside the cell grid). [`run`] drives any of them
//! with timing, progress and rendering; tests step them one at a time.

use std::time::Duration;

use anyhow::Context;
use dynasoar::host::{Buffer, Executor, Grid, Runtime, StepGraph};
use dynasoar::prelude::{DevPtr, Handle, Kernel, Plain};
use dynasoar::rand::Rng;
use dynasoar::{ClassSpec, ParallelMethod};
use dynasoar_models::sugarscape::{
    Agent, AosCell, AosScape, Cell, CellLinks, CellState, FEMALE, Female, Landscape, MALE, MAX_RADIUS, Male,
    Params, SUGAR_AOS_AGE, SUGAR_AOS_DECIDE, SUGAR_AOS_DECIDE_PROPOSAL, SUGAR_AOS_GROW, SUGAR_AOS_MATE,
    SUGAR_AOS_OFFSPRING_TARGET, SUGAR_AOS_PREPARE_DIFFUSE, SUGAR_AOS_PREPARE_MOVE, SUGAR_AOS_PROPOSE,
    SUGAR_AOS_SETUP, SUGAR_AOS_UPDATE_DIFFUSE, SUGAR_AOS_UPDATE_MOVE, SUGAR_SOA_AGE, SUGAR_SOA_DECIDE,
    SUGAR_SOA_DECIDE_PROPOSAL, SUGAR_SOA_GROW, SUGAR_SOA_MATE, SUGAR_SOA_OFFSPRING_TARGET,
    SUGAR_SOA_PREPARE_DIFFUSE, SUGAR_SOA_PREPARE_MOVE, SUGAR_SOA_PROPOSE, SUGAR_SOA_SETUP,
    SUGAR_SOA_UPDATE_DIFFUSE, SUGAR_SOA_UPDATE_MOVE, SoaScape, SugarscapeHeap, config,
};

use crate::render::{Canvas, Recorder};
use crate::{Implementation, RunOptions, progress, run_step};

/// Threads per block of the baselines' kernels.
const THREADS: u32 = 256;

/// Largest value of the sugar and trait options (keeps every sum of the model in `i32`).
const MAX_AMOUNT: u32 = 1_000_000;

/// What to simulate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Cells per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    pub steps: u32,
    pub seed: u64,
    /// Initial share of cells with a male (0 to 1).
    pub prob_male: f32,
    /// Initial share of cells with a female (0 to 1).
    pub prob_female: f32,
    /// How far agents see, and the radius of diffusion (1 or 2).
    pub max_vision: u32,
    pub max_age: u32,
    pub max_endowment: u32,
    pub max_metabolism: u32,
    pub sugar_capacity: u32,
    pub max_grow_rate: u32,
    pub max_sugar_diffusion: u32,
    /// Share of a cell's sugar it diffuses, and of that, what each neighbour receives (0 to 1).
    pub diffusion_rate: f32,
    pub min_mating_age: u32,
    /// Females have up to `2 + random below (max_children - 2)` children (at least 2).
    pub max_children: u32,
    /// Heap of the DSL version in bytes (default: [`Config::default_heap_bytes`]).
    pub heap_bytes: Option<u64>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            width: config::SIZE,
            height: config::SIZE,
            steps: config::STEPS,
            seed: config::SEED,
            prob_male: config::PROB_MALE,
            prob_female: config::PROB_FEMALE,
            max_vision: config::MAX_VISION,
            max_age: config::MAX_AGE,
            max_endowment: config::MAX_ENDOWMENT,
            max_metabolism: config::MAX_METABOLISM,
            sugar_capacity: config::SUGAR_CAPACITY,
            max_grow_rate: config::MAX_GROW_RATE,
            max_sugar_diffusion: config::MAX_SUGAR_DIFFUSION,
            diffusion_rate: config::SUGAR_DIFFUSION_RATE,
            min_mating_age: config::MIN_MATING_AGE,
            max_children: config::MAX_CHILDREN,
            heap_bytes: None,
        }
    }
}

impl Config {
    /// Check the sizes and rules; an error says which option is wrong.
    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(self.width > 0 && self.height > 0, "the grid needs at least one cell per side");
        anyhow::ensure!(
            self.cells() <= i32::MAX as u64,
            "{}x{} cells are too many (at most {} in all)",
            self.width,
            self.height,
            i32::MAX
        );
        let share = |name: &str, v: f32| {
            anyhow::ensure!((0.0..=1.0).contains(&v), "{name} must be between 0 and 1 (got {v})");
            Ok(())
        };
        share("the male ratio", self.prob_male)?;
        share("the female ratio", self.prob_female)?;
        share("the diffusion rate", self.diffusion_rate)?;
        anyhow::ensure!(
            self.prob_male + self.prob_female <= 1.0,
            "males ({}) and females ({}) can fill at most all cells",
            self.prob_male,
            self.prob_female
        );
        anyhow::ensure!(
            (1..=MAX_RADIUS).contains(&self.max_vision),
            "the maximum vision must be 1 or {MAX_RADIUS} (got {})",
            self.max_vision
        );
        anyhow::ensure!(self.max_age > 0, "the maximum age must be at least 1");
        anyhow::ensure!(self.max_endowment > 0, "the maximum endowment must be at least 1");
        anyhow::ensure!(self.max_children >= 2, "the maximum number of children must be at least 2");
        for (name, v) in [
            ("maximum age", self.max_age),
            ("maximum endowment", self.max_endowment),
            ("maximum metabolism", self.max_metabolism),
            ("sugar capacity", self.sugar_capacity),
            ("maximum grow rate", self.max_grow_rate),
            ("maximum sugar diffusion", self.max_sugar_diffusion),
            ("minimum mating age", self.min_mating_age),
            ("maximum number of children", self.max_children),
        ] {
            anyhow::ensure!(v <= MAX_AMOUNT, "the {name} must be at most {MAX_AMOUNT} (got {v})");
        }
        if let Some(bytes) = self.heap_bytes {
            anyhow::ensure!(bytes > 0, "the heap needs at least one byte");
        }
        Ok(())
    }

    /// Number of cells.
    pub fn cells(&self) -> u64 {
        self.width as u64 * self.height as u64
    }

    /// `WIDTHxHEIGHT`.
    pub fn size(&self) -> String {
        format!("{}x{}", self.width, self.height)
    }

    /// The kernels' parameters.
    pub fn params(&self) -> Params {
        Params {
            width: self.width,
            height: self.height,
            seed: self.seed,
            prob_male: self.prob_male,
            prob_female: self.prob_female,
            max_vision: self.max_vision,
            max_age: self.max_age,
            max_endowment: self.max_endowment,
            max_metabolism: self.max_metabolism,
            sugar_capacity: self.sugar_capacity as i32,
            max_grow_rate: self.max_grow_rate as i32,
            max_sugar_diffusion: self.max_sugar_diffusion as i32,
            diffusion_rate: self.diffusion_rate,
            min_mating_age: self.min_mating_age as i32,
            max_children: self.max_children,
        }
    }

    /// A heap with blocks for all cells, and room for as many males *and* as many females as
    /// there are cells (the agents never outnumber the cells; the slack absorbs half-empty
    /// blocks), plus the allocator's bitmaps.
    pub fn default_heap_bytes(&self) -> u64 {
        let n = self.cells();
        let blocks = n.div_ceil(Cell::OBJECTS_PER_BLOCK as u64)
            + n.div_ceil(Male::OBJECTS_PER_BLOCK as u64)
            + n.div_ceil(Female::OBJECTS_PER_BLOCK as u64);
        let bytes = blocks * Cell::BLOCK_BYTES;
        bytes + bytes / 16 + (8 << 20)
    }

    /// The DSL version's heap size.
    pub fn heap_bytes(&self) -> u64 {
        self.heap_bytes.unwrap_or_else(|| self.default_heap_bytes())
    }
}

/// The census at one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Population {
    pub step: u32,
    pub males: u64,
    pub females: u64,
    /// Sugar on all cells.
    pub cell_sugar: i64,
    /// Sugar of all agents.
    pub agent_sugar: i64,
}

impl Population {
    /// The census of `cells` at `step`.
    pub fn of(step: u32, cells: &[CellState]) -> Self {
        let mut p = Population { step, males: 0, females: 0, cell_sugar: 0, agent_sugar: 0 };
        for c in cells {
            p.cell_sugar += c.sugar as i64;
            match c.kind {
                MALE => p.males += 1,
                FEMALE => p.females += 1,
                _ => continue,
            }
            p.agent_sugar += c.agent_sugar as i64;
        }
        p
    }

    /// Agents of both sexes.
    pub fn agents(&self) -> u64 {
        self.males + self.females
    }
}

/// Result of one run.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub width: u32,
    pub height: u32,
    /// The final grid, row by row.
    pub cells: Vec<CellState>,
    /// Census at the start, at every rendered step and at the end.
    pub populations: Vec<Population>,
    /// DSL only: male and female objects in the heap at the end, as the allocator counts them.
    pub objects: Option<(u64, u64)>,
    /// Device time of all steps (setup excluded, as in the paper).
    pub total: Duration,
    /// Of which enumeration before do-all launches (DSL only).
    pub enumeration: Duration,
    /// Device time of creating the initial grid.
    pub setup: Duration,
}

impl Outcome {
    /// The census at the end.
    pub fn census(&self) -> Population {
        Population::of(self.populations.last().map_or(0, |p| p.step), &self.cells)
    }

    pub fn males(&self) -> u64 {
        self.cells.iter().filter(|c| c.kind == MALE).count() as u64
    }

    pub fn females(&self) -> u64 {
        self.cells.iter().filter(|c| c.kind == FEMALE).count() as u64
    }

    /// The original benchmark's checksum: 1 per male plus 2 per female.
    pub fn checksum(&self) -> u64 {
        self.males() + 2 * self.females()
    }

    /// A hash of the whole final grid (sugar, agents and their traits, generators): equal for
    /// runs that computed the same simulation.
    pub fn fingerprint(&self) -> u64 {
        fingerprint(&self.cells)
    }
}

/// FNV-1a over every cell's state.
pub fn fingerprint(cells: &[CellState]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut eat = |v: u64| {
        for b in v.to_le_bytes() {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    };
    for c in cells {
        let words = [c.sugar, c.grow_rate, c.kind as i32, c.vision, c.age, c.max_age, c.agent_sugar];
        for w in words.chunks(2) {
            eat(w.iter().fold(0u64, |acc, &v| acc << 32 | v as u32 as u64));
        }
        let traits = [c.metabolism, c.endowment, c.max_children, c.num_children];
        for w in traits.chunks(2) {
            eat(w.iter().fold(0u64, |acc, &v| acc << 32 | v as u32 as u64));
        }
        eat(rng_word(c.cell_rng));
        eat(rng_word(c.agent_rng));
    }
    h
}

/// The next output of a generator (to hash its state).
fn rng_word(rng: Rng) -> u64 {
    let mut copy = rng;
    copy.next_u64()
}

/// One implementation of Sugarscape, stepped from the host.
pub trait Simulation {
    /// The executor that runs it (for timing).
    fn executor(&self) -> &Executor;
    /// Queue one step (the twelve do-alls).
    fn step(&self) -> dynasoar::host::Result<()>;
    /// Wait for queued steps and report their errors.
    fn sync(&self) -> anyhow::Result<()>;
    /// The grid now, row by row.
    fn cells(&self) -> anyhow::Result<Vec<CellState>>;
    /// Enumeration time since the last call (DSL only).
    fn take_enumeration(&self) -> anyhow::Result<Duration> {
        Ok(Duration::ZERO)
    }
    /// Male and female objects in the heap (DSL only).
    fn objects(&self) -> anyhow::Result<Option<(u64, u64)>> {
        Ok(None)
    }
}

// ----------------------------------------------------------------------------------------
// The DSL version.

/// Sugarscape with objects in the dynasoar heap.
pub struct DslSim {
    rt: Runtime<SugarscapeHeap>,
    landscape: Landscape,
    heap_bytes: u64,
    /// The table of cell handles the methods read (kept alive as long as the runtime).
    _table: Buffer<Handle<Cell>>,
    /// Enumeration time of steps, set aside while exports run (their own is not counted).
    enumeration: std::cell::Cell<Duration>,
    /// The step as a step graph (`RunOptions::graph`).
    graph: Option<StepGraph>,
}

impl DslSim {
    /// Create the grid; returns it and the device time of the setup.
    pub fn new(options: impl Into<RunOptions>, cfg: &Config) -> anyhow::Result<(Self, Duration)> {
        let options: RunOptions = options.into();
        cfg.validate()?;
        let heap_bytes = cfg.heap_bytes();
        let rt = options.runtime::<SugarscapeHeap>(heap_bytes).deferred_checks(true).build()?;
        let params = cfg.params();
        let table = rt.executor().alloc_zeroed(cfg.cells() as usize)?;
        let landscape = Landscape { cells: table.ptr(), params };
        let ((), setup) = rt.executor().time(|| {
            rt.parallel_new_with(Cell::create, cfg.cells(), params)?;
            rt.parallel_do_with(Cell::setup, landscape)
        })?;
        rt.sync().map_err(|e| out_of_heap(e, heap_bytes))?;
        rt.take_timings()?;
        let graph = options.capture(&rt, |rt| Self::queue_step(rt, landscape))?;
        let sim = DslSim { rt, landscape, heap_bytes, _table: table, enumeration: Default::default(), graph };
        Ok((sim, setup))
    }

    /// Queue one step's launches one by one.
    fn queue_step(rt: &Runtime<SugarscapeHeap>, l: Landscape) -> dynasoar::host::Result<()> {
        let p = l.params;
        rt.parallel_do_with(Cell::grow_sugar, p)?;
        rt.parallel_do_with(Cell::prepare_diffuse, p)?;
        rt.parallel_do_with(Cell::update_diffuse, l)?;
        rt.parallel_do(Agent::age_and_metabolize)?;
        rt.parallel_do_with(Agent::prepare_move, l)?;
        rt.parallel_do(Cell::decide_permission)?;
        rt.parallel_do_with(Agent::update_move, p)?;
        rt.parallel_do_with(Male::propose, l)?;
        rt.parallel_do_with(Female::decide_proposal, l)?;
        rt.parallel_do_with(Male::propose_offspring_target, l)?;
        rt.parallel_do(Cell::decide_permission)?;
        rt.parallel_do_with(Male::mate, p)?;
        Ok(())
    }

    /// The runtime (to count and collect objects).
    pub fn runtime(&self) -> &Runtime<SugarscapeHeap> {
        &self.rt
    }

    /// Every cell's references (for invariant checks), indexed by cell.
    pub fn links(&self) -> anyhow::Result<Vec<CellLinks>> {
        self.export(Cell::export_links)
    }

    /// Run `method` to copy one value per cell into a buffer, and read it. The export's own
    /// enumeration time is not counted as the steps'.
    fn export<T: Plain + Default>(&self, method: ParallelMethod<Cell, DevPtr<T>>) -> anyhow::Result<Vec<T>> {
        let exec = self.rt.executor();
        let out = exec.alloc_zeroed::<T>(self.landscape.params.cells() as usize)?;
        self.sync()?;
        self.enumeration.set(self.enumeration.get() + self.rt.take_timings()?.enumeration);
        self.rt.parallel_do_with(method, out.ptr())?;
        self.sync()?;
        self.rt.take_timings()?;
        Ok(exec.read_all(&out)?)
    }
}

/// `e`, with a hint at `--heap-mib` if the heap ran out.
fn out_of_heap(e: dynasoar::host::Error, heap_bytes: u64) -> anyhow::Error {
    let oom = matches!(e, dynasoar::host::Error::OutOfMemory { .. });
    let e = anyhow::Error::new(e);
    if oom {
        e.context(format!(
            "Sugarscape ran out of its {} MiB heap (try a larger --heap-mib)",
            heap_bytes >> 20
        ))
    } else {
        e
    }
}

impl Simulation for DslSim {
    fn executor(&self) -> &Executor {
        self.rt.executor()
    }

    fn step(&self) -> dynasoar::host::Result<()> {
        run_step(&self.rt, self.graph.as_ref(), |rt| Self::queue_step(rt, self.landscape))
    }

    fn sync(&self) -> anyhow::Result<()> {
        self.rt.sync().map_err(|e| out_of_heap(e, self.heap_bytes))
    }

    fn cells(&self) -> anyhow::Result<Vec<CellState>> {
        self.export(Cell::export)
    }

    fn take_enumeration(&self) -> anyhow::Result<Duration> {
        Ok(self.enumeration.take() + self.rt.take_timings()?.enumeration)
    }

    fn objects(&self) -> anyhow::Result<Option<(u64, u64)>> {
        Ok(Some((self.rt.count::<Male>()?, self.rt.count::<Female>()?)))
    }
}

// ----------------------------------------------------------------------------------------
// The baselines.

/// The kernels of one baseline, in step order (`decide` runs twice).
struct BaselineKernels<S: 'static> {
    setup: &'static Kernel<S>,
    grow: &'static Kernel<S>,
    prepare_diffuse: &'static Kernel<S>,
    update_diffuse: &'static Kernel<S>,
    age: &'static Kernel<S>,
    prepare_move: &'static Kernel<S>,
    decide: &'static Kernel<S>,
    update_move: &'static Kernel<S>,
    propose: &'static Kernel<S>,
    decide_proposal: &'static Kernel<S>,
    offspring_target: &'static Kernel<S>,
    mate: &'static Kernel<S>,
}

impl<S: Plain + Copy> BaselineKernels<S> {
    fn step(&self, e: &Executor, g: Grid, s: S) -> dynasoar::host::Result<()> {
        for kernel in [
            self.grow,
            self.prepare_diffuse,
            self.update_diffuse,
            self.age,
            self.prepare_move,
            self.decide,
            self.update_move,
            self.propose,
            self.decide_proposal,
            self.offspring_target,
            self.decide,
            self.mate,
        ] {
            e.launch(kernel, g, s)?;
        }
        Ok(())
    }
}

const SOA_KERNELS: BaselineKernels<SoaScape> = BaselineKernels {
    setup: &SUGAR_SOA_SETUP,
    grow: &SUGAR_SOA_GROW,
    prepare_diffuse: &SUGAR_SOA_PREPARE_DIFFUSE,
    update_diffuse: &SUGAR_SOA_UPDATE_DIFFUSE,
    age: &SUGAR_SOA_AGE,
    prepare_move: &SUGAR_SOA_PREPARE_MOVE,
    decide: &SUGAR_SOA_DECIDE,
    update_move: &SUGAR_SOA_UPDATE_MOVE,
    propose: &SUGAR_SOA_PROPOSE,
    decide_proposal: &SUGAR_SOA_DECIDE_PROPOSAL,
    offspring_target: &SUGAR_SOA_OFFSPRING_TARGET,
    mate: &SUGAR_SOA_MATE,
};

const AOS_KERNELS: BaselineKernels<AosScape> = BaselineKernels {
    setup: &SUGAR_AOS_SETUP,
    grow: &SUGAR_AOS_GROW,
    prepare_diffuse: &SUGAR_AOS_PREPARE_DIFFUSE,
    update_diffuse: &SUGAR_AOS_UPDATE_DIFFUSE,
    age: &SUGAR_AOS_AGE,
    prepare_move: &SUGAR_AOS_PREPARE_MOVE,
    decide: &SUGAR_AOS_DECIDE,
    update_move: &SUGAR_AOS_UPDATE_MOVE,
    propose: &SUGAR_AOS_PROPOSE,
    decide_proposal: &SUGAR_AOS_DECIDE_PROPOSAL,
    offspring_target: &SUGAR_AOS_OFFSPRING_TARGET,
    mate: &SUGAR_AOS_MATE,
};

/// The exported state of a baseline cell (stale agent fields of empty cells are dropped;
/// `max_children` and `num_children` only count for females).
fn cell_state(cell: CellState, kind: u32) -> CellState {
    match kind {
        MALE => CellState { kind, max_children: 0, num_children: 0, ..cell },
        FEMALE => CellState { kind, ..cell },
        _ => CellState {
            sugar: cell.sugar,
            grow_rate: cell.grow_rate,
            cell_rng: cell.cell_rng,
            ..CellState::default()
        },
    }
}

/// Sugarscape baseline: agents' fields in structure-of-arrays cell storage.
pub struct SoaSim {
    exec: Executor,
    grid: Grid,
    scape: SoaScape,
    b: SoaBuffers,
}

struct SoaBuffers {
    sugar: Buffer<i32>,
    sugar_diffusion: Buffer<i32>,
    grow_rate: Buffer<i32>,
    cell_rng: Buffer<Rng>,
    requests: Buffer<u32>,
    accepted: Buffer<u8>,
    active: Buffer<u8>,
    kind: Buffer<u8>,
    agent_rng: Buffer<Rng>,
    request_rank: Buffer<u8>,
    vision: Buffer<i32>,
    age: Buffer<i32>,
    max_age: Buffer<i32>,
    agent_sugar: Buffer<i32>,
    metabolism: Buffer<i32>,
    endowment: Buffer<i32>,
    max_children: Buffer<i32>,
    num_children: Buffer<i32>,
    female_request: Buffer<u32>,
    proposal_accepted: Buffer<u8>,
    proposal: Buffer<u32>,
}

impl SoaSim {
    /// Create the grid; returns it and the device time of the setup.
    pub fn new(options: impl Into<RunOptions>, cfg: &Config) -> anyhow::Result<(Self, Duration)> {
        let options: RunOptions = options.into();
        cfg.validate()?;
        let exec = options.executor()?;
        let n = cfg.cells() as usize;
        let b = SoaBuffers {
            sugar: exec.alloc_zeroed(n)?,
            sugar_diffusion: exec.alloc_zeroed(n)?,
            grow_rate: exec.alloc_zeroed(n)?,
            cell_rng: exec.alloc_zeroed(n)?,
            requests: exec.alloc_zeroed(n)?,
            accepted: exec.alloc_zeroed(n)?,
            active: exec.alloc_zeroed(n)?,
            kind: exec.alloc_zeroed(n)?,
            agent_rng: exec.alloc_zeroed(n)?,
            request_rank: exec.alloc_zeroed(n)?,
            vision: exec.alloc_zeroed(n)?,
            age: exec.alloc_zeroed(n)?,
            max_age: exec.alloc_zeroed(n)?,
            agent_sugar: exec.alloc_zeroed(n)?,
            metabolism: exec.alloc_zeroed(n)?,
            endowment: exec.alloc_zeroed(n)?,
            max_children: exec.alloc_zeroed(n)?,
            num_children: exec.alloc_zeroed(n)?,
            female_request: exec.alloc_zeroed(n)?,
            proposal_accepted: exec.alloc_zeroed(n)?,
            proposal: exec.alloc_zeroed(n)?,
        };
        let scape = SoaScape {
            sugar: b.sugar.ptr(),
            sugar_diffusion: b.sugar_diffusion.ptr(),
            grow_rate: b.grow_rate.ptr(),
            cell_rng: b.cell_rng.ptr(),
            requests: b.requests.ptr(),
            accepted: b.accepted.ptr(),
            active: b.active.ptr(),
            kind: b.kind.ptr(),
            agent_rng: b.agent_rng.ptr(),
            request_rank: b.request_rank.ptr(),
            vision: b.vision.ptr(),
            age: b.age.ptr(),
            max_age: b.max_age.ptr(),
            agent_sugar: b.agent_sugar.ptr(),
            metabolism: b.metabolism.ptr(),
            endowment: b.endowment.ptr(),
            max_children: b.max_children.ptr(),
            num_children: b.num_children.ptr(),
            female_request: b.female_request.ptr(),
            proposal_accepted: b.proposal_accepted.ptr(),
            proposal: b.proposal.ptr(),
            params: cfg.params(),
        };
        let grid = Grid::for_elements(n, THREADS);
        let ((), setup) = exec.time(|| exec.launch(SOA_KERNELS.setup, grid, scape))?;
        Ok((SoaSim { exec, grid, scape, b }, setup))
    }
}

impl Simulation for SoaSim {
    fn executor(&self) -> &Executor {
        &self.exec
    }

    fn step(&self) -> dynasoar::host::Result<()> {
        SOA_KERNELS.step(&self.exec, self.grid, self.scape)
    }

    fn sync(&self) -> anyhow::Result<()> {
        Ok(self.exec.synchronize()?)
    }

    fn cells(&self) -> anyhow::Result<Vec<CellState>> {
        let (b, e) = (&self.b, &self.exec);
        let i32s = |buf: &Buffer<i32>| e.read_all(buf);
        let (sugar, grow_rate, vision, age, max_age) =
            (i32s(&b.sugar)?, i32s(&b.grow_rate)?, i32s(&b.vision)?, i32s(&b.age)?, i32s(&b.max_age)?);
        let (agent_sugar, metabolism, endowment) =
            (i32s(&b.agent_sugar)?, i32s(&b.metabolism)?, i32s(&b.endowment)?);
        let (max_children, num_children) = (i32s(&b.max_children)?, i32s(&b.num_children)?);
        let (kind, cell_rng, agent_rng) =
            (e.read_all(&b.kind)?, e.read_all(&b.cell_rng)?, e.read_all(&b.agent_rng)?);
        Ok((0..kind.len())
            .map(|i| {
                let cell = CellState {
                    sugar: sugar[i],
                    grow_rate: grow_rate[i],
                    kind: kind[i] as u32,
                    vision: vision[i],
                    age: age[i],
                    max_age: max_age[i],
                    agent_sugar: agent_sugar[i],
                    metabolism: metabolism[i],
                    endowment: endowment[i],
                    max_children: max_children[i],
                    num_children: num_children[i],
                    _pad: 0,
                    cell_rng: cell_rng[i],
                    agent_rng: agent_rng[i],
                };
                cell_state(cell, kind[i] as u32)
            })
            .collect())
    }
}

/// Sugarscape baseline: agents' fields in array-of-structures cell storage.
pub struct AosSim {
    exec: Executor,
    grid: Grid,
    scape: AosScape,
    cells: Buffer<AosCell>,
}

impl AosSim {
    /// Create the grid; returns it and the device time of the setup.
    pub fn new(options: impl Into<RunOptions>, cfg: &Config) -> anyhow::Result<(Self, Duration)> {
        let options: RunOptions = options.into();
        cfg.validate()?;
        let exec = options.executor()?;
        let n = cfg.cells() as usize;
        let cells = exec.alloc_zeroed::<AosCell>(n)?;
        let scape = AosScape { cells: cells.ptr(), params: cfg.params() };
        let grid = Grid::for_elements(n, THREADS);
        let ((), setup) = exec.time(|| exec.launch(AOS_KERNELS.setup, grid, scape))?;
        Ok((AosSim { exec, grid, scape, cells }, setup))
    }
}

impl Simulation for AosSim {
    fn executor(&self) -> &Executor {
        &self.exec
    }

    fn step(&self) -> dynasoar::host::Result<()> {
        AOS_KERNELS.step(&self.exec, self.grid, self.scape)
    }

    fn sync(&self) -> anyhow::Result<()> {
        Ok(self.exec.synchronize()?)
    }

    fn cells(&self) -> anyhow::Result<Vec<CellState>> {
        Ok(self
            .exec
            .read_all(&self.cells)?
            .into_iter()
            .map(|c| {
                let cell = CellState {
                    sugar: c.sugar,
                    grow_rate: c.grow_rate,
                    kind: c.kind as u32,
                    vision: c.vision,
                    age: c.age,
                    max_age: c.max_age,
                    agent_sugar: c.agent_sugar,
                    metabolism: c.metabolism,
                    endowment: c.endowment,
                    max_children: c.max_children,
                    num_children: c.num_children,
                    _pad: 0,
                    cell_rng: c.cell_rng,
                    agent_rng: c.agent_rng,
                };
                cell_state(cell, c.kind as u32)
            })
            .collect())
    }
}

/// Create `implementation` of `cfg`; returns it and the device time of the setup.
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
        Implementation::Soa => {
            let (s, t) = SoaSim::new(options, cfg)?;
            (Box::new(s), t)
        }
        Implementation::Aos => {
            let (s, t) = AosSim::new(options, cfg)?;
            (Box::new(s), t)
        }
    })
}

// ----------------------------------------------------------------------------------------
// Running and rendering.

/// Run `implementation` of `cfg` on the backend of `options`.
pub fn run(
    implementation: Implementation,
    options: impl Into<RunOptions>,
    cfg: &Config,
    recorder: &mut Recorder,
    show_progress: bool,
) -> anyhow::Result<Outcome> {
    let options: RunOptions = options.into();
    let label = options.label(implementation);
    let (sim, setup) = simulation(implementation, options, cfg)
        .with_context(|| format!("setting up the {label} version"))?;
    let bar = progress::steps(cfg.steps as u64, label, show_progress);
    let (w, h) = (cfg.width, cfg.height);
    let capacity = cfg.sugar_capacity;
    let mut total = Duration::ZERO;
    let mut enumeration = Duration::ZERO;
    let first = sim.cells()?;
    let mut populations = vec![Population::of(0, &first)];
    if recorder.wants(0, cfg.steps) {
        recorder.record(0, draw(&first, w, h, capacity, recorder.width()))?;
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
            let cells = sim.cells()?;
            populations.push(Population::of(step, &cells));
            recorder.record(step, draw(&cells, w, h, capacity, recorder.width()))?;
        }
    }
    bar.finish_and_clear();
    let cells = sim.cells()?;
    if cfg.steps > 0 {
        populations.push(Population::of(cfg.steps, &cells));
        if recorder.wants(cfg.steps, cfg.steps) {
            recorder.record(cfg.steps, draw(&cells, w, h, capacity, recorder.width()))?;
        }
    }
    let objects = sim.objects()?;
    Ok(Outcome { width: w, height: h, cells, populations, objects, total, enumeration, setup })
}

const MALE_COLOR: [u8; 3] = [60, 140, 255];
const FEMALE_COLOR: [u8; 3] = [255, 70, 160];

/// A cell's color: the agent's, else its sugar's, from black (none) to golden (full).
fn color(c: &CellState, capacity: u32) -> [u8; 3] {
    match c.kind {
        MALE => MALE_COLOR,
        FEMALE => FEMALE_COLOR,
        _ if c.sugar <= 0 => [0, 0, 0],
        _ => {
            let t = (c.sugar as f32 / capacity.max(1) as f32).clamp(0.0, 1.0);
            [(40.0 + 200.0 * t) as u8, (25.0 + 155.0 * t) as u8, (10.0 * t) as u8]
        }
    }
}

/// A picture of the grid at most `max_width` pixels wide: one pixel (or square of pixels) per
/// cell, or, for grids wider than that, the average color of each square of cells.
pub fn draw(cells: &[CellState], width: u32, height: u32, capacity: u32, max_width: u32) -> Canvas {
    let max_width = max_width.max(1);
    if width <= max_width {
        // Tall worlds get fewer pixels per cell: the canvas stops at `MAX_SIDE`.
        let scale = (max_width / width).min(crate::render::MAX_SIDE / height.max(1)).max(1);
        let mut canvas = Canvas::new(width * scale, height * scale, [0, 0, 0]);
        for (i, c) in cells.iter().enumerate() {
            let (x, y) = (i as u32 % width, i as u32 / width);
            let rgb = color(c, capacity);
            for dy in 0..scale {
                for dx in 0..scale {
                    canvas.set((x * scale + dx) as i64, (y * scale + dy) as i64, rgb);
                }
            }
        }
        return canvas;
    }
    let f = width.div_ceil(max_width);
    let (cw, ch) = (width.div_ceil(f), height.div_ceil(f));
    let mut sums = vec![[0u32; 4]; cw as usize * ch as usize];
    for (i, c) in cells.iter().enumerate() {
        let (x, y) = (i as u32 % width / f, i as u32 / width / f);
        let s = &mut sums[(y * cw + x) as usize];
        let rgb = color(c, capacity);
        for k in 0..3 {
            s[k] += rgb[k] as u32;
        }
        s[3] += 1;
    }
    let mut canvas = Canvas::new(cw, ch, [0, 0, 0]);
    for (i, s) in sums.iter().enumerate() {
        // Every pixel covers at least one cell.
        let n = s[3].max(1);
        let avg = [(s[0] / n) as u8, (s[1] / n) as u8, (s[2] / n) as u8];
        canvas.set((i as u32 % cw) as i64, (i as u32 / cw) as i64, avg);
    }
    canvas
}

crate::impl_compared!(Outcome { "males" => |o| o.males(), "females" => |o| o.females() });
