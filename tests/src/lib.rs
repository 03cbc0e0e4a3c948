//! Helpers shared by the integration tests.

use dynasoar::baselines::host::StoreChoice;
use dynasoar::host::{Backend, DoAllLoop, Error, Executor, ExecutorOptions, ModuleCompile};
use dynasoar_examples::{MODELS, MODELS_PTX};

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
    gpu_executor_on(test, MODELS_PTX, ModuleCompile::WholeProgram)
}

/// [`gpu_executor`] for the kernels of `ptx`, compiled as `compile` says: the models' AOS
/// build, which holds the comparison suite's kernels, is compiled as relocatable code, as the
/// runtime does for its stores (each allocator's code once, not once per kernel).
pub fn gpu_executor_on(test: &str, ptx: &'static str, compile: ModuleCompile) -> Option<Executor> {
    let options = ExecutorOptions {
        backend: Backend::Cuda,
        quiet: true,
        module_compile: compile,
        ..Default::default()
    };
    match Executor::new(ptx, options) {
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

/// A runtime of allocator `A` on the CPU backend (several threads, so objects really race).
pub fn cpu_runtime<A: dynasoar::AllocatorSpec>(heap_bytes: u64) -> dynasoar::host::Runtime<A> {
    cpu_runtime_on(StoreChoice::Dynasoar, heap_bytes)
}

/// [`cpu_runtime`] with the objects in `store`.
pub fn cpu_runtime_on<A: dynasoar::AllocatorSpec>(
    store: StoreChoice,
    heap_bytes: u64,
) -> dynasoar::host::Runtime<A> {
    dynasoar::host::Runtime::<A>::builder(MODELS)
        .backend(Backend::Cpu)
        .cpu_threads(4)
        .store(store)
        .heap_bytes(heap_bytes)
        .quiet(true)
        .build()
        .unwrap_or_else(|e| panic!("a CPU runtime on {store}: {e}"))
}

/// A runtime of allocator `A` on the GPU, or `None` (printing why) as for [`gpu_executor`].
pub fn gpu_runtime<A: dynasoar::AllocatorSpec>(
    test: &str,
    heap_bytes: u64,
) -> Option<dynasoar::host::Runtime<A>> {
    gpu_runtime_on(test, StoreChoice::Dynasoar, heap_bytes)
}

/// [`gpu_runtime`] with the objects in `store`.
pub fn gpu_runtime_on<A: dynasoar::AllocatorSpec>(
    test: &str,
    store: StoreChoice,
    heap_bytes: u64,
) -> Option<dynasoar::host::Runtime<A>> {
    gpu_executor(test)?;
    Some(
        dynasoar::host::Runtime::<A>::builder(MODELS)
            .backend(Backend::Cuda)
            .store(store)
            .heap_bytes(heap_bytes)
            .quiet(true)
            .build()
            .unwrap_or_else(|e| panic!("{test}: a GPU runtime on {store}: {e}")),
    )
}

/// A runtime of allocator `A` whose `parallel_do` kernels run do-all loop `choice`, on the
/// CPU (`test` is `None`) or on the GPU (`None` when there is none, as for [`gpu_executor`]).
pub fn runtime_with_loop<A: dynasoar::AllocatorSpec>(
    test: Option<&str>,
    heap_bytes: u64,
    choice: DoAllLoop,
) -> Option<dynasoar::host::Runtime<A>> {
    let backend = match test {
        Some(test) => {
            gpu_executor(test)?;
            Backend::Cuda
        }
        None => Backend::Cpu,
    };
    Some(
        dynasoar::host::Runtime::<A>::builder(MODELS)
            .backend(backend)
            .cpu_threads(4)
            .heap_bytes(heap_bytes)
            .do_all_loop(choice)
            .quiet(true)
            .build()
            .unwrap_or_else(|e| panic!("a {backend:?} runtime with the {choice:?} loop: {e}")),
    )
}

/// The general-purpose allocators to run the AOS store tests on: all of them, or those named in
/// `DYNASOAR_STORES` (comma-separated allocator names, to check one allocator quickly).
pub fn general_stores() -> Vec<StoreChoice> {
    match std::env::var("DYNASOAR_STORES") {
        Ok(names) => names
            .split(',')
            .map(|name| name.trim().parse().unwrap_or_else(|e| panic!("DYNASOAR_STORES: {e}")))
            .collect(),
        Err(_) => StoreChoice::all().filter(|s| matches!(s, StoreChoice::Malloc(_))).collect(),
    }
}

/// A runtime builder of allocator `A` on the CPU (`test` is `None`, 4 threads) or on the GPU
/// (`None` when there is none, as for [`gpu_executor`]), quiet, for tests that set more options.
pub fn runtime_builder<A: dynasoar::AllocatorSpec>(
    test: Option<&str>,
) -> Option<dynasoar::host::RuntimeBuilder<A>> {
    let backend = match test {
        Some(test) => {
            gpu_executor(test)?;
            Backend::Cuda
        }
        None => Backend::Cpu,
    };
    Some(dynasoar::host::Runtime::<A>::builder(MODELS).backend(backend).cpu_threads(4).quiet(true))
}
