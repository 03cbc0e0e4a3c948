//! How the host reports bad requests and failing kernels, on both backends.

use dynasoar::host::{Backend, BackendKind, Error, Executor, ExecutorOptions, Grid};
use dynasoar_examples::MODELS_PTX;
use dynasoar_models::smoke::{TRAP_AT, TrapParams};
use dynasoar_tests::{REQUIRE_GPU_VAR, cpu_executor, gpu_executor};

/// Asking for the CUDA backend gives a CUDA executor where there is a GPU, and where there is
/// none an error that says so and names the ways out (`Backend::Cpu`, `Backend::Auto`), which
/// must work. Both kinds of machine check the message: one with a GPU through a device number it
/// does not have. With `DYNASOAR_REQUIRE_GPU=1` (the GPU bundle) a missing GPU is a failure.
#[test]
fn cuda_without_a_gpu_says_so_and_suggests_cpu() {
    let cuda = |device: usize| {
        Executor::new(
            MODELS_PTX,
            ExecutorOptions { backend: Backend::Cuda, device, quiet: true, ..Default::default() },
        )
    };
    let suggests_cpu = |e: &Error| {
        let msg = e.to_string();
        assert!(msg.contains("Backend::Cpu") && msg.contains("Auto"), "{msg}");
    };
    let auto = Executor::new(MODELS_PTX, ExecutorOptions { quiet: true, ..Default::default() }).unwrap();
    match cuda(0) {
        Ok(exec) => {
            assert_eq!(exec.kind(), BackendKind::Cuda, "{}", exec.description());
            assert!(exec.description().starts_with("cuda"), "{}", exec.description());
            // Auto takes the GPU when there is one.
            assert_eq!(auto.kind(), BackendKind::Cuda, "{}", auto.description());
            // A device this machine does not have is the same error as no device at all.
            match cuda(1 << 20) {
                Err(e @ Error::NoCudaDevice { .. }) => {
                    suggests_cpu(&e);
                    assert!(e.to_string().contains("device 1048576 requested"), "{e}");
                }
                Ok(other) => panic!("device 1048576 exists? {}", other.description()),
                Err(other) => panic!("device 1048576: unexpected error: {other}"),
            }
        }
        Err(e @ (Error::NoCudaDriver | Error::NoCudaDevice { .. })) => {
            if std::env::var(REQUIRE_GPU_VAR).is_ok_and(|v| v == "1") {
                panic!("a GPU is required ({REQUIRE_GPU_VAR}=1) but: {e}");
            }
            suggests_cpu(&e);
            // The ways out it names work: the CPU backend, and Auto, which falls back to it.
            assert_eq!(cpu_executor().kind(), BackendKind::Cpu);
            assert_eq!(auto.kind(), BackendKind::Cpu, "{}", auto.description());
        }
        Err(other) => panic!("unexpected error: {other}"),
    }
}

#[test]
fn auto_always_starts() {
    let exec = Executor::new(MODELS_PTX, ExecutorOptions { quiet: true, ..Default::default() }).unwrap();
    assert!(!exec.description().is_empty());
}

#[test]
fn backend_names_parse() {
    assert_eq!("cuda".parse::<Backend>().unwrap(), Backend::Cuda);
    assert_eq!("GPU".parse::<Backend>().unwrap(), Backend::Cuda);
    assert_eq!("cpu".parse::<Backend>().unwrap(), Backend::Cpu);
    assert_eq!("auto".parse::<Backend>().unwrap(), Backend::Auto);
    let err = "tpu".parse::<Backend>().unwrap_err().to_string();
    assert!(err.contains("tpu") && err.contains("cuda"), "{err}");
}

#[test]
fn bad_grid_is_rejected_before_launch() {
    let exec = cpu_executor();
    let err = exec.launch(&TRAP_AT, Grid::new(1, 2048), TrapParams { thread: u32::MAX }).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    let err = exec.launch(&TRAP_AT, Grid::new(0, 32), TrapParams { thread: u32::MAX }).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err}");
    // A rejected launch leaves the executor usable.
    exec.launch(&TRAP_AT, Grid::new(2, 32), TrapParams { thread: u32::MAX }).unwrap();
}

#[test]
fn out_of_range_buffer_access_is_an_error() {
    let exec = cpu_executor();
    let buf = exec.upload(&[1u32, 2, 3]).unwrap();
    assert!(matches!(exec.read(&buf, 2, 2), Err(Error::InvalidArgument(_))));
    assert_eq!(exec.read(&buf, 1, 2).unwrap(), vec![2, 3]);
}

fn check_trap_reporting(exec: &Executor) {
    exec.launch(&TRAP_AT, Grid::new(4, 64), TrapParams { thread: u32::MAX }).unwrap();
    exec.synchronize().unwrap();
    let first = exec
        .launch(&TRAP_AT, Grid::new(4, 64), TrapParams { thread: 77 })
        .and_then(|()| exec.synchronize())
        .unwrap_err();
    assert!(matches!(first, Error::KernelFailed { .. }), "{first}");
    assert!(first.to_string().contains("`trap_at`"), "{first}");
    // Later calls say the context is unusable instead of crashing.
    let later = exec.launch(&TRAP_AT, Grid::new(1, 1), TrapParams { thread: u32::MAX }).unwrap_err();
    assert!(matches!(later, Error::ContextUnusable { .. }), "{later}");
    assert!(later.to_string().contains("`trap_at`"), "{later}");
    assert!(matches!(exec.alloc_zeroed::<u32>(4), Err(Error::ContextUnusable { .. })));
}

#[test]
fn trap_on_cpu_names_the_kernel_and_poisons_the_executor() {
    check_trap_reporting(&cpu_executor());
}

#[test]
fn trap_on_gpu_names_the_kernel_and_poisons_the_executor() {
    let Some(gpu) = gpu_executor("trap_on_gpu_names_the_kernel_and_poisons_the_executor") else {
        return;
    };
    check_trap_reporting(&gpu);
}
