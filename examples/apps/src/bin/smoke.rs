//! Smoke test of the toolchain: runs the `histogram` kernel (atomics, warp aggregation) and
//! checks its results against a plain host computation.

use clap::Parser;
use dynasoar_examples::CommonArgs;
use dynasoar_examples::cli::exit_on_error_without_heap_flag;
use dynasoar_examples::outln;
use dynasoar_examples::smoke::{SmokeResult, run_histogram, try_sample_values};

#[derive(Parser)]
#[command(about = "Run the smoke kernel and check it against the host")]
struct Args {
    /// Number of values (1 to 2^32 - 1).
    #[arg(long, default_value_t = 1 << 22, value_parser = clap::value_parser!(u32).range(1..))]
    len: u32,
    /// Number of bins.
    #[arg(long, default_value_t = 97, value_parser = clap::value_parser!(u32).range(1..))]
    bins: u32,
    #[command(flatten)]
    common: CommonArgs,
}

fn main() -> std::process::ExitCode {
    exit_on_error_without_heap_flag(run(&Args::parse()))
}

fn run(args: &Args) -> anyhow::Result<()> {
    args.common.reject_allocator("smoke", "it runs one kernel and makes no objects")?;
    args.common.reject_graph("smoke", "it runs one kernel and makes no objects")?;
    let exec = args.common.executor()?;
    let values = try_sample_values(args.len as u64, 42)?;
    let (got, elapsed) = exec.time(|| run_histogram(&exec, &values, args.bins))?;
    let want = SmokeResult::reference(&values, args.bins);
    let ok = got == want;
    outln!(
        "app=smoke backend={} len={} bins={} kernel_us={} evens={} ok={}",
        exec.kind().name(),
        args.len,
        args.bins,
        elapsed.as_micros(),
        got.evens.len(),
        ok
    );
    anyhow::ensure!(ok, "the kernel's histogram differs from the host's");
    Ok(())
}
