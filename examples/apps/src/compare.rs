//! The run loop of the app binaries that share it: one implementation, or with `--compare` the
//! SOA baseline, the AOS baseline and the DSL version in turn (the last one renders), then the
//! comparison table and one machine-readable report line per run.

use std::time::Duration;

use crate::render::{Recorder, RenderArgs};
use crate::report::Report;
use crate::{CommonArgs, Implementation, RunOptions};

/// What the comparison table shows of one run.
pub trait Compared {
    fn total(&self) -> Duration;
    fn enumeration(&self) -> Duration;
    fn fingerprint(&self) -> u64;
    /// The app's own columns (population counts): header and value.
    fn columns(&self) -> Vec<(&'static str, u64)>;
}

/// Implements [`Compared`] for an app's `Outcome`, which has `total` and `enumeration` fields and
/// a `fingerprint()` method; the table's own columns are the given `name => |outcome| count`.
#[macro_export]
macro_rules! impl_compared {
    ($outcome:ty { $($name:literal => |$o:ident| $value:expr),* $(,)? }) => {
        impl $crate::compare::Compared for $outcome {
            fn total(&self) -> std::time::Duration {
                self.total
            }
            fn enumeration(&self) -> std::time::Duration {
                self.enumeration
            }
            fn fingerprint(&self) -> u64 {
                <$outcome>::fingerprint(self)
            }
            fn columns(&self) -> Vec<(&'static str, u64)> {
                vec![$(($name, { let $o = self; $value })),*]
            }
        }
    };
}

/// The options of the binaries that use [`run_and_report`] (flattened into their arguments).
#[derive(clap::Args, Clone, Debug)]
pub struct RunChoice {
    /// Implementation to run.
    #[arg(long = "impl", value_enum, default_value = "dynasoar")]
    pub implementation: Implementation,
    /// Run both baselines and the DSL version, and report the ratios.
    #[arg(long)]
    pub compare: bool,
    /// No progress bar.
    #[arg(long)]
    pub no_progress: bool,
    #[command(flatten)]
    pub render: RenderArgs,
}

/// The command-line choices the run loop needs.
pub struct Choices<'a> {
    pub common: &'a CommonArgs,
    pub run: &'a RunChoice,
    /// What the runs compute, for the warning when their fingerprints differ ("oceans").
    pub what: &'static str,
}

/// Run, print the table (with `--compare`) and the report lines. `run` runs one
/// implementation; `report(label, backend, outcome)` makes its report line.
pub fn run_and_report<O: Compared>(
    choices: Choices<'_>,
    mut run: impl FnMut(Implementation, RunOptions, &mut Recorder, bool) -> anyhow::Result<O>,
    report: impl Fn(&'static str, &str, &O) -> Report,
) -> anyhow::Result<()> {
    let Choices { common, run: choice, what } = choices;
    let RunChoice { implementation, compare, no_progress, ref render } = *choice;
    let progress = !no_progress;
    let options = common.run_options();
    let backend = common.executor()?.kind().name();
    let implementations = if compare {
        vec![Implementation::Soa, Implementation::Aos, Implementation::Dynasoar]
    } else {
        vec![implementation]
    };
    let mut results = Vec::new();
    for (k, &implementation) in implementations.iter().enumerate() {
        let render = if k + 1 == implementations.len() { render.clone() } else { RenderArgs::default() };
        let mut recorder = Recorder::new(&render)?;
        let outcome = run(implementation, options.clone(), &mut recorder, progress)?;
        let frames = recorder.finish()?;
        if let (true, Some(dir)) = (frames > 0, render.render.as_ref()) {
            eprintln!("wrote {frames} frames to {}", dir.display());
        }
        results.push((implementation, outcome));
    }
    if compare {
        print_table(common, &results, what);
    }
    let mut lines: Vec<Report> = results.iter().map(|(i, o)| report(common.label(*i), backend, o)).collect();
    if compare {
        let t = |k: usize| results[k].1.total().as_micros();
        let (dsl, soa) = (results[2].1.total().as_secs_f64(), results[0].1.total().as_secs_f64());
        let ratio = if soa > 0.0 { format!("{:.3}", dsl / soa) } else { "n/a".into() };
        if let Some(last) = lines.pop() {
            lines.push(last.field("soa_us", t(0)).field("aos_us", t(1)).field("ratio_vs_soa", ratio));
        }
    }
    for line in lines {
        println!("{line}");
    }
    Ok(())
}

fn print_table<O: Compared>(common: &CommonArgs, results: &[(Implementation, O)], what: &str) {
    let Some((_, first)) = results.first() else { return };
    let own: String = first.columns().iter().map(|(name, _)| format!(" {name:>10}")).collect();
    println!(
        "{:<10} {:>12} {:>12}{own} {:>18} {:>9}",
        "impl", "total ms", "enum ms", "fingerprint", "vs soa"
    );
    let soa = first.total().as_secs_f64();
    for (i, o) in results {
        let own: String = o.columns().iter().map(|(_, value)| format!(" {value:>10}")).collect();
        let t = o.total().as_secs_f64();
        let ratio = if soa > 0.0 { format!("{:.2}x", t / soa) } else { "n/a".into() };
        println!(
            "{:<10} {:>12.1} {:>12.1}{own} {:>18} {:>9}",
            common.label(*i),
            t * 1e3,
            o.enumeration().as_secs_f64() * 1e3,
            format!("{:016x}", o.fingerprint()),
            ratio
        );
    }
    if results.iter().any(|(_, o)| o.fingerprint() != first.fingerprint()) {
        eprintln!("warning: the implementations computed different {what} (fingerprints differ)");
    }
}
