//! Host side of Wa-Tor: set up and step the DSL version or a baseline, time it, render it,
//! and read the ocean back for checks.
//!
//! The three implementations are [`Simulation`]s: [`DslSim`] (objects in the dynasoar heap),
//! [`SoaSim`] and [`AosSim`] (agents stored inside the cell grid). [`run`] drives any of them
//! with timing, progress and rendering; tests step them one at a time.

use std::time::Duration;

use anyhow::Context;
use dynasoar::host::{Buffer, Executor, Grid, Runtime, StepGraph};
use dynasoar::prelude::{DevPtr, Plain};
use dynasoar::rand::Rng;
use dynasoar::{ClassSpec, ParallelMethod};
use dynasoar_models::wator::{
    AosCell, AosOcean, CellGrid, CellLinks, CellState, CellTable, EMPTY, FISH, Fish, OceanCell, OceanHeap,
    Params, SHARK, Shark, SoaOcean, WATOR_AOS_DECIDE, WATOR_AOS_PREPARE_CELLS, WATOR_AOS_PREPARE_FISH,
    WATOR_AOS_PREPARE_SHARKS, WATOR_AOS_SETUP, WATOR_AOS_UPDATE_FISH, WATOR_AOS_UPDATE_SHARKS,
    WATOR_SOA_DECIDE, WATOR_SOA_PREPARE_CELLS, WATOR_SOA_PREPARE_FISH, WATOR_SOA_PREPARE_SHARKS,
    WATOR_SOA_SETUP, WATOR_SOA_UPDATE_FISH, WATOR_SOA_UPDATE_SHARKS, config,
};

use crate::render::{Canvas, Recorder};
use crate::{Implementation, RunOptions, progress, run_step};

/// Threads per block of the baselines' kernels.
const THREADS: u32 = 256;

/// What to simulate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Cells per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    pub steps: u32,
    pub seed: u64,
    pub spawn_threshold: u32,
    pub energy_boost: u32,
    pub energy_start: u32,
    /// Initial share of cells with a fish, in percent.
    pub fish_percent: u32,
    /// Initial share of cells with a shark, in percent.
    pub shark_percent: u32,
    /// Heap of the DSL version in bytes (default: [`Config::default_heap_bytes`]).
    pub heap_bytes: Option<u64>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            width: config::WIDTH,
            height: config::HEIGHT,
            steps: config::STEPS,
            seed: config::SEED,
            spawn_threshold: config::SPAWN_THRESHOLD,
            energy_boost: config::ENERGY_BOOST,
            energy_start: config::ENERGY_START,
            fish_percent: config::FISH_PERCENT,
            shark_percent: config::SHARK_PERCENT,
            heap_bytes: None,
        }
    }
}

impl Config {
    /// Check the sizes and rules; an error says which option is wrong.
    pub fn validate(&self) -> anyhow::Result<()> {
        anyhow::ensure!(self.width > 0 && self.height > 0, "the ocean needs at least one cell per side");
        anyhow::ensure!(
            self.cells() <= i32::MAX as u64,
            "{}x{} cells are too many (at most {} in all)",
            self.width,
            self.height,
            i32::MAX
        );
        anyhow::ensure!(self.spawn_threshold > 0, "the spawn threshold must be at least 1");
        anyhow::ensure!(self.energy_start > 0, "the start energy of sharks must be at least 1");
        anyhow::ensure!(
            self.fish_percent + self.shark_percent <= 100,
            "fish ({}%) and sharks ({}%) can fill at most 100% of the cells",
            self.fish_percent,
            self.shark_percent
        );
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
            spawn_threshold: self.spawn_threshold,
            energy_boost: self.energy_boost,
            energy_start: self.energy_start,
            fish_percent: self.fish_percent,
            shark_percent: self.shark_percent,
            _pad: 0,
            seed: self.seed,
        }
    }

    /// A heap with blocks for all cells, and room for as many fish *and* as many sharks as
    /// there are cells (an agent population never exceeds the cells; the slack absorbs
    /// half-empty blocks), plus the allocator's bitmaps.
    pub fn default_heap_bytes(&self) -> u64 {
        let n = self.cells();
        let blocks = n.div_ceil(OceanCell::OBJECTS_PER_BLOCK as u64)
            + n.div_ceil(Fish::OBJECTS_PER_BLOCK as u64)
            + n.div_ceil(Shark::OBJECTS_PER_BLOCK as u64);
        let bytes = blocks * OceanCell::BLOCK_BYTES;
        bytes + bytes / 16 + (8 << 20)
    }

    /// The DSL version's heap size.
    pub fn heap_bytes(&self) -> u64 {
        self.heap_bytes.unwrap_or_else(|| self.default_heap_bytes())
    }
}

