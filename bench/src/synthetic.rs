//! The survey's synthetic tests (`002_...` section 4, Table 2) over every allocator: one
//! generic loop ([`run`]) runs every test's points on every allocator, and each test says only
//! what its points are, how one point is measured, and how its figures look.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use dynasoar::DevPtr;
use dynasoar::baselines::host::MallocHeap;
use dynasoar::baselines::malloc::MallocKind;
use dynasoar::baselines::malloc::RegionHeader;
use dynasoar::host::{BackendKind, Buffer, Executor, Grid};
use dynasoar_bench_kernels::probes::{
    MALLOC_BENCH, MallocBenchParams, bench_flags, bench_stat, bench_step, draw_size,
};
use indicatif::ProgressBar;

use crate::plot::{self, Figure};
use crate::record::{self, Record, Status};

/// Threads per block of the benchmark kernel.
const BLOCK_THREADS: u32 = 256;
/// The kernel's name, for error messages.
const KERNEL: &str = "dynasoar_malloc_bench";

/// The tests, in the survey's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Test {
    /// Allocation and free time per size, thread- and warp-based (survey 4.2.1, Fig. 9).
    Alloc,
    /// Sizes drawn from 4 B up to a bound (survey 4.2.2, Fig. 9h).
    Mixed,
    /// Allocation and free time over 2^0..2^max threads (survey 4.2.3, Fig. 10).
    Scaling,
    /// Address range of live allocations, after N allocations and after R alloc/free rounds
    /// (survey 4.3.1, Fig. 11a).
    Frag,
    /// Fraction of the pool handed out before the first failure (survey 4.3.2, Fig. 11b).
    Oom,
    /// Writing to allocated memory vs. one contiguous buffer (survey 4.4.2, Fig. 11e).
    Write,
    /// Each thread allocates and writes a random-size buffer vs. a prefix-sum baseline (survey
    /// 4.4.1, Fig. 11c-d).
    Workgen,
}

impl Test {
    pub const ALL: [Test; 7] =
        [Test::Alloc, Test::Mixed, Test::Scaling, Test::Frag, Test::Oom, Test::Write, Test::Workgen];

    pub fn name(self) -> &'static str {
        match self {
            Test::Alloc => "alloc",
            Test::Mixed => "mixed",
            Test::Scaling => "scaling",
            Test::Frag => "frag",
            Test::Oom => "oom",
            Test::Write => "write",
            Test::Workgen => "workgen",
        }
    }
}

/// Thread-based (every thread allocates) or warp-based (one request per converged group).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Thread,
    Warp,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Thread => "thread",
            Mode::Warp => "warp",
        }
    }
}

/// One point of a test: who allocates how much.
#[derive(Clone, Copy, Debug)]
pub struct Point {
    pub mode: Mode,
    pub size_min: u32,
    pub size_max: u32,
    pub threads: u32,
}

impl Point {
    fn fixed(size: u32, threads: u32) -> Self {
        Point { mode: Mode::Thread, size_min: size, size_max: size, threads }
    }

    /// The largest single request of this point, with `warp` lanes per warp.
    fn largest_request(&self, warp: u32) -> u64 {
        match self.mode {
            Mode::Thread => self.size_max as u64,
            Mode::Warp => self.size_max as u64 * warp as u64,
        }
    }
}

/// The shape of a run: sizes, thread counts, heap sizes (see the CLI for the defaults).
#[derive(Clone, Debug)]
pub struct Config {
    /// Request sizes of the size sweeps (alloc, mixed upper bounds, frag, oom).
    pub sizes: Vec<u32>,
    /// Thread counts of the alloc and mixed tests.
    pub threads: Vec<u32>,
    /// Sizes of the scaling test.
    pub scaling_sizes: Vec<u32>,
    /// Thread counts of the scaling and work-generation tests.
    pub thread_sweep: Vec<u32>,
    /// Allocations of the fragmentation test, and its alloc/free rounds.
    pub frag_threads: u32,
    pub frag_rounds: u32,
    /// Wall-clock limit of one fragmentation or out-of-memory measurement: these run rounds of
    /// mallocs until done (20 to hundreds), which takes minutes with the slowest allocators.
    /// One that reaches it stops between rounds and is recorded as a timeout.
    pub round_limit: Duration,
    /// Threads per round of the out-of-memory test, and its pool.
    pub oom_threads: u32,
    pub oom_heap_bytes: u64,
    /// Sizes of the write test (plus one point of sizes drawn from their range), and threads.
    pub write_sizes: Vec<u32>,
    pub write_threads: u32,
    /// Size ranges (upper bounds, from 4 B) of the work-generation test.
    pub workgen_ranges: Vec<u32>,
    /// Pool of every test but out-of-memory.
    pub heap_bytes: u64,
    pub runs: u32,
    pub seed: u64,
}

