//! Host side of n-body: run the DSL version or a baseline, time it, render it, check it.

use std::time::Duration;

use dynasoar::host::{Grid, Runtime};
use dynasoar::math::Vec2;
use dynasoar_models::nbody::{
    AosBodies, AosBody, Body, NBODY_AOS_FORCE, NBODY_AOS_FORCE_FAST, NBODY_AOS_UPDATE, NBODY_SOA_FORCE,
    NBODY_SOA_FORCE_FAST, NBODY_SOA_UPDATE, NbodyHeap, Physics, SOA_LANES, SoaBodies, config, initial_state,
};

use crate::cli::try_collect;
use crate::render::{Canvas, Recorder, heat};
use crate::{Implementation, RunOptions, progress, run_step};

/// What to simulate.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub bodies: u32,
    pub steps: u32,
    pub seed: u64,
    pub physics: Physics,
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
            fast_math: false,
        }
    }
}

/// A body after the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyState {
    pub id: u32,
    pub pos: Vec2,
    pub vel: Vec2,
    pub mass: f32,
}

/// Result of one run.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Final bodies, sorted by id.
    pub bodies: Vec<BodyState>,
    /// Device time of initialisation and all steps.
    pub total: Duration,
    /// Of which enumeration before do-all launches (DSL only).
    pub enumeration: Duration,
}

impl Outcome {
    /// The original benchmark's checksum: sum of `pos.x + 2 pos.y + 3 vel.x + 4 vel.y`.
    pub fn checksum(&self) -> f64 {
        crate::compare::body_checksum(self.bodies.iter().map(|b| (b.pos, b.vel)))
    }

