//! Shared parts of the example apps: the embedded PTX of the models and common CLI options.

use dynasoar::host::{Backend, Executor, ExecutorOptions};

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
    /// An executor for the models' PTX on the requested backend.
    pub fn executor(&self) -> dynasoar::host::Result<Executor> {
        Executor::new(
            MODELS_PTX,
            ExecutorOptions { backend: self.backend, cpu_threads: self.cpu_threads, ..Default::default() },
        )
    }
}
pub mod smoke;
pub mod storm;