/// What every measurement needs.
pub struct Bench<'a> {
    pub exec: &'a Executor,
    pub backend: &'static str,
    /// Lanes per warp on this backend (the CPU's warps have one lane).
    pub warp: u32,
    pub config: &'a Config,
}

/// Run `tests` on `kinds`, printing a JSON line per measurement, writing CSV, JSON and SVG
/// per test under `out`; returns every record.
pub fn run(
    bench: &Bench,
    tests: &[Test],
    kinds: &[MallocKind],
    out: &Path,
    bar: &ProgressBar,
) -> anyhow::Result<Vec<Record>> {
    // CUDA fixes its malloc heap once a kernel has used it in the process (the baselines'
    // kernels live in the same module), so it is sized for the largest pool before the first
    // launch: CUDA's allocator and the large requests of others use it.
    if bench.exec.kind() == BackendKind::Cuda && kinds.iter().any(|k| k.caps().uses_cuda_heap()) {
        let largest = bench.config.heap_bytes.max(bench.config.oom_heap_bytes);
        bench.exec.set_device_malloc_heap(largest as usize)?;
    }
    let mut all = Vec::new();
    let points: Vec<(Test, Vec<Point>)> = tests.iter().map(|&t| (t, points(t, bench.config))).collect();
    let baseline_points = |t: Test, p: &[Point]| if has_baseline(t) { p.len() } else { 0 };
    bar.set_length(points.iter().map(|(t, p)| (p.len() * kinds.len() + baseline_points(*t, p)) as u64).sum());
    for (test, points) in &points {
        let test = *test;
        bar.set_message(test.name());
        let mut records = Vec::new();
        if has_baseline(test) {
            for point in points {
                let record = baseline(bench, test, point)
                    .unwrap_or_else(|e| error_record(bench, test, "baseline", point, format!("{e:#}")));
                record::emit(&record);
                records.push(record);
                bar.inc(1);
            }
        }
        for &kind in kinds {
            let heap_bytes =
                if test == Test::Oom { bench.config.oom_heap_bytes } else { bench.config.heap_bytes };
            let mut heap: Option<(u64, MallocHeap)> = None;
            for point in points {
                let measured = match serves(bench, test, kind, point) {
                    Err(why) => {
                        let mut r = base_record(bench, test, kind.name(), point);
                        r.status = Status::Skipped;
                        r.note = Some(why);
                        vec![r]
                    }
                    Ok(()) => open(bench, kind, heap_bytes, region_param(bench, kind, point), &mut heap)
                        .and_then(|heap| measure(bench, test, heap, point))
                        .unwrap_or_else(|e| {
                            vec![error_record(bench, test, kind.name(), point, format!("{e:#}"))]
                        }),
                };
                for r in measured {
                    record::emit(&r);
                    records.push(r);
                }
                bar.inc(1);
            }
        }
        record::write_files(out, test.name(), &records)?;
        for figure in figures(test, bench.config, &records) {
            plot::draw(out, &figure).with_context(|| format!("plot {}", figure.name))?;
        }
        all.extend(records);
    }
    Ok(all)
}

/// Whether `kind` can run `point` of `test`, or why not.
fn serves(bench: &Bench, test: Test, kind: MallocKind, point: &Point) -> Result<(), String> {
    let caps = kind.caps();
    let request = point.largest_request(bench.warp);
    if request > caps.max_size as u64 {
        return Err(format!("requests of {request} B exceed its largest size ({} B)", caps.max_size));
    }
    let heap_bytes = if test == Test::Oom { bench.config.oom_heap_bytes } else { bench.config.heap_bytes };
    if heap_bytes < caps.min_region_bytes {
        return Err(format!(
            "it needs a pool of at least {} B; {heap_bytes} B were given",
            caps.min_region_bytes
        ));
    }
    if test == Test::Oom && kind == MallocKind::System {
        return Err("CUDA's heap is sized once per process and cannot be reset".into());
    }
    Ok(())
}

