//! Barnes-Hut n-body simulation with a dynamic quadtree (the original DynaSOAr repository's
//! `barnes-hut-dynamic`): the DSL version and its SOA and AOS baselines.
//!
//! `cargo run --release --bin barnes-hut -- --bodies 300000 --steps 4000 --compare`

use clap::Parser;
use dynasoar_examples::barnes_hut::{Config, Outcome, run};
use dynasoar_examples::cli::heap_mib_bytes;
use dynasoar_examples::compare::{Choices, RunChoice, run_and_report};
use dynasoar_examples::report::Report;
use dynasoar_examples::{CommonArgs, exit_on_error};
use dynasoar_models::barnes_hut::{Physics, config};

#[derive(Parser)]
#[command(
    about = "Barnes-Hut n-body simulation (dynamic quadtree) with the dynasoar DSL and hand-written baselines"
)]
struct Args {
    /// Number of bodies.
    #[arg(long, default_value_t = config::BODIES)]
    bodies: u32,
    /// Time steps (iterations).
    #[arg(long, visible_alias = "iterations", default_value_t = config::STEPS)]
    steps: u32,
    /// Random seed of the initial bodies.
    #[arg(long, default_value_t = config::SEED)]
    seed: u64,
    /// Opening angle: a tree node acts as one body when its side is below theta times its
    /// distance (0: exact, quadratic).
    #[arg(long, default_value_t = config::THETA)]
    theta: f32,
    /// Length of a time step.
    #[arg(long, default_value_t = config::DT)]
    dt: f32,
    /// Gravitational constant.
    #[arg(long, default_value_t = config::GRAVITY)]
    gravity: f32,
    /// Initial bodies are uniform in [-spread, spread)^2 (at most 1; small values make deep trees).
    #[arg(long, default_value_t = config::SPREAD)]
    spread: f32,
    /// Heap of the DSL version in MiB (default: enough for two tree nodes per body). With a
    /// general-purpose --allocator, the heap is 2 x this + 32 MiB.
    #[arg(long)]
    heap_mib: Option<u64>,
    /// Tree nodes the baselines' pools hold (default: three per body).
    #[arg(long)]
    node_capacity: Option<u32>,
    #[command(flatten)]
    run: RunChoice,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> std::process::ExitCode {
    exit_on_error(run_app(Args::parse()))
}

fn report(cfg: &Config, label: &str, backend: &str, o: &Outcome) -> Report {
    let (px, py) = o.momentum();
    let report = Report::new("barnes-hut")
        .field("backend", backend)
        .field("allocator", label)
        .field("size", cfg.bodies)
        .field("iters", cfg.steps)
        .field("theta", cfg.physics.theta)
        .field("total_us", o.total.as_micros())
        .field("enum_us", o.enumeration.as_micros())
        .field("setup_us", o.setup.as_micros())
        .field("bodies", o.bodies.len())
        .field("nodes", o.tree.nodes)
        .field("depth", o.tree.depth);
    // How densely the tree nodes lie in the heap (DSL only): the force walk reads them.
    let report = match o.tree_blocks {
        Some((blocks, slots)) => report.field("tree_node_blocks", blocks).field("tree_node_slots", slots),
        None => report,
    };
    report.field("momentum", format!("{px:.6e},{py:.6e}")).field("checksum", format!("{:.6}", o.checksum()))
}

fn run_app(args: Args) -> anyhow::Result<()> {
    args.common.reject_graph(
        "barnes-hut",
        "its steps pass the step's parity to the methods, so no one step can be replayed",
    )?;
    let cfg = Config {
        bodies: args.bodies,
        steps: args.steps,
        seed: args.seed,
        spread: args.spread,
        physics: Physics { theta: args.theta, dt: args.dt, gravity: args.gravity, ..Physics::default() },
        heap_bytes: heap_mib_bytes(args.heap_mib)?,
        node_capacity: args.node_capacity,
    };
    cfg.validate()?;
    let choices = Choices {
        app: "barnes-hut",
        common: &args.common,
        run: &args.run,
        what: "bodies",
        smaller: (args.bodies == config::BODIES).then_some("--bodies 10000 --steps 50"),
    };
    run_and_report(
        choices,
        |implementation, options, recorder, progress| run(implementation, options, &cfg, recorder, progress),
        |label, backend, o| report(&cfg, label, backend, o),
    )?;
    Ok(())
}
