//! N-body simulation (DynaSOAr paper, Table 1): the DSL version and its SOA and AOS baselines.
//!
//! `cargo run --release --bin nbody -- --bodies 20000 --steps 3000 --compare`

use clap::Parser;
use dynasoar_examples::nbody::{Config, Outcome, run};
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_examples::report::Report;
use dynasoar_examples::{CommonArgs, Implementation, exit_on_error};

#[derive(Parser)]
#[command(about = "N-body simulation with the dynasoar DSL and hand-written baselines")]
struct Args {
    /// Number of bodies.
    #[arg(long, default_value_t = dynasoar_models::nbody::config::BODIES)]
    bodies: u32,
    /// Time steps.
    #[arg(long, default_value_t = dynasoar_models::nbody::config::STEPS)]
    steps: u32,
    /// Random seed of the initial bodies.
    #[arg(long, default_value_t = dynasoar_models::nbody::config::SEED)]
    seed: u64,
    /// Implementation to run.
    #[arg(long = "impl", value_enum, default_value = "dynasoar")]
    implementation: Implementation,
    /// Run the DSL version and both baselines, and report the ratios.
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
    let (px, py) = o.momentum();
    Report::new("nbody")
        .field("backend", backend)
        .field("allocator", args.common.label(implementation))
        .field("size", args.bodies)
        .field("iters", args.steps)
        .field("total_us", o.total.as_micros())
        .field("enum_us", o.enumeration.as_micros())
        .field("bodies", o.bodies.len())
        .field("momentum", format!("{px:.6e},{py:.6e}"))
        .field("checksum", format!("{:.6}", o.checksum()))
}

fn run_app(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.bodies > 0, "--bodies must be at least 1");
    let cfg = Config { bodies: args.bodies, steps: args.steps, seed: args.seed, ..Config::default() };
    let options = args.common.run_options();
    let backend = args.common.executor()?.kind().name();
    let implementations = if args.compare {
        vec![Implementation::Soa, Implementation::Aos, Implementation::Dynasoar]
    } else {
        vec![args.implementation]
    };
    let mut results = Vec::new();
    for &implementation in &implementations {
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
        println!("{:<10} {:>12} {:>12} {:>14}", "impl", "total ms", "enum ms", "vs soa");
        let soa = results[0].1.total.as_secs_f64();
        for (i, o) in &results {
            println!(
                "{:<10} {:>12.1} {:>12.1} {:>13.2}x",
                args.common.label(*i),
                o.total.as_secs_f64() * 1e3,
                o.enumeration.as_secs_f64() * 1e3,
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
