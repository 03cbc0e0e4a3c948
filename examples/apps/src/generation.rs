//! Host side of the Generations automaton: patterns (the benchmark's bursts, and everything the
//! Game of Life app reads), the DSL version and its SOA and AOS baselines, rendering, the DSL
//! version's invariant check, and a plain host reference of the rules.
//!
//! The three implementations are [`Simulation`]s; [`run`] drives any of them with timing,
//! progress and rendering, tests step them one at a time against [`Reference`]. Every
//! implementation exports the grid as one state per cell ([`DEAD`], [`ALIVE`], `ALIVE + k` for
//! dying state `k`). The grid does not wrap.

use std::collections::HashSet;
use std::time::Duration;

use anyhow::{Context, ensure};
use dynasoar::ClassSpec;
use dynasoar::Handle;
use dynasoar::host::{Buffer, Executor, Grid, Runtime, StepGraph};
use dynasoar_models::generation::{
    ALIVE, Agent, Alive, AosCell, AosGeneration, Candidate, DEAD, GENERATION_AOS_STEP, GENERATION_SOA_STEP,
    GenerationHeap, Rule, SoaGeneration, World, action, config, for_each_neighbor, is_alive_handle,
    is_candidate_handle, next_state,
};

pub use crate::game_of_life::{Pattern, parse_size};
use crate::render::{Canvas, Recorder, heat};
use crate::{Implementation, RunOptions, progress, run_step};

/// Threads per block of the baselines' kernels.
const THREADS: u32 = 256;

/// Steps queued between two host synchronisations when nothing is rendered.
const CHUNK: u32 = 50;

// ----------------------------------------------------------------------------------------
// Patterns and configuration.

/// The benchmark's pattern (the original's `load_burst`): on a grid of `width` x `height`
/// cells, a cross with arms `length` cells long and a small diamond around its centre, repeated
/// every `spacing` cells in both directions, starting `length + 10` cells from the top-left
/// corner and keeping that distance from the other sides.
pub fn burst_pattern(width: u32, height: u32, length: u32, spacing: u32) -> anyhow::Result<Pattern> {
    ensure!(length >= 6, "the arms of a burst are at least 6 cells long (got {length})");
    ensure!(spacing >= 1, "bursts need a spacing of at least one cell");
    ensure!(
        width > 2 * length + 20 && height > 2 * length + 20,
        "a burst with arms of {length} cells needs a grid of more than {0}x{0} cells (got {width}x{height}); \
         shorter arms: --pattern burst:LENGTH:SPACING",
        2 * length + 20
    );
    let (l, margin) = (length as i64, length as i64 + 10);
    // Cells relative to a burst's centre: rows of the diamond (half widths by row offset), the
    // horizontal arm and the vertical arm (without the diamond's rows).
    let diamond = [(-5, 1), (-4, 1), (-3, 3), (-2, 3), (-1, 5), (1, 5), (2, 3), (3, 3), (4, 1), (5, 1)];
    let mut offsets: Vec<(i64, i64)> = Vec::new();
    for (dy, half) in diamond {
        offsets.extend((-half..=half).map(|dx| (dx, dy)));
    }
    offsets.extend((-l..=l).map(|dx| (dx, 0)));
    offsets.extend((-l..=-6).chain(6..=l).map(|dy| (0, dy)));
    let mut cells = Vec::new();
    let (w, h) = (width as i64, height as i64);
    let mut cx = margin;
    while cx < w - margin {
        let mut cy = margin;
        while cy < h - margin {
            cells.extend(offsets.iter().map(|&(dx, dy)| ((cx + dx) as u32, (cy + dy) as u32)));
            cy += spacing as i64;
        }
        cx += spacing as i64;
    }
    let mut pattern = Pattern::from_cells("burst", width, height, cells)?;
    if length != config::BURST_LENGTH || spacing != config::BURST_SPACING {
        pattern.name = format!("burst:{length}:{spacing}");
    }
    Ok(pattern)
}

