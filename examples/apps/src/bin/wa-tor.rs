//! Wa-Tor, fish and sharks on a torus (DynaSOAr paper, Table 1 and 7.3): the DSL version and its
//! SOA and AOS baselines.
//!
//! `cargo run --release --bin wa-tor -- --width 2048 --height 2560 --steps 500 --compare`

use clap::Parser;
use dynasoar_examples::cli::heap_mib_bytes;
use dynasoar_examples::compare::{Choices, RunChoice, run_and_report};
use dynasoar_examples::report::Report;
use dynasoar_examples::wator::{Config, Outcome, run};
use dynasoar_examples::{CommonArgs, exit_on_error};
use dynasoar_models::wator::config;

#[derive(Parser)]
#[command(about = "Wa-Tor predator-prey simulation with the dynasoar DSL and hand-written baselines")]
struct Args {
    /// Cells per row of the torus.
    #[arg(long, default_value_t = config::WIDTH)]
    width: u32,
    /// Rows of the torus.
    #[arg(long, default_value_t = config::HEIGHT)]
    height: u32,
    /// Time steps (iterations).
    #[arg(long, visible_alias = "iterations", default_value_t = config::STEPS)]
    steps: u32,
    /// Random seed of the initial ocean and of all agents.
    #[arg(long, default_value_t = config::SEED)]
    seed: u64,
    /// An agent that moves with its egg timer above this leaves a newborn behind.
    #[arg(long, default_value_t = config::SPAWN_THRESHOLD)]
    spawn_threshold: u32,
    /// Energy a shark gains by eating a fish.
    #[arg(long, default_value_t = config::ENERGY_BOOST)]
    energy_boost: u32,
    /// Energy of a new shark (it loses one per step and dies at zero).
    #[arg(long, default_value_t = config::ENERGY_START)]
    energy_start: u32,
    /// Initial share of cells with a fish, in percent.
    #[arg(long, default_value_t = config::FISH_PERCENT)]
    fish_percent: u32,
    /// Initial share of cells with a shark, in percent.
    #[arg(long, default_value_t = config::SHARK_PERCENT)]
    shark_percent: u32,
    /// Heap of the DSL version in MiB (default: enough for the ocean's size).
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
    let mut r = Report::new("wa-tor")
        .field("backend", backend)
        .field("allocator", label)
        .field("size", cfg.size())
        .field("iters", cfg.steps)
        .field("total_us", o.total.as_micros())
        .field("enum_us", o.enumeration.as_micros())
        .field("setup_us", o.setup.as_micros())
        .field("fish", o.fish())
        .field("sharks", o.sharks());
    if let Some((fish, sharks)) = o.objects {
        r = r.field("objects", format!("{fish}+{sharks}"));
    }
    r.field("checksum", o.checksum()).field("fingerprint", format!("{:016x}", o.fingerprint()))
}

fn run_app(args: Args) -> anyhow::Result<()> {
    let heap_bytes = heap_mib_bytes(args.heap_mib)?;
    let cfg = Config {
        width: args.width,
        height: args.height,
        steps: args.steps,
        seed: args.seed,
        spawn_threshold: args.spawn_threshold,
        energy_boost: args.energy_boost,
        energy_start: args.energy_start,
        fish_percent: args.fish_percent,
        shark_percent: args.shark_percent,
        heap_bytes,
    };
    cfg.validate()?;
    let choices = Choices {
        app: "wa-tor",
        common: &args.common,
        run: &args.run,
        smaller: (args.width == config::WIDTH && args.height == config::HEIGHT)
            .then_some("--width 256 --height 256 --steps 200"),
        what: "oceans",
    };
    run_and_report(
        choices,
        |implementation, options, recorder, progress| run(implementation, options, &cfg, recorder, progress),
        |label, backend, o| report(&cfg, label, backend, o),
    )?;
    Ok(())
}