    /// The size of [`Outcome::checksum`]: the sum of its terms' absolute values.
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
/// [`crate::compare::FLOAT_ORDER_TOLERANCE`] (the implementations sum forces in another order).
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

/// Run `implementation` of `cfg` on the backend of `options`.
pub fn run(
    implementation: Implementation,
    options: impl Into<RunOptions>,
    cfg: &Config,
    recorder: &mut Recorder,
    show_progress: bool,
) -> anyhow::Result<Outcome> {
    let options: RunOptions = options.into();
    if implementation != Implementation::Dynasoar {
        // The baselines' host and device arrays (the DSL version's heap checks itself).
        let bytes = cfg.bodies as u64 * 96;
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

fn draw(bodies: &[BodyState], width: u32) -> Canvas {
    let mut canvas = Canvas::new(width, width, [8, 8, 24]);
    let scale = width as f32 / 2.0;
    for b in bodies {
        let (x, y) = ((b.pos.x + 1.0) * scale, (b.pos.y + 1.0) * scale);
        let t = b.mass / config::MAX_MASS;
        canvas.disc(x, y, 0.5 + 1.5 * t, heat(t));
    }
    canvas
}

fn run_dynasoar(
    options: RunOptions,
    cfg: &Config,
    recorder: &mut Recorder,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<Outcome> {
    // 32-byte bodies, 64 per block: room for every body twice over, plus metadata.
    let heap_bytes = cfg.bodies as u64 * 32 * 2 + (8 << 20);
    let rt = options.runtime::<NbodyHeap>(heap_bytes).deferred_checks(true).build()?;
    let exec = rt.executor();
    let state = |rt: &Runtime<NbodyHeap>| -> anyhow::Result<Vec<BodyState>> {
        let mut v: Vec<BodyState> = rt
            .collect::<Body>()?
            .into_iter()
            .map(|b| BodyState { id: b.id, pos: b.pos, vel: b.vel, mass: b.mass })
            .collect();
        v.sort_by_key(|b| b.id);
        Ok(v)
    };
    let mut total = Duration::ZERO;
    let mut enumeration = Duration::ZERO;
    let ((), t) = exec.time(|| rt.parallel_new_with(Body::random, cfg.bodies as u64, cfg.seed))?;
    total += t;
    let queue_step = |rt: &Runtime<NbodyHeap>| -> dynasoar::host::Result<()> {
        if cfg.fast_math {
            rt.parallel_do_with(Body::compute_force_fast, cfg.physics)?;
        } else {
            rt.parallel_do_with(Body::compute_force, cfg.physics)?;
        }
        rt.parallel_do_with(Body::update, cfg.physics)
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
    enumeration += rt.take_timings()?.enumeration;
    Ok(Outcome { bodies: state(&rt)?, total, enumeration })
}

fn initial_bodies(cfg: &Config) -> anyhow::Result<Vec<(Vec2, Vec2, f32)>> {
    try_collect(cfg.bodies as u64, "bodies", "--bodies", |i| initial_state(cfg.seed, i))
}

/// One field of each body, in a vector of its own (for the SOA baseline's arrays).
fn field<T>(init: &[(Vec2, Vec2, f32)], f: impl Fn(&(Vec2, Vec2, f32)) -> T) -> anyhow::Result<Vec<T>> {
    try_collect(init.len() as u64, "bodies", "--bodies", |i| f(&init[i as usize]))
}

fn run_soa(
    options: RunOptions,
    cfg: &Config,
    recorder: &mut Recorder,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<Outcome> {
    let exec = options.executor()?;
    let init = initial_bodies(cfg)?;
    let pos = exec.upload(&field(&init, |b| b.0)?)?;
    let vel = exec.upload(&field(&init, |b| b.1)?)?;
    let mass = exec.upload(&field(&init, |b| b.2)?)?;
    drop(init);
    let force = exec.alloc_zeroed::<Vec2>(cfg.bodies as usize)?;
    let params = SoaBodies {
        pos: pos.ptr(),
        vel: vel.ptr(),
        force: force.ptr(),
        mass: mass.ptr(),
        count: cfg.bodies,
        _pad: 0,
        physics: cfg.physics,
    };
    let grid = Grid::for_elements(cfg.bodies as usize, 128);
    // The force kernel runs `SOA_LANES` threads per body (blocks of 128, a multiple of them).
    let force_grid = Grid::for_elements(cfg.bodies as usize * SOA_LANES as usize, 128);
    let state = || -> anyhow::Result<Vec<BodyState>> {
        let (p, v, m) = (exec.read_all(&pos)?, exec.read_all(&vel)?, exec.read_all(&mass)?);
        Ok((0..cfg.bodies as usize)
            .map(|i| BodyState { id: i as u32, pos: p[i], vel: v[i], mass: m[i] })
            .collect())
    };
    let force_kernel = if cfg.fast_math { &NBODY_SOA_FORCE_FAST } else { &NBODY_SOA_FORCE };
    let mut total = Duration::ZERO;
    for step in 1..=cfg.steps {
        let ((), t) = exec.time(|| {
            exec.launch(force_kernel, force_grid, params)?;
            exec.launch(&NBODY_SOA_UPDATE, grid, params)
        })?;
        total += t;
        if recorder.wants(step, cfg.steps) {
            recorder.record(step, draw(&state()?, recorder.width()))?;
        }
        bar.inc(1);
    }
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
        AosBody { pos, vel, force: Vec2::ZERO, mass, _pad: 0.0 }
    })?;
    let bodies = exec.upload(&init)?;
    let params = AosBodies { bodies: bodies.ptr(), count: cfg.bodies, _pad: 0, physics: cfg.physics };
    let grid = Grid::for_elements(cfg.bodies as usize, 128);
    let state = || -> anyhow::Result<Vec<BodyState>> {
        Ok(exec
            .read_all(&bodies)?
            .into_iter()
            .enumerate()
            .map(|(i, b)| BodyState { id: i as u32, pos: b.pos, vel: b.vel, mass: b.mass })
            .collect())
    };
    let force_kernel = if cfg.fast_math { &NBODY_AOS_FORCE_FAST } else { &NBODY_AOS_FORCE };
    let mut total = Duration::ZERO;
    for step in 1..=cfg.steps {
        let ((), t) = exec.time(|| {
            exec.launch(force_kernel, grid, params)?;
            exec.launch(&NBODY_AOS_UPDATE, grid, params)
        })?;
        total += t;
        if recorder.wants(step, cfg.steps) {
            recorder.record(step, draw(&state()?, recorder.width()))?;
        }
        bar.inc(1);
    }
    Ok(Outcome { bodies: state()?, total, enumeration: Duration::ZERO })
}
