//! Host side of collision: run the DSL version or a baseline, time it, render it, check it.

use std::time::Duration;

use dynasoar::host::{Grid, Runtime};
use dynasoar::math::Vec2;
use dynasoar_models::collision::{
    AosBodies, AosBody, COLLISION_AOS_DELETE_MERGED, COLLISION_AOS_FORCE, COLLISION_AOS_FORCE_FAST,
    COLLISION_AOS_INITIALIZE_MERGE, COLLISION_AOS_PERFORM_MERGE, COLLISION_AOS_PREPARE_MERGE,
    COLLISION_AOS_UPDATE, COLLISION_SOA_DELETE_MERGED, COLLISION_SOA_FORCE, COLLISION_SOA_FORCE_FAST,
    COLLISION_SOA_INITIALIZE_MERGE, COLLISION_SOA_PERFORM_MERGE, COLLISION_SOA_PREPARE_MERGE,
    COLLISION_SOA_UPDATE, CollisionHeap, NO_BID, NO_TARGET, Particle, Physics, SOA_LANES, SoaBodies, config,
    initial_state,
};

use crate::cli::try_collect;
use crate::render::{Canvas, Recorder, heat};
use crate::{Implementation, RunOptions, progress, run_step};

/// Threads per block of the baselines' kernels.
const BASELINE_THREADS: u32 = 128;

/// What to simulate.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Bodies at the start.
    pub bodies: u32,
    pub steps: u32,
    pub seed: u64,
    pub physics: Physics,
    /// Bytes of the DSL version's heap (`None`: enough for the bodies).
    pub heap_bytes: Option<u64>,
    /// Approximate square roots and divisions in the forces on the GPU (`dynasoar::math::fast`)
    /// in every implementation; the CPU backend computes them exactly either way.
    pub fast_math: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            bodies: config::BODIES,
            steps: config::STEPS,
            seed: config::SEED,
            physics: Physics::default(),
            heap_bytes: None,
            fast_math: false,
        }
    }
}

impl Config {
    /// Reject settings that cannot be simulated.
    pub fn validate(&self) -> anyhow::Result<()> {
        let p = &self.physics;
        anyhow::ensure!(self.bodies > 0, "the number of bodies must be at least 1");
        anyhow::ensure!(
            p.dt.is_finite() && p.dt >= 0.0,
            "the time step must be finite and >= 0 (got {})",
            p.dt
        );
        anyhow::ensure!(
            p.merge_threshold.is_finite() && p.merge_threshold >= 0.0,
            "the merge threshold must be finite and >= 0 (got {})",
            p.merge_threshold
        );
        anyhow::ensure!(p.gravity.is_finite(), "gravity must be finite");
        anyhow::ensure!(
            p.dampening.is_finite() && p.dampening >= 0.0,
            "the dampening must be finite and >= 0 (got {})",
            p.dampening
        );
        anyhow::ensure!(self.heap_bytes != Some(0), "the heap size must be positive");
        Ok(())
    }

    /// Heap bytes of the DSL version: as given, or room for every body twice over plus metadata.
    pub fn dsl_heap_bytes(&self) -> u64 {
        self.heap_bytes.unwrap_or(self.bodies as u64 * size_of::<Particle>() as u64 * 2 + (8 << 20))
    }

    /// Initial bodies: position, velocity, mass.
    pub fn initial_bodies(&self) -> Vec<(Vec2, Vec2, f32)> {
        (0..self.bodies as u64).map(|i| initial_state(self.seed, i)).collect()
    }

    /// [`Config::initial_bodies`], or an error naming `--bodies` when the host has not the memory.
    pub fn try_initial_bodies(&self) -> anyhow::Result<Vec<(Vec2, Vec2, f32)>> {
        try_collect(self.bodies as u64, "bodies", "--bodies", |i| initial_state(self.seed, i))
    }

    /// Total mass at the start (summed in f64).
    pub fn initial_mass(&self) -> f64 {
        self.initial_bodies().iter().map(|b| b.2 as f64).sum()
    }
}