/// Agents alive at one step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Population {
    pub step: u32,
    pub fish: u64,
    pub sharks: u64,
}

impl Population {
    /// The census of `cells` at `step`.
    pub fn of(step: u32, cells: &[CellState]) -> Self {
        let fish = cells.iter().filter(|c| c.kind == FISH).count() as u64;
        let sharks = cells.iter().filter(|c| c.kind == SHARK).count() as u64;
        Population { step, fish, sharks }
    }
}

/// Result of one run.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub width: u32,
    pub height: u32,
    /// The final ocean, row by row.
    pub cells: Vec<CellState>,
    /// Populations at the start, at every rendered step and at the end.
    pub populations: Vec<Population>,
    /// DSL only: fish and shark objects in the heap at the end, as the allocator counts them.
    pub objects: Option<(u64, u64)>,
    /// Device time of all steps (setup excluded, as in the paper).
    pub total: Duration,
    /// Of which enumeration before do-all launches (DSL only).
    pub enumeration: Duration,
    /// Device time of creating the initial ocean.
    pub setup: Duration,
}

impl Outcome {
    pub fn fish(&self) -> u64 {
        self.cells.iter().filter(|c| c.kind == FISH).count() as u64
    }

    pub fn sharks(&self) -> u64 {
        self.cells.iter().filter(|c| c.kind == SHARK).count() as u64
    }

    /// The original benchmark's checksum: 3 per fish plus 7 per shark.
    pub fn checksum(&self) -> u64 {
        3 * self.fish() + 7 * self.sharks()
    }

    /// A hash of the whole final ocean (kinds, timers, energies, generators): equal for runs
    /// that computed the same simulation.
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
        eat(c.kind as u64 | (c.egg_timer as u64) << 8 | (c.energy as u64) << 40);
        eat(rng_word(c.rng));
    }
    h
}

/// The state word of a generator (to hash it).
fn rng_word(rng: Rng) -> u64 {
    let mut copy = rng;
    copy.next_u64()
}

/// One implementation of Wa-Tor, stepped from the host.
pub trait Simulation {
    /// The executor that runs it (for timing).
    fn executor(&self) -> &Executor;
    /// Queue one step (both phases).
    fn step(&self) -> dynasoar::host::Result<()>;
    /// Wait for queued steps and report their errors.
    fn sync(&self) -> anyhow::Result<()>;
    /// The ocean now, row by row.
    fn cells(&self) -> anyhow::Result<Vec<CellState>>;
    /// Enumeration time since the last call (DSL only).
    fn take_enumeration(&self) -> anyhow::Result<Duration> {
        Ok(Duration::ZERO)
    }
    /// Fish and shark objects in the heap (DSL only).
    fn objects(&self) -> anyhow::Result<Option<(u64, u64)>> {
        Ok(None)
    }
    /// Fraction of the object slots of allocated blocks that hold no object (paper 7.3); DSL
    /// version in DynaSOAr's heap only. Launches the heap's statistics kernel.
    fn fragmentation(&self) -> anyhow::Result<Option<f64>> {
        Ok(None)
    }
}

// ----------------------------------------------------------------------------------------
// The DSL version.

/// Wa-Tor with objects in the dynasoar heap.
pub struct DslSim {
    rt: Runtime<OceanHeap>,
    params: Params,
    grid: CellGrid,
    heap_bytes: u64,
    /// Enumeration time of steps, set aside while exports run (their own is not counted).
    enumeration: std::cell::Cell<Duration>,
    /// The step as a step graph (`RunOptions::graph`).
    graph: Option<StepGraph>,
}