/// The allocator's heap for this test with parameter `param`, created at its first use and
/// again when the parameter changes (CUDA's own allocator keeps one heap per process, so its
/// parameter is always 0 and it is created once).
fn open<'h>(
    bench: &Bench,
    kind: MallocKind,
    bytes: u64,
    param: u64,
    heap: &'h mut Option<(u64, MallocHeap)>,
) -> anyhow::Result<&'h MallocHeap> {
    if heap.as_ref().is_none_or(|(p, _)| *p != param) {
        // Free the old pool before allocating the new one.
        *heap = None;
        let created = MallocHeap::new(bench.exec, kind, bytes, param)
            .with_context(|| format!("cannot create a `{kind}` heap of {bytes} bytes"))?;
        *heap = Some((param, created));
    }
    heap.as_ref().map(|(_, h)| h).context("heap was just created")
}

/// The region parameter `kind` needs for `point`: BitmapAlloc's slot size is a run-time
/// parameter (the paper measured it per object size), so its slot fits the point's largest
/// request; every other allocator takes its default.
fn region_param(bench: &Bench, kind: MallocKind, point: &Point) -> u64 {
    match kind {
        MallocKind::Bitmap => point.largest_request(bench.warp),
        _ => 0,
    }
}

/// The tests with a baseline that needs no allocator.
fn has_baseline(test: Test) -> bool {
    matches!(test, Test::Write | Test::Workgen)
}

/// The points of `test`.
pub fn points(test: Test, c: &Config) -> Vec<Point> {
    let mut points = Vec::new();
    match test {
        Test::Alloc => {
            for mode in [Mode::Thread, Mode::Warp] {
                for &threads in &c.threads {
                    for &size in &c.sizes {
                        points.push(Point { mode, ..Point::fixed(size, threads) });
                    }
                }
            }
        }
        Test::Mixed => {
            for &threads in &c.threads {
                for &upper in &c.sizes {
                    points.push(Point { size_min: 4, ..Point::fixed(upper, threads) });
                }
            }
        }
        Test::Scaling => {
            for &size in &c.scaling_sizes {
                for &threads in &c.thread_sweep {
                    points.push(Point::fixed(size, threads));
                }
            }
        }
        Test::Frag => points.extend(c.sizes.iter().map(|&s| Point::fixed(s, c.frag_threads))),
        Test::Oom => points.extend(c.sizes.iter().map(|&s| Point::fixed(s, c.oom_threads))),
        Test::Write => {
            points.extend(c.write_sizes.iter().map(|&s| Point::fixed(s, c.write_threads)));
            if let (Some(&lo), Some(&hi)) = (c.write_sizes.iter().min(), c.write_sizes.iter().max())
                && lo < hi
            {
                points.push(Point { size_min: lo, ..Point::fixed(hi, c.write_threads) });
            }
        }
        Test::Workgen => {
            for &upper in &c.workgen_ranges {
                for &threads in &c.thread_sweep {
                    points.push(Point { size_min: 4, ..Point::fixed(upper, threads) });
                }
            }
        }
    }
    points
}

fn base_record(bench: &Bench, test: Test, allocator: &str, point: &Point) -> Record {
    let mut r = Record::new(test.name(), allocator, bench.backend);
    r.mode = matches!(test, Test::Alloc).then_some(point.mode.name());
    r.size = point.size_max;
    r.size_min = point.size_min;
    r.threads = point.threads as u64;
    r
}

fn error_record(bench: &Bench, test: Test, allocator: &str, point: &Point, why: String) -> Record {
    let mut r = base_record(bench, test, allocator, point);
    r.status = Status::Error;
    r.note = Some(why);
    r
}

/// The device buffers of one point.
struct Buffers {
    ptrs: Buffer<u64>,
    stats: Buffer<u64>,
    aux: Buffer<u64>,
    /// The prefix-sum baseline's buffer (empty for allocator runs).
    buffer: Buffer<u8>,
}

