//! Sugarscape, agents that harvest, move, mate and die on a sugar landscape (DynaSOAr paper,
//! Table 1): the DSL version and its SOA and AOS baselines.
//!
//! `cargo run --release --bin sugarscape -- --size 1700 --steps 10000 --compare`

use clap::Parser;
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_examples::report::Report;
use dynasoar_examples::sugarscape::{Config, Outcome, run};
use dynasoar_examples::{CommonArgs, Implementation, exit_on_error};
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
    #[arg(long)]
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
    let heap_bytes = match args.heap_mib {
        Some(0) => anyhow::bail!("--heap-mib must be at least 1"),
        Some(mib) => {
            Some(mib.checked_mul(1 << 20).ok_or_else(|| anyhow::anyhow!("--heap-mib is too large"))?)
        }
        None => None,
    };
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
        println!(
            "{:<10} {:>12} {:>12} {:>10} {:>10} {:>18} {:>9}",
            "impl", "total ms", "enum ms", "males", "females", "fingerprint", "vs soa"
        );
        let soa = results[0].1.total.as_secs_f64();
        let ratio = |t: f64| if soa > 0.0 { format!("{:.2}x", t / soa) } else { "n/a".into() };
        for (i, o) in &results {
            println!(
                "{:<10} {:>12.1} {:>12.1} {:>10} {:>10} {:>18} {:>9}",
                args.common.label(*i),
                o.total.as_secs_f64() * 1e3,
                o.enumeration.as_secs_f64() * 1e3,
                o.males(),
                o.females(),
                format!("{:016x}", o.fingerprint()),
                ratio(o.total.as_secs_f64())
            );
        }
        let same = results.iter().all(|(_, o)| o.fingerprint() == results[0].1.fingerprint());
        if !same {
            eprintln!("warning: the implementations computed different simulations (fingerprints differ)");
        }
    }
    let mut lines: Vec<Report> =
        results.iter().map(|(i, o)| report(&cfg, args.common.label(*i), backend, o)).collect();
    if args.compare {
        let t = |k: usize| results[k].1.total.as_micros();
        let (dsl, soa) = (results[2].1.total.as_secs_f64(), results[0].1.total.as_secs_f64());
        let ratio = if soa > 0.0 { format!("{:.3}", dsl / soa) } else { "n/a".into() };
        let last =
            lines.pop().unwrap().field("soa_us", t(0)).field("aos_us", t(1)).field("ratio_vs_soa", ratio);
        lines.push(last);
    }
    for line in lines {
        println!("{line}");
    }
    Ok(())
}
