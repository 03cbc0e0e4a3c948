//! Generations, a Game-of-Life family automaton with dying states (DynaSOAr paper, Table 1):
//! the DSL version (only alive cells and candidates are objects) and its SOA and AOS
//! baselines (every cell every step).
//!
//! `cargo run --release --bin generation -- --compare` runs the benchmark (bursts on a
//! 5000 x 5000 grid, 25,000 steps); `cargo run --release --bin generation -- --size 300x300
//! --steps 400 --render out --gif` draws a smaller one.

use std::time::Instant;

use clap::Parser;
use dynasoar_examples::cli::heap_mib_bytes;
use dynasoar_examples::compare::{Choices, RunChoice, run_and_report};
use dynasoar_examples::generation::{
    Config, DslSim, Outcome, Reference, Simulation, fingerprint, parse_rule, parse_size, pattern_from_spec,
    rule_name, run,
};
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
    /// Size of the dynasoar heap in MiB (default: room for an object in every cell). With a
    /// general-purpose --allocator, the heap is 2 x this + 32 MiB.
    #[arg(long, value_name = "MIB")]
    heap_mib: Option<u64>,
    /// Check the results against a plain host implementation of the rules, and the DSL
    /// version's grid against its objects (slow for big runs).
    #[arg(long)]
    check: bool,
    #[command(flatten)]
    run: RunChoice,
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
    let heap_bytes = heap_mib_bytes(args.heap_mib)?;
    let size = args.size.as_deref().map(parse_size).transpose()?;
    let rule = match &args.rule {
        Some(r) => parse_rule(r)?,
        None => Rule::default(),
    };
    let pattern = pattern_from_spec(&args.pattern, size, args.seed)?;
    let cfg = Config { steps: args.steps, rule, heap_bytes, ..Config::new(pattern) };
    cfg.validate()?;
    let at_default = args.pattern == "burst" && args.size.is_none();
    let choices = Choices {
        app: "generation",
        common: &args.common,
        run: &args.run,
        what: "grids",
        smaller: at_default.then_some("--size 500x500 --steps 500"),
    };
    let runs = run_and_report(
        choices,
        |implementation, options, recorder, progress| run(implementation, options, &cfg, recorder, progress),
        |label, backend, o| report(&cfg, label, backend, o),
    )?;
    if args.check {
        let started = Instant::now();
        let mut reference = Reference::new(&cfg.pattern, cfg.rule);
        for _ in 0..cfg.steps {
            reference.step();
        }
        let expected = fingerprint(cfg.pattern.width, cfg.pattern.height, reference.states());
        for (i, o) in &runs.results {
            anyhow::ensure!(
                o.states == reference.states(),
                "{} disagrees with the host reference after {} steps (fingerprints {:016x} vs {expected:016x})",
                args.common.label(*i),
                cfg.steps,
                o.fingerprint()
            );
        }
        if runs.results.iter().any(|(i, _)| *i == Implementation::Dynasoar) {
            let (sim, _) = DslSim::new(runs.options.clone(), &cfg)?;
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
    Ok(())
}
