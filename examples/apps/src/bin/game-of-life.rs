//! Conway's Game of Life in O(#alive cells) (DynaSOAr paper, Table 1): the DSL version and its
//! SOA and AOS baselines.
//!
//! `cargo run --release --bin game-of-life -- --compare` runs the benchmark (utm.pgm, 300 steps;
//! the archive is looked up in `$DYNASOAR_DATA/game-of-life/`), and
//! `cargo run --release --bin game-of-life -- --pattern glider --steps 40 --render out --gif`
//! draws a glider.

use std::time::Instant;

use clap::Parser;
use dynasoar_examples::cli::heap_mib_bytes;
use dynasoar_examples::compare::{Choices, RunChoice, run_and_report};
use dynasoar_examples::game_of_life::{
    Config, Outcome, Pattern, Reference, SoaVariant, archive_member, parse_size, run,
};
use dynasoar_examples::report::Report;
use dynasoar_examples::{CommonArgs, exit_on_error};
use dynasoar_models::game_of_life::config;

#[derive(Parser)]
#[command(about = "Conway's Game of Life with the dynasoar DSL (only alive cells and candidates are \
                   objects) and hand-written SOA/AOS baselines; the grid does not wrap")]
struct Args {
    /// The initial pattern: a .pgm image (pixel value 0 = alive), ARCHIVE.tar.gz:MEMBER.pgm,
    /// tm or utm (from the benchmark archive in $DYNASOAR_DATA/game-of-life/), glider, blinker,
    /// block, or `random[:WxH][:DENSITY]`. Default: utm.
    #[arg(long, value_name = "SPEC")]
    pattern: Option<String>,
    /// Grid size WxH of the built-in patterns (default 64x64; random: 256x256).
    #[arg(long, value_name = "WxH")]
    size: Option<String>,
    /// Steps (iterations) to simulate.
    #[arg(long, visible_alias = "iterations", default_value_t = config::STEPS)]
    steps: u32,
    /// Seed of `random` patterns.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Size of the dynasoar heap in MiB (default: from the pattern's alive cells). With a
    /// general-purpose --allocator, the heap is 2 x this + 32 MiB.
    #[arg(long, value_name = "MIB")]
    heap_mib: Option<u64>,
    /// Check the result against a plain host implementation of the rules (and, for the DSL
    /// version, the grid against the objects).
    #[arg(long)]
    check: bool,
    /// Which SOA baseline `--impl soa` (and `--compare`) runs: `lists`, lists of the cells that
    /// can change (O(#alive cells) per step, the fastest known), or `dense`, every cell every
    /// step (its line then says `allocator=soa-dense`).
    #[arg(long, value_name = "lists|dense", default_value = "lists", value_parser = SoaVariant::parse)]
    soa: SoaVariant,
    #[command(flatten)]
    run: RunChoice,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> std::process::ExitCode {
    exit_on_error(run_app(Args::parse()))
}

fn report(cfg: &Config, label: &str, backend: &str, o: &Outcome) -> Report {
    let mut r = Report::new("game-of-life")
        .field("backend", backend)
        .field("allocator", label)
        .field("size", cfg.pattern.size())
        .field("iters", cfg.steps)
        .field("total_us", o.total.as_micros())
        .field("enum_us", o.enumeration.as_micros())
        .field("alive", o.live.len());
    if let Some(c) = &o.candidates {
        r = r.field("candidates", c.len());
    }
    r.field("setup_us", o.setup.as_micros())
        .field("pattern", &cfg.pattern.name)
        .field("fingerprint", format!("{:016x}", o.fingerprint()))
}

fn load_pattern(args: &Args) -> anyhow::Result<Pattern> {
    let size = args.size.as_deref().map(parse_size).transpose()?;
    let spec = match &args.pattern {
        Some(spec) => spec.clone(),
        None => {
            anyhow::ensure!(size.is_none(), "--size applies to the built-in patterns (see --pattern)");
            archive_member(config::BENCHMARK_PATTERN)?
        }
    };
    let started = Instant::now();
    let pattern = Pattern::from_spec(&spec, size, args.seed)?;
    if started.elapsed().as_secs_f64() > 0.5 {
        eprintln!(
            "loaded {}: {} cells, {} alive ({:.1} s)",
            pattern.name,
            pattern.size(),
            pattern.live.len(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(pattern)
}

fn run_app(args: Args) -> anyhow::Result<()> {
    let heap_bytes = heap_mib_bytes(args.heap_mib)?;
    let pattern = load_pattern(&args)?;
    let cfg =
        Config { steps: args.steps, heap_bytes, verify: args.check, soa: args.soa, ..Config::new(pattern) };
    let choices = Choices {
        app: "game-of-life",
        common: &args.common,
        run: &args.run,
        what: "grids",
        smaller: args.pattern.is_none().then_some("--pattern random:512x512 --steps 100"),
    };
    let runs = run_and_report(
        choices,
        |implementation, options, recorder, progress| run(implementation, options, &cfg, recorder, progress),
        |label, backend, o| {
            let label = if label == "soa" { cfg.soa.name() } else { label };
            report(&cfg, label, backend, o)
        },
    )?;
    if args.check {
        let started = Instant::now();
        let mut reference = Reference::new(&cfg.pattern);
        for _ in 0..cfg.steps {
            reference.step();
        }
        for (i, o) in &runs.results {
            anyhow::ensure!(
                o.live == reference.live(),
                "{} disagrees with the host reference after {} steps: {} vs {} alive cells",
                args.common.label(*i),
                cfg.steps,
                o.live.len(),
                reference.live().len()
            );
        }
        eprintln!(
            "check: all results match the host reference ({} alive cells; {:.1} s)",
            reference.live().len(),
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