/// A body after the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyState {
    /// Index of the body at the start (the DSL's `id`, the baselines' array index).
    pub id: u32,
    pub pos: Vec2,
    pub vel: Vec2,
    pub mass: f32,
    /// How many initial bodies merged into this one (itself included).
    pub members: u32,
}

/// Result of one run.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Remaining bodies, sorted by id.
    pub bodies: Vec<BodyState>,
    /// Device time of initialisation and all steps.
    pub total: Duration,
    /// Of which enumeration before do-all launches (DSL only).
    pub enumeration: Duration,
}

impl Outcome {
    /// Sum of `pos.x + 2 pos.y + 3 vel.x + 4 vel.y` over the remaining bodies (as n-body's).
    pub fn checksum(&self) -> f64 {
        crate::compare::body_checksum(self.bodies.iter().map(|b| (b.pos, b.vel)))
    }

    /// The size of [`Outcome::checksum`]: the sum of its terms' absolute values.
    pub fn checksum_scale(&self) -> f64 {
        crate::compare::body_checksum_scale(self.bodies.iter().map(|b| (b.pos, b.vel)))
    }

    /// Total mass of the remaining bodies (summed in f64).
    pub fn total_mass(&self) -> f64 {
        self.bodies.iter().map(|b| b.mass as f64).sum()
    }

    /// Initial bodies accounted for by the remaining ones (the initial count if no body was lost
    /// or merged twice).
    pub fn total_members(&self) -> u64 {
        self.bodies.iter().map(|b| b.members as u64).sum()
    }

