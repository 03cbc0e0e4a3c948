//! The Linux Scalability microbenchmark (DynaSOAr paper, section 7.4): every thread allocates
//! `k` objects of 64 bytes, then frees them. Reports ns per allocation and per free for our
//! allocator (with and without warp-level request coalescing, with the opt-in runs of blocks
//! and with a default `#[soa_class]` class, which has none), a bump-pointer `atomicAdd`
//! allocator (the floor) and CUDA's device `malloc`, all measured in the same run: the median
//! of the timed rounds (warm), and the first, untimed-for-the-median round (cold). Times are
//! kernel times (CUDA events); each round's wall time (the host's clock from before the
//! allocation kernel's launch until the frees have finished, as a program that times one round
//! of allocations and frees with its own clock sees it) is reported beside them.

use clap::Parser;
use dynasoar::host::{Buffer, DeviceHeap, Executor, Grid, HeapClass, Result};
use dynasoar::{AllocatorSpec, ClassSpec, Kernel};
use dynasoar_examples::CommonArgs;
use dynasoar_examples::cli::{exit_on_error_without_heap_flag, note_cpu_default_size};
use dynasoar_examples::outln;
use dynasoar_models::alloc_bench::{
    AllocBenchParams, BUMP_ALLOC, CUDA_MALLOC_ALLOC, CUDA_MALLOC_FREE, LS_ALLOC, LS_ALLOC_DEFAULT,
    LS_ALLOC_EAGER, LS_ALLOC_UNCOALESCED, LS_FREE, LS_FREE_DEFAULT, LsHeap, OBJECT_BYTES, Obj64,
};

#[derive(Parser)]
#[command(about = "Linux Scalability: k allocations then k frees per thread, on several allocators")]
struct Args {
    /// Thread blocks.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    blocks: u32,
    /// Threads per block (1 to 1024).
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: u32,
    /// Allocations per thread to measure (comma-separated, each at least 1).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = DEFAULT_K,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    k: Vec<u32>,
    /// Timed repetitions per point (the median is reported).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    reps: u64,
    /// Skip CUDA's device malloc.
    #[arg(long)]
    no_cuda_malloc: bool,
    /// Timed repetitions for CUDA's device malloc, which is slow at large k.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    cuda_reps: u64,
    /// Largest k at which CUDA's device malloc is measured (it takes ~100 s at k = 512 on an
    /// H200).
    #[arg(long, default_value_t = 64)]
    cuda_max_k: u32,
    /// Release our allocator's runs of blocks after every round (untimed), so that each round
    /// starts from runs of one block as on a fresh heap. By default the runs stay between
    /// rounds, as they stay between the steps of an app; the frees leave no object either way.
    #[arg(long)]
    cold_runs: bool,
    #[command(flatten)]
    common: CommonArgs,
}

/// The default of `--k`.
const DEFAULT_K: &str = "1,2,4,8,16,32,64,128,256,512,1024";

struct Point {
    allocator: &'static str,
    k: u32,
    /// Medians of the timed rounds (warm).
    alloc_ms: f64,
    free_ms: Option<f64>,
    /// The first round (cold: after the previous k's frees, or on a fresh heap).
    cold_alloc_ms: f64,
    cold_free_ms: Option<f64>,
    /// Wall time of a round (allocations and frees), the median of the timed rounds and the
    /// first round's.
    wall_ms: f64,
    cold_wall_ms: f64,
    failures: u64,
}

/// The median of `v` (NaN if `v` is empty, which `--reps` at least 1 rules out).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

struct Bench<'a> {
    exec: &'a Executor,
    grid: Grid,
    total_threads: u32,
    out: Buffer<u64>,
    failures: Buffer<u64>,
    bump: Buffer<u64>,
    arena: Buffer<u8>,
    /// The heap of `Obj64`, which takes runs of blocks.
    heap: DeviceHeap,
    /// The heap of `LsHeap` (the default class `Ls64`).
    default_heap: DeviceHeap,
    cold_runs: bool,
}

