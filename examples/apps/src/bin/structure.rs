//! Structure, fracture of a composite material under pull (DynaSOAr paper, Table 1): the DSL
//! version and its SOA and AOS baselines.
//!
//! `cargo run --release --bin structure -- --nodes 1500000 --steps 500 --compare`

use clap::Parser;
use dynasoar_examples::cli::{ensure_host_memory, heap_mib_bytes};
use dynasoar_examples::compare::{Choices, RunChoice, run_and_report};
use dynasoar_examples::report::Report;
use dynasoar_examples::structure::{Config, Outcome, run};
use dynasoar_examples::{CommonArgs, exit_on_error};
use dynasoar_models::structure::{Physics, config};

#[derive(Parser)]
#[command(about = "Fracture of a composite material with the dynasoar DSL and hand-written baselines")]
struct Args {
    /// Nodes of the mesh (65% plain nodes, 25% pull nodes, 10% fixed anchors by default).
    #[arg(long, default_value_t = config::NODES)]
    nodes: u32,
    /// Springs of the mesh (default: 1.75 per node, as in the original).
    #[arg(long)]
    springs: Option<u32>,
    /// Time steps (iterations).
    #[arg(long, visible_alias = "iterations", default_value_t = config::STEPS)]
    steps: u32,
    /// Force computations and moves per step.
    #[arg(long, default_value_t = config::COMPUTE_ITERATIONS)]
    compute_iterations: u32,
    /// Random seed of the mesh.
    #[arg(long, default_value_t = config::SEED)]
    seed: u64,
    /// Time step of a move.
    #[arg(long, default_value_t = config::DT)]
    dt: f32,
    /// Share of pull nodes, in percent.
    #[arg(long, default_value_t = config::PULL_PERCENT)]
    pull_percent: u32,
    /// Share of fixed anchors, in percent.
    #[arg(long, default_value_t = config::ANCHOR_PERCENT)]
    anchor_percent: u32,
    /// Heap of the DSL version in MiB (default: enough for the mesh).
    /// With a general-purpose --allocator, the heap is 2 x this + 32 MiB.
    #[arg(long)]
    heap_mib: Option<u64>,
    #[command(flatten)]
    run: RunChoice,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> std::process::ExitCode {
    exit_on_error(run_app(Args::parse()))
}

fn report(cfg: &Config, label: &str, backend: &str, o: &Outcome) -> Report {
    let mut r = Report::new("structure")
        .field("backend", backend)
        .field("allocator", label)
        .field("size", cfg.nodes)
        .field("iters", cfg.steps)
        .field("total_us", o.total.as_micros())
        .field("enum_us", o.enumeration.as_micros())
        .field("setup_us", o.setup.as_micros())
        .field("nodes", o.nodes())
        .field("springs", o.springs());
    if let Some((nodes, springs)) = o.objects {
        r = r.field("objects", format!("{nodes}+{springs}"));
    }
    r.field("checksum", format!("{:.6e}", o.checksum()))
        .field("fingerprint", format!("{:016x}", o.fingerprint()))
}

fn run_app(args: Args) -> anyhow::Result<()> {
    let heap_bytes = heap_mib_bytes(args.heap_mib)?;
    let cfg = Config {
        nodes: args.nodes,
        springs: args.springs.unwrap_or_else(|| Config::default_springs(args.nodes)),
        steps: args.steps,
        iterations: args.compute_iterations,
        seed: args.seed,
        physics: Physics { dt: args.dt, ..Physics::default() },
        pull_percent: args.pull_percent,
        anchor_percent: args.anchor_percent,
        heap_bytes,
    };
    cfg.validate()?;
    // The mesh on the host and the device: nodes and their springs (about).
    ensure_host_memory(cfg.nodes as u64 * 256, cfg.nodes as u64, "nodes", "--nodes")?;
    let choices = Choices {
        app: "structure",
        common: &args.common,
        run: &args.run,
        smaller: (args.nodes == config::NODES).then_some("--nodes 20000 --steps 50"),
        what: "meshes",
    };
    run_and_report(
        choices,
        |implementation, options, recorder, progress| run(implementation, options, &cfg, recorder, progress),
        |label, backend, o| report(&cfg, label, backend, o),
    )?;
    Ok(())
}
