//! Barnes-Hut n-body simulation with a dynamic quadtree (the original DynaSOAr repository's
//! `barnes-hut-dynamic`): the DSL version and its SOA and AOS baselines.
//!
//! `cargo run --release --bin barnes-hut -- --bodies 300000 --steps 4000 --compare`

use clap::Parser;
use dynasoar_examples::barnes_hut::{Config, Outcome, run};
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_examples::report::Report;
use dynasoar_examples::{CommonArgs, Implementation, exit_on_error};
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
    /// Heap of the DSL version in MiB (default: enough for two tree nodes per body).
    #[arg(long)]
    heap_mib: Option<u64>,
    /// Tree nodes the baselines' pools hold (default: three per body).
    #[arg(long)]
    node_capacity: Option<u32>,
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
    let (px, py) = o.momentum();
    Report::new("barnes-hut")
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
        .field("depth", o.tree.depth)
        .field("momentum", format!("{px:.6e},{py:.6e}"))
        .field("checksum", format!("{:.6}", o.checksum()))
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
        bodies: args.bodies,
        steps: args.steps,
        seed: args.seed,
        spread: args.spread,
        physics: Physics { theta: args.theta, dt: args.dt, gravity: args.gravity, ..Physics::default() },
        heap_bytes,
        node_capacity: args.node_capacity,
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
            "{:<10} {:>12} {:>12} {:>10} {:>6} {:>20} {:>9}",
            "impl", "total ms", "enum ms", "nodes", "depth", "checksum", "vs soa"
        );
        let soa = results[0].1.total.as_secs_f64();
        let ratio = |t: f64| if soa > 0.0 { format!("{:.2}x", t / soa) } else { "n/a".into() };
        for (i, o) in &results {
            println!(
                "{:<10} {:>12.1} {:>12.1} {:>10} {:>6} {:>20.6} {:>9}",
                args.common.label(*i),
                o.total.as_secs_f64() * 1e3,
                o.enumeration.as_secs_f64() * 1e3,
                o.tree.nodes,
                o.tree.depth,
                o.checksum(),
                ratio(o.total.as_secs_f64())
            );
        }
        if results.iter().any(|(_, o)| o.bodies != results[0].1.bodies) {
            eprintln!(
                "note: the implementations' final bodies differ (nearly coincident bodies share \
                 buckets in racing order; on the GPU, float rounding may differ between kernels)"
            );
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
