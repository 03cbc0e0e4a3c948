//! The DynaSOAr paper's application figures (`003_...` section 7):
//!
//! - Figure 10: every app on DynaSOAr, on every general-purpose allocator and as the
//!   hand-written SOA baseline; time of the run and, separately, of enumeration;
//! - Figure 11: the largest problem size each allocator runs within a fixed heap;
//! - Figure 12: Wa-Tor's time per step over the run, per allocator.
//!
//! Every measurement runs in a child process (`dynasoar-bench measure`, hidden) under a time
//! limit: a hung allocator is killed and reported as a timeout, and a device fault (which
//! leaves a CUDA context unusable) cannot spoil the measurements after it.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use dynasoar::baselines::host::StoreChoice;
use dynasoar::host::ExecutorOptions;
use dynasoar_examples::compare::{Compared, checksum_difference, fingerprint_difference};
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_examples::{
    Implementation, RunOptions, barnes_hut, collision, game_of_life, generation, nbody, structure,
    sugarscape, traffic, wator,
};
use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

use crate::plot::{self, Figure};
use crate::record::{self, Record, Status};

/// The apps of `dynasoar-examples` (paper Table 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum App {
    Nbody,
    Collision,
    #[value(name = "wa-tor")]
    #[serde(rename = "wa-tor")]
    Wator,
    GameOfLife,
    Sugarscape,
    Structure,
    Traffic,
    Generation,
    BarnesHut,
}

impl App {
    pub const ALL: [App; 9] = [
        App::Nbody,
        App::Collision,
        App::Wator,
        App::GameOfLife,
        App::Sugarscape,
        App::Structure,
        App::Traffic,
        App::Generation,
        App::BarnesHut,
    ];

    pub fn name(self) -> &'static str {
        match self {
            App::Nbody => "nbody",
            App::Collision => "collision",
            App::Wator => "wa-tor",
            App::GameOfLife => "game-of-life",
            App::Sugarscape => "sugarscape",
            App::Structure => "structure",
            App::Traffic => "traffic",
            App::Generation => "generation",
            App::BarnesHut => "barnes-hut",
        }
    }

    /// (size, steps) of Figure 10 at each scale. `Quick` matches the CPU sizes of the stores
    /// test (seconds each); `Gpu` is a fraction of the paper's runs, so that every app on
    /// every allocator fits a few minutes; `Full` is the paper's benchmark size.
    pub fn default_run(self, scale: Scale) -> (u32, u32) {
        match (self, scale) {
            (App::Nbody, Scale::Quick) => (300, 5),
            (App::Nbody, Scale::Gpu) => (20_000, 50),
            (App::Nbody, Scale::Full) => (20_000, 3_000),
            (App::Collision, Scale::Quick) => (400, 10),
            (App::Collision, Scale::Gpu) => (40_000, 50),
            (App::Collision, Scale::Full) => (40_000, 2_000),
            (App::Wator, Scale::Quick) => (40, 20),
            (App::Wator, Scale::Gpu) => (1024, 100),
            (App::Wator, Scale::Full) => (2048, 500),
            (App::GameOfLife, Scale::Quick) => (48, 20),
            (App::GameOfLife, Scale::Gpu) => (2048, 100),
            (App::GameOfLife, Scale::Full) => (12_000, 300),
            (App::Sugarscape, Scale::Quick) => (48, 30),
            (App::Sugarscape, Scale::Gpu) => (800, 100),
            (App::Sugarscape, Scale::Full) => (1700, 10_000),
            (App::Structure, Scale::Quick) => (1500, 5),
            (App::Structure, Scale::Gpu) => (200_000, 50),
            (App::Structure, Scale::Full) => (1_500_000, 500),
            (App::Traffic, Scale::Quick) => (30, 60),
            (App::Traffic, Scale::Gpu) => (2_000, 200),
            (App::Traffic, Scale::Full) => (17_500, 12_000),
            (App::Generation, Scale::Quick) => (60, 12),
            (App::Generation, Scale::Gpu) => (1000, 200),
            (App::Generation, Scale::Full) => (5000, 25_000),
            (App::BarnesHut, Scale::Quick) => (1000, 5),
            (App::BarnesHut, Scale::Gpu) => (50_000, 20),
            (App::BarnesHut, Scale::Full) => (300_000, 4_000),
        }
    }
}

/// How big the runs are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// CI size on the CPU.
    Quick,
    /// A few minutes for the whole suite on one GPU.
    Gpu,
    /// The paper's sizes.
    Full,
}

/// One run of one app, as the child process is asked for it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Job {
    pub app: App,
    /// `None`: the hand-written SOA baseline.
    pub store: Option<String>,
    pub size: u32,
    pub steps: u32,
    /// Heap of the DSL version (`None`: the app's default for the size).
    pub heap_bytes: Option<u64>,
    /// Figure 12: time every step on its own, reported as the mean of chunks of this many steps.
    pub chunk: Option<u32>,
    /// Tests only (`apps --test-wrong-result STORE`): report a result that is certainly not the
    /// one computed, so that the harness's check can be seen to catch it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub perturb: bool,
}

/// What the child process reports.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Measured {
    pub ok: bool,
    /// The run failed because the heap or an allocator ran out of memory.
    pub oom: bool,
    pub note: Option<String>,
    pub total_ms: Option<f64>,
    pub enum_ms: Option<f64>,
    /// Figure 12: mean step time of each chunk.
    pub chunk_ms: Vec<f64>,
    /// Figure 12: DynaSOAr's fragmentation after each chunk (empty for other stores).
    #[serde(default)]
    pub chunk_fragmentation: Vec<f64>,
    /// What the run computed (absent when it failed).
    #[serde(default)]
    pub fingerprint: Option<Fingerprint>,
}