/// The pattern `spec` names: `burst` (the benchmark's, on a `size` grid, default 5000x5000),
/// `burst:LENGTH:SPACING`, or anything [`Pattern::from_spec`] reads (`glider`, `random:WxH`, a
/// `.pgm` image, ...).
pub fn pattern_from_spec(spec: &str, size: Option<(u32, u32)>, seed: u64) -> anyhow::Result<Pattern> {
    if spec == "burst" || spec.starts_with("burst:") {
        let (w, h) = size.unwrap_or((config::SIZE, config::SIZE));
        let mut parts = spec.split(':').skip(1);
        let mut number = |what: &str, default: u32| -> anyhow::Result<u32> {
            match parts.next() {
                Some(p) => p.parse().with_context(|| format!("the {what} in `{spec}` is not a number")),
                None => Ok(default),
            }
        };
        let length = number("arm length", config::BURST_LENGTH)?;
        let spacing = number("spacing", config::BURST_SPACING)?;
        return burst_pattern(w, h, length, spacing);
    }
    Pattern::from_spec(spec, size, seed)
}

/// What to simulate.
#[derive(Clone, Debug)]
pub struct Config {
    pub pattern: Pattern,
    pub steps: u32,
    pub rule: Rule,
    /// Bytes of the dynasoar heap (default: [`Config::default_heap_bytes`]).
    pub heap_bytes: Option<u64>,
}

impl Config {
    /// `pattern` under the benchmark rule for the benchmark's steps.
    pub fn new(pattern: Pattern) -> Self {
        Config { pattern, steps: config::STEPS, rule: Rule::default(), heap_bytes: None }
    }

    /// The benchmark: bursts on a 5000 x 5000 grid, 25,000 steps.
    pub fn benchmark() -> anyhow::Result<Self> {
        Ok(Self::new(burst_pattern(config::SIZE, config::SIZE, config::BURST_LENGTH, config::BURST_SPACING)?))
    }

    /// Check the rule and sizes; an error says what is wrong.
    pub fn validate(&self) -> anyhow::Result<()> {
        let p = &self.pattern;
        ensure!(p.width > 0 && p.height > 0, "the grid needs at least one cell (got {})", p.size());
        ensure!(p.live.iter().all(|&c| (c as usize) < p.cells()), "the pattern has cells outside its grid");
        validate_rule(&self.rule)?;
        if let Some(bytes) = self.heap_bytes {
            ensure!(bytes > 0, "the heap needs at least one byte");
        }
        Ok(())
    }

    /// Heap for the worst case: an object in every cell, of either class (an alive cell or a
    /// candidate; blocks of both may be partly used), plus half for partly used blocks and the
    /// bitmaps. (The benchmark's bursts grow over most of the grid within a few hundred steps.)
    pub fn default_heap_bytes(&self) -> u64 {
        let cells = self.pattern.cells() as u64;
        let blocks = cells.div_ceil(Alive::OBJECTS_PER_BLOCK as u64)
            + cells.div_ceil(Candidate::OBJECTS_PER_BLOCK as u64);
        let bytes = blocks * Alive::BLOCK_BYTES;
        bytes + bytes / 2 + (8 << 20)
    }

    /// The DSL version's heap size.
    pub fn heap_bytes(&self) -> u64 {
        self.heap_bytes.unwrap_or_else(|| self.default_heap_bytes())
    }
}

/// Check that `rule` is one the implementations can compute.
pub fn validate_rule(rule: &Rule) -> anyhow::Result<()> {
    ensure!(rule.survive < 1 << 9, "the survival set holds neighbour counts 0..=8 only");
    ensure!(rule.birth < 1 << 9, "the birth set holds neighbour counts 0..=8 only");
    ensure!(
        rule.birth & 1 == 0,
        "birth with 0 alive neighbours is not supported (dead cells far from alive ones have no \
         object)"
    );
    ensure!(rule.dying_states <= 255, "at most 255 dying states (got {})", rule.dying_states);
    Ok(())
}

