//! Sugarscape, agents that harvest, move, mate and die on a sugar landscape (DynaSOAr paper,
//! Table 1): the DSL version and its SOA and AOS baselines.
//!
//! `cargo run --release --bin sugarscape -- --size 1700 --steps 10000 --compare`

use clap::Parser;
use dynasoar_examples::cli::heap_mib_bytes;
use dynasoar_examples::compare::{Choices, RunChoice, run_and_report};
use dynasoar_examples::report::Report;
use dynasoar_examples::sugarscape::{Config, Outcome, run};
use dynasoar_examples::{CommonArgs, exit_on_error};
use dynasoar_models::sugarscape::config;

#[derive(Parser)]
#[command(about = "Sugarscape agent-based simulation with the dynasoar DSL and hand-written baselines")]
struct Args {
    /// Cells per row and rows of the grid (overridden by --width and --height).
    #[arg(long, default_value_t = config::SIZE)]
    size: u32,
    /// Cells per row (default: --size).
    #[arg(long)]
    width: Option<u32>,
    /// Rows (default: --size).
    #[arg(long)]
    height: Option<u32>,
    /// Time steps (iterations).
    #[arg(long, visible_alias = "iterations", default_value_t = config::STEPS)]
    steps: u32,
    /// Random seed of the landscape and of all agents.
    #[arg(long, default_value_t = config::SEED)]
    seed: u64,
    /// Initial share of cells with a male (0 to 1).
    #[arg(long, default_value_t = config::PROB_MALE)]
    male_ratio: f32,
    /// Initial share of cells with a female (0 to 1).
    #[arg(long, default_value_t = config::PROB_FEMALE)]
    female_ratio: f32,
    /// How far agents see, and the radius of sugar diffusion (1 or 2).
    #[arg(long, default_value_t = config::MAX_VISION)]
    max_vision: u32,
    /// Initial agents live 2/3 of this plus up to a third more steps.
    #[arg(long, default_value_t = config::MAX_AGE)]
    max_age: u32,
    /// Initial agents start with 1/4 of this plus up to 3/4 more sugar.
    #[arg(long, default_value_t = config::MAX_ENDOWMENT)]
    endowment: u32,
    /// Initial agents burn 1/3 of this plus up to 2/3 more sugar per step.
    #[arg(long, default_value_t = config::MAX_METABOLISM)]
    metabolism: u32,
    /// Sugar a cell can grow to.
    #[arg(long, default_value_t = config::SUGAR_CAPACITY)]
    capacity: u32,
    /// Grow rate of the richest cells.
    #[arg(long, default_value_t = config::MAX_GROW_RATE)]
    max_grow_rate: u32,
    /// Most sugar a cell diffuses per step.
    #[arg(long, default_value_t = config::MAX_SUGAR_DIFFUSION)]
    max_diffusion: u32,
    /// Share of its sugar a cell diffuses, and of that, what each neighbour receives.
    #[arg(long, default_value_t = config::SUGAR_DIFFUSION_RATE)]
    diffusion_rate: f32,
    /// Agents mate from this age on.
    #[arg(long, default_value_t = config::MIN_MATING_AGE)]
    min_mating_age: u32,
    /// Females have up to 2 + a random number below (this - 2) children.
    #[arg(long, default_value_t = config::MAX_CHILDREN)]
    max_children: u32,
    /// Heap of the DSL version in MiB (default: enough for the grid's size).
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
    let census = o.census();
    let mut r = Report::new("sugarscape")
        .field("backend", backend)
        .field("allocator", label)
        .field("size", cfg.size())
        .field("iters", cfg.steps)
        .field("total_us", o.total.as_micros())
        .field("enum_us", o.enumeration.as_micros())
        .field("setup_us", o.setup.as_micros())
        .field("males", census.males)
        .field("females", census.females)
        .field("sugar", census.cell_sugar + census.agent_sugar);
    if let Some((males, females)) = o.objects {
        r = r.field("objects", format!("{males}+{females}"));
    }
    r.field("checksum", o.checksum()).field("fingerprint", format!("{:016x}", o.fingerprint()))
}

fn run_app(args: Args) -> anyhow::Result<()> {
    let heap_bytes = heap_mib_bytes(args.heap_mib)?;
    let cfg = Config {
        width: args.width.unwrap_or(args.size),
        height: args.height.unwrap_or(args.size),
        steps: args.steps,
        seed: args.seed,
        prob_male: args.male_ratio,
        prob_female: args.female_ratio,
        max_vision: args.max_vision,
        max_age: args.max_age,
        max_endowment: args.endowment,
        max_metabolism: args.metabolism,
        sugar_capacity: args.capacity,
        max_grow_rate: args.max_grow_rate,
        max_sugar_diffusion: args.max_diffusion,
        diffusion_rate: args.diffusion_rate,
        min_mating_age: args.min_mating_age,
        max_children: args.max_children,
        heap_bytes,
    };
    cfg.validate()?;
    let choices = Choices {
        app: "sugarscape",
        common: &args.common,
        run: &args.run,
        smaller: (args.width.unwrap_or(args.size) == config::SIZE
            && args.height.unwrap_or(args.size) == config::SIZE)
            .then_some("--size 200 --steps 500"),
        what: "simulations",
    };
    run_and_report(
        choices,
        |implementation, options, recorder, progress| run(implementation, options, &cfg, recorder, progress),
        |label, backend, o| report(&cfg, label, backend, o),
    )?;
    Ok(())
}