/// What a run computed, as the app's `--compare` compares it (`dynasoar_examples::compare`):
/// runs of one app, size and steps must agree with the SOA baseline's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fingerprint {
    /// Deterministic apps: the hash of the final state (`Outcome::fingerprint`), compared
    /// exactly; the app's population counts are shown, not compared (the hash covers them).
    Exact { hash: u64, counts: Vec<(String, u64)> },
    /// The float apps (n-body, collision, Barnes-Hut): the bodies left, compared exactly, and
    /// checksums `(name, value, scale)`, which may differ by
    /// [`FLOAT_ORDER_TOLERANCE`](dynasoar_examples::compare::FLOAT_ORDER_TOLERANCE) of the
    /// checked run's scale (float summation order), as in the apps' `--compare`.
    Float { bodies: u64, sums: Vec<(String, f64, f64)> },
}

impl Fingerprint {
    /// Of a deterministic app's outcome.
    fn exact<O: Compared>(outcome: &O, hash: u64) -> Self {
        let counts = outcome.columns().into_iter().map(|(name, n)| (name.to_string(), n)).collect();
        Fingerprint::Exact { hash, counts }
    }

    /// `None` if `self` (a run's) agrees with `reference` (the SOA baseline's); else what
    /// differs, with both values.
    pub fn differs_from(&self, reference: &Fingerprint) -> Option<String> {
        match (self, reference) {
            (Fingerprint::Exact { hash, .. }, Fingerprint::Exact { hash: expected, .. }) => {
                fingerprint_difference(*hash, *expected)
            }
            (
                Fingerprint::Float { bodies, sums },
                Fingerprint::Float { bodies: expected, sums: reference },
            ) => {
                if bodies != expected {
                    return Some(format!("{bodies} vs {expected} bodies"));
                }
                if sums.len() != reference.len() {
                    return Some(format!("{} vs {} checksums", sums.len(), reference.len()));
                }
                sums.iter().zip(reference).find_map(|((name, mine, scale), (_, theirs, _))| {
                    checksum_difference(name, *mine, *theirs, *scale)
                })
            }
            _ => Some(format!("{self} vs {reference}: results of different kinds")),
        }
    }

    /// A result that differs from this one (tests of the check: `Job::perturb`).
    fn perturbed(mut self) -> Self {
        match &mut self {
            Fingerprint::Exact { hash, .. } => *hash ^= 1,
            Fingerprint::Float { sums, .. } => {
                if let Some((_, value, scale)) = sums.first_mut() {
                    *value += 1.0 + scale.abs();
                }
            }
        }
        self
    }
}