impl DslSim {
    /// Create the ocean; returns it and the device time of the setup.
    pub fn new(options: impl Into<RunOptions>, cfg: &Config) -> anyhow::Result<(Self, Duration)> {
        let options: RunOptions = options.into();
        cfg.validate()?;
        let heap_bytes = cfg.heap_bytes();
        let rt = options.runtime::<OceanHeap>(heap_bytes).deferred_checks(true).build()?;
        let params = cfg.params();
        let exec = rt.executor();
        let cells = exec.alloc_zeroed(cfg.cells() as usize)?;
        let table = CellTable { cells: cells.ptr(), params };
        let ((), setup) = exec.time(|| {
            rt.parallel_new_with(OceanCell::create, cfg.cells(), params)?;
            rt.parallel_do_with(OceanCell::register, table)?;
            rt.parallel_do_with(OceanCell::populate, table)
        })?;
        rt.sync().map_err(|e| out_of_heap(e, heap_bytes))?;
        rt.take_timings()?;
        // The agents find their cells' neighbours by index where the cells lie in index order.
        let grid = CellGrid { cells: rt.by_index(cells)?, width: params.width, height: params.height };
        let graph = options.capture(&rt, |rt| Self::queue_step(rt, params, grid))?;
        Ok((DslSim { rt, params, grid, heap_bytes, enumeration: Default::default(), graph }, setup))
    }

    /// Queue one step's launches one by one (both phases).
    fn queue_step(rt: &Runtime<OceanHeap>, p: Params, g: CellGrid) -> dynasoar::host::Result<()> {
        // Requests start clear (cells are created without) and `decide` clears them.
        rt.parallel_do_with(Fish::prepare, g)?;
        rt.parallel_do(OceanCell::decide)?;
        rt.parallel_do_with(Fish::update, p)?;
        rt.parallel_do_with(Shark::prepare, g)?;
        rt.parallel_do(OceanCell::decide)?;
        rt.parallel_do_with(Shark::update, p)?;
        Ok(())
    }

    /// Queue one step launch by one, even where [`Simulation::step`] replays a step graph.
    pub fn step_directly(&self) -> dynasoar::host::Result<()> {
        Self::queue_step(&self.rt, self.params, self.grid)
    }

    /// The runtime (to count and collect objects).
    pub fn runtime(&self) -> &Runtime<OceanHeap> {
        &self.rt
    }

    /// The cells by index, as the agents' `prepare` gets them (for checks).
    pub fn grid(&self) -> CellGrid {
        self.grid
    }

    /// Every cell's references (for invariant checks), indexed by cell.
    pub fn links(&self) -> anyhow::Result<Vec<CellLinks>> {
        self.export(OceanCell::export_links)
    }

    /// Run `method` to copy one value per cell into a buffer, and read it. The export's own
    /// enumeration time is not counted as the steps'.
    fn export<T: Plain + Default>(
        &self,
        method: ParallelMethod<OceanCell, DevPtr<T>>,
    ) -> anyhow::Result<Vec<T>> {
        let exec = self.rt.executor();
        let out = exec.alloc_zeroed::<T>(self.params.cells() as usize)?;
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
        e.context(format!("Wa-Tor ran out of its {} MiB heap (try a larger --heap-mib)", heap_bytes >> 20))
    } else {
        e
    }
}

impl Simulation for DslSim {
    fn executor(&self) -> &Executor {
        self.rt.executor()
    }

    fn step(&self) -> dynasoar::host::Result<()> {
        run_step(&self.rt, self.graph.as_ref(), |rt| Self::queue_step(rt, self.params, self.grid))
    }

    fn sync(&self) -> anyhow::Result<()> {
        self.rt.sync().map_err(|e| out_of_heap(e, self.heap_bytes))
    }

    fn cells(&self) -> anyhow::Result<Vec<CellState>> {
        self.export(OceanCell::export)
    }

    fn take_enumeration(&self) -> anyhow::Result<Duration> {
        Ok(self.enumeration.take() + self.rt.take_timings()?.enumeration)
    }

    fn fragmentation(&self) -> anyhow::Result<Option<f64>> {
        Ok(match self.rt.heap() {
            Some(_) => Some(self.rt.stats()?.fragmentation()),
            None => None,
        })
    }

    fn objects(&self) -> anyhow::Result<Option<(u64, u64)>> {
        Ok(Some((self.rt.count::<Fish>()?, self.rt.count::<Shark>()?)))
    }
}

// ----------------------------------------------------------------------------------------
// The baselines.

/// Wa-Tor baseline: agents' fields in structure-of-arrays cell storage.
pub struct SoaSim {
    exec: Executor,
    grid: Grid,
    ocean: SoaOcean,
    _buffers: SoaBuffers,
}

struct SoaBuffers {
    cell_rng: Buffer<Rng>,
    requests: Buffer<u32>,
    kind: Buffer<u8>,
    active: Buffer<u8>,
    agent_rng: Buffer<Rng>,
    new_position: Buffer<u32>,
    egg_timer: Buffer<u32>,
    energy: Buffer<u32>,
}