/// What a sequence of launches saw.
#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    failed: u64,
    min_addr: u64,
    max_end: u64,
    corrupt: u64,
}

/// One point's launches, over one heap (or none, for the baselines).
struct Launcher<'a> {
    bench: &'a Bench<'a>,
    region: DevPtr<RegionHeader>,
    point: Point,
    chunk: u32,
    buffers: Buffers,
}

impl<'a> Launcher<'a> {
    fn new(
        bench: &'a Bench<'a>,
        heap: Option<&MallocHeap>,
        point: Point,
        baseline_bytes: u64,
    ) -> anyhow::Result<Self> {
        let exec = bench.exec;
        let threads = point.threads as usize;
        // Chunks of about sqrt(threads) entries keep both passes of the baseline's scan short.
        let chunk = ((threads as f64).sqrt().ceil() as u32).max(32);
        let buffers = Buffers {
            ptrs: exec.alloc_zeroed(threads.max(1))?,
            stats: exec.alloc_zeroed(bench_stat::COUNT)?,
            aux: exec.alloc_zeroed(threads.div_ceil(chunk as usize).max(1))?,
            buffer: exec.alloc_zeroed(baseline_bytes.max(1) as usize)?,
        };
        let region = heap.map(|h| h.ptr()).unwrap_or(DevPtr::null());
        Ok(Launcher { bench, region, point, chunk, buffers })
    }

    fn launch(&self, step: u32, flags: u32) -> anyhow::Result<()> {
        let p = &self.point;
        let threads = match step {
            bench_step::CHUNK_SUMS | bench_step::PLACE => p.threads.div_ceil(self.chunk),
            _ => p.threads,
        };
        let params = MallocBenchParams {
            region: self.region,
            ptrs: self.buffers.ptrs.ptr(),
            stats: self.buffers.stats.ptr(),
            aux: self.buffers.aux.ptr(),
            buffer: self.buffers.buffer.ptr(),
            threads: p.threads,
            min_size: p.size_min,
            max_size: p.size_max,
            step,
            flags,
            chunk: self.chunk,
            seed: self.bench.config.seed,
        };
        self.bench.exec.launch(
            &MALLOC_BENCH,
            Grid::for_elements(threads.max(1) as usize, BLOCK_THREADS),
            params,
        )?;
        Ok(())
    }

    /// Milliseconds the launches of `steps` take together.
    fn timed(&self, steps: &[(u32, u32)]) -> anyhow::Result<f64> {
        let ((), time) = self.bench.exec.time(|| {
            for &(step, flags) in steps {
                self.launch(step, flags)
                    .map_err(|e| dynasoar::host::Error::InvalidArgument(format!("{e:#}")))?;
            }
            Ok(())
        })?;
        Ok(time.as_secs_f64() * 1e3)
    }

    fn reset_stats(&self) -> anyhow::Result<()> {
        let mut words = [0u64; bench_stat::COUNT];
        words[bench_stat::MIN_ADDR] = u64::MAX;
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        self.bench.exec.write_bytes(&self.buffers.stats, 0, &bytes)?;
        Ok(())
    }

    fn stats(&self) -> anyhow::Result<Stats> {
        let s = self.bench.exec.read_all(&self.buffers.stats)?;
        Ok(Stats {
            failed: s[bench_stat::FAILED],
            min_addr: s[bench_stat::MIN_ADDR],
            max_end: s[bench_stat::MAX_END],
            corrupt: s[bench_stat::CORRUPT],
        })
    }
}

/// Start a run from an empty pool: reset the heap (CUDA's own allocator cannot be reset; the
/// previous run freed everything instead) and the counters.
fn fresh(bench: &Bench, heap: &MallocHeap, launcher: &Launcher) -> anyhow::Result<()> {
    if heap.kind() != MallocKind::System {
        heap.reset(bench.exec)?;
    }
    launcher.reset_stats()
}

/// Failures are expected in some runs: clear the heap's error bits, keeping the message of
/// anything other than out of memory.
fn take_errors(bench: &Bench, heap: &MallocHeap) -> Option<String> {
    match heap.take_errors(bench.exec, &[KERNEL]) {
        Ok(()) => None,
        Err(e) => Some(e.to_string()),
    }
}

