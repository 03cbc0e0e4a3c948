//! Runs the model: `cargo run --release -- --backend cpu --steps 200`.
use clap::Parser;
use dynasoar::host::Backend;
use dynasoar::prelude::*;
use indicatif::ProgressBar;
use minimal::{Walker, World};

/// The model compiled for the GPU by build.rs.
const PTX: &str = dynasoar::include_ptx!();

/// Random walkers that are born and die.
#[derive(Parser)]
struct Args {
    /// Where to run: auto (the GPU if there is one), cpu or cuda.
    #[arg(long, default_value = "auto")]
    backend: Backend,
    /// Steps to simulate.
    #[arg(long, default_value_t = 200)]
    steps: u32,
    /// Walkers at the start.
    #[arg(long, default_value_t = 10_000)]
    walkers: u64,
    /// Seed of the random numbers.
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

fn main() -> Result<(), dynasoar::host::Error> {
    let args = Args::parse();
    let rt = Runtime::<World>::builder(PTX).backend(args.backend).heap_bytes(256 << 20).build()?;
    rt.parallel_new_with(Walker::spawn, args.walkers, args.seed)?;
    let progress = ProgressBar::new(args.steps.into());
    for _ in 0..args.steps {
        rt.parallel_do(Walker::step)?;
        progress.inc(1);
    }
    progress.finish_and_clear();
    let walkers = rt.collect::<Walker>()?;
    let distance: u64 = walkers.iter().map(|w| u64::from(w.pos.unsigned_abs())).sum();
    println!("after {} steps: {} walkers, total distance from 0: {distance}", args.steps, walkers.len());
    Ok(())
}
