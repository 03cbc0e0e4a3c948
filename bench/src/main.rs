//! `dynasoar-bench`: the allocator benchmark suite (issue 8).
//!
//! - `synthetic`: the survey's synthetic tests (`002_...` section 4) on every allocator;
//! - `registers`: registers of every allocator's malloc and free (`ptxas -v`);
//! - `apps`: the DynaSOAr paper's Figures 10-12 (every app on every allocator);
//! - `workloads`: a dynamic graph (survey 4.4.3-4.4.4) and a kd-tree build (`000_...` Table 2)
//!   on every allocator;
//! - `enumeration`: the DynaSOAr paper's Figure 13(b), DynaSOAr's flat and hierarchical
//!   enumerations against heap size and fill.
//!
//! Every measurement is one JSON line on stdout; a table follows at the end; CSV, JSON and SVG
//! files per test go to `--out`. See `bench/README.md`.

mod apps;
mod enumeration;
mod plot;
mod record;
mod registers;
mod synthetic;
mod workloads;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use dynasoar::baselines::malloc::MallocKind;
use dynasoar::host::heap::AllocatorVariant;
use dynasoar::host::{Backend, BackendKind, Executor, ExecutorOptions};
use dynasoar_examples::MODELS_PTX;

/// The benchmark kernels (`bench/kernels`) with the allocators they measure, compiled by
/// this crate's build script.
const BENCH_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/bench.ptx"));
use indicatif::{ProgressBar, ProgressStyle};

use synthetic::{Bench, Config, Test};

#[derive(Parser, Debug)]
#[command(name = "dynasoar-bench", version, about = "Benchmarks of the general-purpose GPU allocators")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The survey's synthetic tests: allocation, mixed sizes, scaling, fragmentation, out of
    /// memory, writes, work generation.
    Synthetic(SyntheticArgs),
    /// Registers (and stack) of every allocator's malloc and free, from `ptxas -v`.
    Registers(RegistersArgs),
    /// The DynaSOAr paper's Figures 10 (every app on every allocator and both baselines, the
    /// run without enumeration and the enumeration apart), 11 (largest problem size in one heap
    /// per app, relative to the AOS baseline) and 12 (Wa-Tor at the paper's size: time per
    /// step, the problem-size sweep, fragmentation both ways, the allocator's variants).
    Apps(Box<AppsArgs>),
    /// Real workloads: a dynamic graph (initialisation and updates, survey 4.4.3-4.4.4) and a
    /// kd-tree build (`000_...` section 6, Table 2).
    Workloads(WorkloadsArgs),
    /// The DynaSOAr paper's Figure 13(b): the time to list a class's blocks, flat and
    /// hierarchical (Alg. 5), against heap size and fill; every listing checked.
    Enumeration(enumeration::EnumerationArgs),
    /// One app run, in a child process of `apps` (so a hang can be killed): prints one JSON
    /// line.
    #[command(hide = true)]
    Measure(MeasureArgs),
}

/// Backend options of the subcommands that run kernels.
#[derive(Args, Debug, Clone)]
struct BackendArgs {
    /// Where to run: auto (the GPU if there is one), cuda, or cpu.
    #[arg(long, default_value = "auto", env = "DYNASOAR_BACKEND")]
    backend: Backend,
    /// Threads of the CPU backend (default: all cores).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    cpu_threads: Option<u16>,
}

impl BackendArgs {
    fn options(&self, quiet: bool) -> ExecutorOptions {
        ExecutorOptions {
            backend: self.backend,
            cpu_threads: self.cpu_threads.map(usize::from),
            quiet,
            ..Default::default()
        }
    }
}

