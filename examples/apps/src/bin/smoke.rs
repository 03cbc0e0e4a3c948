//! Smoke test of the toolchain: runs the `histogram` kernel (atomics, warp aggregation) and
//! checks its results against a plain host computation.

use clap::Parser;
use dynasoar::host::Result;
use dynasoar_examples::CommonArgs;
use dynasoar_examples::smoke::{SmokeResult, run_histogram};

#[derive(Parser)]
#[command(about = "Run the smoke kernel and check it against the host")]
struct Args {
    /// Number of values.
    #[arg(long, default_value_t = 1 << 22)]
    len: usize,
    /// Number of bins.
    #[arg(long, default_value_t = 97)]
    bins: u32,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<bool> {
    let exec = args.common.executor()?;
    let values = dynasoar_examples::smoke::sample_values(args.len, 42);
    let (got, elapsed) = exec.time(|| run_histogram(&exec, &values, args.bins))?;
    let want = SmokeResult::reference(&values, args.bins);
    let ok = got == want;
    println!(
        "app=smoke backend={} len={} bins={} kernel_us={} evens={} ok={}",
        exec.kind().name(),
        args.len,
        args.bins,
        elapsed.as_micros(),
        got.evens.len(),
        ok
    );
    Ok(ok)
}
