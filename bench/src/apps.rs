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

use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use dynasoar::baselines::host::StoreChoice;
use dynasoar::host::ExecutorOptions;
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
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
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Run `job` in this process (the child's side): its total and enumeration time.
pub fn run_job(job: &Job, exec: ExecutorOptions) -> Measured {
    let result = match job.chunk {
        Some(chunk) => wator_steps(job, exec, chunk).map(|(chunk_ms, chunk_fragmentation)| Measured {
            chunk_ms,
            chunk_fragmentation,
            ..Default::default()
        }),
        None => run_app(job, exec).map(|(total, enumeration)| Measured {
            total_ms: Some(ms(total)),
            enum_ms: Some(ms(enumeration)),
            ..Default::default()
        }),
    };
    match result {
        Ok(m) => Measured { ok: true, ..m },
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

/// One whole run of the app's driver: (total, enumeration).
fn run_app(job: &Job, exec: ExecutorOptions) -> anyhow::Result<(Duration, Duration)> {
    let (implementation, opts) = options(job, exec)?;
    let mut rec = Recorder::new(&RenderArgs::default())?;
    let (size, steps, heap_bytes) = (job.size, job.steps, job.heap_bytes);
    let rec = &mut rec;
    Ok(match job.app {
        App::Nbody => {
            let cfg = nbody::Config { bodies: size, steps, ..Default::default() };
            let o = nbody::run(implementation, opts, &cfg, rec, false)?;
            (o.total, o.enumeration)
        }
        App::Collision => {
            let cfg = collision::Config { bodies: size, steps, heap_bytes, ..Default::default() };
            let o = collision::run(implementation, opts, &cfg, rec, false)?;
            (o.total, o.enumeration)
        }
        App::Wator => {
            let o = wator::run(implementation, opts, &wator_config(job), rec, false)?;
            (o.total, o.enumeration)
        }
        App::GameOfLife => {
            let pattern = game_of_life::Pattern::random(size, size, game_of_life::DEFAULT_DENSITY, 1)?;
            let cfg = game_of_life::Config { steps, heap_bytes, ..game_of_life::Config::new(pattern) };
            let o = game_of_life::run(implementation, opts, &cfg, rec, false)?;
            (o.total, o.enumeration)
        }
        App::Sugarscape => {
            let cfg =
                sugarscape::Config { width: size, height: size, steps, heap_bytes, ..Default::default() };
            let o = sugarscape::run(implementation, opts, &cfg, rec, false)?;
            (o.total, o.enumeration)
        }
        App::Structure => {
            let cfg = structure::Config { steps, heap_bytes, ..structure::Config::with_nodes(size) };
            let o = structure::run(implementation, opts, &cfg, rec, false)?;
            (o.total, o.enumeration)
        }
        App::Traffic => {
            let cfg = traffic::Config { intersections: size, steps, heap_bytes, ..Default::default() };
            let o = traffic::run(implementation, opts, &cfg, rec, false)?;
            (o.total, o.enumeration)
        }
        App::Generation => {
            // The benchmark's bursts, with arms short enough for small grids.
            let arm = (size / 4).clamp(6, 100);
            let pattern = generation::burst_pattern(size, size, arm, 4 * arm)?;
            let cfg = generation::Config { steps, heap_bytes, ..generation::Config::new(pattern) };
            let o = generation::run(implementation, opts, &cfg, rec, false)?;
            (o.total, o.enumeration)
        }
        App::BarnesHut => {
            let cfg = barnes_hut::Config { bodies: size, steps, heap_bytes, ..Default::default() };
            let o = barnes_hut::run(implementation, opts, &cfg, rec, false)?;
            (o.total, o.enumeration)
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
/// statistics launch makes the next step list its classes anew).
fn wator_steps(job: &Job, exec: ExecutorOptions, chunk: u32) -> anyhow::Result<(Vec<f64>, Vec<f64>)> {
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
    Ok((chunks, fragmentation))
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

    /// Run `job` and turn what became of it into a record of `test` (emitted at once).
    pub fn record(&self, test: &'static str, job: &Job) -> Record {
        let mut r = Record::new(test, job.store.as_deref().unwrap_or("soa"), self.backend);
        r.app = Some(job.app.name());
        r.size = job.size;
        r.size_min = job.size;
        r.steps = Some(job.steps);
        r.runs = 1;
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
        record::emit(&r);
        r
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
}

/// Run the figures of `plan`; CSV, JSON and SVG per figure under `out`.
pub fn run(runner: &Runner, plan: &Plan, out: &Path, bar: &ProgressBar) -> anyhow::Result<Vec<Record>> {
    let mut all = Vec::new();
    // Figure 11's runs are not known in advance (the search stops when it converges): it adds
    // to the length as it goes.
    let fig10 = if plan.figures.contains(&10) { plan.apps.len() * plan.stores.len() } else { 0 };
    let fig12 = if plan.figures.contains(&12) { plan.stores.iter().flatten().count() } else { 0 };
    bar.set_length((fig10 + fig12) as u64);

    if plan.figures.contains(&10) {
        bar.set_message("fig10");
        let mut records = Vec::new();
        for &app in &plan.apps {
            let (size, steps) = app.default_run(plan.scale);
            for &store in &plan.stores {
                let store = store.map(String::from);
                let job = Job {
                    app,
                    store,
                    size,
                    steps: plan.steps.unwrap_or(steps),
                    heap_bytes: None,
                    chunk: None,
                };
                records.push(runner.record("fig10", &job));
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
                records.extend(largest_size(runner, plan, app, store, bar));
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
            };
            records.push(runner.record("fig12", &job));
            bar.inc(1);
        }
        let at = |r: &Record, i: usize| ((i as u32 + 1) * plan.chunk).min(r.steps.unwrap_or(0)) as f64;
        let series = |values: fn(&Record) -> &Vec<f64>| {
            records
                .iter()
                .filter(|r| !values(r).is_empty())
                .map(|r| {
                    (r.allocator.clone(), values(r).iter().enumerate().map(|(i, &v)| (at(r, i), v)).collect())
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
/// order, as line plots need numbers), one line each for the run and enumeration.
fn fig10_figures(records: &[Record]) -> Vec<Figure> {
    let mut apps: Vec<&'static str> = records.iter().filter_map(|r| r.app).collect();
    apps.dedup();
    apps.iter()
        .map(|&app| {
            let of_app: Vec<&Record> =
                records.iter().filter(|r| r.app == Some(app) && r.status == Status::Ok).collect();
            let line = |f: fn(&Record) -> Option<f64>| {
                of_app.iter().enumerate().filter_map(|(i, r)| f(r).map(|v| (i as f64, v))).collect()
            };
            let names: Vec<&str> = of_app.iter().map(|r| r.allocator.as_str()).collect();
            Figure {
                name: format!("fig10-{app}"),
                title: format!("{app}: run time per allocator (x = {})", names.join(", ")),
                x_label: "allocator (index)",
                y_label: "ms",
                log_x: false,
                log_y: true,
                series: vec![
                    ("run".into(), line(|r| r.total_ms)),
                    ("enumeration".into(), line(|r| r.enum_ms)),
                ],
            }
        })
        .collect()
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
    for _ in 0..plan.fig11_probes {
        bar.inc_length(1);
        let job = Job {
            app,
            store: Some(store.into()),
            size,
            steps,
            heap_bytes: Some(plan.heap_bytes),
            chunk: None,
        };
        let mut r = runner.record("fig11", &job);
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
                stop_note =
                    Some(format!("stopped at size {size}: the run failed with status {}", status.name()));
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
            summary.status = if note.is_some() { Status::Error } else { Status::Oom };
            summary.note = Some(note.unwrap_or_else(|| format!("no size from {start} down ran in the heap")));
        }
    }
    record::emit(&summary);
    records.push(summary);
    records
}