impl std::fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fingerprint::Exact { hash, counts } => {
                write!(f, "fingerprint {hash:016x}")?;
                let counts: Vec<String> = counts.iter().map(|(name, n)| format!("{name} {n}")).collect();
                if !counts.is_empty() {
                    write!(f, " ({})", counts.join(", "))?;
                }
                Ok(())
            }
            Fingerprint::Float { bodies, sums } => {
                write!(f, "bodies {bodies}")?;
                for (name, value, _) in sums {
                    write!(f, ", {name} {value:.6}")?;
                }
                Ok(())
            }
        }
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Run `job` in this process (the child's side): its total and enumeration time.
pub fn run_job(job: &Job, exec: ExecutorOptions) -> Measured {
    let result = match job.chunk {
        Some(chunk) => wator_steps(job, exec, chunk).map(|(chunk_ms, chunk_fragmentation, fingerprint)| {
            Measured { chunk_ms, chunk_fragmentation, fingerprint: Some(fingerprint), ..Default::default() }
        }),
        None => run_app(job, exec).map(|(total, enumeration, fingerprint)| Measured {
            total_ms: Some(ms(total)),
            enum_ms: Some(ms(enumeration)),
            fingerprint: Some(fingerprint),
            ..Default::default()
        }),
    };
    match result {
        Ok(mut m) => {
            if job.perturb {
                m.fingerprint = m.fingerprint.map(Fingerprint::perturbed);
            }
            Measured { ok: true, ..m }
        }
        Err(e) => Measured { oom: is_oom(&e), note: Some(format!("{e:#}")), ..Default::default() },
    }
}

/// Whether `e` says a heap or an allocator ran out of memory (rather than anything else).
fn is_oom(e: &anyhow::Error) -> bool {
    use dynasoar::host::Error;
    e.chain()
        .any(|c| matches!(c.downcast_ref::<Error>(), Some(Error::OutOfMemory { .. } | Error::Malloc { .. })))
}

fn options(job: &Job, exec: ExecutorOptions) -> anyhow::Result<(Implementation, RunOptions)> {
    Ok(match job.store.as_deref() {
        None => (Implementation::Soa, RunOptions { exec, store: StoreChoice::Dynasoar, fixed_pool: false }),
        Some(name) => {
            let store: StoreChoice = name.parse().map_err(anyhow::Error::msg)?;
            // A given heap (Figure 11) is the same for every allocator.
            (Implementation::Dynasoar, RunOptions { exec, store, fixed_pool: job.heap_bytes.is_some() })
        }
    })
}

/// One whole run of the app's driver: (total, enumeration, what it computed).
fn run_app(job: &Job, exec: ExecutorOptions) -> anyhow::Result<(Duration, Duration, Fingerprint)> {
    let (implementation, opts) = options(job, exec)?;
    let mut rec = Recorder::new(&RenderArgs::default())?;
    let (size, steps, heap_bytes) = (job.size, job.steps, job.heap_bytes);
    let rec = &mut rec;
    // The float apps' checksums: (name, value, scale), as their `Compared::differs_from`.
    let sum = |name: &str, value: f64, scale: f64| (name.to_string(), value, scale);
    Ok(match job.app {
        App::Nbody => {
            let cfg = nbody::Config { bodies: size, steps, ..Default::default() };
            let o = nbody::run(implementation, opts, &cfg, rec, false)?;
            let sums = vec![sum("checksum", o.checksum(), o.checksum_scale())];
            (o.total, o.enumeration, Fingerprint::Float { bodies: o.bodies.len() as u64, sums })
        }
        App::Collision => {
            let cfg = collision::Config { bodies: size, steps, heap_bytes, ..Default::default() };
            let o = collision::run(implementation, opts, &cfg, rec, false)?;
            let sums = vec![
                sum("checksum", o.checksum(), o.checksum_scale()),
                sum("total mass", o.total_mass(), o.total_mass()),
            ];
            (o.total, o.enumeration, Fingerprint::Float { bodies: o.bodies.len() as u64, sums })
        }
        App::Wator => {
            let o = wator::run(implementation, opts, &wator_config(job), rec, false)?;
            (o.total, o.enumeration, Fingerprint::exact(&o, o.fingerprint()))
        }
        App::GameOfLife => {
            let pattern = game_of_life::Pattern::random(size, size, game_of_life::DEFAULT_DENSITY, 1)?;
            let cfg = game_of_life::Config { steps, heap_bytes, ..game_of_life::Config::new(pattern) };
            let o = game_of_life::run(implementation, opts, &cfg, rec, false)?;
            (o.total, o.enumeration, Fingerprint::exact(&o, o.fingerprint()))
        }
        App::Sugarscape => {
            let cfg =
                sugarscape::Config { width: size, height: size, steps, heap_bytes, ..Default::default() };
            let o = sugarscape::run(implementation, opts, &cfg, rec, false)?;
            (o.total, o.enumeration, Fingerprint::exact(&o, o.fingerprint()))
        }
        App::Structure => {
            let cfg = structure::Config { steps, heap_bytes, ..structure::Config::with_nodes(size) };
            let o = structure::run(implementation, opts, &cfg, rec, false)?;
            (o.total, o.enumeration, Fingerprint::exact(&o, o.fingerprint()))
        }
        App::Traffic => {
            let cfg = traffic::Config { intersections: size, steps, heap_bytes, ..Default::default() };
            let o = traffic::run(implementation, opts, &cfg, rec, false)?;
            (o.total, o.enumeration, Fingerprint::exact(&o, o.fingerprint()))
        }
        App::Generation => {
            // The benchmark's bursts, with arms short enough for small grids.
            let arm = (size / 4).clamp(6, 100);
            let pattern = generation::burst_pattern(size, size, arm, 4 * arm)?;
            let cfg = generation::Config { steps, heap_bytes, ..generation::Config::new(pattern) };
            let o = generation::run(implementation, opts, &cfg, rec, false)?;
            (o.total, o.enumeration, Fingerprint::exact(&o, o.fingerprint()))
        }
        App::BarnesHut => {
            let cfg = barnes_hut::Config { bodies: size, steps, heap_bytes, ..Default::default() };
            let o = barnes_hut::run(implementation, opts, &cfg, rec, false)?;
            let scale = o.checksum_scale();
            let sums = vec![sum("checksum", o.checksum(), scale)];
            (o.total, o.enumeration, Fingerprint::Float { bodies: o.bodies.len() as u64, sums })
        }
    })
}

fn wator_config(job: &Job) -> wator::Config {
    let width = job.size;
    let height = width.saturating_mul(5) / 4;
    wator::Config { width, height, steps: job.steps, heap_bytes: job.heap_bytes, ..Default::default() }
}

/// Figure 12: Wa-Tor stepped from here, every step timed on its own (the driver's `run` only
/// reports the whole run); the mean step time of each chunk of `chunk` steps, and in
/// DynaSOAr's heap the fragmentation after each chunk (measured between steps, untimed; the
/// statistics launch makes the next step list its classes anew); and the final ocean's
/// fingerprint, read after the last step.
fn wator_steps(
    job: &Job,
    exec: ExecutorOptions,
    chunk: u32,
) -> anyhow::Result<(Vec<f64>, Vec<f64>, Fingerprint)> {
    anyhow::ensure!(job.app == App::Wator, "per-step times are measured for wa-tor only");
    let (implementation, opts) = options(job, exec)?;
    let (sim, _setup) = wator::simulation(implementation, opts, &wator_config(job))?;
    let (mut chunks, mut fragmentation) = (Vec::new(), Vec::new());
    let mut sum = Duration::ZERO;
    for step in 1..=job.steps {
        let ((), t) = sim.executor().time(|| sim.step())?;
        sim.sync()?;
        sum += t;
        if step % chunk.max(1) == 0 || step == job.steps {
            let n = (step - 1) % chunk.max(1) + 1;
            chunks.push(ms(sum) / f64::from(n));
            sum = Duration::ZERO;
            fragmentation.extend(sim.fragmentation()?);
        }
    }
    let cells = sim.cells()?;
    let census = wator::Population::of(job.steps, &cells);
    let counts = vec![("fish".to_string(), census.fish), ("sharks".to_string(), census.sharks)];
    Ok((chunks, fragmentation, Fingerprint::Exact { hash: wator::fingerprint(&cells), counts }))
}

/// Runs jobs in child processes of this binary.
pub struct Runner {
    /// Arguments that select the backend in the child (`--backend ...`).
    pub backend_args: Vec<String>,
    pub backend: &'static str,
    pub timeout: Duration,
}

/// What became of a job run by [`Runner::run`].
pub enum Outcome {
    Done(Measured),
    /// Killed after the time limit.
    Timeout,
    /// The child died without a report (a crash); the note says how.
    Crashed(String),
}

impl Runner {
    pub fn run(&self, job: &Job) -> anyhow::Result<Outcome> {
        let exe = std::env::current_exe().context("cannot find this program to run a measurement in")?;
        let mut child = Command::new(exe)
            .arg("measure")
            .arg("--job")
            .arg(serde_json::to_string(job)?)
            .args(&self.backend_args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot start a measurement process")?;
        // Read both pipes on threads, so a chatty child cannot block on a full pipe.
        let reader = |pipe: Option<Box<dyn std::io::Read + Send>>| {
            std::thread::spawn(move || {
                let mut text = String::new();
                if let Some(mut p) = pipe {
                    let _ = p.read_to_string(&mut text);
                }
                text
            })
        };
        let out = reader(child.stdout.take().map(|p| Box::new(p) as _));
        let err = reader(child.stderr.take().map(|p| Box::new(p) as _));
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break Some(status);
            }
            if start.elapsed() > self.timeout {
                // Ours to end: the child we started, by its handle.
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let stdout = out.join().unwrap_or_default();
        let stderr = err.join().unwrap_or_default();
        let Some(status) = status else { return Ok(Outcome::Timeout) };
        match stdout.lines().rev().find_map(|l| serde_json::from_str::<Measured>(l).ok()) {
            Some(m) => Ok(Outcome::Done(m)),
            None => {
                let tail: String = stderr.lines().rev().take(3).collect::<Vec<_>>().join(" | ");
                Ok(Outcome::Crashed(format!("measurement process exited with {status}: {tail}")))
            }
        }
    }

    /// Run `job` and turn what became of it into a record of `test`, its result checked against
    /// the SOA baseline's for the same app, size and steps (see [`check`]; the baseline runs
    /// first where `references` has no result for them yet); emitted at once.
    pub fn record(&self, test: &'static str, job: &Job, references: &References) -> Record {
        let (mut r, fingerprint) = self.measure(test, job);
        if let Some(fingerprint) = fingerprint {
            let key = (job.app, job.size, job.steps);
            if job.is_reference() {
                references.known.borrow_mut().entry(key).or_insert_with(|| Ok(fingerprint.clone()));
                r.result = Some(fingerprint.to_string());
            } else {
                check(&mut r, &fingerprint, &self.reference(job, references));
            }
        } else if job.is_reference() {
            // Later runs of this app, size and steps cannot be checked: say why once for all.
            let why = unfinished_baseline(&r);
            references.known.borrow_mut().entry((job.app, job.size, job.steps)).or_insert(Err(why));
        }
        record::emit(&r);
        r
    }

    /// The SOA baseline's result for `job`'s app, size and steps: known, or measured now (in a
    /// child process, on the same backend, with the app's default heap; not a record).
    fn reference(&self, job: &Job, references: &References) -> Reference {
        let key = (job.app, job.size, job.steps);
        if let Some(known) = references.known.borrow().get(&key) {
            return known.clone();
        }
        let baseline = Job { store: None, heap_bytes: None, chunk: None, perturb: false, ..job.clone() };
        let (r, fingerprint) = self.measure("reference", &baseline);
        let reference = fingerprint.ok_or_else(|| unfinished_baseline(&r));
        references.known.borrow_mut().insert(key, reference.clone());
        reference
    }

    /// Run `job`: its record (not emitted) and, where it finished, what it computed.
    fn measure(&self, test: &'static str, job: &Job) -> (Record, Option<Fingerprint>) {
        let mut r = Record::new(test, job.store.as_deref().unwrap_or("soa"), self.backend);
        r.app = Some(job.app.name());
        r.size = job.size;
        r.size_min = job.size;
        r.steps = Some(job.steps);
        r.runs = 1;
        let mut fingerprint = None;
        match self.run(job) {
            Ok(Outcome::Done(m)) => {
                r.status = if m.ok {
                    Status::Ok
                } else if m.oom {
                    Status::Oom
                } else {
                    Status::Error
                };
                r.total_ms = m.total_ms;
                r.enum_ms = m.enum_ms;
                r.note = m.note;
                r.chunk_ms = m.chunk_ms;
                r.chunk_fragmentation = m.chunk_fragmentation;
                if m.ok {
                    fingerprint = m.fingerprint;
                    if fingerprint.is_none() {
                        r.status = Status::Error;
                        r.note = Some("the measurement process reported no result".into());
                    }
                }
            }
            Ok(Outcome::Timeout) => {
                r.status = Status::Timeout;
                r.note = Some(format!("killed after {} s (raise --timeout-s)", self.timeout.as_secs()));
            }
            Ok(Outcome::Crashed(note)) => {
                r.status = Status::Error;
                r.note = Some(note);
            }
            Err(e) => {
                r.status = Status::Error;
                r.note = Some(format!("{e:#}"));
            }
        }
        (r, fingerprint)
    }
}

/// Why there is no reference: the SOA baseline's run `r` did not finish.
fn unfinished_baseline(r: &Record) -> String {
    let note = r.note.as_deref().map(|n| format!(": {n}")).unwrap_or_default();
    format!("the SOA baseline's run ended with status {}{note}", r.status.name())
}

impl Job {
    /// Whether this run is the SOA baseline that other runs of its app, size and steps are
    /// checked against.
    fn is_reference(&self) -> bool {
        self.store.is_none() && self.heap_bytes.is_none() && self.chunk.is_none() && !self.perturb
    }
}

/// The SOA baseline's results, one per (app, size, steps) (or why there is none): what
/// [`Runner::record`] checks every other run against.
#[derive(Default)]
pub struct References {
    known: RefCell<HashMap<(App, u32, u32), Reference>>,
}

/// The SOA baseline's result, or why there is none.
type Reference = Result<Fingerprint, String>;

/// Check the finished run `r`, which computed `got`, against its `reference` (the SOA
/// baseline's result, or why there is none): `result` and `expected` are filled in, and a run
/// that computed something else gets [`Status::Wrong`] and a note with the difference. Without
/// a reference the run stays as it is, noted as unchecked.
pub fn check(r: &mut Record, got: &Fingerprint, reference: &Reference) {
    r.result = Some(got.to_string());
    match reference {
        Ok(expected) => {
            r.expected = Some(expected.to_string());
            if let Some(difference) = got.differs_from(expected) {
                r.status = Status::Wrong;
                r.note = Some(format!("wrong result (the SOA baseline's is expected): {difference}"));
            }
        }
        Err(why) => r.note = Some(format!("unchecked: {why}")),
    }
}

/// What the `apps` subcommand runs.
pub struct Plan {
    pub figures: Vec<u32>,
    pub apps: Vec<App>,
    /// `None`: the SOA baseline.
    pub stores: Vec<Option<&'static str>>,
    pub scale: Scale,
    /// Overrides of the steps of Figure 10 and 12.
    pub steps: Option<u32>,
    pub heap_bytes: u64,
    pub fig11_apps: Vec<App>,
    pub fig11_probes: u32,
    pub chunk: u32,
    /// Tests only: runs of this store report a perturbed result ([`Job::perturb`]).
    pub perturb_store: Option<String>,
}

impl Plan {
    fn perturb(&self, store: Option<&str>) -> bool {
        self.perturb_store.as_deref() == Some(store.unwrap_or("soa"))
    }
}

/// Run the figures of `plan`; CSV, JSON and SVG per figure under `out`.
pub fn run(runner: &Runner, plan: &Plan, out: &Path, bar: &ProgressBar) -> anyhow::Result<Vec<Record>> {
    let mut all = Vec::new();
    // Figure 11's runs are not known in advance (the search stops when it converges): it adds
    // to the length as it goes.
    let fig10 = if plan.figures.contains(&10) { plan.apps.len() * plan.stores.len() } else { 0 };
    let fig12 = if plan.figures.contains(&12) { plan.stores.iter().flatten().count() } else { 0 };
    bar.set_length((fig10 + fig12) as u64);

    // Every run's result is checked against the SOA baseline's (`Runner::record`).
    let references = References::default();
    if plan.figures.contains(&10) {
        bar.set_message("fig10");
        let mut records = Vec::new();
        // The baseline first: its result is the reference of the others.
        let mut stores = plan.stores.clone();
        stores.sort_by_key(Option::is_some);
        for &app in &plan.apps {
            let (size, steps) = app.default_run(plan.scale);
            for &store in &stores {
                let job = Job {
                    app,
                    store: store.map(String::from),
                    size,
                    steps: plan.steps.unwrap_or(steps),
                    heap_bytes: None,
                    chunk: None,
                    perturb: plan.perturb(store),
                };
                records.push(runner.record("fig10", &job, &references));
                bar.inc(1);
            }
        }
        finish(out, "fig10", &records, fig10_figures(&records))?;
        all.extend(records);
    }
    if plan.figures.contains(&11) {
        bar.set_message("fig11");
        let mut records = Vec::new();
        for &app in &plan.fig11_apps {
            for store in plan.stores.iter().flatten() {
                records.extend(largest_size(runner, &references, plan, app, store, bar));
            }
        }
        finish(out, "fig11", &records, fig11_figures(&records))?;
        all.extend(records);
    }
    if plan.figures.contains(&12) {
        bar.set_message("fig12");
        let (size, steps) = App::Wator.default_run(plan.scale);
        let mut records = Vec::new();
        for store in plan.stores.iter().flatten() {
            let job = Job {
                app: App::Wator,
                store: Some(store.to_string()),
                size,
                steps: plan.steps.unwrap_or(steps),
                heap_bytes: None,
                chunk: Some(plan.chunk),
                perturb: plan.perturb(Some(store)),
            };
            records.push(runner.record("fig12", &job, &references));
            bar.inc(1);
        }
        let at = |r: &Record, i: usize| ((i as u32 + 1) * plan.chunk).min(r.steps.unwrap_or(0)) as f64;
        let series = |values: fn(&Record) -> &Vec<f64>| {
            records
                .iter()
                .filter(|r| !values(r).is_empty())
                .map(|r| {
                    let points = values(r).iter().enumerate().map(|(i, &v)| (at(r, i), v)).collect();
                    (legend(r), points)
                })
                .collect()
        };
        let title =
            |what: &str| format!("Wa-Tor {what} (every {} steps), {size} x {}", plan.chunk, size * 5 / 4);
        let figures = vec![
            Figure {
                name: "fig12-wator-steps".into(),
                title: title("time per step"),
                x_label: "step",
                y_label: "ms per step",
                log_x: false,
                log_y: true,
                series: series(|r| &r.chunk_ms),
            },
            Figure {
                name: "fig12-wator-fragmentation".into(),
                title: title("fragmentation of DynaSOAr's heap"),
                x_label: "step",
                y_label: "unused slots of allocated blocks",
                log_x: false,
                log_y: false,
                series: series(|r| &r.chunk_fragmentation),
            },
        ];
        finish(out, "fig12", &records, figures)?;
        all.extend(records);
    }
    Ok(all)
}

fn finish(out: &Path, test: &str, records: &[Record], figures: Vec<Figure>) -> anyhow::Result<()> {
    record::write_files(out, test, records)?;
    for figure in figures {
        plot::draw(out, &figure).with_context(|| format!("plot {}", figure.name))?;
    }
    Ok(())
}

/// Figure 10: per app, run time over allocators (x: the allocator's index in the legend
/// order, as line plots need numbers), one line each for the run and enumeration; runs that
/// computed a wrong result are their own line ("wrong result"), marked in the title too.
fn fig10_figures(records: &[Record]) -> Vec<Figure> {
    let mut apps: Vec<&'static str> = records.iter().filter_map(|r| r.app).collect();
    apps.dedup();
    apps.iter()
        .map(|&app| {
            let of_app: Vec<&Record> = records
                .iter()
                .filter(|r| r.app == Some(app) && matches!(r.status, Status::Ok | Status::Wrong))
                .collect();
            let line = |status: Status, f: fn(&Record) -> Option<f64>| {
                of_app
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.status == status)
                    .filter_map(|(i, r)| f(r).map(|v| (i as f64, v)))
                    .collect()
            };
            let names: Vec<String> = of_app.iter().map(|r| legend(r)).collect();
            let mut series = vec![
                ("run".into(), line(Status::Ok, |r| r.total_ms)),
                ("enumeration".into(), line(Status::Ok, |r| r.enum_ms)),
            ];
            if of_app.iter().any(|r| r.status == Status::Wrong) {
                series.push(("wrong result (run)".into(), line(Status::Wrong, |r| r.total_ms)));
            }
            Figure {
                name: format!("fig10-{app}"),
                title: format!("{app}: run time per allocator (x = {})", names.join(", ")),
                x_label: "allocator (index)",
                y_label: "ms",
                log_x: false,
                log_y: true,
                series,
            }
        })
        .collect()
}

/// A record's name in plots: its allocator, marked where its result was wrong.
fn legend(r: &Record) -> String {
    match r.status {
        Status::Wrong => format!("{} (WRONG RESULT)", r.allocator),
        _ => r.allocator.clone(),
    }
}

/// The fastest general-purpose allocator (neither the SOA baseline nor DynaSOAr) of Figure 10
/// for `app`, among the runs whose result was checked and right (status `ok`): a wrong run is
/// never the fastest, however fast.
pub fn fastest_general<'a>(records: &'a [Record], app: &str) -> Option<&'a Record> {
    records
        .iter()
        .filter(|r| r.test == "fig10" && r.app == Some(app) && r.status == Status::Ok)
        .filter(|r| r.allocator != "soa" && r.allocator != "dynasoar")
        .filter(|r| r.total_ms.is_some())
        .min_by(|a, b| a.total_ms.unwrap_or(f64::INFINITY).total_cmp(&b.total_ms.unwrap_or(f64::INFINITY)))
}