#[derive(Args, Debug)]
struct AppsArgs {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    backend: BackendArgs,
    /// Figures to produce, comma-separated: 10, 11, 12 (default: all).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(10..=12))]
    figures: Vec<u32>,
    /// Apps of Figure 10, comma-separated (default: all).
    #[arg(long, value_delimiter = ',', value_enum)]
    apps: Vec<apps::App>,
    /// Apps of Figure 11, comma-separated (default: all).
    #[arg(long, value_delimiter = ',', value_enum)]
    fig11_apps: Vec<apps::App>,
    /// Allocators of Figure 11, comma-separated (default: those of `--allocators`).
    #[arg(long, value_delimiter = ',', value_parser = parse_allocator)]
    fig11_allocators: Vec<MallocKind>,
    /// Allocators of Figure 12 (a) and (b), comma-separated (default: those of `--allocators`).
    #[arg(long, value_delimiter = ',', value_parser = parse_allocator)]
    fig12_allocators: Vec<MallocKind>,
    /// Leave out DynaSOAr's own heap (it is measured by default, next to `--allocators`).
    #[arg(long)]
    no_dynasoar: bool,
    /// Leave out the hand-written SOA and AOS baselines of Figure 10.
    #[arg(long)]
    no_baseline: bool,
    /// CI-size runs on the CPU (seconds per run).
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// The paper's problem sizes and steps (hours on a GPU); default: a fraction of them.
    #[arg(long)]
    full: bool,
    /// Steps of every run of Figures 10 and 12 (default: per app and scale, see README;
    /// `--fig12-steps` takes precedence).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    steps: Option<u32>,
    /// Heap of Figure 11 in MiB, the same for every app (default: per app,
    /// `--fig11-heap-factor` times the AOS baseline's memory at its Figure 10 size).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=(1 << 20)))]
    heap_mib: Option<u64>,
    /// Figure 11's heap per app, in multiples of the AOS baseline's memory at its Figure 10
    /// size (where `--heap-mib` is not given).
    #[arg(long, default_value_t = 4.0)]
    fig11_heap_factor: f64,
    /// Most runs of the size search of Figure 11, per app and allocator.
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u32).range(1..=64))]
    fig11_probes: u32,
    /// Steps of Figure 11's runs (default: 20, 5 with --quick; 0, the setup alone, for the
    /// apps that allocate only when they set up: n-body, collision, structure).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    fig11_steps: Option<u32>,
    /// Figure 11's size searches run this many at a time (they measure sizes, not times, so
    /// they may share the GPU).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    jobs: u16,
    /// Figure 12 reports the mean step time of chunks of this many steps.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    chunk: u32,
    /// Figure 12's ocean width (its height is 5/4 of it; default: the paper's 2048, 40 with
    /// --quick).
    #[arg(long, value_parser = clap::value_parser!(u32).range(4..=65_536))]
    fig12_size: Option<u32>,
    /// Steps of Figure 12's runs (default: the paper's 500; 20 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    fig12_steps: Option<u32>,
    /// Figure 12(d): variants of DynaSOAr's allocator besides the default, comma-separated:
    /// nocoal, noshift (default: both; `--variants default` runs none).
    #[arg(long, value_delimiter = ',')]
    variants: Vec<dynasoar::host::heap::AllocatorVariant>,
    /// Figure 12(d): the heap of DynaSOAr's default and of its variants there, in MiB (default:
    /// 4096; the app's default with --quick). NoShift leaves blocks sparse: on an H200 it ran
    /// out of the app's default heap for the paper's ocean.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=(1 << 20)))]
    variant_heap_mib: Option<u64>,
    /// Figure 12(d): the time limit of each run there, in seconds (NoShift is slower by
    /// design: on an H200, 27 s for the paper's ocean).
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    variant_timeout_s: u64,
    /// Figure 12(b): ocean widths of the problem-size sweep, comma-separated (default:
    /// 512,1024,1448,2048,2896,4096; 24,32,48 with --quick; none: `--sweep 0`).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(0..=65_536))]
    sweep: Vec<u32>,
    /// Figure 12(b): the allocators of the sweep, comma-separated (default: those of Figure 12).
    #[arg(long, value_delimiter = ',', value_parser = parse_allocator)]
    sweep_allocators: Vec<MallocKind>,
    /// Figure 12(b): the heap of every store in MiB (default: the paper's 512; 4 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=(1 << 20)))]
    sweep_heap_mib: Option<u64>,
    /// Figure 12(b): steps of each run (default: Figure 12's).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    sweep_steps: Option<u32>,
    /// Stop starting runs after this many seconds: the rest are recorded as `skipped`, and
    /// every file is still written (for a step with a hard time limit).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    budget_s: Option<u64>,
    /// Time limit of one run in seconds; a run past it is killed and reported as `timeout`.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    timeout_s: u64,
    /// Exit 0 even when runs computed a wrong result (they are still reported as `wrong`).
    #[arg(long)]
    allow_wrong: bool,
    /// Tests only: the runs of this store (`soa`, `dynasoar` or an allocator) report a result
    /// that differs from the one computed, to show that the check catches it.
    #[arg(long, hide = true)]
    test_wrong_result: Option<String>,
}