impl Bench<'_> {
    fn params(&self, heap: &DeviceHeap, k: u32) -> AllocBenchParams {
        AllocBenchParams {
            heap: heap.ptr(),
            out: self.out.ptr(),
            threads: self.total_threads,
            per_thread: k,
            bump: self.bump.ptr(),
            arena: self.arena.ptr().addr(),
            arena_bytes: self.arena.len() as u64,
            failures: self.failures.ptr(),
        }
    }

    fn timed(&self, heap: &DeviceHeap, kernel: &Kernel<AllocBenchParams>, k: u32) -> Result<f64> {
        let ((), t) = self.exec.time(|| self.exec.launch(kernel, self.grid, self.params(heap, k)))?;
        Ok(t.as_secs_f64() * 1e3)
    }

    fn reset_counters(&self) -> Result<()> {
        self.exec.write_bytes(&self.failures, 0, &0u64.to_ne_bytes())?;
        self.exec.write_bytes(&self.bump, 0, &0u64.to_ne_bytes())
    }

    fn failures(&self) -> Result<u64> {
        Ok(self.exec.read_all(&self.failures)?[0])
    }

    /// Release the runs of blocks (whose reserved slots are all our allocator holds after the
    /// frees) and check that every block is free again.
    fn release_runs_and_check_empty(&self, heap: &DeviceHeap) -> anyhow::Result<()> {
        heap.release_runs(self.exec)?;
        let state = heap.state(self.exec)?;
        let blocks = heap.config().num_blocks;
        anyhow::ensure!(
            state.free_blocks == blocks,
            "the heap is not empty after the frees: {} of {blocks} blocks free",
            state.free_blocks
        );
        Ok(())
    }

    /// Median over `reps` of (alloc, free) for one allocator, and its first (cold) round. Our
    /// allocators run on `heap` (the other allocators ignore it).
    fn measure(
        &self,
        name: &'static str,
        heap: &DeviceHeap,
        alloc: &Kernel<AllocBenchParams>,
        free: Option<&Kernel<AllocBenchParams>>,
        k: u32,
        reps: u64,
    ) -> anyhow::Result<Point> {
        let (mut a, mut f, mut walls, mut failures) = (Vec::new(), Vec::new(), Vec::new(), 0);
        let (mut cold_a, mut cold_f, mut cold_wall) = (0.0, None, 0.0);
        // One cold round (not in the median), then the timed ones.
        for rep in 0..=reps {
            self.reset_counters()?;
            // The round's wall time: both launches, each waited for (`timed` synchronises).
            let start = std::time::Instant::now();
            let ta = self.timed(heap, alloc, k)?;
            let tf = match free {
                Some(free) => Some(self.timed(heap, free, k)?),
                None => None,
            };
            let wall = start.elapsed().as_secs_f64() * 1e3;
            // Only the allocation kernels count failures.
            let fails = self.failures()?;
            if name.starts_with("dynasoar") {
                // Every allocation must succeed and every free must find its object.
                let freed_by = free.map_or(LS_FREE.name(), |f| f.name());
                heap.take_errors(self.exec, &[alloc.name(), freed_by])?;
                if self.cold_runs {
                    self.release_runs_and_check_empty(heap)?;
                } else {
                    let objects = heap.stats(self.exec)?.classes[0].objects;
                    anyhow::ensure!(objects == 0, "{objects} objects left after the frees");
                }
            }
            if rep == 0 {
                (cold_a, cold_f, cold_wall) = (ta, tf, wall);
                // A failure in the cold round is a failure too.
                failures += fails;
            } else {
                a.push(ta);
                walls.push(wall);
                if let Some(tf) = tf {
                    f.push(tf);
                }
                failures += fails;
            }
        }
        Ok(Point {
            allocator: name,
            k,
            alloc_ms: median(a),
            free_ms: (!f.is_empty()).then(|| median(f)),
            cold_alloc_ms: cold_a,
            cold_free_ms: cold_f,
            wall_ms: median(walls),
            cold_wall_ms: cold_wall,
            failures,
        })
    }
}

fn main() -> std::process::ExitCode {
    exit_on_error_without_heap_flag(run(&Args::parse()))
}

