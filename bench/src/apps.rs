//! The DynaSOAr paper's application figures (`003_...` section 7), as the paper defines them:
//!
//! - Figure 10: every app on DynaSOAr, on every general-purpose allocator and as the
//!   hand-written SOA and AOS baselines; the time of the run *without* enumeration (the paper
//!   leaves the `parallel_do` helper's enumeration out of the comparison and shows it apart),
//!   and the enumeration apart;
//! - Figure 11: the largest problem size each allocator runs within one heap per app, relative
//!   to the AOS baseline's (whose arrays, measured, fit the same bytes);
//! - Figure 12: Wa-Tor at the paper's size: (a) time per step over the run per allocator, (b)
//!   the problem-size sweep in one heap (time per problem size, enumeration, fragmentation),
//!   (c) DynaSOAr's fragmentation over the run (the paper's measure, over all classes, and the
//!   same over the fish and sharks alone), (d) the variants of DynaSOAr's allocator (NoCoal,
//!   NoShift); enumeration is left out of the times.
//!
//! Every measurement runs in a child process (`dynasoar-bench measure`, hidden) under a time
//! limit: a hung allocator is killed and reported as a timeout, and a device fault (which
//! leaves a CUDA context unusable) cannot spoil the measurements after it. Every run's result
//! is checked against the SOA baseline's.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::Context;
use dynasoar::baselines::host::StoreChoice;
use dynasoar::host::heap::AllocatorVariant;
use dynasoar::host::{BackendKind, Executor, ExecutorOptions, HeapStats, Settings};
use dynasoar_examples::compare::{Compared, checksum_difference, fingerprint_difference};
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_examples::{
    Implementation, MODELS_PTX, RunOptions, barnes_hut, collision, game_of_life, generation, nbody,
    structure, sugarscape, traffic, wator,
};
use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

use crate::plot::{self, Figure};
use crate::record::{self, Record, Status};

/// The store name (`--allocators` aside) of the hand-written AOS baseline, in jobs and records.
pub const AOS: &str = "aos";
/// The allocator name of the hand-written SOA baseline's records.
pub const SOA: &str = "soa";

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

    /// The problem size of a run of `size`, which Figure 11 compares: the cells of the grid
    /// apps (Wa-Tor's ocean is `size` x `5 size / 4`, as [`wator_config`] makes it), the bodies
    /// of n-body, collision and Barnes-Hut, the nodes of the structure, the intersections of
    /// the street network.
    pub fn problem(self, size: u32) -> u64 {
        let s = u64::from(size);
        match self {
            App::Wator => s * u64::from(size.saturating_mul(5) / 4),
            App::GameOfLife | App::Sugarscape | App::Generation => s * s,
            App::Nbody | App::Collision | App::Structure | App::Traffic | App::BarnesHut => s,
        }
    }

    /// Whether the app allocates objects while it runs (not only when it sets up): n-body,
    /// collision and the structure create all their objects first and then only free (the
    /// paper, 7.2), so their memory peaks at setup.
    pub fn allocates_while_running(self) -> bool {
        !matches!(self, App::Nbody | App::Collision | App::Structure)
    }

    /// Why Figure 11 cannot search the app's largest size in a given heap, if it cannot: n-body
    /// takes no heap size (its driver sizes the heap for the bodies), so it never runs out.
    pub fn fig11_missing(self) -> Option<&'static str> {
        match self {
            App::Nbody => Some(
                "missing: n-body takes no heap size (examples/apps/src/nbody.rs sizes its heap for the \
                 bodies), so no largest size in a given heap can be searched",
            ),
            _ => None,
        }
    }

    /// The largest size whose problem is at most `problem` (at least 1).
    pub fn size_for(self, problem: u64) -> u32 {
        let (mut low, mut high) = (1u32, u32::MAX);
        while low < high {
            let mid = low + (high - low).div_ceil(2);
            if self.problem(mid) <= problem { low = mid } else { high = mid - 1 }
        }
        low
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
    /// `None`: the hand-written SOA baseline; `Some("aos")` ([`AOS`]): the hand-written AOS
    /// baseline; else the store of the DSL version, `dynasoar` or a general allocator.
    pub store: Option<String>,
    pub size: u32,
    pub steps: u32,
    /// Heap of the DSL version (`None`: the app's default for the size).
    pub heap_bytes: Option<u64>,
    /// Figure 12: time every chunk of this many steps on its own, and measure fragmentation
    /// after each.
    pub chunk: Option<u32>,
    /// DynaSOAr's allocator variant (Figure 12(d)): `nocoal` or `noshift` (`None`: the
    /// default). The runner sets it in the child's environment as `DYNASOAR_ALLOCATOR_VARIANT`,
    /// where every heap the child makes reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Figure 11's baselines: report the device memory the run allocates (its peak, with
    /// `steps` steps) instead of timing it. On the CPU backend only, where device buffers are
    /// host allocations that this program counts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub footprint: bool,
    /// Tests only (`apps --test-wrong-result STORE`): report a result that is certainly not the
    /// one computed, so that the harness's check can be seen to catch it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub perturb: bool,
}

impl Job {
    /// A job of `app` on `store` (see [`Job::store`]) at `size` for `steps`, with the app's
    /// default heap, untimed per chunk, on the default allocator.
    pub fn new(app: App, store: Option<&str>, size: u32, steps: u32) -> Self {
        Job {
            app,
            store: store.map(String::from),
            size,
            steps,
            heap_bytes: None,
            chunk: None,
            variant: None,
            footprint: false,
            perturb: false,
        }
    }

    /// Whether this run is the SOA baseline that other runs of its app, size and steps are
    /// checked against.
    fn is_reference(&self) -> bool {
        self.store.is_none()
            && self.heap_bytes.is_none()
            && self.chunk.is_none()
            && self.variant.is_none()
            && !self.footprint
            && !self.perturb
    }

    /// The name of its records' `allocator`: `soa`, `aos`, `dynasoar` or a general allocator.
    fn allocator(&self) -> &str {
        self.store.as_deref().unwrap_or(SOA)
    }
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
    /// Figure 12: mean step time of each chunk, enumeration left out.
    pub chunk_ms: Vec<f64>,
    /// Figure 12: mean enumeration time per step of each chunk.
    #[serde(default)]
    pub chunk_enum_ms: Vec<f64>,
    /// Figure 12: DynaSOAr's fragmentation after each chunk ([`fragmentation`], every class;
    /// empty for other stores).
    #[serde(default)]
    pub chunk_fragmentation: Vec<f64>,
    /// Figure 12: the same over Wa-Tor's fish and sharks alone ([`fragmentation_agents`]).
    #[serde(default)]
    pub chunk_fragmentation_agents: Vec<f64>,
    /// Figure 12: DynaSOAr's classes at the end of the run.
    #[serde(default)]
    pub classes: Vec<ClassCount>,
    /// Figure 11's baselines: peak device memory of the run in bytes.
    #[serde(default)]
    pub footprint_bytes: Option<u64>,
    /// What the run computed (absent when it failed).
    #[serde(default)]
    pub fingerprint: Option<Fingerprint>,
}

/// One class of DynaSOAr's heap at one time: its object slots (allocated blocks times objects
/// per block) and the objects in them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassCount {
    pub class: String,
    pub slots: u64,
    pub objects: u64,
}

impl ClassCount {
    /// The classes of `stats` that hold blocks (an abstract class holds none).
    fn of(stats: &HeapStats) -> Vec<ClassCount> {
        stats
            .classes
            .iter()
            .filter(|c| c.blocks > 0 || c.objects > 0)
            .map(|c| ClassCount {
                class: c.name.to_string(),
                slots: c.blocks * u64::from(c.objects_per_block),
                objects: c.objects,
            })
            .collect()
    }
}

/// The classes that Wa-Tor allocates and frees while it runs (the ocean's cells are allocated
/// once and never freed): the ones whose used and allocated slots the original's Wa-Tor
/// benchmark prints (`DBG_used_slots` / `DBG_allocated_slots` of `Fish` and `Shark`).
pub const WATOR_AGENTS: [&str; 2] = ["Fish", "Shark"];

/// Fragmentation as the paper defines it (section 7.3: "the difference between allocated
/// (N_T x #alloc. blocks) and actually used object slots among all blocks"), as a fraction:
/// the object slots of all allocated blocks, of every class, that hold no object, over all
/// those slots (0 without blocks). The original's `DBG_calculate_fragmentation` computes the
/// same ("the fraction of allocated but unused object slots among all allocated object slots.
/// See ECOOP paper for details"), and so have our reports. In Wa-Tor it counts the ocean's
/// cells, whose blocks are full.
pub fn fragmentation(classes: &[ClassCount]) -> f64 {
    let slots: u64 = classes.iter().map(|c| c.slots).sum();
    let objects: u64 = classes.iter().map(|c| c.objects).sum();
    if slots == 0 { 0.0 } else { 1.0 - objects as f64 / slots as f64 }
}

