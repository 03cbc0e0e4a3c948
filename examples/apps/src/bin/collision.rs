//! Particle collisions (DynaSOAr paper, Table 1): n-body gravity where close bodies merge and
//! the merged ones are deleted. The DSL version and its SOA and AOS baselines.
//!
//! `cargo run --release --bin collision -- --bodies 40000 --steps 2000 --compare`

use clap::Parser;
use dynasoar_examples::cli::heap_mib_bytes;
use dynasoar_examples::collision::{Config, Outcome, run};
use dynasoar_examples::compare::{Choices, RunChoice, run_and_report};
use dynasoar_examples::report::Report;
use dynasoar_examples::{CommonArgs, exit_on_error};
use dynasoar_models::collision::{Physics, config};

#[derive(Parser)]
#[command(about = "Particle collisions with the dynasoar DSL and hand-written baselines")]
struct Args {
    /// Number of bodies at the start.
    #[arg(long, default_value_t = config::BODIES, value_parser = clap::value_parser!(u32).range(1..))]
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
    /// Heap of the DSL version in MiB (default: room for the bodies). With a general-purpose
    /// --allocator, the heap is 2 x this + 32 MiB.
    #[arg(long, value_name = "MIB")]
    heap_mib: Option<u64>,
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
    exit_on_error(run_app(Args::parse()))
}

fn report(args: &Args, label: &str, backend: &str, o: &Outcome) -> Report {
    // `collision-fast` with `--fast-math`, so that its lines are not taken for exact runs'.
    Report::new(if args.fast_math { "collision-fast" } else { "collision" })
        .field("backend", backend)
        .field("allocator", label)
        .field("size", args.bodies)
        .field("iters", args.steps)
        .field("total_us", o.total.as_micros())
        .field("enum_us", o.enumeration.as_micros())
        .field("bodies", o.bodies.len())
        .field("mass", format!("{:.6e}", o.total_mass()))
        .field("checksum", format!("{:.6}", o.checksum()))
}

fn run_app(args: Args) -> anyhow::Result<()> {
    let heap_bytes = heap_mib_bytes(args.heap_mib)?;
    let physics = Physics { dt: args.dt, merge_threshold: args.merge_threshold, ..Physics::default() };
    let cfg = Config {
        bodies: args.bodies,
        steps: args.steps,
        seed: args.seed,
        physics,
        heap_bytes,
        fast_math: args.fast_math,
    };
    cfg.validate()?;
    let choices = Choices {
        app: "collision",
        common: &args.common,
        run: &args.run,
        what: "bodies",
        smaller: (args.bodies == config::BODIES).then_some("--bodies 2000 --steps 200"),
    };
    run_and_report(
        choices,
        |implementation, options, recorder, progress| run(implementation, options, &cfg, recorder, progress),
        |label, backend, o| report(&args, label, backend, o),
    )?;
    Ok(())
}