impl SoaSim {
    /// Create the ocean; returns it and the device time of the setup.
    pub fn new(options: impl Into<RunOptions>, cfg: &Config) -> anyhow::Result<(Self, Duration)> {
        let options: RunOptions = options.into();
        cfg.validate()?;
        let exec = options.executor()?;
        let n = cfg.cells() as usize;
        let b = SoaBuffers {
            cell_rng: exec.alloc_zeroed(n)?,
            requests: exec.alloc_zeroed(n)?,
            kind: exec.alloc_zeroed(n)?,
            active: exec.alloc_zeroed(n)?,
            agent_rng: exec.alloc_zeroed(n)?,
            new_position: exec.alloc_zeroed(n)?,
            egg_timer: exec.alloc_zeroed(n)?,
            energy: exec.alloc_zeroed(n)?,
        };
        let ocean = SoaOcean {
            cell_rng: b.cell_rng.ptr(),
            requests: b.requests.ptr(),
            kind: b.kind.ptr(),
            active: b.active.ptr(),
            agent_rng: b.agent_rng.ptr(),
            new_position: b.new_position.ptr(),
            egg_timer: b.egg_timer.ptr(),
            energy: b.energy.ptr(),
            params: cfg.params(),
        };
        let grid = Grid::for_elements(n, THREADS);
        let ((), setup) = exec.time(|| exec.launch(&WATOR_SOA_SETUP, grid, ocean))?;
        Ok((SoaSim { exec, grid, ocean, _buffers: b }, setup))
    }
}

impl Simulation for SoaSim {
    fn executor(&self) -> &Executor {
        &self.exec
    }

    fn step(&self) -> dynasoar::host::Result<()> {
        let (e, g, o) = (&self.exec, self.grid, self.ocean);
        e.launch(&WATOR_SOA_PREPARE_CELLS, g, o)?;
        e.launch(&WATOR_SOA_PREPARE_FISH, g, o)?;
        e.launch(&WATOR_SOA_DECIDE, g, o)?;
        e.launch(&WATOR_SOA_UPDATE_FISH, g, o)?;
        e.launch(&WATOR_SOA_PREPARE_CELLS, g, o)?;
        e.launch(&WATOR_SOA_PREPARE_SHARKS, g, o)?;
        e.launch(&WATOR_SOA_DECIDE, g, o)?;
        e.launch(&WATOR_SOA_UPDATE_SHARKS, g, o)?;
        Ok(())
    }

    fn sync(&self) -> anyhow::Result<()> {
        Ok(self.exec.synchronize()?)
    }

    fn cells(&self) -> anyhow::Result<Vec<CellState>> {
        let b = &self._buffers;
        let e = &self.exec;
        let (kind, rng, egg, energy) = (
            e.read_all(&b.kind)?,
            e.read_all(&b.agent_rng)?,
            e.read_all(&b.egg_timer)?,
            e.read_all(&b.energy)?,
        );
        Ok((0..kind.len()).map(|i| cell_state(kind[i] as u32, rng[i], egg[i], energy[i])).collect())
    }
}

/// The exported state of a baseline cell (stale agent fields of empty cells are dropped).
fn cell_state(kind: u32, rng: Rng, egg_timer: u32, energy: u32) -> CellState {
    match kind {
        FISH => CellState { kind, egg_timer, energy: 0, _pad: 0, rng },
        SHARK => CellState { kind, egg_timer, energy, _pad: 0, rng },
        _ => CellState { kind: EMPTY, ..CellState::default() },
    }
}

/// Wa-Tor baseline: agents' fields in array-of-structures cell storage.
pub struct AosSim {
    exec: Executor,
    grid: Grid,
    ocean: AosOcean,
    cells: Buffer<AosCell>,
}

impl AosSim {
    /// Create the ocean; returns it and the device time of the setup.
    pub fn new(options: impl Into<RunOptions>, cfg: &Config) -> anyhow::Result<(Self, Duration)> {
        let options: RunOptions = options.into();
        cfg.validate()?;
        let exec = options.executor()?;
        let n = cfg.cells() as usize;
        let cells = exec.alloc_zeroed::<AosCell>(n)?;
        let ocean = AosOcean { cells: cells.ptr(), params: cfg.params() };
        let grid = Grid::for_elements(n, THREADS);
        let ((), setup) = exec.time(|| exec.launch(&WATOR_AOS_SETUP, grid, ocean))?;
        Ok((AosSim { exec, grid, ocean, cells }, setup))
    }
}