/// The runs that computed a wrong result (not Figure 11's summaries that a wrong run stopped).
pub fn wrong(records: &[Record]) -> Vec<&Record> {
    records.iter().filter(|r| r.status == Status::Wrong && r.result.is_some()).collect()
}

/// The summary after the table: per app of Figure 10, the SOA baseline, DynaSOAr, the fastest
/// general-purpose allocator whose result was right ([`fastest_general`]) and the allocators
/// whose result was wrong; then every wrong run with what it computed and what was expected.
pub fn summary(records: &[Record]) -> String {
    let mut out = String::new();
    let mut apps: Vec<&'static str> =
        records.iter().filter(|r| r.test == "fig10").filter_map(|r| r.app).collect();
    apps.dedup();
    if !apps.is_empty() {
        let _ = writeln!(
            out,
            "Figure 10, run time in ms (results checked against the SOA baseline's)\n\
             {:<14} {:>12} {:>12}  {:<40} wrong result",
            "app", "soa", "dynasoar", "fastest general allocator (vs dynasoar)"
        );
    }
    for app in apps {
        let time = |allocator: &str| {
            records
                .iter()
                .find(|r| r.test == "fig10" && r.app == Some(app) && r.allocator == allocator)
                .map(|r| match (r.status, r.total_ms) {
                    (Status::Ok, Some(t)) => format!("{t:.2}"),
                    (status, _) => status.name().to_string(),
                })
                .unwrap_or_else(|| "-".into())
        };
        let dynasoar = records
            .iter()
            .find(|r| {
                r.test == "fig10" && r.app == Some(app) && r.allocator == "dynasoar" && r.status == Status::Ok
            })
            .and_then(|r| r.total_ms);
        let fastest = match fastest_general(records, app) {
            Some(r) => {
                let t = r.total_ms.unwrap_or(f64::NAN);
                match dynasoar {
                    Some(d) if d > 0.0 => format!("{} {t:.2} ({:.2}x)", r.allocator, t / d),
                    _ => format!("{} {t:.2}", r.allocator),
                }
            }
            None => "-".into(),
        };
        let wrong: Vec<&str> = records
            .iter()
            .filter(|r| r.test == "fig10" && r.app == Some(app) && r.status == Status::Wrong)
            .map(|r| r.allocator.as_str())
            .collect();
        let wrong = if wrong.is_empty() { "-".to_string() } else { wrong.join(", ") };
        let _ =
            writeln!(out, "{app:<14} {:>12} {:>12}  {fastest:<40} {wrong}", time("soa"), time("dynasoar"));
    }
    let wrong = wrong(records);
    if !wrong.is_empty() {
        let _ = writeln!(out, "\n{} run(s) computed a wrong result:", wrong.len());
        for r in wrong {
            let _ = writeln!(
                out,
                "WRONG {} {} on {} (size {}, {} steps): got {}, expected {}",
                r.test,
                r.app.unwrap_or("?"),
                r.allocator,
                r.size,
                r.steps.unwrap_or(0),
                r.result.as_deref().unwrap_or("?"),
                r.expected.as_deref().unwrap_or("?"),
            );
        }
    }
    out
}