/// Fill in the status from what the runs saw.
fn conclude(r: &mut Record, failed: u64, corrupt: u64, note: Option<String>) {
    r.failed = failed;
    r.corrupt = corrupt;
    if corrupt > 0 {
        r.status = Status::Corrupt;
    } else if failed > 0 {
        r.status = Status::Oom;
        r.alloc_ms = None;
        r.free_ms = None;
        r.write_ms = None;
    }
    if r.status != Status::Ok {
        r.note = note;
    }
}

/// Measure `point` of `test` on `heap`: a warm-up run, then `runs` timed runs (medians).
fn measure(bench: &Bench, test: Test, heap: &MallocHeap, point: &Point) -> anyhow::Result<Vec<Record>> {
    let l = Launcher::new(bench, Some(heap), *point, 0)?;
    let mut r = base_record(bench, test, heap.kind().name(), point);
    let runs = bench.config.runs;
    let (mut failed, mut corrupt, mut note) = (0u64, 0u64, None);
    let mut observe = |l: &Launcher| -> anyhow::Result<Stats> {
        let s = l.stats()?;
        failed = failed.max(s.failed);
        corrupt = corrupt.max(s.corrupt);
        note = note.take().or_else(|| take_errors(bench, heap));
        Ok(s)
    };
    let alloc_flags = if point.mode == Mode::Warp { bench_flags::WARP_BASED } else { 0 };
    match test {
        Test::Alloc | Test::Mixed | Test::Scaling => {
            let (mut allocs, mut frees) = (Vec::new(), Vec::new());
            for run in 0..=runs {
                fresh(bench, heap, &l)?;
                let alloc = l.timed(&[(bench_step::ALLOCATE, alloc_flags)])?;
                let free = l.timed(&[(bench_step::FREE, 0)])?;
                observe(&l)?;
                if run > 0 {
                    allocs.push(alloc);
                    frees.push(free);
                }
            }
            r.runs = runs;
            r.alloc_ms = record::median(&mut allocs);
            r.free_ms = record::median(&mut frees);
        }
        Test::Write => {
            fresh(bench, heap, &l)?;
            l.launch(bench_step::ALLOCATE, 0)?;
            let mut writes =
                (0..=runs).map(|_| l.timed(&[(bench_step::WRITE, 0)])).collect::<anyhow::Result<Vec<_>>>()?;
            writes.remove(0);
            l.launch(bench_step::FREE, 0)?;
            observe(&l)?;
            r.runs = runs;
            r.write_ms = record::median(&mut writes);
        }
        Test::Workgen => {
            let mut times = Vec::new();
            for run in 0..=runs {
                fresh(bench, heap, &l)?;
                let t = l.timed(&[(bench_step::ALLOCATE, bench_flags::WRITE_AFTER_ALLOCATE)])?;
                l.launch(bench_step::FREE, 0)?;
                observe(&l)?;
                if run > 0 {
                    times.push(t);
                }
            }
            r.runs = runs;
            r.write_ms = record::median(&mut times);
        }
        Test::Frag => {
            // After N allocations, then the widest range over R rounds of free + allocate.
            let started = Instant::now();
            fresh(bench, heap, &l)?;
            l.launch(bench_step::ALLOCATE, 0)?;
            let first = observe(&l)?;
            let wanted = bench.config.frag_rounds;
            let mut done = 0;
            while done < wanted && started.elapsed() < bench.config.round_limit {
                l.launch(bench_step::FREE, 0)?;
                l.launch(bench_step::ALLOCATE, 0)?;
                // One round at a time, so that the limit is checked against finished work.
                bench.exec.synchronize()?;
                done += 1;
            }
            let rounds = observe(&l)?;
            l.launch(bench_step::FREE, 0)?;
            bench.exec.synchronize()?;
            let requested = point.threads as u64 * point.size_max as u64;
            let mut records = Vec::new();
            for (s, n) in [(first, 0), (rounds, wanted)] {
                let mut r = r.clone();
                r.rounds = Some(n);
                r.requested_bytes = Some(requested);
                r.range_bytes = (s.max_end > s.min_addr).then(|| s.max_end - s.min_addr);
                conclude(&mut r, s.failed, s.corrupt, note.clone());
                if n > 0 && done < wanted && r.status == Status::Ok {
                    r.status = Status::Timeout;
                    let range = r.range_bytes.map_or("unknown".into(), |b| b.to_string());
                    r.note = Some(format!(
                        "{done} of {wanted} rounds within the {} s limit (range then {range} bytes)",
                        bench.config.round_limit.as_secs()
                    ));
                    r.range_bytes = None;
                }
                records.push(r);
            }
            return Ok(records);
        }
        Test::Oom => {
            // Rounds of allocations that are never freed, until one fails. A pool that never
            // fails (one that wraps around) stops after twice what it could hold.
            let started = Instant::now();
            fresh(bench, heap, &l)?;
            let per_round = point.threads as u64 * point.size_max as u64;
            let cap = (2 * heap.bytes() / per_round.max(1) + 2).min(1 << 20) as u32;
            let (mut served, mut rounds, mut first_failure) = (0u64, 0u32, 0u64);
            let mut timed_out = false;
            while rounds < cap {
                if started.elapsed() >= bench.config.round_limit {
                    timed_out = true;
                    break;
                }
                l.reset_stats()?;
                l.launch(bench_step::ALLOCATE, 0)?;
                let s = l.stats()?;
                rounds += 1;
                served += point.threads as u64 - s.failed;
                if s.failed > 0 {
                    first_failure = s.failed;
                    break;
                }
            }
            let _ = take_errors(bench, heap);
            r.rounds = Some(rounds);
            r.failed = first_failure;
            let fraction = (served * point.size_max as u64) as f64 / heap.bytes() as f64;
            if timed_out {
                r.status = Status::Timeout;
                r.note = Some(format!(
                    "no malloc failed in {rounds} rounds within the {} s limit: at least {fraction:.3} of the pool",
                    bench.config.round_limit.as_secs()
                ));
            } else {
                r.usable_fraction = Some(fraction);
                if first_failure == 0 {
                    r.note =
                        Some(format!("no malloc failed in {rounds} rounds (the allocator reuses or wraps)"));
                }
            }
            return Ok(vec![r]);
        }
    }
    conclude(&mut r, failed, corrupt, note);
    Ok(vec![r])
}