#[derive(Args, Debug)]
struct WorkloadsArgs {
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    backend: BackendArgs,
    /// Workloads to run, comma-separated (default: all).
    #[arg(long, value_delimiter = ',', value_enum)]
    workloads: Vec<workloads::Workload>,
    /// CI-size runs: small graphs and scenes, one timed run (seconds on the CPU).
    #[arg(long)]
    quick: bool,
    /// Timed runs per measurement, after one warm-up run; the median is reported (default 3;
    /// 1 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    runs: Option<u32>,
    /// Vertices of the graphs, comma-separated (default: 65536,262144; 1024,4096 with --quick).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(2..=(1 << 26)))]
    graph_vertices: Vec<u32>,
    /// Smallest vertex degree of the power-law distribution.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=1024))]
    min_degree: u32,
    /// Largest vertex degree (also for updates): adjacencies of at most this many edges.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=(1 << 20)))]
    max_degree: u32,
    /// Update batches per scenario (default 4; 2 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    batches: Option<u32>,
    /// Updates (insertions or deletions) drawn per batch (default 32768; 1024 with --quick).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=(1 << 26)))]
    batch_updates: Option<u32>,
    /// Pool of the graph measurements in MiB (default 1024; 32 with --quick on the CPU).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=(1 << 20)))]
    heap_mib: Option<u64>,
    /// Primitives of the kd-tree scenes, comma-separated (default: 16384,65536; 500,2000
    /// with --quick).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=(1 << 24)))]
    kd_prims: Vec<u32>,
    /// kd-tree nodes of at most this many references are leaves.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    kd_leaf_size: u32,
    /// Depth at which kd-tree nodes become leaves. Our scenes' large triangles are duplicated
    /// into ever more nodes below that: on an H200, 16,384 triangles made 277,602 nodes at
    /// depth 20, more than the node arrays (16 per triangle) hold; at 18 no level can exceed
    /// 2^18.
    #[arg(long, default_value_t = 18, value_parser = clap::value_parser!(u32).range(1..=64))]
    kd_max_depth: u32,
    /// Pool of the kd-tree build in multiples of the root's array. `000_...` used 200; our
    /// scenes duplicate more references: on an H200 the build of 16,384 triangles allocated
    /// about 22 MB, 330 times its root's array, so 200 ran out of memory on every allocator.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    kd_pool_factor: u64,
    /// Seed of the generated graphs, updates and scenes.
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

#[derive(Args, Debug)]
struct MeasureArgs {
    #[command(flatten)]
    backend: BackendArgs,
    /// The job, as JSON.
    #[arg(long)]
    job: String,
}

/// Options shared by the subcommands.
#[derive(Args, Debug)]
struct CommonArgs {
    /// Allocators to measure, comma-separated (default: all).
    #[arg(long, value_delimiter = ',', value_parser = parse_allocator)]
    allocators: Vec<MallocKind>,
    /// Directory for the CSV, JSON and SVG files (created if missing).
    #[arg(long, default_value = "bench-results")]
    out: PathBuf,
    /// No progress bars.
    #[arg(long)]
    quiet: bool,
}

impl CommonArgs {
    fn kinds(&self) -> Vec<MallocKind> {
        if self.allocators.is_empty() { MallocKind::ALL.to_vec() } else { self.allocators.clone() }
    }