/// Figure 11: largest size per allocator, one line per app.
fn fig11_figures(records: &[Record]) -> Vec<Figure> {
    let best: Vec<&Record> =
        records.iter().filter(|r| r.test == "fig11" && r.note.as_deref() == Some(LARGEST)).collect();
    let mut apps: Vec<&'static str> = best.iter().filter_map(|r| r.app).collect();
    apps.dedup();
    apps.iter()
        .map(|&app| {
            let rows: Vec<&&Record> = best.iter().filter(|r| r.app == Some(app)).collect();
            let names: Vec<&str> = rows.iter().map(|r| r.allocator.as_str()).collect();
            Figure {
                name: format!("fig11-{app}"),
                title: format!("{app}: largest size per allocator (x = {})", names.join(", ")),
                x_label: "allocator (index)",
                y_label: "largest size",
                log_x: false,
                log_y: true,
                series: vec![(
                    app.to_string(),
                    rows.iter().enumerate().map(|(i, r)| (i as f64, f64::from(r.size))).collect(),
                )],
            }
        })
        .collect()
}

/// The note of Figure 11's summary record of an allocator.
const LARGEST: &str = "largest size that ran";

/// Figure 11 for one allocator: double the size from Figure 10's size until a run runs out of
/// memory, then bisect between the last size that ran and the first that did not, within
/// `fig11_probes` runs in all. Every probe is a record; a last record (note [`LARGEST`]) holds
/// the largest size that ran (status `error` when none did, or when a run failed other than
/// by running out of memory, which stops the search: a larger size would not tell more).
fn largest_size(
    runner: &Runner,
    references: &References,
    plan: &Plan,
    app: App,
    store: &'static str,
    bar: &ProgressBar,
) -> Vec<Record> {
    let (start, _) = app.default_run(plan.scale);
    let steps = plan.steps.unwrap_or(match plan.scale {
        Scale::Quick => 5,
        _ => 20,
    });
    let mut records = Vec::new();
    let (mut good, mut bad): (Option<u32>, Option<u32>) = (None, None);
    let mut size = start;
    let mut stop_note = None;
    let mut stop_status = Status::Error;
    for _ in 0..plan.fig11_probes {
        bar.inc_length(1);
        let job = Job {
            app,
            store: Some(store.into()),
            size,
            steps,
            heap_bytes: Some(plan.heap_bytes),
            chunk: None,
            perturb: plan.perturb(Some(store)),
        };
        let mut r = runner.record("fig11", &job, references);
        // Every store gets the same heap here (`RunOptions::fixed_pool`): an earlier H200 run
        // gave general-purpose allocators twice DynaSOAr's, and they ran larger oceans.
        r.heap_bytes = Some(plan.heap_bytes);
        bar.inc(1);
        let status = r.status;
        records.push(r);
        match status {
            Status::Ok => good = Some(size),
            Status::Oom => bad = Some(size),
            _ => {
                // A wrong result is no size that ran: the summary says so (never a largest size).
                stop_note =
                    Some(format!("stopped at size {size}: the run failed with status {}", status.name()));
                if status == Status::Wrong {
                    stop_status = Status::Wrong;
                }
                break;
            }
        }
        size = match (good, bad) {
            (Some(g), None) => match g.checked_mul(2) {
                Some(next) => next,
                None => break,
            },
            (None, Some(b)) => b / 2,
            (Some(g), Some(b)) => g + (b - g) / 2,
            (None, None) => break,
        };
        // Converged (within 2%), or nothing smaller left to try.
        if size == 0 || good.is_some_and(|g| bad.is_some_and(|b| b - g <= (g / 50).max(1))) {
            break;
        }
    }
    let mut summary = Record::new("fig11", store, runner.backend);
    summary.app = Some(app.name());
    summary.steps = Some(steps);
    summary.heap_bytes = Some(plan.heap_bytes);
    match (good, stop_note) {
        (Some(g), None) => {
            summary.size = g;
            summary.size_min = g;
            summary.note = Some(LARGEST.into());
        }
        (g, note) => {
            summary.size = g.unwrap_or(0);
            summary.size_min = summary.size;
            summary.status = if note.is_some() { stop_status } else { Status::Oom };
            summary.note = Some(note.unwrap_or_else(|| format!("no size from {start} down ran in the heap")));
        }
    }
    record::emit(&summary);
    records.push(summary);
    records
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(hash: u64) -> Fingerprint {
        Fingerprint::Exact { hash, counts: vec![("fish".into(), 3), ("sharks".into(), 1)] }
    }

    fn float(bodies: u64, checksum: f64) -> Fingerprint {
        Fingerprint::Float { bodies, sums: vec![("checksum".into(), checksum, 3e4)] }
    }

    /// A checked Figure 10 run of `app` on `allocator` that took `ms` and computed `got`.
    fn run(app: &'static str, allocator: &str, ms: f64, got: &Fingerprint, expected: &Fingerprint) -> Record {
        let mut r = Record::new("fig10", allocator, "cpu");
        r.app = Some(app);
        r.total_ms = Some(ms);
        if allocator == "soa" {
            r.result = Some(got.to_string());
        } else {
            check(&mut r, got, &Ok(expected.clone()));
        }
        r
    }

    #[test]
    fn exact_results_must_be_equal_and_float_ones_within_the_tolerance() {
        assert_eq!(exact(7).differs_from(&exact(7)), None);
        let d = exact(8).differs_from(&exact(7)).expect("a different hash is wrong");
        assert!(d.contains("0000000000000008 vs 0000000000000007"), "{d}");
        // The GPU's n-body checksums of two implementations (compare.rs): within the tolerance.
        assert_eq!(float(300, 254.749131).differs_from(&float(300, 254.749370)), None);
        let d = float(300, 254.9).differs_from(&float(300, 254.749370)).expect("too far");
        assert!(d.contains("254.900000 vs 254.749370"), "{d}");
        let d = float(299, 254.749370).differs_from(&float(300, 254.749370)).expect("a body lost");
        assert!(d.contains("299 vs 300 bodies"), "{d}");
        assert!(exact(1).differs_from(&float(1, 1.0)).is_some());
        // The tests' perturbation is always caught.
        assert!(exact(7).perturbed().differs_from(&exact(7)).is_some());
        assert!(float(300, 254.7).perturbed().differs_from(&float(300, 254.7)).is_some());
    }

    #[test]
    fn the_child_reports_its_result_to_the_parent_unchanged() {
        let measured = Measured {
            ok: true,
            fingerprint: Some(Fingerprint::Float {
                bodies: 3,
                sums: vec![("checksum".into(), 0.1 + 0.2, 1.0 / 3.0), ("total mass".into(), 2.5, 2.5)],
            }),
            ..Default::default()
        };
        let line = serde_json::to_string(&measured).unwrap();
        let back: Measured = serde_json::from_str(&line).unwrap();
        assert_eq!(back.fingerprint, measured.fingerprint, "{line}");
        let measured = Measured { ok: true, fingerprint: Some(exact(u64::MAX)), ..Default::default() };
        let back: Measured = serde_json::from_str(&serde_json::to_string(&measured).unwrap()).unwrap();
        assert_eq!(back.fingerprint, Some(exact(u64::MAX)));
    }

    #[test]
    fn a_wrong_result_is_reported_as_wrong_and_never_the_fastest() {
        let right = exact(42);
        let records = vec![
            run("barnes-hut", "soa", 14.7, &right, &right),
            run("barnes-hut", "dynasoar", 15.6, &right, &right),
            // Overwrites live objects (AWMalloc): the fastest, but its result is wrong.
            run("barnes-hut", "aw", 1.0, &right.clone().perturbed(), &right),
            run("barnes-hut", "cuda", 184.0, &right, &right),
            run("barnes-hut", "atomic", 20.0, &right, &right),
        ];
        let aw = &records[2];
        assert_eq!(aw.status, Status::Wrong);
        assert_eq!(aw.status.name(), "wrong");
        assert_eq!(aw.expected.as_deref(), Some("fingerprint 000000000000002a (fish 3, sharks 1)"));
        assert_eq!(aw.result.as_deref(), Some("fingerprint 000000000000002b (fish 3, sharks 1)"));
        assert!(aw.note.as_deref().is_some_and(|n| n.contains("wrong result")), "{:?}", aw.note);
        assert!(aw.json_line().contains(r#""status":"wrong""#), "{}", aw.json_line());
        assert!(aw.csv_row().contains(",wrong,"), "{}", aw.csv_row());
        assert!(records.iter().filter(|r| r.allocator != "aw").all(|r| r.status == Status::Ok));

        let fastest = fastest_general(&records, "barnes-hut").expect("a right general allocator");
        assert_eq!(fastest.allocator, "atomic");
        assert_eq!(wrong(&records).len(), 1);
        // Figure 11's summary of a search that a wrong run stopped is no run of its own.
        let mut stopped = Record::new("fig11", "aw", "cpu");
        stopped.status = Status::Wrong;
        assert_eq!(wrong(&[stopped]).len(), 0);
        let summary = summary(&records);
        let row = summary.lines().find(|l| l.starts_with("barnes-hut")).expect("a row per app");
        assert!(row.contains("atomic 20.00 (1.28x)") && row.ends_with(" aw"), "{summary}");
        assert!(summary.contains("WRONG fig10 barnes-hut on aw"), "{summary}");
        assert!(record::table(&records).lines().any(|l| l.contains(" aw ") && l.contains(" wrong ")));

        // In the plot, the wrong run is a line of its own, not the "run" line.
        let figures = fig10_figures(&records);
        let run_line = &figures[0].series.iter().find(|(name, _)| name == "run").unwrap().1;
        assert_eq!(run_line.len(), 4);
        assert!(run_line.iter().all(|&(_, ms)| ms > 1.0));
        let wrong_line = &figures[0].series.iter().find(|(name, _)| name.starts_with("wrong")).unwrap().1;
        assert_eq!(wrong_line, &vec![(2.0, 1.0)]);
        assert!(figures[0].title.contains("aw (WRONG RESULT)"), "{}", figures[0].title);
    }

    #[test]
    fn without_a_reference_a_run_is_noted_unchecked() {
        let mut r = Record::new("fig10", "atomic", "cpu");
        check(&mut r, &exact(1), &Err("the SOA baseline's run ended with status timeout".into()));
        assert_eq!(r.status, Status::Ok);
        assert_eq!(r.expected, None);
        assert!(
            r.note.as_deref().is_some_and(|n| n.starts_with("unchecked: the SOA baseline")),
            "{:?}",
            r.note
        );
    }

    #[test]
    fn only_the_plain_soa_run_is_a_reference() {
        let job = Job {
            app: App::Wator,
            store: None,
            size: 40,
            steps: 20,
            heap_bytes: None,
            chunk: None,
            perturb: false,
        };
        assert!(job.is_reference());
        assert!(!Job { store: Some("aw".into()), ..job.clone() }.is_reference());
        assert!(!Job { perturb: true, ..job.clone() }.is_reference());
        assert!(!Job { heap_bytes: Some(1 << 20), ..job.clone() }.is_reference());
        // A job without the test-only field (an older parent) still parses.
        let plain: Job = serde_json::from_str(
            r#"{"app":"wa-tor","store":null,"size":40,"steps":20,"heap_bytes":null,"chunk":null}"#,
        )
        .unwrap();
        assert!(!plain.perturb);
    }
}
