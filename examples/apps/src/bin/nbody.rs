//! N-body simulation (DynaSOAr paper, Table 1): the DSL version and its SOA and AOS baselines.
//!
//! `cargo run --release --bin nbody -- --bodies 20000 --steps 3000 --compare`

use clap::Parser;
use dynasoar_examples::compare::{Choices, RunChoice, run_and_report};
use dynasoar_examples::nbody::{Config, Outcome, run};
use dynasoar_examples::report::Report;
use dynasoar_examples::{CommonArgs, exit_on_error_without_heap_flag};
use dynasoar_models::nbody::config;

#[derive(Parser)]
#[command(about = "N-body simulation with the dynasoar DSL and hand-written baselines")]
struct Args {
    /// Number of bodies.
    #[arg(long, default_value_t = config::BODIES, value_parser = clap::value_parser!(u32).range(1..))]
    bodies: u32,
    /// Time steps.
    #[arg(long, default_value_t = config::STEPS)]
    steps: u32,
    /// Random seed of the initial bodies.
    #[arg(long, default_value_t = config::SEED)]
    seed: u64,
    /// Approximate square roots and divisions in the forces (`dynasoar::math::fast`), in the
    /// DSL version and both baselines: faster on the GPU, results no longer bit-identical to the
    /// CPU backend's (which computes them exactly).
    #[arg(long)]
    fast_math: bool,
    #[command(flatten)]
    run: RunChoice,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> std::process::ExitCode {
    exit_on_error_without_heap_flag(run_app(Args::parse()))
}

fn report(args: &Args, label: &str, backend: &str, o: &Outcome) -> Report {
    let (px, py) = o.momentum();
    // `nbody-fast` with `--fast-math`, so that its lines are not taken for exact runs'.
    Report::new(if args.fast_math { "nbody-fast" } else { "nbody" })
        .field("backend", backend)
        .field("allocator", label)
        .field("size", args.bodies)
        .field("iters", args.steps)
        .field("total_us", o.total.as_micros())
        .field("enum_us", o.enumeration.as_micros())
        .field("bodies", o.bodies.len())
        .field("momentum", format!("{px:.6e},{py:.6e}"))
        .field("checksum", format!("{:.6}", o.checksum()))
}

fn run_app(args: Args) -> anyhow::Result<()> {
    let cfg = Config {
        bodies: args.bodies,
        steps: args.steps,
        seed: args.seed,
        fast_math: args.fast_math,
        ..Config::default()
    };
    let choices = Choices {
        app: "nbody",
        common: &args.common,
        run: &args.run,
        what: "bodies",
        smaller: (args.bodies == config::BODIES).then_some("--bodies 2000 --steps 100"),
    };
    run_and_report(
        choices,
        |implementation, options, recorder, progress| run(implementation, options, &cfg, recorder, progress),
        |label, backend, o| report(&args, label, backend, o),
    )?;
    Ok(())
}