impl Simulation for AosSim {
    fn executor(&self) -> &Executor {
        &self.exec
    }

    fn step(&self) -> dynasoar::host::Result<()> {
        let (e, g, o) = (&self.exec, self.grid, self.ocean);
        e.launch(&WATOR_AOS_PREPARE_CELLS, g, o)?;
        e.launch(&WATOR_AOS_PREPARE_FISH, g, o)?;
        e.launch(&WATOR_AOS_DECIDE, g, o)?;
        e.launch(&WATOR_AOS_UPDATE_FISH, g, o)?;
        e.launch(&WATOR_AOS_PREPARE_CELLS, g, o)?;
        e.launch(&WATOR_AOS_PREPARE_SHARKS, g, o)?;
        e.launch(&WATOR_AOS_DECIDE, g, o)?;
        e.launch(&WATOR_AOS_UPDATE_SHARKS, g, o)?;
        Ok(())
    }

    fn sync(&self) -> anyhow::Result<()> {
        Ok(self.exec.synchronize()?)
    }

    fn cells(&self) -> anyhow::Result<Vec<CellState>> {
        Ok(self
            .exec
            .read_all(&self.cells)?
            .into_iter()
            .map(|c| cell_state(c.kind as u32, c.agent_rng, c.egg_timer, c.energy))
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
    let mut total = Duration::ZERO;
    let mut enumeration = Duration::ZERO;
    let first = sim.cells()?;
    let mut populations = vec![Population::of(0, &first)];
    if recorder.wants(0, cfg.steps) {
        recorder.record(0, draw(&first, w, h, recorder.width()))?;
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
            recorder.record(step, draw(&cells, w, h, recorder.width()))?;
        }
    }
    bar.finish_and_clear();
    let cells = sim.cells()?;
    if cfg.steps > 0 {
        populations.push(Population::of(cfg.steps, &cells));
        if recorder.wants(cfg.steps, cfg.steps) {
            recorder.record(cfg.steps, draw(&cells, w, h, recorder.width()))?;
        }
    }
    let objects = sim.objects()?;
    Ok(Outcome { width: w, height: h, cells, populations, objects, total, enumeration, setup })
}

const WATER: [u8; 3] = [8, 16, 40];
const FISH_COLOR: [u8; 3] = [60, 210, 90];
const SHARK_COLOR: [u8; 3] = [235, 50, 40];

fn color(kind: u32) -> [u8; 3] {
    match kind {
        FISH => FISH_COLOR,
        SHARK => SHARK_COLOR,
        _ => WATER,
    }
}

/// A picture of the ocean at most `max_width` pixels wide: one pixel (or square of pixels) per
/// cell, or, for oceans wider than that, the average color of each square of cells.
pub fn draw(cells: &[CellState], width: u32, height: u32, max_width: u32) -> Canvas {
    let max_width = max_width.max(1);
    if width <= max_width {
        // Tall worlds get fewer pixels per cell: the canvas stops at `MAX_SIDE`.
        let scale = (max_width / width).min(crate::render::MAX_SIDE / height.max(1)).max(1);
        let mut canvas = Canvas::new(width * scale, height * scale, WATER);
        for (i, c) in cells.iter().enumerate() {
            if c.kind == EMPTY {
                continue;
            }
            let (x, y) = (i as u32 % width, i as u32 / width);
            for dy in 0..scale {
                for dx in 0..scale {
                    canvas.set((x * scale + dx) as i64, (y * scale + dy) as i64, color(c.kind));
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
        let rgb = color(c.kind);
        for k in 0..3 {
            s[k] += rgb[k] as u32;
        }
        s[3] += 1;
    }
    let mut canvas = Canvas::new(cw, ch, WATER);
    for (i, s) in sums.iter().enumerate() {
        // Every pixel covers at least one cell.
        let n = s[3].max(1);
        let avg = [(s[0] / n) as u8, (s[1] / n) as u8, (s[2] / n) as u8];
        canvas.set((i as u32 % cw) as i64, (i as u32 / cw) as i64, avg);
    }
    canvas
}

crate::impl_compared!(Outcome { "fish" => |o| o.fish(), "sharks" => |o| o.sharks() });