fn run(args: &Args) -> anyhow::Result<()> {
    args.common
        .reject_graph("linux-scalability", "it times each round's allocations and frees on the host")?;
    args.common.reject_allocator(
        "linux-scalability",
        "it measures its own allocators: dynasoar, dynasoar-nocoal, dynasoar-eager, bump, cuda-malloc",
    )?;
    let exec = args.common.executor()?;
    note_cpu_default_size(
        exec.kind(),
        args.blocks == 64 && args.threads == 256 && args.k.len() == DEFAULT_K.split(',').count(),
        "linux-scalability",
        "--blocks 8 --k 1,4,16,64",
    );
    let too_many = || anyhow::anyhow!("--blocks x --threads x the largest --k is too large");
    let total_threads = args.blocks.checked_mul(args.threads).ok_or_else(too_many)?;
    let max_k = *args.k.iter().max().unwrap_or(&1);
    let objects = total_threads as u64 * max_k as u64;
    let arena_bytes = objects.checked_mul(OBJECT_BYTES as u64).ok_or_else(too_many)?;
    // The paper sizes the heap to fit 1024 objects per thread; we size it for the largest k,
    // with a quarter more for blocks opened concurrently under contention.
    let blocks_needed = objects.div_ceil(Obj64::OBJECTS_PER_BLOCK as u64);
    let heap_bytes =
        (blocks_needed.saturating_mul(Obj64::BLOCK_BYTES) / 4).saturating_mul(5).saturating_add(16 << 20);
    let cuda = exec.kind() == dynasoar::host::BackendKind::Cuda && !args.no_cuda_malloc;
    if cuda {
        exec.set_device_malloc_heap(arena_bytes.saturating_mul(3).try_into().map_err(|_| too_many())?)?;
    }
    let heap = DeviceHeap::new(
        &exec,
        heap_bytes,
        Obj64::BLOCK_BYTES,
        &[HeapClass { name: Obj64::NAME, objects_per_block: Obj64::OBJECTS_PER_BLOCK }],
    )?;
    // The default class's heap: the same size, laid out for `LsHeap` (its 64-byte class makes
    // the same blocks as `Obj64`).
    let default_classes: Vec<HeapClass> = LsHeap::CLASSES
        .iter()
        .map(|c| HeapClass { name: c.name, objects_per_block: c.objects_per_block })
        .collect();
    let default_heap = DeviceHeap::new(&exec, heap_bytes, LsHeap::BLOCK_BYTES, &default_classes)?;
    let bench = Bench {
        exec: &exec,
        grid: Grid::new(args.blocks, args.threads),
        total_threads,
        out: exec.alloc_zeroed(objects.try_into().map_err(|_| too_many())?)?,
        failures: exec.alloc_zeroed(1)?,
        bump: exec.alloc_zeroed(1)?,
        arena: exec.alloc_zeroed(arena_bytes.try_into().map_err(|_| too_many())?)?,
        heap,
        default_heap,
        cold_runs: args.cold_runs,
    };
    let (runs, runs_said) =
        if args.cold_runs { ("cold", "released after every round") } else { ("kept", "kept between rounds") };
    eprintln!(
        "linux-scalability on {}: {} x {} threads, heap {} MiB ({} blocks), runs of blocks {runs_said}",
        exec.description(),
        args.blocks,
        args.threads,
        heap_bytes >> 20,
        bench.heap.config().num_blocks,
    );
    let mut points = Vec::new();
    for &k in &args.k {
        let (h, dh) = (&bench.heap, &bench.default_heap);
        let mut row = vec![
            bench.measure("dynasoar", h, &LS_ALLOC, Some(&LS_FREE), k, args.reps)?,
            bench.measure("dynasoar-default", dh, &LS_ALLOC_DEFAULT, Some(&LS_FREE_DEFAULT), k, args.reps)?,
            bench.measure("dynasoar-nocoal", h, &LS_ALLOC_UNCOALESCED, Some(&LS_FREE), k, args.reps)?,
            bench.measure("dynasoar-eager", h, &LS_ALLOC_EAGER, Some(&LS_FREE), k, args.reps)?,
            bench.measure("bump", h, &BUMP_ALLOC, None, k, args.reps)?,
        ];
        if cuda && k <= args.cuda_max_k {
            row.push(bench.measure(
                "cuda-malloc",
                h,
                &CUDA_MALLOC_ALLOC,
                Some(&CUDA_MALLOC_FREE),
                k,
                args.cuda_reps,
            )?);
        }
        for p in &row {
            let n = total_threads as f64 * k as f64;
            outln!(
                "bench=linux-scalability backend={} allocator={} runs={runs} threads={} k={} alloc_ms={:.4} free_ms={} ns_per_alloc={:.3} ns_per_free={} cold_alloc_ms={:.4} cold_free_ms={} wall_ms={:.4} cold_wall_ms={:.4} failures={}",
                exec.kind().name(),
                p.allocator,
                total_threads,
                k,
                p.alloc_ms,
                p.free_ms.map_or("na".into(), |f| format!("{f:.4}")),
                p.alloc_ms * 1e6 / n,
                p.free_ms.map_or("na".into(), |f| format!("{:.3}", f * 1e6 / n)),
                p.cold_alloc_ms,
                p.cold_free_ms.map_or("na".into(), |f| format!("{f:.4}")),
                p.wall_ms,
                p.cold_wall_ms,
                p.failures
            );
        }
        points.extend(row);
    }
    // What the runs still hold is all that is left.
    bench.release_runs_and_check_empty(&bench.heap)?;
    bench.release_runs_and_check_empty(&bench.default_heap)?;
    print_table(&points, total_threads);
    print_default_and_cold(&points, total_threads);
    Ok(())
}

