//! The run loop of the app binaries that share it: one implementation, or with `--compare` the
//! SOA baseline, the AOS baseline and the DSL version in turn (the last one renders), then the
//! comparison table and one machine-readable report line per run.

use std::time::Duration;

use dynasoar::math::Vec2;

use crate::cli::{note_cpu_default_size, plural};
use crate::outln;
use crate::render::{Recorder, RenderArgs};
use crate::report::Report;
use crate::{CommonArgs, Implementation, RunOptions};

/// What the comparison table shows of one run, and whether two runs computed the same.
pub trait Compared {
    fn total(&self) -> Duration;
    fn enumeration(&self) -> Duration;
    /// The table's result column: its header and this run's value (a fingerprint or checksum).
    fn result(&self) -> (&'static str, String);
    /// The app's own columns (population counts): header and value.
    fn columns(&self) -> Vec<(&'static str, u64)>;
    /// `None` if this run computed what `reference` did; else what differs, with both values.
    fn differs_from(&self, reference: &Self) -> Option<String>;
}

/// How far the checksums of the float apps (n-body, collision, Barnes-Hut) may differ between
/// implementations, relative to the checksum's scale (the sum of the absolute values of its
/// terms). Their implementations sum the same forces in a different order (each thread's loop,
/// the GPU's fused multiply-adds in some kernels and not in others), so their f32 results
/// differ in the last bits, and the differences grow over the steps: on an H200, n-body's
/// checksums were 254.749370 and 254.749131 after 3000 steps of 20,000 bodies (scale about 3e4,
/// so 8e-9 of it) and collision's 2.496833 and 2.496839 (scale about 1e3, 6e-9 of it). This
/// leaves two orders of magnitude above those; a wrong body moves the checksum by about 1, far
/// more. (On the CPU backend the results are identical.)
pub const FLOAT_ORDER_TOLERANCE: f64 = 1e-6;

/// The n-body benchmarks' checksum of bodies given as `(pos, vel)` (n-body, collision,
/// Barnes-Hut): the sum of `pos.x + 2 pos.y + 3 vel.x + 4 vel.y`, in f64 in the given order.
pub fn body_checksum(bodies: impl Iterator<Item = (Vec2, Vec2)>) -> f64 {
    bodies.map(|(p, v)| p.x as f64 + 2.0 * p.y as f64 + 3.0 * v.x as f64 + 4.0 * v.y as f64).sum()
}

/// The scale of [`body_checksum`]: the sum of its terms' absolute values (what
/// [`FLOAT_ORDER_TOLERANCE`] is relative to).
pub fn body_checksum_scale(bodies: impl Iterator<Item = (Vec2, Vec2)>) -> f64 {
    bodies
        .map(|(p, v)| {
            (p.x as f64).abs()
                + 2.0 * (p.y as f64).abs()
                + 3.0 * (v.x as f64).abs()
                + 4.0 * (v.y as f64).abs()
        })
        .sum()
}

/// `None` if `mine` and `reference` (checksums of size `scale`, see [`FLOAT_ORDER_TOLERANCE`])
/// agree; else the difference, with both values.
pub fn checksum_difference(what: &str, mine: f64, reference: f64, scale: f64) -> Option<String> {
    let allowed = FLOAT_ORDER_TOLERANCE * scale.abs();
    let close = (mine - reference).abs() <= allowed;
    (!close).then(|| {
        format!(
            "{what} {mine:.6} vs {reference:.6} (they may differ by {allowed:.3e}, {FLOAT_ORDER_TOLERANCE:e} of \
             its scale {scale:.3e}, for float summation order)"
        )
    })
}

/// `None` if the fingerprints are equal; else both.
pub fn fingerprint_difference(mine: u64, reference: u64) -> Option<String> {
    (mine != reference).then(|| format!("fingerprint {mine:016x} vs {reference:016x}"))
}

/// Implements [`Compared`] for an app's `Outcome`, which has `total` and `enumeration` fields and
/// a `fingerprint()` method (runs agree when their fingerprints are equal); the table's own
/// columns are the given `name => |outcome| count`.
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
            fn result(&self) -> (&'static str, String) {
                ("fingerprint", format!("{:016x}", <$outcome>::fingerprint(self)))
            }
            fn columns(&self) -> Vec<(&'static str, u64)> {
                vec![$(($name, { let $o = self; $value })),*]
            }
            fn differs_from(&self, reference: &Self) -> Option<String> {
                $crate::compare::fingerprint_difference(
                    <$outcome>::fingerprint(self),
                    <$outcome>::fingerprint(reference),
                )
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
    /// Run the SOA and AOS baselines and the DSL version, fail if their results differ, and
    /// report the ratios.
    #[arg(long, conflicts_with = "implementation")]
    pub compare: bool,
    /// No progress bar.
    #[arg(long)]
    pub no_progress: bool,
    #[command(flatten)]
    pub render: RenderArgs,
}

/// The command-line choices the run loop needs.
pub struct Choices<'a> {
    /// The app's name, for the note about default sizes on the CPU.
    pub app: &'static str,
    pub common: &'a CommonArgs,
    pub run: &'a RunChoice,
    /// What the runs compute, for the error when they differ ("oceans").
    pub what: &'static str,
    /// When the run has the app's default (GPU benchmark) size: the flags of a smaller run,
    /// suggested on the CPU (see [`note_cpu_default_size`]).
    pub smaller: Option<&'static str>,
}

/// What [`run_and_report`] ran: the options (backend picked) and each implementation's outcome.
pub struct Runs<O> {
    pub options: RunOptions,
    pub results: Vec<(Implementation, O)>,
}

/// Run, print the table (with `--compare`) and the report lines, and with `--compare` fail if
/// an implementation computed something else than the SOA baseline. `run` runs one
/// implementation; `report(label, backend, outcome)` makes its report line.
pub fn run_and_report<O: Compared>(
    choices: Choices<'_>,
    mut run: impl FnMut(Implementation, RunOptions, &mut Recorder, bool) -> anyhow::Result<O>,
    report: impl Fn(&'static str, &str, &O) -> Report,
) -> anyhow::Result<Runs<O>> {
    let Choices { app, common, run: choice, what, smaller } = choices;
    let RunChoice { implementation, compare, no_progress, ref render } = *choice;
    let progress = !no_progress;
    let (options, kind) = common.resolve()?;
    let backend = kind.name();
    if let Some(smaller) = smaller {
        note_cpu_default_size(kind, true, app, smaller);
    }
    let implementations = if compare {
        vec![Implementation::Soa, Implementation::Aos, Implementation::Dynasoar]
    } else {
        vec![implementation]
    };
    let mut results = Vec::new();
    for (k, &implementation) in implementations.iter().enumerate() {
        // With --compare, only the last run (the DSL version) renders.
        let render = if k + 1 == implementations.len() { render.clone() } else { RenderArgs::default() };
        let mut recorder = Recorder::new(&render)?;
        let outcome = run(implementation, options.clone(), &mut recorder, progress)?;
        let frames = recorder.finish()?;
        if let (true, Some(dir)) = (frames > 0, render.render.as_ref()) {
            eprintln!("wrote {} to {}", plural(frames, "frame", "frames"), dir.display());
        }
        results.push((implementation, outcome));
    }
    if compare {
        print_table(common, &results);
    }
    let mut lines: Vec<Report> = results
        .iter()
        .map(|(i, o)| {
            let line = report(common.label(*i), backend, o);
            // The DSL version's steps were replayed from a step graph.
            if common.graph && *i == Implementation::Dynasoar { line.field("graph", "on") } else { line }
        })
        .collect();
    if compare {
        let t = |k: usize| results[k].1.total().as_micros();
        let (dsl, soa) = (results[2].1.total().as_secs_f64(), results[0].1.total().as_secs_f64());
        let ratio = if soa > 0.0 { format!("{:.3}", dsl / soa) } else { "n/a".into() };
        if let Some(last) = lines.pop() {
            lines.push(last.field("soa_us", t(0)).field("aos_us", t(1)).field("ratio_vs_soa", ratio));
        }
    }
    for line in lines {
        outln!("{line}");
    }
    if compare {
        check_agreement(common, &results, what)?;
    }
    Ok(Runs { options, results })
}

/// Fail if a run computed something else than the first one (the SOA baseline).
pub fn check_agreement<O: Compared>(
    common: &CommonArgs,
    results: &[(Implementation, O)],
    what: &str,
) -> anyhow::Result<()> {
    let Some((first, reference)) = results.first() else { return Ok(()) };
    for (i, o) in &results[1..] {
        if let Some(difference) = o.differs_from(reference) {
            anyhow::bail!(
                "--compare: {} and {} computed different {what}: {difference}",
                common.label(*i),
                common.label(*first)
            );
        }
    }
    Ok(())
}

fn print_table<O: Compared>(common: &CommonArgs, results: &[(Implementation, O)]) {
    let Some((_, first)) = results.first() else { return };
    let own: String = first.columns().iter().map(|(name, _)| format!(" {name:>10}")).collect();
    outln!(
        "{:<10} {:>12} {:>12}{own} {:>18} {:>9}",
        "impl",
        "total ms",
        "enum ms",
        first.result().0,
        "vs soa"
    );
    let soa = first.total().as_secs_f64();
    for (i, o) in results {
        let own: String = o.columns().iter().map(|(_, value)| format!(" {value:>10}")).collect();
        let t = o.total().as_secs_f64();
        let ratio = if soa > 0.0 { format!("{:.2}x", t / soa) } else { "n/a".into() };
        outln!(
            "{:<10} {:>12.1} {:>12.1}{own} {:>18} {:>9}",
            common.label(*i),
            t * 1e3,
            o.enumeration().as_secs_f64() * 1e3,
            o.result().1,
            ratio
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fake {
        fingerprint: u64,
    }

    impl Fake {
        fn fingerprint(&self) -> u64 {
            self.fingerprint
        }
    }

    impl Compared for Fake {
        fn total(&self) -> Duration {
            Duration::ZERO
        }
        fn enumeration(&self) -> Duration {
            Duration::ZERO
        }
        fn result(&self) -> (&'static str, String) {
            ("fingerprint", format!("{:016x}", self.fingerprint()))
        }
        fn columns(&self) -> Vec<(&'static str, u64)> {
            Vec::new()
        }
        fn differs_from(&self, reference: &Self) -> Option<String> {
            fingerprint_difference(self.fingerprint, reference.fingerprint)
        }
    }

    fn common() -> CommonArgs {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Args {
            #[command(flatten)]
            common: CommonArgs,
        }
        Args::parse_from(["test", "--backend", "cpu", "--allocator", "dynasoar"]).common
    }

    #[test]
    fn a_differing_fingerprint_is_an_error_naming_both() {
        let runs = |dsl| {
            vec![
                (Implementation::Soa, Fake { fingerprint: 7 }),
                (Implementation::Aos, Fake { fingerprint: 7 }),
                (Implementation::Dynasoar, Fake { fingerprint: dsl }),
            ]
        };
        assert!(check_agreement(&common(), &runs(7), "oceans").is_ok());
        let err = check_agreement(&common(), &runs(8), "oceans").unwrap_err().to_string();
        assert!(err.contains("dynasoar and soa computed different oceans"), "{err}");
        assert!(err.contains("0000000000000008 vs 0000000000000007"), "{err}");
    }

    #[test]
    fn checksums_agree_within_the_tolerance_only() {
        // The GPU's n-body checksums after 3000 steps of 20,000 bodies.
        assert_eq!(checksum_difference("checksum", 254.749131, 254.749370, 3e4), None);
        let far = checksum_difference("checksum", 254.9, 254.749370, 3e4).unwrap();
        assert!(far.contains("254.900000 vs 254.749370"), "{far}");
        assert!(checksum_difference("checksum", 1.0, 1.0, 0.0).is_none());
    }
}
