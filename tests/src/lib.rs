//! Helpers shared by the integration tests.

use dynasoar::host::{Backend, Error, Executor, ExecutorOptions};
use dynasoar_examples::MODELS_PTX;

/// Set by the GPU bundle's runner: a missing GPU is then a failure, not a skip.
pub const REQUIRE_GPU_VAR: &str = "DYNASOAR_REQUIRE_GPU";

/// An executor on the CPU backend.
pub fn cpu_executor() -> Executor {
    Executor::new(MODELS_PTX, ExecutorOptions { backend: Backend::Cpu, quiet: true, ..Default::default() })
        .expect("the CPU backend always starts")
}

/// An executor on the GPU, or `None` (after printing why the test is skipped) when this machine
/// has no CUDA driver or device. With `DYNASOAR_REQUIRE_GPU=1` a missing GPU panics instead.
pub fn gpu_executor(test: &str) -> Option<Executor> {
    match Executor::new(
        MODELS_PTX,
        ExecutorOptions { backend: Backend::Cuda, quiet: true, ..Default::default() },
    ) {
        Ok(exec) => Some(exec),
        Err(e @ (Error::NoCudaDriver | Error::NoCudaDevice { .. })) => {
            if std::env::var(REQUIRE_GPU_VAR).is_ok_and(|v| v == "1") {
                panic!("{test}: a GPU is required ({REQUIRE_GPU_VAR}=1) but: {e}");
            }
            println!("skipping {test}: no GPU on this machine ({e})");
            None
        }
        Err(e) => panic!("{test}: starting the CUDA backend failed: {e}"),
    }
}
