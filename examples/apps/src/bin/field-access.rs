//! Field-access benchmark (issue: the DSL): `parallel_do` over N objects of a class with one
//! `f32` field doing `x += 1.0`, with the default do-all loop choice and with each of the two
//! loops forced, compared in the same run with a device-to-device copy of the same bytes and a
//! plain-array kernel. Bandwidth counts bytes read plus bytes written.

use clap::Parser;
use dynasoar::AllocatorSpec;
use dynasoar::host::{DoAllLoop, Executor, ExecutorOptions, TIMED_LAUNCHES, WAVE_CHOICES};
use dynasoar_examples::cli::{exit_on_error_without_heap_flag, note_cpu_default_size, try_collect};
use dynasoar_examples::{CommonArgs, MODELS_PTX, RunOptions, outln};
use dynasoar_models::field_bench::{ARRAY_BUMP, ArrayParams, Scalar, ScalarHeap, VALUES};

#[derive(Parser)]
#[command(about = "parallel_do field-access bandwidth vs a device copy")]
struct Args {
    /// Objects.
    #[arg(long, default_value_t = DEFAULT_OBJECTS, value_parser = clap::value_parser!(u64).range(1..))]
    objects: u64,
    /// Timed repetitions (after the warm-up ones, see `measure_passes`).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    reps: u32,
    #[command(flatten)]
    common: CommonArgs,
}

/// The default of `--objects`.
const DEFAULT_OBJECTS: u64 = 16 << 20;

fn main() -> std::process::ExitCode {
    exit_on_error_without_heap_flag(run(&Args::parse()))
}

/// Microseconds per pass of `parallel_do(Scalar::bump)` (the whole call, and its enumeration
/// and method kernels as profiled), and whether every object was bumped once per pass.
struct DoAllRun {
    /// The loop the runtime ran (`plain` or `streaming`).
    ran: &'static str,
    per_pass: f64,
    enumeration: f64,
    method: f64,
    ok: bool,
}

/// Microseconds per repetition of `total` over `reps` repetitions.
fn us_per_rep(total: std::time::Duration, reps: u32) -> f64 {
    total.as_secs_f64() * 1e6 / reps as f64
}

/// `parallel_do(Scalar::bump)` over `args.objects` new objects with do-all loop `choice`: the
/// time per pass from a runtime that records no events (as the copy and the array kernel are
/// timed: CUDA events between launches are work of the GPU's, which a pass of 50 us feels),
/// and its enumeration and method kernels from a second runtime that times each launch.
fn measure(args: &Args, options: &RunOptions, choice: DoAllLoop) -> anyhow::Result<DoAllRun> {
    let plain = measure_passes(args, options, choice, false)?;
    let profiled = measure_passes(args, options, choice, true)?;
    Ok(DoAllRun {
        ran: plain.ran,
        per_pass: plain.per_pass,
        enumeration: profiled.enumeration,
        method: profiled.method,
        ok: plain.ok && profiled.ok,
    })
}

/// One runtime's passes for [`measure`]: with `profile`, each launch records events, and the
/// enumeration and method times are those events'; without, they are zero.
fn measure_passes(
    args: &Args,
    options: &RunOptions,
    choice: DoAllLoop,
    profile: bool,
) -> anyhow::Result<DoAllRun> {
    let n = args.objects;
    // Blocks for every object (64 four-byte objects a block), plus 8 MiB for the heap's
    // metadata and spare blocks.
    let heap_bytes = n
        .div_ceil(64)
        .checked_mul(ScalarHeap::BLOCK_BYTES)
        .and_then(|b| b.checked_add(8 << 20))
        .ok_or_else(|| anyhow::anyhow!("--objects {n} is too large"))?;
    let options = RunOptions { time_enumeration: profile, ..options.clone() };
    let rt = options
        .runtime::<ScalarHeap>(heap_bytes)
        .deferred_checks(true)
        .profile_methods(profile)
        .do_all_loop(choice)
        .build()?;
    let exec = rt.executor();
    rt.parallel_new(Scalar::create, n)?;
    // Enough passes for the runtime's choices of grid to be made (`DoAllWaves::Auto` times the
    // first launches of each method), so that the timed passes all run the grid it kept.
    let warmup = 3 + (WAVE_CHOICES.len() as u32) * (1 + TIMED_LAUNCHES);
    for _ in 0..warmup {
        rt.parallel_do(Scalar::bump)?;
    }
    rt.sync()?;
    rt.take_timings()?;
    let ((), t_do) = exec.time(|| {
        for _ in 0..args.reps {
            rt.parallel_do(Scalar::bump)?;
        }
        Ok(())
    })?;
    rt.sync()?;
    let timings = rt.take_timings()?;

    // Check: every object was bumped warm-up + reps times.
    let mut xs: Vec<f32> = rt.collect::<Scalar>()?.into_iter().map(|s| s.x).collect();
    xs.sort_by(f32::total_cmp);
    let bumps = (warmup + args.reps) as f32;
    let mut want: Vec<f32> = try_collect(n, "objects", "--objects", |i| (i % VALUES) as f32 + bumps)?;
    want.sort_by(f32::total_cmp);
    let per = |t| us_per_rep(t, args.reps);
    let streamed = match rt.do_all_loop() {
        DoAllLoop::Streaming => true,
        DoAllLoop::Plain => false,
        DoAllLoop::Auto | DoAllLoop::Adaptive => rt.do_all_loops().iter().any(|c| c.streaming == Some(true)),
    };
    Ok(DoAllRun {
        ran: if streamed { "streaming" } else { "plain" },
        per_pass: per(t_do),
        enumeration: per(timings.enumeration),
        method: per(timings.methods),
        ok: xs == want,
    })
}

