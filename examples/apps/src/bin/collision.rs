//! Particle collisions (DynaSOAr paper, Table 1): n-body gravity where close bodies merge and
//! the merged ones are deleted. The DSL version and its SOA and AOS baselines.
//!
//! `cargo run --release --bin collision -- --bodies 40000 --steps 2000 --compare`

use clap::Parser;
use dynasoar_examples::collision::{Config, Outcome, run};
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_examples::report::Report;
use dynasoar_examples::{CommonArgs, Implementation, exit_on_error};
use dynasoar_models::collision::{Physics, config};

#[derive(Parser)]
#[command(about = "Particle collisions with the dynasoar DSL and hand-written baselines")]
struct Args {
    /// Number of bodies at the start.
    #[arg(long, default_value_t = config::BODIES)]
    bodies: u32,
    /// Time steps.
    #[arg(long, default_value_t = config::STEPS)]
    steps: u32,
    /// Random seed of the initial bodies.
    #[arg(long, default_value_t = config::SEED)]
    seed: u64,
    /// Length of a time step.
    #[arg(long, default_value_t = config::DT)]
    dt: f32,
    /// Bodies closer than this merge.
    #[arg(long, default_value_t = config::MERGE_THRESHOLD)]
    merge_threshold: f32,
    /// Heap of the DSL version in MiB (default: room for the bodies).
    #[arg(long, value_name = "MIB")]
    heap_mib: Option<u64>,
    /// Implementation to run.
    #[arg(long = "impl", value_enum, default_value = "dynasoar")]
    implementation: Implementation,
    /// Run both baselines and the DSL version, and report the ratios.
    #[arg(long)]
    compare: bool,
    /// No progress bar.
    #[arg(long)]
    no_progress: bool,
    #[command(flatten)]
    render: RenderArgs,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> std::process::ExitCode {
    exit_on_error(run_app(Args::parse()))
}

fn report(args: &Args, implementation: Implementation, backend: &str, o: &Outcome) -> Report {
    Report::new("collision")
        .field("backend", backend)
        .field("allocator", args.common.label(implementation))
        .field("size", args.bodies)
        .field("iters", args.steps)
        .field("total_us", o.total.as_micros())
        .field("enum_us", o.enumeration.as_micros())
        .field("bodies", o.bodies.len())
        .field("mass", format!("{:.6e}", o.total_mass()))
        .field("checksum", format!("{:.6}", o.checksum()))
}

fn run_app(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.bodies > 0, "--bodies must be at least 1");
    anyhow::ensure!(args.heap_mib != Some(0), "--heap-mib must be at least 1");
    let heap_bytes = match args.heap_mib {
        Some(mib) => {
            Some(mib.checked_mul(1 << 20).ok_or_else(|| anyhow::anyhow!("--heap-mib {mib} is too large"))?)
        }
        None => None,
    };
    let physics = Physics { dt: args.dt, merge_threshold: args.merge_threshold, ..Physics::default() };
    let cfg = Config { bodies: args.bodies, steps: args.steps, seed: args.seed, physics, heap_bytes };
    cfg.validate()?;
    let options = args.common.run_options();
    let backend = args.common.executor()?.kind().name();
    let implementations = if args.compare {
        vec![Implementation::Soa, Implementation::Aos, Implementation::Dynasoar]
    } else {
        vec![args.implementation]
    };
    let mut results = Vec::new();
    for &implementation in &implementations {
        // With --compare, only the last run (the DSL version) renders.
        let render = if implementation == *implementations.last().unwrap() {
            args.render.clone()
        } else {
            RenderArgs::default()
        };
        let mut recorder = Recorder::new(&render)?;
        let outcome = run(implementation, options.clone(), &cfg, &mut recorder, !args.no_progress)?;
        let frames = recorder.finish()?;
        if frames > 0 {
            eprintln!("wrote {frames} frames to {}", render.render.as_ref().unwrap().display());
        }
        results.push((implementation, outcome));
    }
    if args.compare {
        println!("{:<10} {:>12} {:>12} {:>10} {:>14}", "impl", "total ms", "enum ms", "bodies", "vs soa");
        let soa = results[0].1.total.as_secs_f64();
        for (i, o) in &results {
            println!(
                "{:<10} {:>12.1} {:>12.1} {:>10} {:>13.2}x",
                args.common.label(*i),
                o.total.as_secs_f64() * 1e3,
                o.enumeration.as_secs_f64() * 1e3,
                o.bodies.len(),
                o.total.as_secs_f64() / soa
            );
        }
    }
    let mut lines: Vec<Report> = results.iter().map(|(i, o)| report(&args, *i, backend, o)).collect();
    if args.compare {
        let t = |k: usize| results[k].1.total.as_micros();
        let last = lines.pop().unwrap().field("soa_us", t(0)).field("aos_us", t(1)).field(
            "ratio_vs_soa",
            format!("{:.3}", results[2].1.total.as_secs_f64() / results[0].1.total.as_secs_f64()),
        );
        lines.push(last);
    }
    for line in lines {
        println!("{line}");
    }
    Ok(())
}