    /// Total momentum (mass times velocity).
    pub fn momentum(&self) -> (f64, f64) {
        self.bodies.iter().fold((0.0, 0.0), |(x, y), b| {
            (x + b.mass as f64 * b.vel.x as f64, y + b.mass as f64 * b.vel.y as f64)
        })
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
    cfg.validate()?;
    if implementation != Implementation::Dynasoar {
        // The baselines' host and device arrays (the DSL version's heap checks itself).
        let bytes = cfg.bodies as u64 * 128;
        crate::cli::ensure_host_memory(bytes, cfg.bodies as u64, "bodies", "--bodies")?;
    }
    let bar = progress::steps(cfg.steps as u64, options.label(implementation), show_progress);
    let outcome = match implementation {
        Implementation::Dynasoar => run_dynasoar(options, cfg, recorder, &bar),
        Implementation::Soa => run_soa(options, cfg, recorder, &bar),
        Implementation::Aos => run_aos(options, cfg, recorder, &bar),
    }?;
    bar.finish_and_clear();
    Ok(outcome)
}

/// A frame: bodies as discs whose area grows with their mass, coloured by how many initial
/// masses they hold.
fn draw(bodies: &[BodyState], width: u32) -> Canvas {
    let mut canvas = Canvas::new(width, width, [8, 8, 24]);
    let scale = width as f32 / 2.0;
    // A body of the average initial mass is a disc of about 1.2 pixels at 512 pixels.
    let unit = width as f32 / 512.0;
    let mean_mass = 0.75 * config::MAX_MASS;
    let mut sorted: Vec<&BodyState> = bodies.iter().collect();
    // Heavy bodies last, so they stay visible on top.
    sorted.sort_by(|a, b| a.mass.total_cmp(&b.mass));
    for b in sorted {
        let (x, y) = ((b.pos.x + 1.0) * scale, (b.pos.y + 1.0) * scale);
        let relative = (b.mass / mean_mass).max(0.0);
        let t = (relative.log2() / 5.0).clamp(0.0, 1.0);
        canvas.disc(x, y, (1.2 * unit * relative.sqrt()).max(0.5), heat(0.1 + 0.9 * t));
    }
    canvas
}

fn run_dynasoar(
    options: RunOptions,
    cfg: &Config,
    recorder: &mut Recorder,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<Outcome> {
    let rt = options.runtime::<CollisionHeap>(cfg.dsl_heap_bytes()).deferred_checks(true).build()?;
    let exec = rt.executor();
    let state = |rt: &Runtime<CollisionHeap>| -> anyhow::Result<Vec<BodyState>> {
        let mut v: Vec<BodyState> = rt
            .collect::<Particle>()?
            .into_iter()
            .map(|b| BodyState { id: b.id, pos: b.pos, vel: b.vel, mass: b.mass, members: b.members })
            .collect();
        v.sort_by_key(|b| b.id);
        Ok(v)
    };
    let p = cfg.physics;
    let mut total = Duration::ZERO;
    let ((), t) = exec.time(|| rt.parallel_new_with(Particle::random, cfg.bodies as u64, cfg.seed))?;
    total += t;
    // A heap too small for the bodies is reported here, naming the constructor.
    rt.sync()?;
    let queue_step = |rt: &Runtime<CollisionHeap>| -> dynasoar::host::Result<()> {
        if cfg.fast_math {
            rt.parallel_do_with(Particle::compute_force_fast, p)?;
        } else {
            rt.parallel_do_with(Particle::compute_force, p)?;
        }
        rt.parallel_do_with(Particle::update, p)?;
        rt.parallel_do(Particle::initialize_merge)?;
        rt.parallel_do_with(Particle::prepare_merge, p)?;
        rt.parallel_do(Particle::perform_merge)?;
        rt.parallel_do(Particle::delete_merged)
    };
    let graph = options.capture(&rt, queue_step)?;
    for step in 1..=cfg.steps {
        let ((), t) = exec.time(|| run_step(&rt, graph.as_ref(), queue_step))?;
        total += t;
        if recorder.wants(step, cfg.steps) {
            rt.sync()?;
            recorder.record(step, draw(&state(&rt)?, recorder.width()))?;
        }
        bar.inc(1);
    }
    rt.sync()?;
    let enumeration = rt.take_timings()?.enumeration;
    Ok(Outcome { bodies: state(&rt)?, total, enumeration })
}

fn run_soa(
    options: RunOptions,
    cfg: &Config,
    recorder: &mut Recorder,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<Outcome> {
    let exec = options.executor()?;
    let n = cfg.bodies as usize;
    let init = cfg.try_initial_bodies()?;
    let filled = |v| try_collect(n as u64, "bodies", "--bodies", move |_| v);
    let field = |f: fn(&(Vec2, Vec2, f32)) -> Vec2| {
        try_collect(n as u64, "bodies", "--bodies", |i| f(&init[i as usize]))
    };
    let pos = exec.upload(&field(|b| b.0)?)?;
    let vel = exec.upload(&field(|b| b.1)?)?;
    let mass = exec.upload(&try_collect(n as u64, "bodies", "--bodies", |i| init[i as usize].2)?)?;
    drop(init);
    let force = exec.alloc_zeroed::<Vec2>(n)?;
    let members = exec.upload(&filled(1u32)?)?;
    let merge_target = exec.upload(&filled(NO_TARGET)?)?;
    let incoming = exec.upload(&filled(NO_BID)?)?;
    let merged = exec.alloc_zeroed::<u8>(n)?;
    let active = exec.upload(&try_collect(n as u64, "bodies", "--bodies", |_| 1u8)?)?;
    let params = SoaBodies {
        pos: pos.ptr(),
        vel: vel.ptr(),
        force: force.ptr(),
        mass: mass.ptr(),
        members: members.ptr(),
        merge_target: merge_target.ptr(),
        incoming: incoming.ptr(),
        merged: merged.ptr(),
        active: active.ptr(),
        count: cfg.bodies,
        _pad: 0,
        physics: cfg.physics,
    };
    let grid = Grid::for_elements(n, BASELINE_THREADS);
    // The loops over all bodies run `SOA_LANES` threads per body (blocks of 128, a multiple).
    let lanes_grid = Grid::for_elements(n * SOA_LANES as usize, BASELINE_THREADS);
    let state = || -> anyhow::Result<Vec<BodyState>> {
        let (p, v, m) = (exec.read_all(&pos)?, exec.read_all(&vel)?, exec.read_all(&mass)?);
        let (k, a) = (exec.read_all(&members)?, exec.read_all(&active)?);
        Ok((0..n)
            .filter(|&i| a[i] != 0)
            .map(|i| BodyState { id: i as u32, pos: p[i], vel: v[i], mass: m[i], members: k[i] })
            .collect())
    };
    let force_kernel = if cfg.fast_math { &COLLISION_SOA_FORCE_FAST } else { &COLLISION_SOA_FORCE };
    let mut total = Duration::ZERO;
    for step in 1..=cfg.steps {
        let ((), t) = exec.time(|| {
            exec.launch(force_kernel, lanes_grid, params)?;
            exec.launch(&COLLISION_SOA_UPDATE, grid, params)?;
            exec.launch(&COLLISION_SOA_INITIALIZE_MERGE, grid, params)?;
            exec.launch(&COLLISION_SOA_PREPARE_MERGE, lanes_grid, params)?;
            exec.launch(&COLLISION_SOA_PERFORM_MERGE, grid, params)?;
            exec.launch(&COLLISION_SOA_DELETE_MERGED, grid, params)
        })?;
        total += t;
        if recorder.wants(step, cfg.steps) {
            recorder.record(step, draw(&state()?, recorder.width()))?;
        }
        bar.inc(1);
    }
    exec.synchronize()?;
    Ok(Outcome { bodies: state()?, total, enumeration: Duration::ZERO })
}

fn run_aos(
    options: RunOptions,
    cfg: &Config,
    recorder: &mut Recorder,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<Outcome> {
    let exec = options.executor()?;
    let init: Vec<AosBody> = try_collect(cfg.bodies as u64, "bodies", "--bodies", |i| {
        let (pos, vel, mass) = initial_state(cfg.seed, i);
        AosBody {
            pos,
            vel,
            mass,
            members: 1,
            merge_target: NO_TARGET,
            incoming: NO_BID,
            active: 1,
            ..AosBody::default()
        }
    })?;
    let bodies = exec.upload(&init)?;
    let params = AosBodies { bodies: bodies.ptr(), count: cfg.bodies, _pad: 0, physics: cfg.physics };
    let grid = Grid::for_elements(cfg.bodies as usize, BASELINE_THREADS);
    let state = || -> anyhow::Result<Vec<BodyState>> {
        Ok(exec
            .read_all(&bodies)?
            .into_iter()
            .enumerate()
            .filter(|(_, b)| b.active != 0)
            .map(|(i, b)| BodyState {
                id: i as u32,
                pos: b.pos,
                vel: b.vel,
                mass: b.mass,
                members: b.members,
            })
            .collect())
    };
    let force_kernel = if cfg.fast_math { &COLLISION_AOS_FORCE_FAST } else { &COLLISION_AOS_FORCE };
    let mut total = Duration::ZERO;
    for step in 1..=cfg.steps {
        let ((), t) = exec.time(|| {
            exec.launch(force_kernel, grid, params)?;
            exec.launch(&COLLISION_AOS_UPDATE, grid, params)?;
            exec.launch(&COLLISION_AOS_INITIALIZE_MERGE, grid, params)?;
            exec.launch(&COLLISION_AOS_PREPARE_MERGE, grid, params)?;
            exec.launch(&COLLISION_AOS_PERFORM_MERGE, grid, params)?;
            exec.launch(&COLLISION_AOS_DELETE_MERGED, grid, params)
        })?;
        total += t;
        if recorder.wants(step, cfg.steps) {
            recorder.record(step, draw(&state()?, recorder.width()))?;
        }
        bar.inc(1);
    }
    exec.synchronize()?;
    Ok(Outcome { bodies: state()?, total, enumeration: Duration::ZERO })
}

/// Runs agree when as many bodies remain, and their checksums and total masses are within
/// [`crate::compare::FLOAT_ORDER_TOLERANCE`] (the implementations sum forces and merged masses in
/// another order).
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
        vec![("bodies", self.bodies.len() as u64)]
    }
    fn differs_from(&self, reference: &Self) -> Option<String> {
        use crate::compare::checksum_difference;
        if self.bodies.len() != reference.bodies.len() {
            return Some(format!("{} vs {} bodies remain", self.bodies.len(), reference.bodies.len()));
        }
        checksum_difference("checksum", self.checksum(), reference.checksum(), self.checksum_scale()).or_else(
            || {
                checksum_difference(
                    "total mass",
                    self.total_mass(),
                    reference.total_mass(),
                    self.total_mass(),
                )
            },
        )
    }
}