fn run(args: &Args) -> anyhow::Result<()> {
    args.common.reject_graph("field-access", "it times each parallel_do on its own")?;
    let n = args.objects;
    let (run_options, kind) = args.common.resolve()?;
    note_cpu_default_size(kind, n == DEFAULT_OBJECTS, "field-access", "--objects 1000000");
    let exec_options = run_options.exec.clone();
    // Each loop choice in its own runtime: the default (on a GPU, the streaming loop for a
    // method this short, see `DoAllLoop::Auto`), and each loop forced.
    let choices =
        [("default", DoAllLoop::default()), ("plain", DoAllLoop::Plain), ("streaming", DoAllLoop::Streaming)];
    let mut runs = Vec::new();
    for (i, (name, choice)) in choices.into_iter().enumerate() {
        let exec = ExecutorOptions { quiet: i > 0, ..exec_options.clone() };
        runs.push((name, measure(args, &RunOptions { exec, ..run_options.clone() }, choice)?));
    }

    // The same bytes through a copy and through a plain-array kernel.
    let exec = Executor::new(MODELS_PTX, ExecutorOptions { quiet: true, ..exec_options })?;
    let src = exec.upload(&try_collect(n, "objects", "--objects", |i| i as f32)?)?;
    let mut dst = exec.alloc_zeroed::<f32>(usize::try_from(n)?)?;
    exec.copy(&src, &mut dst)?;
    let ((), t_copy) = exec.time(|| {
        for _ in 0..args.reps {
            exec.copy(&src, &mut dst)?;
        }
        Ok(())
    })?;
    let grid = exec.full_grid(256);
    let params = ArrayParams { values: dst.ptr(), len: n };
    exec.launch(&ARRAY_BUMP, grid, params)?;
    let ((), t_array) = exec.time(|| {
        for _ in 0..args.reps {
            exec.launch(&ARRAY_BUMP, grid, params)?;
        }
        Ok(())
    })?;

    let ok = runs.iter().all(|(_, r)| r.ok);
    let per = |t| us_per_rep(t, args.reps);
    let (copy, array) = (per(t_copy), per(t_array));
    let gbs = |us: f64| 2.0 * 4.0 * n as f64 / us / 1e3;
    for (name, r) in &runs {
        outln!(
            "bench=field-access backend={} allocator={} objects={n} reps={} loop={name} ran={} parallel_do_us={:.1} enum_us={:.1} method_us={:.1} copy_us={copy:.1} array_us={array:.1} parallel_do_gbs={:.1} copy_gbs={:.1} array_gbs={:.1} ratio_vs_copy={:.3} ok={}",
            exec.kind().name(),
            run_options.store.name(),
            args.reps,
            r.ran,
            r.per_pass,
            r.enumeration,
            r.method,
            gbs(r.per_pass),
            gbs(copy),
            gbs(array),
            copy / r.per_pass,
            r.ok,
        );
    }
    outln!();
    outln!("{:<40} {:>12} {:>10} {:>8}", "", "us per pass", "GB/s", "of copy");
    for (name, r) in &runs {
        let label = format!("parallel_do (x += 1.0), {name} ({})", r.ran);
        outln!(
            "{label:<40} {:>12.1} {:>10.1} {:>7.0}%",
            r.per_pass,
            gbs(r.per_pass),
            100.0 * copy / r.per_pass
        );
        outln!("{:<40} {:>12.1}", "    of which enumeration", r.enumeration);
    }
    outln!(
        "{:<40} {:>12.1} {:>10.1} {:>7.0}%",
        "plain array kernel",
        array,
        gbs(array),
        100.0 * copy / array
    );
    outln!("{:<40} {:>12.1} {:>10.1}", "device-to-device copy", copy, gbs(copy));
    outln!("results {}", if ok { "correct" } else { "WRONG" });
    anyhow::ensure!(ok, "parallel_do did not bump every object once per pass");
    Ok(())
}
