//! Field-access benchmark (issue: the DSL): `parallel_do` over N objects of a class with one
//! `f32` field doing `x += 1.0`, compared in the same run with a device-to-device copy of the
//! same bytes and a plain-array kernel. Bandwidth counts bytes read plus bytes written.

use clap::Parser;
use dynasoar::AllocatorSpec;
use dynasoar::host::{DoAllLoop, Result, Runtime};
use dynasoar_examples::{CommonArgs, MODELS_PTX};
use dynasoar_models::field_bench::{ARRAY_BUMP, ArrayParams, Scalar, ScalarHeap, VALUES};

#[derive(Parser)]
#[command(about = "parallel_do field-access bandwidth vs a device copy")]
struct Args {
    /// Objects.
    #[arg(long, default_value_t = 16 << 20)]
    objects: u64,
    /// Timed repetitions (after warm-up ones: at least 3, and until the runtime has chosen
    /// the do-all loop).
    #[arg(long, default_value_t = 20)]
    reps: u32,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> std::process::ExitCode {
    match run(&Args::parse()) {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<bool> {
    let n = args.objects;
    // Blocks for every object (64 four-byte objects a block), plus 8 MiB for the heap's
    // metadata and spare blocks.
    let heap_bytes = n.div_ceil(64) * ScalarHeap::BLOCK_BYTES + (8 << 20);
    let rt = Runtime::<ScalarHeap>::builder(MODELS_PTX)
        .executor_options(dynasoar::host::ExecutorOptions {
            backend: args.common.backend,
            cpu_threads: args.common.cpu_threads,
            ..Default::default()
        })
        .heap_bytes(heap_bytes)
        .deferred_checks(true)
        .profile_methods(true)
        .build()?;
    let exec = rt.executor();
    rt.parallel_new(Scalar::create, n)?;
    // Warm up until the adaptive runtime has timed both do-all loops and kept one (the CPU
    // backend and the explicit choices decide nothing: 3 launches).
    let decided =
        |rt: &Runtime<ScalarHeap>| rt.do_all_loops().iter().find(|c| c.streaming.is_some()).cloned();
    let mut warmup = 0;
    while warmup < 3 || (warmup < 40 && !rt.do_all_loops().is_empty() && decided(&rt).is_none()) {
        rt.parallel_do(Scalar::bump)?;
        rt.sync()?;
        warmup += 1;
    }
    let choice = decided(&rt);
    let loop_name = match (rt.do_all_loop(), &choice) {
        (DoAllLoop::Plain, _) => "plain",
        (DoAllLoop::Streaming, _) => "streaming",
        (DoAllLoop::Adaptive, Some(c)) if c.streaming == Some(true) => "adaptive:streaming",
        (DoAllLoop::Adaptive, Some(_)) => "adaptive:plain",
        (DoAllLoop::Adaptive, None) => "adaptive:undecided",
    };
    rt.take_timings()?;
    let ((), t_do) = exec.time(|| {
        for _ in 0..args.reps {
            rt.parallel_do(Scalar::bump)?;
        }
        Ok(())
    })?;
    rt.sync()?;
    let timings = rt.take_timings()?;

    // The same bytes through a copy and through a plain-array kernel.
    let src = exec.upload(&(0..n).map(|i| i as f32).collect::<Vec<f32>>())?;
    let mut dst = exec.alloc_zeroed::<f32>(n as usize)?;
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

    // Check: every object was bumped warm-up + reps times.
    let mut xs: Vec<f32> = rt.collect::<Scalar>()?.into_iter().map(|s| s.x).collect();
    xs.sort_by(f32::total_cmp);
    let bumps = (warmup + args.reps) as f32;
    let mut want: Vec<f32> = (0..n).map(|i| (i % VALUES) as f32 + bumps).collect();
    want.sort_by(f32::total_cmp);
    let ok = xs == want;

    let bytes = 2.0 * 4.0 * n as f64 * args.reps as f64;
    let gbs = |t: std::time::Duration| bytes / t.as_secs_f64() / 1e9;
    let per = |t: std::time::Duration| t.as_secs_f64() * 1e6 / args.reps as f64;
    let trial_us = |d: Option<std::time::Duration>| {
        d.map_or("na".to_string(), |d| format!("{:.1}", d.as_secs_f64() * 1e6))
    };
    let (plain_us, streaming_us) =
        choice.as_ref().map_or(("na".into(), "na".into()), |c| (trial_us(c.plain), trial_us(c.streamed)));
    println!(
        "bench=field-access backend={} objects={n} reps={} loop={loop_name} trial_plain_us={plain_us} trial_streaming_us={streaming_us} parallel_do_us={:.1} enum_us={:.1} method_us={:.1} copy_us={:.1} array_us={:.1} parallel_do_gbs={:.1} copy_gbs={:.1} array_gbs={:.1} ratio_vs_copy={:.3} ok={ok}",
        exec.kind().name(),
        args.reps,
        per(t_do),
        timings.enumeration.as_secs_f64() * 1e6 / args.reps as f64,
        timings.methods.as_secs_f64() * 1e6 / args.reps as f64,
        per(t_copy),
        per(t_array),
        gbs(t_do),
        gbs(t_copy),
        gbs(t_array),
        gbs(t_do) / gbs(t_copy),
    );
    println!();
    println!("{:<28} {:>12} {:>10}", "", "us per pass", "GB/s");
    println!("{:<28} {:>12.1} {:>10.1}", "parallel_do (x += 1.0)", per(t_do), gbs(t_do));
    println!(
        "{:<28} {:>12.1} {:>10}",
        "  of which enumeration",
        timings.enumeration.as_secs_f64() * 1e6 / args.reps as f64,
        ""
    );
    println!("{:<28} {:>12.1} {:>10.1}", "plain array kernel", per(t_array), gbs(t_array));
    println!("{:<28} {:>12.1} {:>10.1}", "device-to-device copy", per(t_copy), gbs(t_copy));
    println!(
        "do-all loop: {loop_name} (timed launches of the method kernel: plain {plain_us} us, streaming {streaming_us} us)"
    );
    println!(
        "parallel_do reaches {:.0}% of the copy's bandwidth; results {}",
        100.0 * gbs(t_do) / gbs(t_copy),
        if ok { "correct" } else { "WRONG" }
    );
    Ok(ok)
}
