//! Nagel-Schreckenberg traffic on a random street network (DynaSOAr paper, Table 1): the DSL
//! version and its SOA and AOS baselines.
//!
//! `cargo run --release --bin traffic -- --intersections 17500 --steps 12000 --compare`

use clap::Parser;
use dynasoar_examples::cli::{ensure_host_memory, heap_mib_bytes};
use dynasoar_examples::compare::{Choices, RunChoice, run_and_report};
use dynasoar_examples::report::Report;
use dynasoar_examples::traffic::{Config, DslSim, Network, Outcome, Simulation, run_on};
use dynasoar_examples::{CommonArgs, exit_on_error};
use dynasoar_models::traffic::config;

#[derive(Parser)]
#[command(about = "Nagel-Schreckenberg traffic simulation with the dynasoar DSL and hand-written baselines")]
struct Args {
    /// Intersections of the street network.
    #[arg(long, default_value_t = config::INTERSECTIONS)]
    intersections: u32,
    /// Time steps (iterations).
    #[arg(long, visible_alias = "iterations", default_value_t = config::STEPS)]
    steps: u32,
    /// Random seed of the network and of all cars.
    #[arg(long, default_value_t = config::SEED)]
    seed: u64,
    /// Cars and streets get a maximum velocity in [MAX/2, MAX) cells per step.
    #[arg(long, default_value_t = config::MAX_VELOCITY)]
    max_velocity: u32,
    /// Length of a street cell (intersections lie in the unit square).
    #[arg(long, default_value_t = config::CELL_LENGTH)]
    cell_length: f32,
    /// Share of street cells that produce cars.
    #[arg(long, default_value_t = config::PRODUCER_RATIO)]
    producer_ratio: f32,
    /// Share of street cells that remove cars.
    #[arg(long, default_value_t = config::TARGET_RATIO)]
    target_ratio: f32,
    /// Probability that a free producer creates a car in a step.
    #[arg(long, default_value_t = config::CAR_RATIO)]
    car_ratio: f32,
    /// Probability that a moving car slows down by one.
    #[arg(long, default_value_t = config::SLOW_DOWN_RATIO)]
    slow_down: f32,
    /// Steps between two phases of a traffic light.
    #[arg(long, default_value_t = config::PHASE_TIME)]
    phase_time: u32,
    /// Heap of the DSL version in MiB (default: enough for a car on every cell).
    /// With a general-purpose --allocator, the heap is 2 x this + 32 MiB.
    #[arg(long)]
    heap_mib: Option<u64>,
    /// After the run, check the DSL version's objects against the network (slow for big runs).
    #[arg(long)]
    verify: bool,
    #[command(flatten)]
    run: RunChoice,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> std::process::ExitCode {
    exit_on_error(run_app(Args::parse()))
}

fn report(cfg: &Config, cells: u32, label: &str, backend: &str, o: &Outcome) -> Report {
    let mut r = Report::new("traffic")
        .field("backend", backend)
        .field("allocator", label)
        .field("size", cfg.intersections)
        .field("cells", cells)
        .field("iters", cfg.steps)
        .field("total_us", o.total.as_micros())
        .field("enum_us", o.enumeration.as_micros())
        .field("setup_us", o.setup.as_micros())
        .field("cars", o.cars.len())
        .field("created", o.created)
        .field("removed", o.removed);
    if let Some(objects) = o.objects {
        r = r.field("objects", objects);
    }
    r.field("checksum", o.checksum()).field("fingerprint", format!("{:016x}", o.fingerprint()))
}

fn run_app(args: Args) -> anyhow::Result<()> {
    let heap_bytes = heap_mib_bytes(args.heap_mib)?;
    let cfg = Config {
        intersections: args.intersections,
        steps: args.steps,
        seed: args.seed,
        max_velocity: args.max_velocity,
        cell_length: args.cell_length,
        producer_ratio: args.producer_ratio,
        target_ratio: args.target_ratio,
        car_ratio: args.car_ratio,
        slow_down: args.slow_down,
        phase_time: args.phase_time,
        heap_bytes,
    };
    cfg.validate()?;
    // The network (about 260 street cells per intersection) on the host and the device (about).
    let n = cfg.intersections as u64;
    ensure_host_memory(n * 16384, n, "intersections", "--intersections")?;
    let net = Network::generate(&cfg)?;
    eprintln!(
        "network: {} intersections, {} cells ({} producers, {} targets, {} lights)",
        cfg.intersections,
        net.num_cells(),
        net.producers.len(),
        net.targets(),
        net.lights.len()
    );
    let cells = net.num_cells();
    let choices = Choices {
        app: "traffic",
        common: &args.common,
        run: &args.run,
        smaller: (args.intersections == config::INTERSECTIONS).then_some("--intersections 1000 --steps 1000"),
        what: "traffic",
    };
    let runs = run_and_report(
        choices,
        |implementation, options, recorder, progress| {
            run_on(implementation, options, &cfg, &net, recorder, progress)
        },
        |label, backend, o| report(&cfg, cells, label, backend, o),
    )?;
    if args.verify {
        // A fresh DSL run to the same step, checked object by object.
        let (sim, _) = DslSim::new(runs.options, &cfg, &net)?;
        for _ in 0..cfg.steps {
            sim.step()?;
        }
        let cars = sim.verify(&net)?;
        eprintln!("verified: {cars} cars, objects consistent with the network");
    }
    Ok(())
}
