//! The example apps: command-line programs over the models of `dynasoar-models`, with the
//! models' PTX embedded, plus what they share (options, rendering, progress, reports) and each
//! app's host-side driver (used by the binaries and by the tests).

pub mod progress;
pub mod render;
pub mod report;

pub mod barnes_hut;
pub mod collision;
pub mod game_of_life;
pub mod generation;
pub mod nbody;
pub mod smoke;
pub mod storm;
pub mod structure;
pub mod sugarscape;
pub mod traffic;
pub mod wator;

use dynasoar::host::{Backend, Executor, ExecutorOptions, Result};

/// The models crate compiled to PTX by this crate's build script.
pub const MODELS_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/models.ptx"));

/// Options every app takes.
#[derive(Clone, Debug, clap::Args)]
pub struct CommonArgs {
    /// Where to run: auto (GPU if present), cuda, or cpu.
    #[arg(long, default_value = "auto", env = "DYNASOAR_BACKEND")]
    pub backend: Backend,
    /// Threads of the CPU backend (default: all cores).
    #[arg(long)]
    pub cpu_threads: Option<usize>,
}

impl CommonArgs {
    /// Executor options for the requested backend.
    pub fn executor_options(&self) -> ExecutorOptions {
        ExecutorOptions { backend: self.backend, cpu_threads: self.cpu_threads, ..Default::default() }
    }

    /// An executor for the models' PTX on the requested backend.
    pub fn executor(&self) -> Result<Executor> {
        Executor::new(MODELS_PTX, self.executor_options())
    }
}

/// Which implementation of an app to run (paper Figure 10: the DSL and hand-written baselines).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Implementation {
    /// Objects in the dynasoar heap (the DSL).
    Dynasoar,
    /// Hand-written structure-of-arrays baseline: static arrays, no dynamic allocation.
    Soa,
    /// Hand-written array-of-structures baseline.
    Aos,
}

impl Implementation {
    pub fn name(self) -> &'static str {
        match self {
            Implementation::Dynasoar => "dynasoar",
            Implementation::Soa => "soa",
            Implementation::Aos => "aos",
        }
    }
}

/// Run the app `main` with `args`, printing an error and failing the process on `Err`.
pub fn exit_on_error(result: anyhow::Result<()>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