/// The paper's setup beside ours: the default class (no runs of blocks) and the opt-in runs
/// class, each warm (the median) and cold (the first round), in ns per allocation + free.
fn print_default_and_cold(points: &[Point], threads: u32) {
    outln!();
    outln!(
        "{:>5} | {:>16} | {:>16} | {:>16} | {:>16} | {:>22} | {:>22}",
        "k",
        "runs warm ns",
        "runs cold ns",
        "default warm ns",
        "default cold ns",
        "runs wall ms warm/cold",
        "default wall warm/cold"
    );
    let mut ks: Vec<u32> = points.iter().map(|p| p.k).collect();
    ks.dedup();
    for k in ks {
        let n = threads as f64 * k as f64;
        let get = |name: &str| points.iter().find(|p| p.k == k && p.allocator == name);
        let both = |a: f64, f: Option<f64>| f.map_or("-".into(), |f| format!("{:.3}", (a + f) * 1e6 / n));
        let warm = |p: Option<&Point>| p.map_or("-".into(), |p| both(p.alloc_ms, p.free_ms));
        let cold = |p: Option<&Point>| p.map_or("-".into(), |p| both(p.cold_alloc_ms, p.cold_free_ms));
        let wall =
            |p: Option<&Point>| p.map_or("-".into(), |p| format!("{:.3} / {:.3}", p.wall_ms, p.cold_wall_ms));
        let (r, d) = (get("dynasoar"), get("dynasoar-default"));
        outln!(
            "{:>5} | {:>16} | {:>16} | {:>16} | {:>16} | {:>22} | {:>22}",
            k,
            warm(r),
            cold(r),
            warm(d),
            cold(d),
            wall(r),
            wall(d)
        );
    }
    outln!(
        "(ns per allocation + free; runs: `Obj64`, whose hand-written ClassSpec opts in to runs of blocks; default: a \
         #[soa_class] class with the defaults, no runs, as the paper's allocator; warm: the median of --reps rounds; cold: the \
         first round at each k; wall: one round of allocations and frees by the host's clock, launches and waits included)"
    );
}

fn print_table(points: &[Point], threads: u32) {
    outln!();
    outln!(
        "{:>5} | {:>22} | {:>22} | {:>10} | {:>22} | {:>9} | {:>9}",
        "k",
        "dynasoar alloc/free ns",
        "nocoal alloc/free ns",
        "bump ns",
        "cuda-malloc alloc/free",
        "vs floor",
        "vs cuda"
    );
    let ks: Vec<u32> = {
        let mut v: Vec<u32> = points.iter().map(|p| p.k).collect();
        v.dedup();
        v
    };
    for k in ks {
        let n = threads as f64 * k as f64;
        let get = |name: &str| points.iter().find(|p| p.k == k && p.allocator == name);
        let ns = |p: Option<&Point>| p.map(|p| (p.alloc_ms * 1e6 / n, p.free_ms.map(|f| f * 1e6 / n)));
        let fmt = |v: Option<(f64, Option<f64>)>| match v {
            Some((a, Some(f))) => format!("{a:>9.3} / {f:>9.3}"),
            Some((a, None)) => format!("{a:>9.3}"),
            None => "-".into(),
        };
        let d = ns(get("dynasoar"));
        let floor = ns(get("bump")).map(|v| v.0);
        let cuda = ns(get("cuda-malloc"));
        let vs_floor = match (d, floor) {
            (Some((a, _)), Some(f)) => format!("{:.2}x", a / f),
            _ => "-".into(),
        };
        let vs_cuda = match (d, cuda) {
            (Some((a, Some(fr))), Some((ca, Some(cf)))) => format!("{:.1}x", (ca + cf) / (a + fr)),
            _ => "-".into(),
        };
        outln!(
            "{:>5} | {:>22} | {:>22} | {:>10} | {:>22} | {:>9} | {:>9}",
            k,
            fmt(d),
            fmt(ns(get("dynasoar-nocoal"))),
            fmt(ns(get("bump"))),
            fmt(cuda),
            vs_floor,
            vs_cuda
        );
    }
    outln!(
        "(ns per operation; 'vs floor': dynasoar alloc time over the bump allocator's; 'vs cuda': CUDA malloc+free time over dynasoar's)"
    );
}