/// The baseline of `point` of `test` (no allocator): one contiguous buffer, placed by a
/// two-pass prefix sum over the sizes.
fn baseline(bench: &Bench, test: Test, point: &Point) -> anyhow::Result<Record> {
    let seed = bench.config.seed;
    let bytes: u64 =
        (0..point.threads).map(|t| draw_size(seed, t, point.size_min, point.size_max) as u64).sum();
    let l = Launcher::new(bench, None, *point, bytes)?;
    let mut r = base_record(bench, test, "baseline", point);
    let scan = [(bench_step::CHUNK_SUMS, 0), (bench_step::PLACE, 0)];
    let write = [(bench_step::WRITE, 0)];
    l.reset_stats()?;
    let mut times = Vec::new();
    for run in 0..=bench.config.runs {
        let t = match test {
            // Memory access alone: the buffer is placed once, untimed.
            Test::Write => {
                if run == 0 {
                    l.timed(&scan)?;
                }
                l.timed(&write)?
            }
            // Work generation: sizes, scan and writes, all timed.
            _ => l.timed(&[scan[0], scan[1], write[0]])?,
        };
        if run > 0 {
            times.push(t);
        }
    }
    r.runs = bench.config.runs;
    r.write_ms = record::median(&mut times);
    let s = l.stats()?;
    conclude(&mut r, 0, s.corrupt, Some("the baseline's writes did not read back".into()));
    Ok(r)
}