/// Parse a rule `S<digits>/B<digits>[/D<states>]` (e.g. the benchmark's `S023/B3468/D255`,
/// Conway's `S23/B3`).
pub fn parse_rule(s: &str) -> anyhow::Result<Rule> {
    let mut rule = Rule { survive: 0, birth: 0, dying_states: 0, _pad: 0 };
    let mut seen = (false, false);
    for part in s.split('/') {
        let (kind, rest) = part.split_at(part.len().min(1));
        let digits = |what: &str| -> anyhow::Result<u32> {
            let mut mask = 0;
            for c in rest.chars() {
                let n = c.to_digit(10).filter(|&n| n <= 8);
                let n =
                    n.with_context(|| format!("`{c}` in the {what} set of `{s}` is not a count 0..=8"))?;
                mask |= 1 << n;
            }
            Ok(mask)
        };
        match kind {
            "S" | "s" => (rule.survive, seen.0) = (digits("survival")?, true),
            "B" | "b" => (rule.birth, seen.1) = (digits("birth")?, true),
            "D" | "d" => {
                rule.dying_states =
                    rest.parse().with_context(|| format!("dying states `{rest}` in `{s}` is not a number"))?
            }
            _ => anyhow::bail!("`{part}` in rule `{s}` is none of S<counts>, B<counts>, D<states>"),
        }
    }
    ensure!(seen.0 && seen.1, "rule `{s}` needs an S and a B part (like S23/B3)");
    validate_rule(&rule)?;
    Ok(rule)
}

/// `rule` as `S.../B.../D...`.
pub fn rule_name(rule: &Rule) -> String {
    let digits =
        |mask: u32| (0..9).filter(|n| mask & (1 << n) != 0).map(|n| n.to_string()).collect::<String>();
    format!("S{}/B{}/D{}", digits(rule.survive), digits(rule.birth), rule.dying_states)
}

// ----------------------------------------------------------------------------------------
// The host reference.

/// The rules computed plainly on the host, cell by cell over the whole grid (written
/// independently of the models' neighbour loops).
pub struct Reference {
    width: u32,
    height: u32,
    rule: Rule,
    states: Vec<u16>,
}

impl Reference {
    pub fn new(pattern: &Pattern, rule: Rule) -> Self {
        let mut states = vec![DEAD; pattern.cells()];
        for &c in &pattern.live {
            states[c as usize] = ALIVE;
        }
        Reference { width: pattern.width, height: pattern.height, rule, states }
    }

    /// One step.
    pub fn step(&mut self) {
        let (w, h) = (self.width as i64, self.height as i64);
        let alive =
            |x: i64, y: i64| x >= 0 && y >= 0 && x < w && y < h && self.states[(y * w + x) as usize] == ALIVE;
        let mut next = vec![DEAD; self.states.len()];
        for (i, n) in next.iter_mut().enumerate() {
            let (x, y) = (i as i64 % w, i as i64 / w);
            let count = || {
                let mut c = 0;
                for (dx, dy) in [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)] {
                    c += alive(x + dx, y + dy) as u32;
                }
                c
            };
            *n = next_state(self.states[i], &self.rule, count);
        }
        self.states = next;
    }

    /// The state of every cell.
    pub fn states(&self) -> &[u16] {
        &self.states
    }
}

// ----------------------------------------------------------------------------------------
// Results.

/// Result of one run.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub width: u32,
    pub height: u32,
    /// The state of every cell after the last step.
    pub states: Vec<u16>,
    /// DSL only: alive cells and candidates in the heap at the end, as the allocator counts them.
    pub objects: Option<(u64, u64)>,
    /// Device time of all steps (loading the pattern excluded, as in the original).
    pub total: Duration,
    /// Of which enumeration before do-all launches (DSL only).
    pub enumeration: Duration,
    /// Device time of loading the pattern (DSL: creating the alive cells and their candidates).
    pub setup: Duration,
}

impl Outcome {
    /// Alive cells (the original's checksum).
    pub fn alive(&self) -> u64 {
        count_alive(&self.states)
    }

    /// Dying cells.
    pub fn dying(&self) -> u64 {
        self.states.iter().filter(|&&s| s > ALIVE).count() as u64
    }

    /// A hash of the final grid (FNV-1a over the size and every state).
    pub fn fingerprint(&self) -> u64 {
        fingerprint(self.width, self.height, &self.states)
    }
}

/// Alive cells among `states`.
pub fn count_alive(states: &[u16]) -> u64 {
    states.iter().filter(|&&s| s == ALIVE).count() as u64
}

