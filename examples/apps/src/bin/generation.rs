//! Generations, a Game-of-Life family automaton with dying states (DynaSOAr paper, Table 1):
//! the DSL version (only alive cells and candidates are objects) and its SOA and AOS
//! baselines (every cell every step).
//!
//! `cargo run --release --bin generation -- --compare` runs the benchmark (bursts on a
//! 5000 x 5000 grid, 25,000 steps); `cargo run --release --bin generation -- --size 300x300
//! --steps 400 --render out --gif` draws a smaller one.

use std::time::Instant;

use clap::Parser;
use dynasoar_examples::generation::{
    Config, DslSim, Outcome, Reference, Simulation, fingerprint, parse_rule, parse_size, pattern_from_spec,
    rule_name, run,
};
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_examples::report::Report;
use dynasoar_examples::{CommonArgs, Implementation, exit_on_error};
use dynasoar_models::generation::{Rule, config};

#[derive(Parser)]
#[command(about = "The Generations cellular automaton (Game of Life with dying states) with the dynasoar \
                   DSL and hand-written SOA/AOS baselines; the grid does not wrap")]
struct Args {
    /// The initial pattern: burst (the benchmark's crosses), burst:LENGTH:SPACING, glider,
    /// blinker, block, random, random:WxH, random:WxH:DENSITY, a .pgm image (pixel value 0 =
    /// alive) or ARCHIVE.tar.gz:MEMBER.pgm.
    #[arg(long, value_name = "SPEC", default_value = "burst")]
    pattern: String,
    /// Grid size WxH of generated patterns (default: 5000x5000 for burst, 64x64 for the small
    /// built-in patterns, 256x256 for random).
    #[arg(long, value_name = "WxH")]
    size: Option<String>,
    /// Steps (iterations) to simulate.
    #[arg(long, visible_alias = "iterations", default_value_t = config::STEPS)]
    steps: u32,
    /// The rule: S, the neighbour counts an alive cell survives with, B, those a dead cell is
    /// born with, and D, the number of dying states; e.g. S23/B3/D0 (Conway). Default: the
    /// benchmark's S0235678/B3468/D255.
    #[arg(long)]
    rule: Option<String>,
    /// Seed of `random` patterns.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Implementation to run.
    #[arg(long = "impl", value_enum, default_value = "dynasoar")]
    implementation: Implementation,
    /// Run the SOA and AOS baselines and the DSL version, check that they agree, and report the
    /// ratios.
    #[arg(long)]
    compare: bool,
    /// Size of the dynasoar heap in MiB (default: room for an object in every cell).
    #[arg(long, value_name = "MIB")]
    heap_mib: Option<u64>,
    /// Check the results against a plain host implementation of the rules, and the DSL
    /// version's grid against its objects (slow for big runs).
    #[arg(long)]
    check: bool,
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
    let mut r = Report::new("generation")
        .field("backend", backend)
        .field("allocator", label)
        .field("size", cfg.pattern.size())
        .field("iters", cfg.steps)
        .field("total_us", o.total.as_micros())
        .field("enum_us", o.enumeration.as_micros())
        .field("setup_us", o.setup.as_micros())
        .field("alive", o.alive())
        .field("dying", o.dying());
    if let Some((alive, candidates)) = o.objects {
        r = r.field("objects", format!("{alive}+{candidates}"));
    }
    r.field("rule", rule_name(&cfg.rule))
        .field("pattern", &cfg.pattern.name)
        .field("checksum", o.alive())
        .field("fingerprint", format!("{:016x}", o.fingerprint()))
}

fn run_app(args: Args) -> anyhow::Result<()> {
    let heap_bytes = match args.heap_mib {
        Some(0) => anyhow::bail!("--heap-mib must be at least 1"),
        Some(mib) => {
            Some(mib.checked_mul(1 << 20).ok_or_else(|| anyhow::anyhow!("--heap-mib is too large"))?)
        }
        None => None,
    };
    let size = args.size.as_deref().map(parse_size).transpose()?;
    let rule = match &args.rule {
        Some(r) => parse_rule(r)?,
        None => Rule::default(),
    };
    let pattern = pattern_from_spec(&args.pattern, size, args.seed)?;
    let cfg = Config { steps: args.steps, rule, heap_bytes, ..Config::new(pattern) };
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
        let soa = &results[0].1;
        for (i, o) in &results[1..] {
            anyhow::ensure!(
                o.states == soa.states,
                "{} and soa disagree after {} steps: {} vs {} alive cells",
                args.common.label(*i),
                cfg.steps,
                o.alive(),
                soa.alive()
            );
        }
    }
    if args.check {
        let started = Instant::now();
        let mut reference = Reference::new(&cfg.pattern, cfg.rule);
        for _ in 0..cfg.steps {
            reference.step();
        }
        let expected = fingerprint(cfg.pattern.width, cfg.pattern.height, reference.states());
        for (i, o) in &results {
            anyhow::ensure!(
                o.states == reference.states(),
                "{} disagrees with the host reference after {} steps (fingerprints {:016x} vs {expected:016x})",
                args.common.label(*i),
                cfg.steps,
                o.fingerprint()
            );
        }
        if results.iter().any(|(i, _)| *i == Implementation::Dynasoar) {
            let (sim, _) = DslSim::new(options.clone(), &cfg)?;
            for _ in 0..cfg.steps {
                sim.step()?;
            }
            sim.verify()?;
        }
        eprintln!(
            "check: all results match the host reference ({} alive cells; {:.1} s)",
            dynasoar_examples::generation::count_alive(reference.states()),
            started.elapsed().as_secs_f64()
        );
    }
    if args.compare {
        println!(
            "{:<10} {:>12} {:>12} {:>10} {:>10} {:>9}",
            "impl", "total ms", "enum ms", "alive", "dying", "vs soa"
        );
        let soa = results[0].1.total.as_secs_f64();
        let ratio = |t: f64| if soa > 0.0 { format!("{:.2}x", t / soa) } else { "n/a".into() };
        for (i, o) in &results {
            println!(
                "{:<10} {:>12.1} {:>12.1} {:>10} {:>10} {:>9}",
                args.common.label(*i),
                o.total.as_secs_f64() * 1e3,
                o.enumeration.as_secs_f64() * 1e3,
                o.alive(),
                o.dying(),
                ratio(o.total.as_secs_f64())
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