/// The figures of `test`, shaped like the survey's.
pub fn figures(test: Test, config: &Config, records: &[Record]) -> Vec<Figure> {
    let mut figures = Vec::new();
    let ms = |r: &Record, f: fn(&Record) -> Option<f64>| if r.status == Status::Ok { f(r) } else { None };
    let alloc_ms: fn(&Record) -> Option<f64> = |r| r.alloc_ms;
    let free_ms: fn(&Record) -> Option<f64> = |r| r.free_ms;
    let write_ms: fn(&Record) -> Option<f64> = |r| r.write_ms;
    match test {
        Test::Alloc | Test::Mixed => {
            let modes: &[&str] = if test == Test::Alloc { &["thread", "warp"] } else { &[""] };
            for &mode in modes {
                for &threads in &config.threads {
                    for (op, y) in [("alloc", alloc_ms), ("free", free_ms)] {
                        let pick = |r: &Record| r.threads == threads as u64 && r.mode.unwrap_or("") == mode;
                        let label = if mode.is_empty() { String::new() } else { format!("{mode}-") };
                        figures.push(Figure {
                            name: format!("{}-{label}{threads}-{op}", test.name()),
                            title: format!("{} {label}{op}, {threads} threads", test.name()),
                            x_label: if test == Test::Alloc {
                                "allocation size (B)"
                            } else {
                                "upper bound of sizes (B)"
                            },
                            y_label: "time (ms)",
                            log_x: true,
                            log_y: true,
                            series: series(records, pick, |r| Some(r.size as f64), |r| ms(r, y)),
                        });
                    }
                }
            }
        }
        Test::Scaling => {
            for &size in &config.scaling_sizes {
                for (op, y) in [("alloc", alloc_ms), ("free", free_ms)] {
                    figures.push(Figure {
                        name: format!("scaling-{size}-{op}"),
                        title: format!("scaling, {size} B, {op}"),
                        x_label: "threads",
                        y_label: "time (ms)",
                        log_x: true,
                        log_y: true,
                        series: series(records, |r| r.size == size, |r| Some(r.threads as f64), |r| ms(r, y)),
                    });
                }
            }
        }
        Test::Frag => {
            for (name, rounds) in [("frag-allocations", 0), ("frag-rounds", config.frag_rounds)] {
                let pick = |r: &Record| r.rounds == Some(rounds);
                let mut s =
                    series(records, pick, |r| Some(r.size as f64), |r| r.range_bytes.map(|b| b as f64));
                let requested =
                    config.sizes.iter().map(|&size| (size as f64, size as f64 * config.frag_threads as f64));
                s.push(("requested".into(), requested.collect()));
                figures.push(Figure {
                    name: name.into(),
                    title: format!(
                        "address range of {} allocations after {rounds} rounds",
                        config.frag_threads
                    ),
                    x_label: "allocation size (B)",
                    y_label: "address range (B)",
                    log_x: true,
                    log_y: true,
                    series: s,
                });
            }
        }
        Test::Oom => figures.push(Figure {
            name: "oom".into(),
            title: format!(
                "pool handed out before the first failure, {} threads per round",
                config.oom_threads
            ),
            x_label: "allocation size (B)",
            y_label: "fraction of the pool",
            log_x: true,
            log_y: false,
            series: series(records, |_| true, |r| Some(r.size as f64), |r| r.usable_fraction),
        }),
        Test::Write => figures.push(Figure {
            name: "write".into(),
            title: format!("writing allocated memory, {} threads", config.write_threads),
            x_label: "allocation size (B)",
            y_label: "time (ms)",
            log_x: true,
            log_y: true,
            series: series(records, |r| r.size == r.size_min, |r| Some(r.size as f64), |r| ms(r, write_ms)),
        }),
        Test::Workgen => {
            for &upper in &config.workgen_ranges {
                figures.push(Figure {
                    name: format!("workgen-4-{upper}"),
                    title: format!("work generation, 4-{upper} B per thread"),
                    x_label: "threads",
                    y_label: "time (ms)",
                    log_x: true,
                    log_y: true,
                    series: series(
                        records,
                        |r| r.size == upper,
                        |r| Some(r.threads as f64),
                        |r| ms(r, write_ms),
                    ),
                });
            }
        }
    }
    figures
}

/// One line per allocator (in the records' order) of the records `pick` selects.
fn series(
    records: &[Record],
    pick: impl Fn(&Record) -> bool,
    x: impl Fn(&Record) -> Option<f64>,
    y: impl Fn(&Record) -> Option<f64>,
) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut lines: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in records.iter().filter(|r| pick(r)) {
        let Some(point) = x(r).zip(y(r)) else { continue };
        match lines.iter_mut().find(|(name, _)| *name == r.allocator) {
            Some((_, points)) => points.push(point),
            None => lines.push((r.allocator.clone(), vec![point])),
        }
    }
    lines
}