    fn out_dir(&self) -> anyhow::Result<&Path> {
        std::fs::create_dir_all(&self.out)
            .with_context(|| format!("cannot create the output directory {}", self.out.display()))?;
        Ok(&self.out)
    }
}

#[derive(Args, Debug)]
struct SyntheticArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// Where to run: auto (the GPU if there is one), cuda, or cpu.
    #[arg(long, default_value = "auto", env = "DYNASOAR_BACKEND")]
    backend: Backend,
    /// Threads of the CPU backend (default: all cores).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    cpu_threads: Option<u16>,
    /// Tests to run, comma-separated (default: all).
    #[arg(long, value_delimiter = ',', value_enum)]
    tests: Vec<Test>,
    /// CI-size runs: few threads, few sizes, small heaps (well under a minute on the CPU).
    #[arg(long)]
    quick: bool,
    /// Timed runs per measurement, after one warm-up run; the median is reported.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    runs: Option<u32>,
    /// Thread counts of the allocation and mixed-size tests, comma-separated (default:
    /// 10000,100000).
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u32).range(1..=(1 << 26)))]
    threads: Vec<u32>,
    /// Largest thread count of the scaling and work-generation sweeps, as a power of two
    /// (default 20).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=26))]
    max_threads_log2: Option<u32>,
    /// Pool of each allocator in MiB (default: 8192 on the GPU, as the survey; 1024 on the CPU).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=(1 << 20)))]
    heap_mib: Option<u64>,
    /// Pool of the out-of-memory test in MiB (default 2048, as the survey).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=(1 << 20)))]
    oom_heap_mib: Option<u64>,
    /// Alloc/free rounds of the fragmentation test (default 100).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    frag_rounds: Option<u32>,
    /// Wall-clock limit of each fragmentation and out-of-memory measurement, in seconds: one
    /// that reaches it stops between rounds and is recorded as a timeout (with the rounds it
    /// finished in its note; 0 stops every one after its first allocations).
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(0..=86_400))]
    round_limit_s: u64,
    /// Seed of the random sizes.
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

#[derive(Args, Debug)]
struct RegistersArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// GPU architecture for ptxas (sm_75 and newer).
    #[arg(long, default_value = "sm_90")]
    arch: String,
}