/// The same fraction over the classes in `dynamic` only, the ones the app allocates and frees
/// while it runs (Wa-Tor: [`WATOR_AGENTS`], the counts the original's benchmark prints): where
/// the other classes fill their blocks, it is at least [`fragmentation`] of the same heap. For
/// comparison: how sparse the blocks of the objects that come and go are.
pub fn fragmentation_agents(classes: &[ClassCount], dynamic: &[&str]) -> f64 {
    let agents: Vec<ClassCount> =
        classes.iter().filter(|c| dynamic.contains(&c.class.as_str())).cloned().collect();
    fragmentation(&agents)
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

/// Run `job` in this process (the child's side): its times (or memory) and what it computed.
pub fn run_job(job: &Job, exec: ExecutorOptions) -> Measured {
    let result = check_variant(job).and_then(|()| {
        if job.footprint {
            footprint(job, exec).map(|(bytes, fingerprint)| Measured {
                footprint_bytes: Some(bytes),
                fingerprint: Some(fingerprint),
                ..Default::default()
            })
        } else if let Some(chunk) = job.chunk {
            wator_steps(job, exec, chunk)
        } else {
            run_app(job, exec).map(|(total, enumeration, fingerprint)| Measured {
                total_ms: Some(ms(total)),
                enum_ms: Some(ms(enumeration)),
                fingerprint: Some(fingerprint),
                ..Default::default()
            })
        }
    });
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

/// The job's allocator variant must be the one this process's heaps get from the environment
/// (`DYNASOAR_ALLOCATOR_VARIANT`, which [`Runner::run`] sets), or its numbers would be
/// another variant's.
fn check_variant(job: &Job) -> anyhow::Result<()> {
    let wanted: AllocatorVariant = match job.variant.as_deref() {
        Some(name) => name.parse()?,
        None => AllocatorVariant::DEFAULT,
    };
    let set = Settings::from_env()?.allocator_variant;
    anyhow::ensure!(
        set == wanted,
        "the job asks for allocator variant `{wanted}` but DYNASOAR_ALLOCATOR_VARIANT gives `{set}`"
    );
    if job.variant.is_some() {
        anyhow::ensure!(
            job.store.as_deref() == Some("dynasoar"),
            "allocator variants are DynaSOAr's: the job's store is {}",
            job.allocator()
        );
    }
    Ok(())
}

/// Whether `e` says a heap or an allocator ran out of memory (rather than anything else).
fn is_oom(e: &anyhow::Error) -> bool {
    use dynasoar::host::Error;
    e.chain()
        .any(|c| matches!(c.downcast_ref::<Error>(), Some(Error::OutOfMemory { .. } | Error::Malloc { .. })))
}

fn options(job: &Job, exec: ExecutorOptions) -> anyhow::Result<(Implementation, RunOptions)> {
    let baseline = RunOptions {
        exec: exec.clone(),
        store: StoreChoice::Dynasoar,
        fixed_pool: false,
        time_enumeration: true,
        graph: false,
    };
    Ok(match job.store.as_deref() {
        None => (Implementation::Soa, baseline),
        Some(AOS) => (Implementation::Aos, baseline),
        Some(name) => {
            let store: StoreChoice = name.parse().map_err(anyhow::Error::msg)?;
            // A given heap (Figures 11 and 12(b)) is the same for every allocator.
            (
                Implementation::Dynasoar,
                RunOptions {
                    exec,
                    store,
                    fixed_pool: job.heap_bytes.is_some(),
                    time_enumeration: true,
                    graph: false,
                },
            )
        }
    })
}

// ----------------------------------------------------------------------------------------
// Device memory of the CPU backend, counted (Figure 11's baselines).

/// Live and peak bytes of the allocations aligned to 256 bytes or more: on the CPU backend,
/// device buffers (`HostMem`, aligned as CUDA's allocations are), which nothing else in this
/// program aligns so ([`footprint`] checks that a buffer is seen).
static DEVICE_LIVE: AtomicU64 = AtomicU64::new(0);
static DEVICE_PEAK: AtomicU64 = AtomicU64::new(0);

/// The system allocator, counting [`DEVICE_LIVE`] and [`DEVICE_PEAK`].
struct CountingAllocator;

/// Allocations aligned at least this much are device buffers of the CPU backend.
const DEVICE_ALIGN: usize = 256;

fn device_alloc(bytes: usize) {
    let live = DEVICE_LIVE.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
    DEVICE_PEAK.fetch_max(live, Ordering::Relaxed);
}

fn device_free(bytes: usize) {
    DEVICE_LIVE.fetch_sub(bytes as u64, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to the system allocator with its arguments unchanged; the
// counters are only read.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is `System.alloc`'s.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() && layout.align() >= DEVICE_ALIGN {
            device_alloc(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() && layout.align() >= DEVICE_ALIGN {
            device_alloc(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as for `alloc`.
        unsafe { System.dealloc(ptr, layout) };
        if layout.align() >= DEVICE_ALIGN {
            device_free(layout.size());
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() && layout.align() >= DEVICE_ALIGN {
            device_free(layout.size());
            device_alloc(new_size);
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Figure 11's baselines: the peak device memory of `job`'s run on the CPU backend (with
/// `job.steps` steps, 0 for the setup and the result alone), and what it computed.
fn footprint(job: &Job, exec: ExecutorOptions) -> anyhow::Result<(u64, Fingerprint)> {
    let probe = Executor::new(MODELS_PTX, exec.clone())?;
    anyhow::ensure!(
        probe.kind() == BackendKind::Cpu,
        "device memory is counted on the CPU backend only (this run is on {})",
        probe.description()
    );
    // A buffer must be seen: else the backend's buffers are not what this program counts.
    let before = DEVICE_LIVE.load(Ordering::Relaxed);
    let buffer = probe.alloc_zeroed::<u8>(1 << 16)?;
    let seen = DEVICE_LIVE.load(Ordering::Relaxed) - before;
    anyhow::ensure!(seen == 1 << 16, "a device buffer of 65536 bytes counted as {seen}");
    drop((buffer, probe));
    let base = DEVICE_LIVE.load(Ordering::Relaxed);
    DEVICE_PEAK.store(base, Ordering::Relaxed);
    let (_, _, fingerprint) = run_app(job, exec)?;
    Ok((DEVICE_PEAK.load(Ordering::Relaxed) - base, fingerprint))
}

// ----------------------------------------------------------------------------------------
// Running the apps.

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
            // The dense SOA baseline: on a random soup nearly every cell is alive or next to one,
            // and the baseline with lists of those cells took 9.49 ms for Figure 10's 20 steps on
            // an H200 against the dense one's 0.52 ms (docs/results/2026-11-26-s3/fig10-bitmap/);
            // the lists win on sparse patterns such as the paper's utm.pgm.
            let cfg = game_of_life::Config {
                steps,
                heap_bytes,
                soa: game_of_life::SoaVariant::Dense,
                ..game_of_life::Config::new(pattern)
            };
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

/// Figure 12: Wa-Tor stepped from here in chunks of `chunk` steps, each chunk timed on its own
/// (the driver's `run` only reports the whole run): the mean step time of each chunk without
/// its enumeration, and the enumeration apart; in DynaSOAr's heap the fragmentation after each
/// chunk, both ways (measured between chunks, untimed; the statistics launch makes the next
/// step list its classes anew, which is enumeration); the totals of the run; and the final
/// ocean's fingerprint, read after the last step.
fn wator_steps(job: &Job, exec: ExecutorOptions, chunk: u32) -> anyhow::Result<Measured> {
    anyhow::ensure!(job.app == App::Wator, "per-step times are measured for wa-tor only");
    let (implementation, opts) = options(job, exec)?;
    let cfg = wator_config(job);
    // DynaSOAr's own heap: its statistics give the fragmentation.
    let heap = implementation == Implementation::Dynasoar && opts.store == StoreChoice::Dynasoar;
    let (dsl, other) = if heap {
        (Some(wator::DslSim::new(opts, &cfg)?.0), None)
    } else {
        (None, Some(wator::simulation(implementation, opts, &cfg)?.0))
    };
    let sim: &dyn wator::Simulation =
        dsl.as_ref().map(|d| d as &dyn wator::Simulation).or(other.as_deref()).context("no simulation")?;
    let mut m = Measured::default();
    let (mut total, mut enumeration) = (Duration::ZERO, Duration::ZERO);
    let chunk = chunk.max(1);
    let mut step = 0;
    while step < job.steps {
        let n = chunk.min(job.steps - step);
        let ((), t) = sim.executor().time(|| {
            for _ in 0..n {
                sim.step()?;
            }
            Ok(())
        })?;
        sim.sync()?;
        let e = sim.take_enumeration()?.min(t);
        m.chunk_ms.push(ms(t - e) / f64::from(n));
        m.chunk_enum_ms.push(ms(e) / f64::from(n));
        (total, enumeration) = (total + t, enumeration + e);
        step += n;
        if let Some(dsl) = &dsl {
            let classes = ClassCount::of(&dsl.runtime().stats()?);
            m.chunk_fragmentation.push(fragmentation(&classes));
            m.chunk_fragmentation_agents.push(fragmentation_agents(&classes, &WATOR_AGENTS));
            m.classes = classes;
        }
    }
    if heap {
        for agent in WATOR_AGENTS {
            anyhow::ensure!(
                m.classes.is_empty() || m.classes.iter().any(|c| c.class == agent),
                "no class {agent} in the heap's statistics ({:?})",
                m.classes
            );
        }
    }
    let cells = sim.cells()?;
    let census = wator::Population::of(job.steps, &cells);
    let counts = vec![("fish".to_string(), census.fish), ("sharks".to_string(), census.sharks)];
    m.total_ms = Some(ms(total));
    m.enum_ms = Some(ms(enumeration));
    m.fingerprint = Some(Fingerprint::Exact { hash: wator::fingerprint(&cells), counts });
    Ok(m)
}

// ----------------------------------------------------------------------------------------
// Child processes and checks.

/// Runs jobs in child processes of this binary.
pub struct Runner {
    /// Arguments that select the backend in the child (`--backend ...`).
    pub backend_args: Vec<String>,
    pub backend: &'static str,
    pub timeout: Duration,
    /// No run starts after this (`--budget-s`): the rest are recorded as `skipped`, and the
    /// files are still written.
    pub deadline: Option<Instant>,
}

/// What became of a job run by [`Runner::run`].
pub enum Outcome {
    Done(Box<Measured>),
    /// Killed after the time limit.
    Timeout,
    /// The child died without a report (a crash); the note says how.
    Crashed(String),
}

impl Runner {
    /// The same runner on the CPU backend (Figure 11's baselines measure memory there).
    pub fn on_cpu(&self, cpu_threads: Option<u16>) -> Runner {
        let mut backend_args = vec!["--backend".to_string(), "cpu".to_string()];
        if let Some(threads) = cpu_threads {
            backend_args.extend(["--cpu-threads".to_string(), threads.to_string()]);
        }
        Runner { backend_args, backend: "cpu", timeout: self.timeout, deadline: self.deadline }
    }

    /// The same runner with another time limit per run.
    pub fn with_timeout(&self, timeout: Duration) -> Runner {
        Runner {
            backend_args: self.backend_args.clone(),
            backend: self.backend,
            timeout,
            deadline: self.deadline,
        }
    }

    /// Whether the time budget is spent.
    fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    pub fn run(&self, job: &Job) -> anyhow::Result<Outcome> {
        let exe = std::env::current_exe().context("cannot find this program to run a measurement in")?;
        let mut command = Command::new(exe);
        command
            .arg("measure")
            .arg("--job")
            .arg(serde_json::to_string(job)?)
            .args(&self.backend_args)
            .env_remove("DYNASOAR_ALLOCATOR_VARIANT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(variant) = &job.variant {
            command.env("DYNASOAR_ALLOCATOR_VARIANT", variant);
        }
        let mut child = command.spawn().context("cannot start a measurement process")?;
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
            Some(m) => Ok(Outcome::Done(Box::new(m))),
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
        let key = (job.app, job.size, job.steps);
        if let Some(fingerprint) = fingerprint {
            if job.is_reference() {
                references.slot(key).get_or_init(|| Ok(fingerprint.clone()));
                r.result = Some(fingerprint.to_string());
            } else {
                check(&mut r, &fingerprint, &self.reference(job, references));
            }
        } else if job.is_reference() {
            // Later runs of this app, size and steps cannot be checked: say why once for all.
            let why = unfinished_baseline(&r);
            references.slot(key).get_or_init(|| Err(why));
        }
        record::emit(&r);
        r
    }

    /// The SOA baseline's result for `job`'s app, size and steps: known, or measured now (in a
    /// child process, on the same backend, with the app's default heap; not a record). Runs
    /// asking for the same one at once wait for one measurement.
    fn reference(&self, job: &Job, references: &References) -> Reference {
        let slot = references.slot((job.app, job.size, job.steps));
        slot.get_or_init(|| {
            let (r, fingerprint) = self.measure("reference", &Job::new(job.app, None, job.size, job.steps));
            fingerprint.ok_or_else(|| unfinished_baseline(&r))
        })
        .clone()
    }

    /// Run `job`: its record (not emitted) and, where it finished, what it computed.
    fn measure(&self, test: &'static str, job: &Job) -> (Record, Option<Fingerprint>) {
        let mut r = Record::new(test, job.allocator(), self.backend);
        r.app = Some(job.app.name());
        r.size = job.size;
        r.size_min = job.size;
        r.steps = Some(job.steps);
        r.heap_bytes = job.heap_bytes;
        r.variant = job.variant.clone();
        r.problem_size = Some(job.app.problem(job.size));
        r.runs = 1;
        if self.past_deadline() {
            r.status = Status::Skipped;
            r.runs = 0;
            r.note = Some("not run: the time budget (--budget-s) was spent".into());
            return (r, None);
        }
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
                r.run_ms = m.total_ms.map(|t| t - m.enum_ms.unwrap_or(0.0));
                r.note = m.note;
                r.chunk_ms = m.chunk_ms;
                r.chunk_enum_ms = m.chunk_enum_ms;
                r.chunk_fragmentation = m.chunk_fragmentation;
                r.chunk_fragmentation_agents = m.chunk_fragmentation_agents;
                r.footprint_bytes = m.footprint_bytes;
                if !m.classes.is_empty() {
                    let classes: Vec<String> =
                        m.classes.iter().map(|c| format!("{} {}/{}", c.class, c.slots, c.objects)).collect();
                    r.classes = Some(classes.join(", "));
                }
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

/// The SOA baseline's results, one per (app, size, steps) (or why there is none): what
/// [`Runner::record`] checks every other run against. Shared by the runs of Figure 11, which
/// may run at once.
#[derive(Default)]
pub struct References {
    known: Mutex<HashMap<ReferenceKey, Arc<OnceLock<Reference>>>>,
}

/// What a reference is the result of: app, size, steps.
type ReferenceKey = (App, u32, u32);

impl References {
    /// The place of the reference of `key`, filled once.
    fn slot(&self, key: ReferenceKey) -> Arc<OnceLock<Reference>> {
        let mut known = self.known.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        known.entry(key).or_default().clone()
    }
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

/// Run `task` on each of `tasks`, `jobs` at a time; the results in the tasks' order.
fn in_parallel<T: Send, R: Send>(jobs: usize, tasks: Vec<T>, task: impl Fn(T) -> R + Sync) -> Vec<R> {
    let n = tasks.len();
    let mut queue: Vec<(usize, T)> = tasks.into_iter().enumerate().collect();
    queue.reverse();
    let queue = Mutex::new(queue);
    let done = Mutex::new(Vec::with_capacity(n));
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, n.max(1)) {
            scope.spawn(|| {
                loop {
                    let next = queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pop();
                    let Some((i, t)) = next else { break };
                    let r = task(t);
                    done.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push((i, r));
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

// ----------------------------------------------------------------------------------------
// The plan and the figures.

/// What the `apps` subcommand runs.
pub struct Plan {
    pub figures: Vec<u32>,
    pub apps: Vec<App>,
    /// Figure 10's stores: `None` the SOA baseline, [`AOS`], `dynasoar`, general allocators.
    pub stores: Vec<Option<&'static str>>,
    pub scale: Scale,
    /// Overrides of the steps of Figures 10 and 12 (`fig12_steps` takes precedence).
    pub steps: Option<u32>,
    /// Figure 11: one heap for every app; `None`: per app, `fig11_heap_factor` times the AOS
    /// baseline's memory at its Figure 10 size (so each app's largest sizes stay a few times
    /// its Figure 10 size, whatever its object sizes and running time).
    pub fig11_heap_bytes: Option<u64>,
    pub fig11_heap_factor: f64,
    pub fig11_apps: Vec<App>,
    /// Figure 11's stores besides the baselines (which are searched by their memory).
    pub fig11_stores: Vec<&'static str>,
    pub fig11_probes: u32,
    pub fig11_steps: Option<u32>,
    /// Figure 11's searches run this many at a time (they measure sizes, not times).
    pub jobs: usize,
    /// Figure 12: chunks of this many steps.
    pub chunk: u32,
    /// Figure 12(a)'s stores (`dynasoar` and general allocators).
    pub fig12_stores: Vec<&'static str>,
    /// Figure 12's ocean width (height 5/4 of it) and steps; `None`: by scale (the paper's
    /// 2048 x 2560 for 500 steps on the GPU).
    pub fig12_size: Option<u32>,
    pub fig12_steps: Option<u32>,
    /// Figure 12(d): the variants of DynaSOAr's allocator besides the default, the heap they
    /// and the default get there (`None`: the app's default; NoShift leaves blocks sparse and
    /// needs more), and the time limit of each (NoShift is slower by design).
    pub variants: Vec<AllocatorVariant>,
    pub variant_heap_bytes: Option<u64>,
    pub variant_timeout: Duration,
    /// Figure 12(b): ocean widths of the sweep, its heap (every store gets it), its steps and
    /// stores.
    pub sweep: Vec<u32>,
    pub sweep_heap_bytes: u64,
    pub sweep_steps: Option<u32>,
    pub sweep_stores: Vec<&'static str>,
    /// Tests only: runs of this store report a perturbed result ([`Job::perturb`]).
    pub perturb_store: Option<String>,
}

impl Plan {
    fn perturb(&self, store: Option<&str>) -> bool {
        self.perturb_store.as_deref() == Some(store.unwrap_or(SOA))
    }

    /// Figure 12's ocean width and steps.
    fn fig12_run(&self) -> (u32, u32) {
        let (size, steps) = match self.scale {
            Scale::Quick => App::Wator.default_run(Scale::Quick),
            // The paper's Wa-Tor: 2048 x 2560 for 500 iterations (its benchmark's configuration).
            Scale::Gpu | Scale::Full => App::Wator.default_run(Scale::Full),
        };
        (self.fig12_size.unwrap_or(size), self.fig12_steps.or(self.steps).unwrap_or(steps))
    }

    /// Figure 11's steps per run of `app`: as given (`--fig11-steps`; `--steps` is Figures 10
    /// and 12's), else 20 (5 with `--quick`), or 0 (the setup alone, where the memory peaks)
    /// for the apps that allocate only when they set up.
    fn fig11_steps(&self, app: App) -> u32 {
        match self.fig11_steps {
            Some(steps) => steps,
            None if !app.allocates_while_running() => 0,
            None if self.scale == Scale::Quick => 5,
            None => 20,
        }
    }
}

/// Run the figures of `plan` (Figure 11 last: its searches take what time is left); CSV, JSON
/// and SVG per figure under `out`.
pub fn run(
    runner: &Runner,
    cpu: &Runner,
    plan: &Plan,
    out: &Path,
    bar: &ProgressBar,
) -> anyhow::Result<Vec<Record>> {
    let mut all = Vec::new();
    // Figure 11's runs are not known in advance (the searches stop when they converge): it
    // adds to the length as it goes.
    let fig10 = if plan.figures.contains(&10) { plan.apps.len() * plan.stores.len() } else { 0 };
    let fig12 = if plan.figures.contains(&12) {
        let dynasoar = plan.fig12_stores.contains(&"dynasoar");
        plan.fig12_stores.len()
            + plan.sweep.len() * plan.sweep_stores.len()
            + if dynasoar && !plan.variants.is_empty() { plan.variants.len() + 1 } else { 0 }
    } else {
        0
    };
    bar.set_length((fig10 + fig12) as u64);

    // Every run's result is checked against the SOA baseline's (`Runner::record`).
    let references = References::default();
    if plan.figures.contains(&10) {
        bar.set_message("fig10");
        let records = run_fig10(runner, &references, plan, bar);
        finish(out, "fig10", &records, fig10_figures(&records))?;
        all.extend(records);
    }
    if plan.figures.contains(&12) {
        bar.set_message("fig12");
        let (a, b, d) = run_fig12(runner, &references, plan, bar);
        let (size, _) = plan.fig12_run();
        finish(out, "fig12", &a, fig12_figures(&a, &d, plan.chunk, size))?;
        if !b.is_empty() {
            finish(out, "fig12b", &b, fig12b_figures(&b))?;
        }
        if !d.is_empty() {
            finish(out, "fig12d", &d, vec![fig12d_figure(&d)])?;
        }
        all.extend(a);
        all.extend(b);
        all.extend(d);
    }
    if plan.figures.contains(&11) {
        bar.set_message("fig11");
        let records = run_fig11(runner, cpu, &references, plan, bar);
        finish(out, "fig11", &records, fig11_figures(&records))?;
        all.extend(records);
    }
    Ok(all)
}

fn run_fig10(runner: &Runner, references: &References, plan: &Plan, bar: &ProgressBar) -> Vec<Record> {
    let mut records = Vec::new();
    // The SOA baseline first: its result is the reference of the others.
    let mut stores = plan.stores.clone();
    stores.sort_by_key(Option::is_some);
    for &app in &plan.apps {
        let (size, steps) = app.default_run(plan.scale);
        for &store in &stores {
            let job = Job {
                perturb: plan.perturb(store),
                ..Job::new(app, store, size, plan.steps.unwrap_or(steps))
            };
            records.push(runner.record("fig10", &job, references));
            bar.inc(1);
        }
    }
    records
}

/// Figure 12: (a) Wa-Tor per store at the figure's size, (b) the sweep, (d) the variants.
fn run_fig12(
    runner: &Runner,
    references: &References,
    plan: &Plan,
    bar: &ProgressBar,
) -> (Vec<Record>, Vec<Record>, Vec<Record>) {
    let (size, steps) = plan.fig12_run();
    let chunked = |store: &str, size: u32, steps: u32, chunk: u32| Job {
        chunk: Some(chunk),
        perturb: plan.perturb(Some(store)),
        ..Job::new(App::Wator, Some(store), size, steps)
    };
    let mut a = Vec::new();
    for &store in &plan.fig12_stores {
        a.push(runner.record("fig12", &chunked(store, size, steps, plan.chunk), references));
        bar.inc(1);
    }
    // (d): DynaSOAr's default and its variants at the same size, in the same heap, each
    // under the variants' time limit.
    let mut d = Vec::new();
    if plan.fig12_stores.contains(&"dynasoar") && !plan.variants.is_empty() {
        let slow = runner.with_timeout(plan.variant_timeout);
        let variants = std::iter::once(None).chain(plan.variants.iter().map(|v| Some(v.name().to_string())));
        for variant in variants {
            let job = Job {
                variant,
                heap_bytes: plan.variant_heap_bytes,
                ..chunked("dynasoar", size, steps, plan.chunk)
            };
            d.push(slow.record("fig12d", &job, references));
            bar.inc(1);
        }
    }
    // (b): every store gets the same heap; one chunk, so the fragmentation is the run's end.
    let sweep_steps = plan.sweep_steps.or(plan.fig12_steps).or(plan.steps).unwrap_or(steps);
    let mut b = Vec::new();
    for &width in &plan.sweep {
        for &store in &plan.sweep_stores {
            let job = Job {
                heap_bytes: Some(plan.sweep_heap_bytes),
                ..chunked(store, width, sweep_steps, sweep_steps)
            };
            b.push(runner.record("fig12b", &job, references));
            bar.inc(1);
        }
    }
    (a, b, d)
}

fn finish(out: &Path, test: &str, records: &[Record], figures: Vec<Figure>) -> anyhow::Result<()> {
    record::write_files(out, test, records)?;
    for figure in figures {
        plot::draw(out, &figure).with_context(|| format!("plot {}", figure.name))?;
    }
    Ok(())
}

/// A record's run time without enumeration (`run_ms`, or `total_ms` less `enum_ms`).
fn run_time(r: &Record) -> Option<f64> {
    r.run_ms.or_else(|| r.total_ms.map(|t| t - r.enum_ms.unwrap_or(0.0)))
}

/// Figure 10: per app, run time over allocators (x: the allocator's index in the legend
/// order, as line plots need numbers), one line for the run without enumeration and one for
/// the enumeration (the paper's striped part); runs that computed a wrong result are their own
/// line ("wrong result"), marked in the title too.
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
                ("run without enumeration".into(), line(Status::Ok, run_time)),
                ("enumeration".into(), line(Status::Ok, |r| r.enum_ms)),
            ];
            if of_app.iter().any(|r| r.status == Status::Wrong) {
                series.push(("wrong result (run)".into(), line(Status::Wrong, run_time)));
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

/// A record's name in plots: its allocator (and variant), marked where its result was wrong.
fn legend(r: &Record) -> String {
    let name = match (&r.variant, r.test) {
        (Some(v), _) => format!("{} {v}", r.allocator),
        // Figure 12(d)'s default, beside its variants.
        (None, "fig12d") => format!("{} default", r.allocator),
        (None, _) => r.allocator.clone(),
    };
    match r.status {
        Status::Wrong => format!("{name} (WRONG RESULT)"),
        _ => name,
    }
}

/// Whether `allocator` names a general-purpose allocator (not a baseline, not DynaSOAr).
fn is_general(allocator: &str) -> bool {
    ![SOA, AOS, "dynasoar"].contains(&allocator)
}

/// The fastest general-purpose allocator (neither a baseline nor DynaSOAr) of Figure 10 for
/// `app` by its run time without enumeration, as the paper compares them, among the runs whose
/// result was checked and right (status `ok`): a wrong run is never the fastest, however fast.
pub fn fastest_general<'a>(records: &'a [Record], app: &str) -> Option<&'a Record> {
    records
        .iter()
        .filter(|r| r.test == "fig10" && r.app == Some(app) && r.status == Status::Ok)
        .filter(|r| is_general(&r.allocator))
        .filter(|r| run_time(r).is_some())
        .min_by(|a, b| run_time(a).unwrap_or(f64::INFINITY).total_cmp(&run_time(b).unwrap_or(f64::INFINITY)))
}

/// The runs that computed a wrong result (not Figure 11's summaries that a wrong run stopped).
pub fn wrong(records: &[Record]) -> Vec<&Record> {
    records.iter().filter(|r| r.status == Status::Wrong && r.result.is_some()).collect()
}

/// The summary after the table: Figure 10 per app (the baselines, DynaSOAr's run and
/// enumeration, the fastest general allocator whose result was right, the wrong ones),
/// Figure 11 per app (each store's largest size relative to the AOS baseline's), Figure 12
/// (per store and variant, and the sweep); then every wrong run with what it computed and what
/// was expected.
pub fn summary(records: &[Record]) -> String {
    let mut out = String::new();
    fig10_summary(&mut out, records);
    fig11_summary(&mut out, records);
    fig12_summary(&mut out, records);
    let wrong = wrong(records);
    if !wrong.is_empty() {
        let _ = writeln!(out, "\n{} run(s) computed a wrong result:", wrong.len());
        for r in wrong {
            let _ = writeln!(
                out,
                "WRONG {} {} on {}{} (size {}, {} steps): got {}, expected {}",
                r.test,
                r.app.unwrap_or("?"),
                r.allocator,
                r.variant.as_deref().map(|v| format!(" {v}")).unwrap_or_default(),
                r.size,
                r.steps.unwrap_or(0),
                r.result.as_deref().unwrap_or("?"),
                r.expected.as_deref().unwrap_or("?"),
            );
        }
    }
    out
}

/// `value` with two decimals, or the record's status where it has none.
fn cell(r: Option<&Record>, value: fn(&Record) -> Option<f64>) -> String {
    match r {
        Some(r) => match (r.status, value(r)) {
            (Status::Ok, Some(v)) => format!("{v:.2}"),
            (status, _) => status.name().to_string(),
        },
        None => "-".into(),
    }
}

fn fig10_summary(out: &mut String, records: &[Record]) {
    let fig10: Vec<&Record> = records.iter().filter(|r| r.test == "fig10").collect();
    let mut apps: Vec<&'static str> = fig10.iter().filter_map(|r| r.app).collect();
    apps.dedup();
    if apps.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "Figure 10, ms: the run without enumeration (the paper's comparison), and the enumeration \
         apart (DynaSOAr's, or the parallel_do helper's of a general allocator); every result \
         checked against the SOA baseline's\n{:<14} {:>10} {:>10} {:>12} {:>12}  {:<48} wrong result",
        "app", "soa", "aos", "dynasoar", "dyn. enum", "fastest general allocator: run, enum (vs dynasoar)"
    );
    for app in apps {
        let of =
            |allocator: &str| fig10.iter().copied().find(|r| r.app == Some(app) && r.allocator == allocator);
        let dynasoar = of("dynasoar").filter(|r| r.status == Status::Ok).and_then(run_time);
        let fastest = match fastest_general(records, app) {
            Some(r) => {
                let t = run_time(r).unwrap_or(f64::NAN);
                let e = r.enum_ms.unwrap_or(0.0);
                match dynasoar {
                    Some(d) if d > 0.0 => format!("{} {t:.2}, {e:.2} ({:.2}x)", r.allocator, t / d),
                    _ => format!("{} {t:.2}, {e:.2}", r.allocator),
                }
            }
            None => "-".into(),
        };
        let wrong: Vec<&str> = fig10
            .iter()
            .filter(|r| r.app == Some(app) && r.status == Status::Wrong)
            .map(|r| r.allocator.as_str())
            .collect();
        let wrong = if wrong.is_empty() { "-".to_string() } else { wrong.join(", ") };
        let _ = writeln!(
            out,
            "{app:<14} {:>10} {:>10} {:>12} {:>12}  {fastest:<48} {wrong}",
            cell(of(SOA), run_time),
            cell(of(AOS), run_time),
            cell(of("dynasoar"), run_time),
            cell(of("dynasoar"), |r| r.enum_ms),
        );
    }
}

/// The note of Figure 11's summary record of a store (or baseline).
const LARGEST: &str = "largest size that ran";

/// The `mode` of Figure 11's summary records (one per app and store, after its probes).
const SUMMARY: &str = "largest";

/// Figure 11's summary records.
fn fig11_summaries(records: &[Record]) -> Vec<&Record> {
    records.iter().filter(|r| r.test == "fig11" && r.mode == Some(SUMMARY)).collect()
}

fn fig11_summary(out: &mut String, records: &[Record]) {
    let summaries = fig11_summaries(records);
    let mut apps: Vec<&'static str> = summaries.iter().filter_map(|r| r.app).collect();
    apps.dedup();
    if apps.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nFigure 11, the largest size of each store within one heap per app: size (problem size \
         relative to the AOS baseline's largest); the baselines' by the memory of their arrays"
    );
    for app in apps {
        let of_app: Vec<&&Record> = summaries.iter().filter(|r| r.app == Some(app)).collect();
        let heap = of_app.iter().find_map(|r| r.heap_bytes).unwrap_or(0);
        let mut line = format!("{app:<14} heap {:>8.2} MiB ", heap as f64 / f64::from(1 << 20));
        for r in of_app {
            let value = match (r.status, r.relative_to_aos) {
                (Status::Ok, Some(rel)) => format!("{} ({rel:.2})", r.size),
                (Status::Ok, None) => format!("{} (-)", r.size),
                (status, _)
                    if r.allocator == AOS || r.note.as_deref().is_some_and(|n| n.starts_with("missing")) =>
                {
                    format!("missing ({})", status.name())
                }
                (status, _) => status.name().to_string(),
            };
            let _ = write!(line, " {} {value};", r.allocator);
        }
        let _ = writeln!(out, "{}", line.trim_end_matches(';'));
    }
}

fn fig12_summary(out: &mut String, records: &[Record]) {
    for (test, what) in [("fig12", "(a)"), ("fig12d", "(d), DynaSOAr's variants")] {
        let rows: Vec<&Record> = records.iter().filter(|r| r.test == test).collect();
        let Some(first) = rows.first() else { continue };
        let (w, steps) = (first.size, first.steps.unwrap_or(0));
        let heap = match first.heap_bytes {
            Some(bytes) => format!(" in a heap of {} MiB", bytes >> 20),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "\nFigure 12{what}, Wa-Tor {w} x {}, {steps} steps{heap}: ms per step without enumeration \
             (first chunk, last chunk, mean), enumeration per step (mean); DynaSOAr's \
             fragmentation at the end, over all classes (the paper's) and over the fish and \
             sharks alone\n\
             {:<28} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8}",
            w.saturating_mul(5) / 4,
            "store",
            "first",
            "last",
            "mean",
            "enum",
            "all",
            "agents"
        );
        for r in rows {
            let mean = |v: &Vec<f64>| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
            let name = legend(r);
            if r.status != Status::Ok || r.chunk_ms.is_empty() {
                let _ = writeln!(out, "{name:<28} {}", r.status.name());
                continue;
            }
            let f = |v: Option<&f64>| v.map(|f| format!("{f:.3}")).unwrap_or_else(|| "-".into());
            let _ = writeln!(
                out,
                "{name:<28} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>8} {:>8}",
                r.chunk_ms[0],
                r.chunk_ms[r.chunk_ms.len() - 1],
                mean(&r.chunk_ms).unwrap_or(f64::NAN),
                mean(&r.chunk_enum_ms).unwrap_or(f64::NAN),
                f(r.chunk_fragmentation.last()),
                f(r.chunk_fragmentation_agents.last()),
            );
        }
    }
    let b: Vec<&Record> = records.iter().filter(|r| r.test == "fig12b").collect();
    if let Some(first) = b.first() {
        let _ = writeln!(
            out,
            "\nFigure 12(b), Wa-Tor in a heap of {:.0} MiB, {} steps: per store and ocean, ms per \
             million cells without enumeration, enumeration, and DynaSOAr's fragmentation at the \
             end (all classes / fish and sharks)",
            first.heap_bytes.unwrap_or(0) as f64 / f64::from(1 << 20),
            first.steps.unwrap_or(0)
        );
        for r in &b {
            let cells = App::Wator.problem(r.size) as f64 / 1e6;
            let ocean = format!("{} x {}", r.size, r.size.saturating_mul(5) / 4);
            let value = match (r.status, run_time(r)) {
                (Status::Ok, Some(t)) => {
                    let mut v =
                        format!("{:.3} ms, enum {:.3} ms", t / cells, r.enum_ms.unwrap_or(0.0) / cells);
                    if let (Some(o), Some(p)) =
                        (r.chunk_fragmentation.last(), r.chunk_fragmentation_agents.last())
                    {
                        let _ = write!(v, ", fragmentation {o:.3} / {p:.3}");
                    }
                    v
                }
                (status, _) => status.name().to_string(),
            };
            let _ = writeln!(out, "{:<22} {ocean:<14} {value}", legend(r));
        }
    }
}

// ----------------------------------------------------------------------------------------
// Figure 11.

/// Figure 11: per app, the heap (given, or `fig11_heap_factor` times the AOS baseline's
/// memory at the app's Figure 10 size), the baselines' largest sizes by the memory of their
/// arrays (measured on the CPU backend), then every store's by running it (searches
/// `plan.jobs` at a time); each summary record relative to the AOS baseline's size.
fn run_fig11(
    runner: &Runner,
    cpu: &Runner,
    references: &References,
    plan: &Plan,
    bar: &ProgressBar,
) -> Vec<Record> {
    // The baselines, per app.
    let baselines =
        in_parallel(plan.jobs, plan.fig11_apps.clone(), |app| baseline_sizes(cpu, plan, app, bar));
    // The stores, per app and store.
    let mut tasks = Vec::new();
    for (i, &app) in plan.fig11_apps.iter().enumerate() {
        for &store in &plan.fig11_stores {
            tasks.push((i, app, store));
        }
    }
    let searches = in_parallel(plan.jobs, tasks, |(i, app, store)| {
        let (heap, ref records) = baselines[i];
        let aos =
            records.iter().find(|r| r.allocator == AOS && r.mode == Some(SUMMARY) && r.status == Status::Ok);
        let start = aos.map(|r| r.size).unwrap_or_else(|| app.default_run(plan.scale).0);
        match app.fig11_missing() {
            Some(why) => {
                let mut r = Record::new("fig11", store, runner.backend);
                r.mode = Some(SUMMARY);
                r.app = Some(app.name());
                r.heap_bytes = Some(heap);
                r.status = Status::Skipped;
                r.note = Some(why.into());
                vec![r]
            }
            None => largest_size(runner, references, plan, app, store, heap, start, bar),
        }
    });
    let mut records = Vec::new();
    let mut searches = searches.into_iter();
    for (_, mut of_app) in baselines {
        for _ in &plan.fig11_stores {
            of_app.extend(searches.next().unwrap_or_default());
        }
        // Relative to the AOS baseline's largest problem.
        let aos =
            of_app.iter().find(|r| r.allocator == AOS && r.mode == Some(SUMMARY) && r.status == Status::Ok);
        let aos_problem = aos.and_then(|r| r.problem_size).filter(|&p| p > 0);
        for r in of_app.iter_mut().filter(|r| r.mode == Some(SUMMARY)) {
            if r.status == Status::Ok {
                r.relative_to_aos = aos_problem.zip(r.problem_size).map(|(a, p)| p as f64 / a as f64);
            }
            record::emit(r);
        }
        records.extend(of_app);
    }
    records
}

/// Figure 11's baselines for `app`: the heap of its searches and the records (the probes, then
/// a summary record each for the AOS and the SOA baseline).
fn baseline_sizes(cpu: &Runner, plan: &Plan, app: App, bar: &ProgressBar) -> (u64, Vec<Record>) {
    let (start, _) = app.default_run(plan.scale);
    let probe = |store: Option<&'static str>, size: u32| {
        bar.inc_length(1);
        let job = Job { footprint: true, ..Job::new(app, store, size, 0) };
        let (mut r, fingerprint) = cpu.measure("fig11", &job);
        // On the CPU backend, unchecked: the references are the GPU's.
        r.result = fingerprint.map(|f| f.to_string());
        if r.status == Status::Ok && r.footprint_bytes.is_none() {
            r.status = Status::Error;
            r.note = Some("the measurement process reported no memory".into());
        }
        bar.inc(1);
        r
    };
    let mut records = Vec::new();
    // The AOS baseline at the Figure 10 size gives the heap, unless one was given.
    let first = probe(Some(AOS), start);
    let mut heap = plan.fig11_heap_bytes;
    if heap.is_none() {
        heap = first
            .footprint_bytes
            .filter(|_| first.status == Status::Ok)
            .map(|b| ((b as f64 * plan.fig11_heap_factor) as u64).next_multiple_of(1 << 20).max(1 << 20));
    }
    let mut first = Some(first);
    let mut soa_first = None;
    if heap.is_none() {
        // No AOS baseline: size the heap by the SOA baseline's memory instead.
        let r = probe(None, start);
        heap = r
            .footprint_bytes
            .filter(|_| r.status == Status::Ok)
            .map(|b| ((b as f64 * plan.fig11_heap_factor) as u64).next_multiple_of(1 << 20).max(1 << 20));
        soa_first = Some(r);
    }
    let heap = heap.unwrap_or(1 << 30);
    for (store, known) in [(Some(AOS), first.take()), (None, soa_first.take())] {
        let mut probes = Vec::new();
        let mut summary =
            search_baseline(cpu, app, store, start, heap, known, &mut probes, &|s| probe(store, s));
        summary.heap_bytes = Some(heap);
        for r in &mut probes {
            r.heap_bytes = Some(heap);
            record::emit(r);
        }
        // The summary is emitted with the others' (`run_fig11`), relative to this one.
        records.extend(probes);
        records.push(summary);
    }
    (heap, records)
}

/// Most probes of a baseline's memory search.
const BASELINE_PROBES: u32 = 24;

/// A baseline's largest size whose memory fits `heap`: probes of its memory (`probe(size)`)
/// from `start` (`known`: the probe at `start`, already made), stepping in problem size by the
/// memory's proportion (secant steps once the size is bracketed, then halving), to within 0.5%.
/// The probes go to `probes`; the summary record (mode [`SUMMARY`]) is returned.
#[allow(clippy::too_many_arguments)]
fn search_baseline(
    cpu: &Runner,
    app: App,
    store: Option<&str>,
    start: u32,
    heap: u64,
    known: Option<Record>,
    probes: &mut Vec<Record>,
    probe: &dyn Fn(u32) -> Record,
) -> Record {
    let p = |size: u32| app.problem(size) as f64;
    let target = heap as f64;
    // (size, bytes) of the largest size that fits and of the smallest that does not.
    let mut good: Option<(u32, u64)> = None;
    let mut bad: Option<(u32, u64)> = None;
    let mut failed: Option<(Status, String)> = None;
    let mut known = known;
    let mut size = start;
    let mut bracketed_steps = 0;
    for _ in 0..BASELINE_PROBES {
        let r = known.take().unwrap_or_else(|| probe(size));
        let outcome = (r.status, r.footprint_bytes);
        let note = r.note.clone().unwrap_or_default();
        probes.push(r);
        match outcome {
            (Status::Ok, Some(bytes)) if bytes <= heap => {
                if good.is_none_or(|(g, _)| size > g) {
                    good = Some((size, bytes));
                }
            }
            (Status::Ok, Some(bytes)) => {
                if bad.is_none_or(|(b, _)| size < b) {
                    bad = Some((size, bytes));
                }
            }
            (status, _) => {
                failed = Some((status, note));
                break;
            }
        }
        let next = match (good, bad) {
            (Some((g, gb)), None) => {
                // Memory in proportion to the problem; at least twice the problem if it gives
                // nothing larger.
                let guess = app.size_for((p(g) * target / gb.max(1) as f64) as u64);
                if guess > g { guess } else { app.size_for((p(g) * 2.0) as u64).max(g.saturating_add(1)) }
            }
            (None, Some((b, bb))) => {
                if b <= 1 {
                    break;
                }
                let guess = app.size_for((p(b) * target / bb.max(1) as f64) as u64);
                if guess < b { guess } else { app.size_for((p(b) / 2.0) as u64).min(b - 1) }
            }
            (Some((g, gb)), Some((b, bb))) => {
                if b - g <= (g / 200).max(1) {
                    break;
                }
                bracketed_steps += 1;
                let problem = if bracketed_steps <= 3 && bb > gb {
                    p(g) + (target - gb as f64) * (p(b) - p(g)) / (bb - gb) as f64
                } else {
                    (p(g) + p(b)) / 2.0
                };
                app.size_for(problem as u64).clamp(g + 1, b - 1)
            }
            (None, None) => break,
        };
        size = next.max(1);
    }
    let mut summary = Record::new("fig11", store.unwrap_or(SOA), cpu.backend);
    summary.mode = Some(SUMMARY);
    summary.app = Some(app.name());
    summary.steps = Some(0);
    summary.runs = 0;
    match (good, failed) {
        (Some((g, bytes)), None) => {
            summary.size = g;
            summary.size_min = g;
            summary.problem_size = Some(app.problem(g));
            summary.footprint_bytes = Some(bytes);
            summary.note = Some(LARGEST.into());
            if store == Some(AOS) {
                summary.relative_to_aos = Some(1.0);
            }
        }
        (_, Some((status, note))) => {
            summary.status = status;
            summary.note = Some(format!("missing: the baseline's memory could not be measured: {note}"));
        }
        (None, None) => {
            summary.status = Status::Oom;
            summary.note = Some(format!("no size from {start} down fits the heap"));
        }
    }
    summary
}

/// Figure 11 for one store: from `start` (the AOS baseline's largest size), double the
/// problem until a run runs out of memory (or halve it until one runs), then bisect the
/// problem between the last size that ran and the first that did not, within
/// `fig11_probes` runs in all. Every probe is a record; a last record (mode [`SUMMARY`],
/// note [`LARGEST`]) holds the largest size that ran (status `error` when none did, or when a
/// run failed other than by running out of memory, which stops the search: a larger size would
/// not tell more).
#[allow(clippy::too_many_arguments)]
fn largest_size(
    runner: &Runner,
    references: &References,
    plan: &Plan,
    app: App,
    store: &'static str,
    heap: u64,
    start: u32,
    bar: &ProgressBar,
) -> Vec<Record> {
    let steps = plan.fig11_steps(app);
    let p = |size: u32| app.problem(size) as f64;
    let mut records = Vec::new();
    let (mut good, mut bad): (Option<u32>, Option<u32>) = (None, None);
    let mut size = start.max(1);
    let mut stop_note = None;
    let mut stop_status = Status::Oom;
    for _ in 0..plan.fig11_probes {
        bar.inc_length(1);
        let job = Job {
            heap_bytes: Some(heap),
            perturb: plan.perturb(Some(store)),
            ..Job::new(app, Some(store), size, steps)
        };
        // Every store gets the same heap here (`RunOptions::fixed_pool`): an earlier H200 run
        // gave general-purpose allocators twice DynaSOAr's, and they ran larger oceans.
        let r = runner.record("fig11", &job, references);
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
                stop_status = status;
                break;
            }
        }
        size = match (good, bad) {
            (Some(g), None) => app.size_for((p(g) * 2.0) as u64).max(g.saturating_add(1)),
            (None, Some(b)) => {
                if b <= 1 {
                    break;
                }
                app.size_for((p(b) / 2.0) as u64).min(b - 1).max(1)
            }
            (Some(g), Some(b)) => {
                // Converged (within 2% of the size), or nothing between.
                if b - g <= (g / 50).max(1) {
                    break;
                }
                app.size_for(((p(g) + p(b)) / 2.0) as u64).clamp(g + 1, b - 1)
            }
            (None, None) => break,
        };
    }
    let mut summary = Record::new("fig11", store, runner.backend);
    summary.mode = Some(SUMMARY);
    summary.app = Some(app.name());
    summary.steps = Some(steps);
    summary.heap_bytes = Some(heap);
    summary.runs = 0;
    match (good, stop_note) {
        (Some(g), None) => {
            summary.size = g;
            summary.size_min = g;
            summary.problem_size = Some(app.problem(g));
            summary.note = Some(LARGEST.into());
        }
        (g, note) => {
            summary.size = g.unwrap_or(0);
            summary.size_min = summary.size;
            summary.status = stop_status;
            summary.note = Some(note.unwrap_or_else(|| format!("no size from {start} down ran in the heap")));
        }
    }
    // Emitted by `run_fig11`, relative to the AOS baseline's.
    records.push(summary);
    records
}

/// Figure 11: per app, each store's largest problem relative to the AOS baseline's (x: the
/// store's index, named in the title), or its largest size where the AOS baseline has none.
fn fig11_figures(records: &[Record]) -> Vec<Figure> {
    let best: Vec<&Record> =
        fig11_summaries(records).into_iter().filter(|r| r.status == Status::Ok).collect();
    let mut apps: Vec<&'static str> = best.iter().filter_map(|r| r.app).collect();
    apps.dedup();
    apps.iter()
        .map(|&app| {
            let rows: Vec<&&Record> = best.iter().filter(|r| r.app == Some(app)).collect();
            let names: Vec<&str> = rows.iter().map(|r| r.allocator.as_str()).collect();
            let relative = rows.iter().all(|r| r.relative_to_aos.is_some());
            let value =
                |r: &Record| if relative { r.relative_to_aos.unwrap_or(0.0) } else { f64::from(r.size) };
            Figure {
                name: format!("fig11-{app}"),
                title: format!("{app}: largest problem per store (x = {})", names.join(", ")),
                x_label: "store (index)",
                y_label: if relative { "largest problem / the AOS baseline's" } else { "largest size" },
                log_x: false,
                log_y: !relative,
                series: vec![(
                    app.to_string(),
                    rows.iter().enumerate().map(|(i, r)| (i as f64, value(r))).collect(),
                )],
            }
        })
        .collect()
}

// ----------------------------------------------------------------------------------------
// Figure 12's plots.

/// Figure 12 (a) and (c): time per step of every store over the run, and DynaSOAr's
/// fragmentation (over all classes and over the fish and sharks, for the default and each
/// variant of `d`).
fn fig12_figures(a: &[Record], d: &[Record], chunk: u32, size: u32) -> Vec<Figure> {
    let at = |r: &Record, i: usize| ((i as u32 + 1) * chunk).min(r.steps.unwrap_or(0)) as f64;
    let series = |records: &[&Record], values: fn(&Record) -> &Vec<f64>, suffix: &str| {
        records
            .iter()
            .filter(|r| !values(r).is_empty())
            .map(|r| {
                let points = values(r).iter().enumerate().map(|(i, &v)| (at(r, i), v)).collect();
                (format!("{}{suffix}", legend(r)), points)
            })
            .collect::<Vec<_>>()
    };
    let all: Vec<&Record> = a.iter().chain(d).collect();
    let title =
        |what: &str| format!("Wa-Tor {what} (every {chunk} steps), {size} x {}", size.saturating_mul(5) / 4);
    let mut fragmentation = series(&all, |r| &r.chunk_fragmentation, " (all classes)");
    fragmentation.extend(series(&all, |r| &r.chunk_fragmentation_agents, " (fish and sharks)"));
    vec![
        Figure {
            name: "fig12-wator-steps".into(),
            title: title("time per step without enumeration"),
            x_label: "step",
            y_label: "ms per step",
            log_x: false,
            log_y: true,
            series: series(&all, |r| &r.chunk_ms, ""),
        },
        Figure {
            name: "fig12-wator-fragmentation".into(),
            title: title("fragmentation of DynaSOAr's heap"),
            x_label: "step",
            y_label: "unused slots of allocated blocks",
            log_x: false,
            log_y: false,
            series: fragmentation,
        },
    ]
}

/// Figure 12(b): per store, the run time without enumeration per million cells over the
/// problem size (and DynaSOAr's enumeration), and DynaSOAr's fragmentation at the end.
fn fig12b_figures(b: &[Record]) -> Vec<Figure> {
    let mut stores: Vec<&str> = Vec::new();
    for r in b {
        if !stores.contains(&r.allocator.as_str()) {
            stores.push(&r.allocator);
        }
    }
    let ok = |r: &&Record| r.status == Status::Ok;
    let cells = |r: &Record| App::Wator.problem(r.size) as f64;
    let mut time = Vec::new();
    for store in &stores {
        let of: Vec<&Record> = b.iter().filter(|r| r.allocator == *store).filter(ok).collect();
        time.push((
            store.to_string(),
            of.iter().filter_map(|r| run_time(r).map(|t| (cells(r), t / cells(r) * 1e6))).collect(),
        ));
        if *store == "dynasoar" {
            time.push((
                "dynasoar enumeration".into(),
                of.iter().filter_map(|r| r.enum_ms.map(|e| (cells(r), e / cells(r) * 1e6))).collect(),
            ));
        }
    }
    let dynasoar: Vec<&Record> = b.iter().filter(|r| r.allocator == "dynasoar").filter(ok).collect();
    let last = |v: &Vec<f64>| v.last().copied();
    let fragmentation = vec![
        (
            "all classes".to_string(),
            dynasoar.iter().filter_map(|r| last(&r.chunk_fragmentation).map(|f| (cells(r), f))).collect(),
        ),
        (
            "fish and sharks".to_string(),
            dynasoar
                .iter()
                .filter_map(|r| last(&r.chunk_fragmentation_agents).map(|f| (cells(r), f)))
                .collect(),
        ),
    ];
    let heap = b.first().and_then(|r| r.heap_bytes).unwrap_or(0) >> 20;
    vec![
        Figure {
            name: "fig12b-wator-sweep".into(),
            title: format!("Wa-Tor in a {heap} MiB heap: run time without enumeration per million cells"),
            x_label: "cells",
            y_label: "ms per million cells",
            log_x: true,
            log_y: true,
            series: time,
        },
        Figure {
            name: "fig12b-wator-fragmentation".into(),
            title: format!("Wa-Tor in a {heap} MiB heap: DynaSOAr's fragmentation at the end"),
            x_label: "cells",
            y_label: "unused slots of allocated blocks",
            log_x: true,
            log_y: false,
            series: fragmentation,
        },
    ]
}

/// Figure 12(d): the mean time per step without enumeration of DynaSOAr's default and of each
/// variant (x: the index, named in the title).
fn fig12d_figure(records: &[Record]) -> Figure {
    let rows: Vec<&Record> =
        records.iter().filter(|r| r.status == Status::Ok && !r.chunk_ms.is_empty()).collect();
    let names: Vec<String> =
        rows.iter().map(|r| r.variant.clone().unwrap_or_else(|| "default".into())).collect();
    let mean = |r: &Record| r.chunk_ms.iter().sum::<f64>() / r.chunk_ms.len() as f64;
    Figure {
        name: "fig12d-variants".into(),
        title: format!(
            "Wa-Tor: DynaSOAr's variants, ms per step without enumeration (x = {})",
            names.join(", ")
        ),
        x_label: "variant (index)",
        y_label: "ms per step",
        log_x: false,
        log_y: true,
        series: vec![(
            "dynasoar".into(),
            rows.iter().enumerate().map(|(i, r)| (i as f64, mean(r))).collect(),
        )],
    }
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
            classes: vec![ClassCount { class: "Fish".into(), slots: 128, objects: 100 }],
            footprint_bytes: Some(u64::MAX),
            ..Default::default()
        };
        let line = serde_json::to_string(&measured).unwrap();
        let back: Measured = serde_json::from_str(&line).unwrap();
        assert_eq!(back.fingerprint, measured.fingerprint, "{line}");
        assert_eq!((back.classes, back.footprint_bytes), (measured.classes, measured.footprint_bytes));
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
        assert!(row.contains("atomic 20.00, 0.00 (1.28x)") && row.ends_with(" aw"), "{summary}");
        assert!(summary.contains("WRONG fig10 barnes-hut on aw"), "{summary}");
        assert!(record::table(&records).lines().any(|l| l.contains(" aw ") && l.contains(" wrong ")));

        // In the plot, the wrong run is a line of its own, not the "run" line.
        let figures = fig10_figures(&records);
        let run_line = &figures[0].series.iter().find(|(name, _)| name.starts_with("run")).unwrap().1;
        assert_eq!(run_line.len(), 4);
        assert!(run_line.iter().all(|&(_, ms)| ms > 1.0));
        let wrong_line = &figures[0].series.iter().find(|(name, _)| name.starts_with("wrong")).unwrap().1;
        assert_eq!(wrong_line, &vec![(2.0, 1.0)]);
        assert!(figures[0].title.contains("aw (WRONG RESULT)"), "{}", figures[0].title);
    }

    /// The paper's Figure 10 leaves the `parallel_do` helper's enumeration out: a general
    /// allocator slower than DynaSOAr in all but faster without its enumeration is the fastest,
    /// and the table shows both parts (and the AOS baseline).
    #[test]
    fn figure_10_compares_the_runs_without_enumeration() {
        let right = exact(1);
        let with_enum = |allocator: &str, total: f64, enumeration: f64| {
            let mut r = run("traffic", allocator, total, &right, &right);
            r.enum_ms = Some(enumeration);
            r.run_ms = Some(total - enumeration);
            r
        };
        let records = vec![
            with_enum("soa", 0.4, 0.0),
            with_enum("aos", 0.6, 0.0),
            with_enum("dynasoar", 1.4, 0.3),
            with_enum("atomic", 5.2, 4.3),
            with_enum("halloc", 5.3, 4.0),
        ];
        let fastest = fastest_general(&records, "traffic").unwrap();
        assert_eq!(fastest.allocator, "atomic", "0.9 ms without its 4.3 ms of enumeration");
        let summary = summary(&records);
        let header = summary.lines().nth(1).unwrap();
        for column in ["soa", "aos", "dynasoar", "dyn. enum", "fastest general allocator: run, enum"] {
            assert!(header.contains(column), "{column}: {summary}");
        }
        let row = summary.lines().find(|l| l.starts_with("traffic")).unwrap();
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(&cells[1..5], ["0.40", "0.60", "1.10", "0.30"], "{row}");
        assert!(row.contains("atomic 0.90, 4.30 (0.82x)"), "{row}");
        let figure = &fig10_figures(&records)[0];
        let line = |name: &str| &figure.series.iter().find(|(n, _)| n == name).unwrap().1;
        assert_eq!(line("run without enumeration")[3], (3.0, 5.2 - 4.3));
        assert_eq!(line("enumeration")[3], (3.0, 4.3));
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
        let job = Job::new(App::Wator, None, 40, 20);
        assert!(job.is_reference());
        assert!(!Job { store: Some("aw".into()), ..job.clone() }.is_reference());
        assert!(!Job { store: Some(AOS.into()), ..job.clone() }.is_reference());
        assert!(!Job { perturb: true, ..job.clone() }.is_reference());
        assert!(!Job { heap_bytes: Some(1 << 20), ..job.clone() }.is_reference());
        assert!(!Job { footprint: true, ..job.clone() }.is_reference());
        assert!(!Job { variant: Some("nocoal".into()), ..job.clone() }.is_reference());
        // A job without the newer fields (an older parent) still parses.
        let plain: Job = serde_json::from_str(
            r#"{"app":"wa-tor","store":null,"size":40,"steps":20,"heap_bytes":null,"chunk":null}"#,
        )
        .unwrap();
        assert!(!plain.perturb && !plain.footprint && plain.variant.is_none());
    }

    /// Both fragmentations on a heap with a known answer: 10 full blocks of 32 cells, fish in
    /// 4 blocks of 64 slots holding 128, sharks in 2 blocks holding 32.
    #[test]
    fn fragmentation_over_all_classes_and_over_the_agents() {
        let class = |name: &str, slots, objects| ClassCount { class: name.into(), slots, objects };
        let heap = [class("OceanCell", 320, 320), class("Fish", 256, 128), class("Shark", 128, 32)];
        // All classes (the paper's): 704 slots, 480 objects, 224 unused.
        assert!((fragmentation(&heap) - 224.0 / 704.0).abs() < 1e-12);
        // Fish and sharks alone: 384 slots, 160 objects.
        assert!((fragmentation_agents(&heap, &WATOR_AGENTS) - 224.0 / 384.0).abs() < 1e-12);
        assert!(fragmentation_agents(&heap, &WATOR_AGENTS) >= fragmentation(&heap), "full cells only dilute");
        assert_eq!(fragmentation(&[]), 0.0);
        assert_eq!(fragmentation_agents(&heap[..1], &WATOR_AGENTS), 0.0, "no agents, no slots");
        assert_eq!(fragmentation(&[class("Fish", 64, 64)]), 0.0);
    }

    #[test]
    fn problem_sizes_and_their_inverse() {
        assert_eq!(App::Wator.problem(2048), 2048 * 2560);
        assert_eq!(App::GameOfLife.problem(100), 10_000);
        assert_eq!(App::Structure.problem(1500), 1500);
        for app in App::ALL {
            for size in [1, 2, 3, 40, 1023, 1024, 50_000] {
                assert_eq!(app.size_for(app.problem(size)), size, "{app:?} {size}");
                assert!(app.problem(app.size_for(app.problem(size) + 1)) <= app.problem(size) + 1);
            }
        }
    }

    fn cpu_runner() -> Runner {
        Runner { backend_args: Vec::new(), backend: "cpu", timeout: Duration::from_secs(1), deadline: None }
    }

    /// The memory search of a baseline finds the largest size whose (here simulated) memory
    /// fits the heap, in few probes; a baseline whose memory cannot be measured is missing.
    #[test]
    fn a_baselines_largest_size_is_found_by_its_memory() {
        for (app, start, heap) in
            [(App::Wator, 40, 3 << 20), (App::Nbody, 300, 1 << 20), (App::Structure, 1500, 100_000)]
        {
            // 40 bytes a unit of problem and 4 KiB besides.
            let bytes = |size: u32| 4096 + 40 * app.problem(size);
            let probe = |size: u32| {
                let mut r = Record::new("fig11", AOS, "cpu");
                r.size = size;
                r.footprint_bytes = Some(bytes(size));
                r
            };
            let mut probes = Vec::new();
            let summary =
                search_baseline(&cpu_runner(), app, Some(AOS), start, heap, None, &mut probes, &probe);
            let expected = (1..=u32::MAX).take_while(|&s| bytes(s) <= heap).last().unwrap();
            assert_eq!(summary.status, Status::Ok);
            assert_eq!(summary.note.as_deref(), Some(LARGEST));
            assert!(
                summary.size <= expected && summary.size + (expected / 200).max(1) >= expected,
                "{app:?}"
            );
            assert!(bytes(summary.size) <= heap);
            assert!(probes.len() <= 8, "{app:?}: {} probes", probes.len());
            assert_eq!(summary.relative_to_aos, Some(1.0));
        }
        let failing = |size: u32| {
            let mut r = Record::new("fig11", AOS, "cpu");
            r.size = size;
            r.status = Status::Error;
            r.note = Some("no AOS baseline".into());
            r
        };
        let summary = search_baseline(
            &cpu_runner(),
            App::Wator,
            Some(AOS),
            40,
            1 << 20,
            None,
            &mut Vec::new(),
            &failing,
        );
        assert_eq!(summary.status, Status::Error);
        assert!(summary.note.as_deref().is_some_and(|n| n.starts_with("missing") && n.contains("no AOS")));
    }

    /// Figure 11's summary gives every store's largest size relative to the AOS baseline's,
    /// and says when that baseline is missing.
    #[test]
    fn figure_11_is_relative_to_the_aos_baseline() {
        let largest =
            |app: &'static str, allocator: &str, size: u32, relative: Option<f64>, status: Status| {
                let mut r = Record::new("fig11", allocator, "cpu");
                r.mode = Some(SUMMARY);
                r.app = Some(app);
                r.size = size;
                r.status = status;
                r.heap_bytes = Some(4 << 20);
                r.relative_to_aos = relative;
                r
            };
        let records = vec![
            largest("wa-tor", AOS, 100, Some(1.0), Status::Ok),
            largest("wa-tor", SOA, 110, Some(1.21), Status::Ok),
            largest("wa-tor", "dynasoar", 150, Some(2.25), Status::Ok),
            largest("wa-tor", "atomic", 0, None, Status::Oom),
            largest("nbody", AOS, 0, None, Status::Error),
            largest("nbody", "dynasoar", 5000, None, Status::Ok),
        ];
        let summary = summary(&records);
        let row = |app: &str| summary.lines().find(|l| l.starts_with(app)).unwrap().to_string();
        assert!(
            row("wa-tor").contains("aos 100 (1.00); soa 110 (1.21); dynasoar 150 (2.25); atomic oom"),
            "{summary}"
        );
        assert!(row("nbody").contains("aos missing (error); dynasoar 5000 (-)"), "{summary}");
        assert!(summary.contains("relative to the AOS baseline"), "{summary}");
        let figures = fig11_figures(&records);
        assert_eq!(figures[0].series[0].1, vec![(0.0, 1.0), (1.0, 1.21), (2.0, 2.25)]);
        // n-body takes no heap size: its stores are missing, not searched.
        assert!(App::Nbody.fig11_missing().is_some());
        assert!(App::ALL.iter().filter(|&&a| a != App::Nbody).all(|a| a.fig11_missing().is_none()));
        assert_eq!(figures[1].y_label, "largest size", "no AOS size, no ratio");
    }
}