/// FNV-1a over the grid size and the states.
pub fn fingerprint(width: u32, height: u32, states: &[u16]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let bytes = width
        .to_le_bytes()
        .into_iter()
        .chain(height.to_le_bytes())
        .chain(states.iter().flat_map(|s| s.to_le_bytes()));
    for b in bytes {
        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

// ----------------------------------------------------------------------------------------
// The implementations.

/// One implementation of the automaton, stepped from the host.
pub trait Simulation {
    /// The executor that runs it (for timing).
    fn executor(&self) -> &Executor;
    /// Queue one step.
    fn step(&self) -> dynasoar::host::Result<()>;
    /// Wait for queued steps and report their errors.
    fn sync(&self) -> anyhow::Result<()>;
    /// The state of every cell now.
    fn states(&self) -> anyhow::Result<Vec<u16>>;
    /// Enumeration time since the last call (DSL only).
    fn take_enumeration(&self) -> anyhow::Result<Duration> {
        Ok(Duration::ZERO)
    }
    /// Alive cells and candidates in the heap (DSL only).
    fn objects(&self) -> anyhow::Result<Option<(u64, u64)>> {
        Ok(None)
    }
}

/// `e`, with a hint at `--heap-mib` if the heap ran out.
fn out_of_heap(e: dynasoar::host::Error, heap_bytes: u64) -> anyhow::Error {
    let oom = matches!(e, dynasoar::host::Error::OutOfMemory { .. });
    let e = anyhow::Error::new(e);
    if oom {
        e.context(format!(
            "the dynasoar heap ({} MiB) is too small for this run: give more with --heap-mib",
            heap_bytes.div_ceil(1 << 20)
        ))
    } else {
        e
    }
}

/// The automaton with alive cells and candidates as objects in the dynasoar heap.
pub struct DslSim {
    rt: Runtime<GenerationHeap>,
    grid: Buffer<Handle<Agent>>,
    world: World,
    heap_bytes: u64,
    /// Enumeration time of steps, set aside while exports run (their own is not counted).
    enumeration: std::cell::Cell<Duration>,
    /// The step as a step graph (`RunOptions::graph`).
    graph: Option<StepGraph>,
}

impl DslSim {
    /// Load the pattern; returns the simulation and the device time of loading it.
    pub fn new(options: impl Into<RunOptions>, cfg: &Config) -> anyhow::Result<(Self, Duration)> {
        let options: RunOptions = options.into();
        cfg.validate()?;
        let p = &cfg.pattern;
        let heap_bytes = cfg.heap_bytes();
        let rt = options.runtime::<GenerationHeap>(heap_bytes).deferred_checks(true).build()?;
        let exec = rt.executor();
        let grid = exec.alloc_zeroed::<Handle<Agent>>(p.cells())?;
        let world = World {
            grid: grid.device_array(),
            cells: grid.ptr(),
            width: p.width,
            height: p.height,
            rule: cfg.rule,
        };
        let ids = exec.upload(&p.live)?;
        let ((), setup) = exec
            .time(|| {
                rt.parallel_new_with(Alive::from_pattern, p.live.len() as u64, ids.ptr())?;
                rt.parallel_do_with(Alive::register, world)?;
                rt.parallel_do_with(Alive::update, world)
            })
            .map_err(|e| out_of_heap(e, heap_bytes))?;
        rt.sync().map_err(|e| out_of_heap(e, heap_bytes))?;
        rt.take_timings()?;
        let graph = options.capture(&rt, |rt| Self::queue_step(rt, world))?;
        Ok((DslSim { rt, grid, world, heap_bytes, enumeration: Default::default(), graph }, setup))
    }

    /// Queue one step's launches one by one.
    fn queue_step(rt: &Runtime<GenerationHeap>, world: World) -> dynasoar::host::Result<()> {
        rt.parallel_do_with(Candidate::prepare, world)?;
        rt.parallel_do_with(Alive::prepare, world)?;
        rt.parallel_do_with(Candidate::update, world)?;
        rt.parallel_do_with(Alive::update, world)
    }

    /// The runtime (to count and collect objects).
    pub fn runtime(&self) -> &Runtime<GenerationHeap> {
        &self.rt
    }

    /// Check the grid against the objects:
    /// - each alive cell and candidate object sits in its own grid cell, no grid cell refers to
    ///   anything else, and every live object of either class is in the grid (no leak, nothing
    ///   dangling);
    /// - every dead cell next to an alive one holds a candidate;
    /// - candidates are dead (state 0) or dying (up to the rule's dying states) and have no
    ///   pending action; alive cells are settled or new;
    /// - the allocator's counts match.
    ///
    /// Returns the number of alive cells and candidates.
    pub fn verify(&self) -> anyhow::Result<(u64, u64)> {
        self.sync()?;
        let (w, h) = (self.world.width, self.world.height);
        let grid = self.rt.executor().read_all(&self.grid)?;
        let alive = self.rt.collect::<Alive>()?;
        let candidates = self.rt.collect::<Candidate>()?;
        let (mut grid_alive, mut grid_candidates) = (Vec::new(), Vec::new());
        for (i, &entry) in grid.iter().enumerate() {
            if is_alive_handle(entry) {
                grid_alive.push(i as u32);
            } else if is_candidate_handle(entry) {
                grid_candidates.push(i as u32);
            } else {
                ensure!(
                    entry.is_null(),
                    "grid cell {i} holds {entry:?}, neither an alive cell nor a candidate"
                );
            }
        }
        let mut alive_cells: Vec<u32> = alive.iter().map(|a| a.base.cell).collect();
        alive_cells.sort_unstable();
        let mut candidate_cells: Vec<u32> = candidates.iter().map(|c| c.base.cell).collect();
        candidate_cells.sort_unstable();
        ensure!(
            grid_alive == alive_cells,
            "the grid has {} alive cells, the heap {} Alive objects (or their cells differ)",
            grid_alive.len(),
            alive_cells.len()
        );
        ensure!(
            grid_candidates == candidate_cells,
            "the grid has {} candidates, the heap {} Candidate objects (or their cells differ)",
            grid_candidates.len(),
            candidate_cells.len()
        );
        crate::check_heap(&self.rt)?;
        let live: HashSet<u64> = self.rt.handles::<Agent>()?.iter().map(|h| h.raw().0).collect();
        let in_grid: HashSet<u64> = grid.iter().filter(|e| !e.is_null()).map(|e| e.raw().0).collect();
        ensure!(live == in_grid, "live objects and grid entries differ (leak or dangling handle)");
        for &c in &alive_cells {
            let mut missing = None;
            for_each_neighbor(w, h, c, |_, n| {
                if grid[n as usize].is_null() {
                    missing = Some(n);
                }
            });
            if let Some(n) = missing {
                anyhow::bail!("cell {n} is dead and next to the alive cell {c} but holds no candidate");
            }
        }
        for a in &alive {
            let act = a.base.action;
            ensure!(act == action::NONE || act == action::NEW, "alive cell {} has action {act}", a.base.cell);
        }
        for c in &candidates {
            ensure!(
                c.state as u32 <= self.world.rule.dying_states,
                "candidate {} in dying state {}",
                c.base.cell,
                c.state
            );
            ensure!(c.base.action == action::NONE, "candidate {} has action {}", c.base.cell, c.base.action);
        }
        let counts = (self.rt.count::<Alive>()?, self.rt.count::<Candidate>()?);
        ensure!(
            counts == (alive.len() as u64, candidates.len() as u64),
            "the allocator counts {counts:?} objects, {} and {} exist",
            alive.len(),
            candidates.len()
        );
        Ok(counts)
    }
}

impl Simulation for DslSim {
    fn executor(&self) -> &Executor {
        self.rt.executor()
    }

    fn step(&self) -> dynasoar::host::Result<()> {
        run_step(&self.rt, self.graph.as_ref(), |rt| Self::queue_step(rt, self.world))
    }

    fn sync(&self) -> anyhow::Result<()> {
        self.rt.sync().map_err(|e| out_of_heap(e, self.heap_bytes))
    }

    fn states(&self) -> anyhow::Result<Vec<u16>> {
        self.sync()?;
        self.enumeration.set(self.enumeration.get() + self.rt.take_timings()?.enumeration);
        let mut states = vec![DEAD; self.grid.len()];
        for a in self.rt.collect::<Alive>()? {
            states[a.base.cell as usize] = ALIVE;
        }
        for c in self.rt.collect::<Candidate>()? {
            if c.state > 0 {
                states[c.base.cell as usize] = ALIVE + c.state as u16;
            }
        }
        Ok(states)
    }

    fn take_enumeration(&self) -> anyhow::Result<Duration> {
        Ok(self.enumeration.take() + self.rt.take_timings()?.enumeration)
    }

    fn objects(&self) -> anyhow::Result<Option<(u64, u64)>> {
        Ok(Some((self.rt.count::<Alive>()?, self.rt.count::<Candidate>()?)))
    }
}

fn initial_states(p: &Pattern) -> Vec<u16> {
    let mut v = vec![DEAD; p.cells()];
    for &c in &p.live {
        v[c as usize] = ALIVE;
    }
    v
}

/// The automaton's baseline with two state arrays (structure of arrays), swapped every step.
pub struct SoaSim {
    exec: Executor,
    states: [Buffer<u16>; 2],
    /// Which buffer is current.
    parity: std::cell::Cell<usize>,
    grid: Grid,
    width: u32,
    height: u32,
    rule: Rule,
}

impl SoaSim {
    /// Load the pattern; returns the simulation and the (zero) device time of the setup.
    pub fn new(options: impl Into<RunOptions>, cfg: &Config) -> anyhow::Result<(Self, Duration)> {
        let options: RunOptions = options.into();
        cfg.validate()?;
        let p = &cfg.pattern;
        let exec = options.executor()?;
        let states = [exec.upload(&initial_states(p))?, exec.alloc_zeroed::<u16>(p.cells())?];
        let grid = Grid::for_elements(p.cells(), THREADS);
        let sim = SoaSim {
            exec,
            states,
            parity: Default::default(),
            grid,
            width: p.width,
            height: p.height,
            rule: cfg.rule,
        };
        Ok((sim, Duration::ZERO))
    }
}

impl Simulation for SoaSim {
    fn executor(&self) -> &Executor {
        &self.exec
    }

    fn step(&self) -> dynasoar::host::Result<()> {
        let now = self.parity.get();
        let params = SoaGeneration {
            current: self.states[now].ptr(),
            next: self.states[1 - now].ptr(),
            width: self.width,
            height: self.height,
            rule: self.rule,
        };
        self.exec.launch(&GENERATION_SOA_STEP, self.grid, params)?;
        self.parity.set(1 - now);
        Ok(())
    }

    fn sync(&self) -> anyhow::Result<()> {
        Ok(self.exec.synchronize()?)
    }

    fn states(&self) -> anyhow::Result<Vec<u16>> {
        Ok(self.exec.read_all(&self.states[self.parity.get()])?)
    }
}

/// The automaton's baseline with one array of cells holding both states (array of structures).
pub struct AosSim {
    exec: Executor,
    cells: Buffer<AosCell>,
    parity: std::cell::Cell<u32>,
    grid: Grid,
    width: u32,
    height: u32,
    rule: Rule,
}

impl AosSim {
    /// Load the pattern; returns the simulation and the (zero) device time of the setup.
    pub fn new(options: impl Into<RunOptions>, cfg: &Config) -> anyhow::Result<(Self, Duration)> {
        let options: RunOptions = options.into();
        cfg.validate()?;
        let p = &cfg.pattern;
        let exec = options.executor()?;
        let init: Vec<AosCell> =
            initial_states(p).into_iter().map(|s| AosCell { state: [s, DEAD] }).collect();
        let cells = exec.upload(&init)?;
        drop(init);
        let grid = Grid::for_elements(p.cells(), THREADS);
        let sim = AosSim {
            exec,
            cells,
            parity: Default::default(),
            grid,
            width: p.width,
            height: p.height,
            rule: cfg.rule,
        };
        Ok((sim, Duration::ZERO))
    }
}

impl Simulation for AosSim {
    fn executor(&self) -> &Executor {
        &self.exec
    }

    fn step(&self) -> dynasoar::host::Result<()> {
        let parity = self.parity.get();
        let params = AosGeneration {
            cells: self.cells.ptr(),
            width: self.width,
            height: self.height,
            parity,
            _pad: 0,
            rule: self.rule,
        };
        self.exec.launch(&GENERATION_AOS_STEP, self.grid, params)?;
        self.parity.set(parity ^ 1);
        Ok(())
    }

    fn sync(&self) -> anyhow::Result<()> {
        Ok(self.exec.synchronize()?)
    }

    fn states(&self) -> anyhow::Result<Vec<u16>> {
        let now = (self.parity.get() & 1) as usize;
        Ok(self.exec.read_all(&self.cells)?.into_iter().map(|c| c.state[now]).collect())
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
    let (w, h) = (cfg.pattern.width, cfg.pattern.height);
    let dying_states = cfg.rule.dying_states;
    let render = |step: u32, states: &[u16], recorder: &mut Recorder| {
        recorder.record(step, draw(states, w, h, dying_states, recorder.width()))
    };
    if recorder.wants(0, cfg.steps) {
        render(0, &sim.states()?, recorder)?;
    }
    let mut total = Duration::ZERO;
    let mut enumeration = Duration::ZERO;
    let mut step = 0;
    while step < cfg.steps {
        // Run up to the next rendered step, at most a chunk, without a host round trip.
        let mut until = (step + CHUNK).min(cfg.steps);
        if let Some(s) = (step + 1..=until).find(|&s| recorder.wants(s, cfg.steps)) {
            until = s;
        }
        let ((), t) = sim.executor().time(|| {
            for _ in step..until {
                sim.step()?;
            }
            Ok(())
        })?;
        sim.sync()?;
        total += t;
        enumeration += sim.take_enumeration()?;
        bar.inc((until - step) as u64);
        step = until;
        if recorder.wants(step, cfg.steps) {
            render(step, &sim.states()?, recorder)?;
        }
    }
    bar.finish_and_clear();
    let states = sim.states()?;
    let objects = sim.objects()?;
    Ok(Outcome { width: w, height: h, states, objects, total, enumeration, setup })
}

const BACKGROUND: [u8; 3] = [0, 0, 0];

/// The color of a state: alive white, dying from yellow (just died) to dark red, dead black.
pub fn color(state: u16, dying_states: u32) -> [u8; 3] {
    match state {
        DEAD => BACKGROUND,
        ALIVE => [255, 255, 255],
        dying => {
            let age = (dying - ALIVE) as f32 / dying_states.max(1) as f32;
            let [r, g, b] = heat(0.85 - 0.35 * age);
            let fade = 1.0 - 0.7 * age;
            [(r as f32 * fade) as u8, (g as f32 * fade) as u8, (b as f32 * fade) as u8]
        }
    }
}

/// A picture of the grid at most `max_width` pixels wide: one pixel (or square of pixels) per
/// cell, or, for grids wider than that, the average color of each square of cells.
pub fn draw(states: &[u16], width: u32, height: u32, dying_states: u32, max_width: u32) -> Canvas {
    let max_width = max_width.max(1);
    if width <= max_width {
        // Tall worlds get fewer pixels per cell: the canvas stops at `MAX_SIDE`.
        let scale = (max_width / width).min(crate::render::MAX_SIDE / height.max(1)).max(1);
        let mut canvas = Canvas::new(width * scale, height * scale, BACKGROUND);
        for (i, &s) in states.iter().enumerate() {
            if s == DEAD {
                continue;
            }
            let (x, y) = (i as u32 % width, i as u32 / width);
            for dy in 0..scale {
                for dx in 0..scale {
                    canvas.set((x * scale + dx) as i64, (y * scale + dy) as i64, color(s, dying_states));
                }
            }
        }
        return canvas;
    }
    let f = width.div_ceil(max_width);
    let (cw, ch) = (width.div_ceil(f), height.div_ceil(f));
    let mut sums = vec![[0u32; 4]; cw as usize * ch as usize];
    for (i, &s) in states.iter().enumerate() {
        let (x, y) = (i as u32 % width / f, i as u32 / width / f);
        let sum = &mut sums[(y * cw + x) as usize];
        let rgb = color(s, dying_states);
        for k in 0..3 {
            sum[k] += rgb[k] as u32;
        }
        sum[3] += 1;
    }
    let mut canvas = Canvas::new(cw, ch, BACKGROUND);
    for (i, s) in sums.iter().enumerate() {
        let n = s[3].max(1);
        canvas.set(
            (i as u32 % cw) as i64,
            (i as u32 / cw) as i64,
            [(s[0] / n) as u8, (s[1] / n) as u8, (s[2] / n) as u8],
        );
    }
    canvas
}

crate::impl_compared!(Outcome { "alive" => |o| o.alive(), "dying" => |o| o.dying() });