fn parse_allocator(name: &str) -> Result<MallocKind, String> {
    MallocKind::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = MallocKind::ALL.iter().map(|k| k.name()).collect();
        format!("unknown allocator `{name}`; choose from: {}", names.join(", "))
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Synthetic(args) => run_synthetic(args),
        Command::Registers(args) => run_registers(args),
        Command::Apps(args) => run_apps(args),
        Command::Measure(args) => run_measure(args),
        Command::Workloads(args) => run_workloads(args),
        Command::Enumeration(args) => enumeration::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Powers of two from `lo` to `hi`, every `step`-th.
fn powers_of_two(lo: u32, hi: u32, step: usize) -> Vec<u32> {
    (lo..=hi).step_by(step.max(1)).map(|e| 1u32 << e).collect()
}

fn config(args: &SyntheticArgs, gpu: bool) -> Config {
    const MIB: u64 = 1 << 20;
    let q = args.quick;
    let max_log2 = args.max_threads_log2.unwrap_or(if q { 10 } else { 20 });
    let default_threads = if q { vec![256, 1024] } else { vec![10_000, 100_000] };
    Config {
        sizes: if q { vec![16, 256, 4096] } else { powers_of_two(2, 13, 1) },
        threads: if args.threads.is_empty() { default_threads } else { args.threads.clone() },
        scaling_sizes: if q { vec![16, 512] } else { vec![16, 64, 512, 8192] },
        thread_sweep: powers_of_two(0, max_log2, if q { 2 } else { 1 }),
        frag_threads: if q { 1024 } else { 100_000 },
        frag_rounds: args.frag_rounds.unwrap_or(if q { 4 } else { 100 }),
        round_limit: std::time::Duration::from_secs(args.round_limit_s),
        oom_threads: if q { 256 } else { 100_000 },
        oom_heap_bytes: args.oom_heap_mib.unwrap_or(if q { 2 } else { 2048 }) * MIB,
        write_sizes: if q { vec![16, 128] } else { vec![16, 32, 64, 128] },
        write_threads: if q { 1024 } else { 1 << 17 },
        workgen_ranges: if q { vec![64, 1024] } else { vec![64, 4096] },
        heap_bytes: args.heap_mib.unwrap_or(match (q, gpu) {
            (true, true) => 1024,
            (true, false) => 32,
            (false, true) => 8192,
            (false, false) => 1024,
        }) * MIB,
        runs: args.runs.unwrap_or(if q { 2 } else { 5 }),
        seed: args.seed,
    }
}

fn progress(quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(0);
    if let Ok(style) = ProgressStyle::with_template("{msg:>8} [{bar:40}] {pos}/{len} ({elapsed}, eta {eta})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

fn run_synthetic(args: &SyntheticArgs) -> anyhow::Result<()> {
    let out = args.common.out_dir()?;
    let options = ExecutorOptions {
        backend: args.backend,
        cpu_threads: args.cpu_threads.map(usize::from),
        quiet: args.common.quiet,
        ..Default::default()
    };
    let exec = Executor::new(BENCH_PTX, options).context("cannot start the backend")?;
    let gpu = exec.kind() == BackendKind::Cuda;
    let config = config(args, gpu);
    let bench =
        Bench { exec: &exec, backend: exec.kind().name(), warp: if gpu { 32 } else { 1 }, config: &config };
    let tests = if args.tests.is_empty() { Test::ALL.to_vec() } else { args.tests.clone() };
    eprintln!(
        "dynasoar-bench: {} on {}",
        tests.iter().map(|t| t.name()).collect::<Vec<_>>().join(","),
        exec.description()
    );
    let bar = progress(args.common.quiet);
    let records = synthetic::run(&bench, &tests, &args.common.kinds(), out, &bar)?;
    bar.finish_and_clear();
    let table = record::table(&records);
    std::fs::write(out.join("summary.txt"), format!("{}\n{table}", exec.description()))
        .with_context(|| format!("cannot write {}", out.join("summary.txt").display()))?;
    dynasoar_examples::outln!("\n{table}");
    eprintln!("dynasoar-bench: {} measurements; files in {}", records.len(), out.display());
    Ok(())
}

fn run_registers(args: &RegistersArgs) -> anyhow::Result<()> {
    let Some(ptxas) = registers::find_ptxas() else {
        eprintln!(
            "dynasoar-bench registers: skipped: no ptxas found (set DYNASOAR_PTXAS to a ptxas binary, \
             e.g. from the `nvidia-cuda-nvcc` wheel, or put ptxas on the PATH)"
        );
        return Ok(());
    };
    let out = args.common.out_dir()?;
    let kinds = args.common.kinds();
    let entries = registers::probe_entries(&kinds);
    let kernels = registers::ptxas_report(&ptxas, BENCH_PTX, &entries, &args.arch, out)?;
    let records = registers::records(&kernels, &kinds, &args.arch);
    // The files first: printing ends the process when stdout is a closed pipe (`| head`).
    std::fs::write(out.join("registers.csv"), registers::csv(&records))?;
    std::fs::write(out.join("registers.json"), serde_json::to_string_pretty(&records)?)?;
    for r in &records {
        dynasoar_examples::outln!("{}", serde_json::to_string(r)?);
    }
    dynasoar_examples::outln!("\n{}", registers::table(&records));
    Ok(())
}

fn run_apps(args: &AppsArgs) -> anyhow::Result<()> {
    let out = args.common.out_dir()?;
    let scale = match (args.quick, args.full) {
        (true, _) => apps::Scale::Quick,
        (false, true) => apps::Scale::Full,
        (false, false) => apps::Scale::Gpu,
    };
    let mut stores: Vec<Option<&'static str>> = Vec::new();
    if !args.no_baseline {
        stores.extend([None, Some(apps::AOS)]);
    }
    // DynaSOAr (unless left out) and the allocators of `given`, or of `--allocators`.
    let dsl_stores = |given: &[MallocKind]| {
        let mut list: Vec<&'static str> = Vec::new();
        if !args.no_dynasoar {
            list.push("dynasoar");
        }
        let kinds = if given.is_empty() { args.common.kinds() } else { given.to_vec() };
        list.extend(kinds.into_iter().map(|k| k.name()));
        list
    };
    stores.extend(dsl_stores(&[]).into_iter().map(Some));
    let fig12_stores = dsl_stores(&args.fig12_allocators);
    let variants: Vec<_> = if args.variants.is_empty() {
        vec![AllocatorVariant::NO_COALESCING, AllocatorVariant::NO_ROTATION]
    } else {
        args.variants.iter().copied().filter(|v| *v != AllocatorVariant::DEFAULT).collect()
    };
    let sweep: Vec<u32> = match (&args.sweep[..], args.quick) {
        ([], true) => vec![24, 32, 48],
        ([], false) => vec![512, 1024, 1448, 2048, 2896, 4096],
        (given, _) => given.iter().copied().filter(|&w| w > 0).collect(),
    };
    let plan = apps::Plan {
        figures: if args.figures.is_empty() { vec![10, 11, 12] } else { args.figures.clone() },
        apps: if args.apps.is_empty() { apps::App::ALL.to_vec() } else { args.apps.clone() },
        stores,
        scale,
        steps: args.steps,
        fig11_heap_bytes: args.heap_mib.map(|m| m << 20),
        fig11_heap_factor: args.fig11_heap_factor,
        fig11_apps: if args.fig11_apps.is_empty() {
            apps::App::ALL.to_vec()
        } else {
            args.fig11_apps.clone()
        },
        fig11_stores: dsl_stores(&args.fig11_allocators),
        fig11_probes: args.fig11_probes,
        fig11_steps: args.fig11_steps,
        jobs: usize::from(args.jobs),
        chunk: args.chunk,
        sweep_stores: if args.sweep_allocators.is_empty() {
            fig12_stores.clone()
        } else {
            dsl_stores(&args.sweep_allocators)
        },
        fig12_stores,
        fig12_size: args.fig12_size,
        fig12_steps: args.fig12_steps,
        variants,
        variant_heap_bytes: args.variant_heap_mib.or((!args.quick).then_some(4096)).map(|m| m << 20),
        variant_timeout: std::time::Duration::from_secs(args.variant_timeout_s),
        sweep,
        sweep_heap_bytes: args.sweep_heap_mib.unwrap_or(if args.quick { 4 } else { 512 }) << 20,
        sweep_steps: args.sweep_steps,
        perturb_store: args.test_wrong_result.clone(),
    };
    anyhow::ensure!(
        args.fig11_heap_factor.is_finite() && args.fig11_heap_factor > 0.0,
        "--fig11-heap-factor must be positive"
    );
    // Start the backend here once: a missing GPU fails now with one message, not once per run.
    let exec = Executor::new(MODELS_PTX, args.backend.options(true)).context("cannot start the backend")?;
    let backend = exec.kind();
    let description = exec.description();
    drop(exec);
    // The children run on the backend found here (`auto` could differ if a GPU came and went).
    let mut backend_args = vec!["--backend".to_string(), backend.name().to_string()];
    if let Some(threads) = args.backend.cpu_threads {
        backend_args.extend(["--cpu-threads".to_string(), threads.to_string()]);
    }
    let runner = apps::Runner {
        backend_args,
        backend: backend.name(),
        timeout: std::time::Duration::from_secs(args.timeout_s),
        deadline: args.budget_s.map(|s| std::time::Instant::now() + std::time::Duration::from_secs(s)),
    };
    let cpu = runner.on_cpu(args.backend.cpu_threads);
    eprintln!("dynasoar-bench apps: figures {:?} on {description}", plan.figures);
    let bar = progress(args.common.quiet);
    let records = apps::run(&runner, &cpu, &plan, out, &bar)?;
    bar.finish_and_clear();
    let table = record::table(&records);
    let summary = apps::summary(&records);
    std::fs::write(out.join("apps-summary.txt"), format!("{description}\n{table}\n{summary}"))
        .with_context(|| format!("cannot write {}", out.join("apps-summary.txt").display()))?;
    dynasoar_examples::outln!("\n{table}\n{summary}");
    eprintln!("dynasoar-bench apps: {} measurements; files in {}", records.len(), out.display());
    // Every record is written; a wrong result fails the command (unless allowed).
    let wrong = apps::wrong(&records).len();
    anyhow::ensure!(
        wrong == 0 || args.allow_wrong,
        "{wrong} run(s) computed a wrong result (status `wrong`; see the summary); --allow-wrong \
         to exit 0 anyway"
    );
    Ok(())
}

fn run_measure(args: &MeasureArgs) -> anyhow::Result<()> {
    let job: apps::Job =
        serde_json::from_str(&args.job).context("--job is not a job of `dynasoar-bench apps`")?;
    let measured = apps::run_job(&job, args.backend.options(true));
    dynasoar_examples::outln!("{}", serde_json::to_string(&measured)?);
    Ok(())
}

fn run_workloads(args: &WorkloadsArgs) -> anyhow::Result<()> {
    let out = args.common.out_dir()?;
    let exec = Executor::new(BENCH_PTX, args.backend.options(args.common.quiet))
        .context("cannot start the backend")?;
    let gpu = exec.kind() == BackendKind::Cuda;
    let q = args.quick;
    let or = |list: &Vec<u32>, quick: &[u32], full: &[u32]| {
        if !list.is_empty() {
            list.clone()
        } else if q {
            quick.to_vec()
        } else {
            full.to_vec()
        }
    };
    let config = workloads::Config {
        graph_vertices: or(&args.graph_vertices, &[1024, 4096], &[65536, 262_144]),
        min_degree: args.min_degree,
        max_degree: args.max_degree,
        batches: args.batches.unwrap_or(if q { 2 } else { 4 }),
        batch_updates: args.batch_updates.unwrap_or(if q { 1024 } else { 32768 }),
        graph_heap_bytes: args.heap_mib.unwrap_or(if q && !gpu { 32 } else { 1024 }) << 20,
        kd_prims: or(&args.kd_prims, &[500, 2000], &[16384, 65536]),
        kd_leaf_size: args.kd_leaf_size,
        kd_max_depth: args.kd_max_depth,
        kd_pool_factor: args.kd_pool_factor,
        runs: args.runs.unwrap_or(if q { 1 } else { 3 }),
        seed: args.seed,
    };
    let bench = workloads::Bench { exec: &exec, backend: exec.kind().name(), config: &config };
    let chosen =
        if args.workloads.is_empty() { workloads::Workload::ALL.to_vec() } else { args.workloads.clone() };
    eprintln!(
        "dynasoar-bench workloads: {} on {}",
        chosen.iter().map(|w| w.name()).collect::<Vec<_>>().join(","),
        exec.description()
    );
    let bar = progress(args.common.quiet);
    let records = workloads::run(&bench, &chosen, &args.common.kinds(), out, &bar)?;
    bar.finish_and_clear();
    let table = workloads::table(&records);
    std::fs::write(out.join("workloads-summary.txt"), format!("{}\n{table}", exec.description()))
        .with_context(|| format!("cannot write {}", out.join("workloads-summary.txt").display()))?;
    dynasoar_examples::outln!("\n{table}");
    eprintln!("dynasoar-bench workloads: {} measurements; files in {}", records.len(), out.display());
    Ok(())
}
