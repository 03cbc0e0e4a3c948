//! How the host reports bad requests and failing kernels, on both backends.

use dynasoar::host::{Backend, Error, Executor, ExecutorOptions, Grid};
use dynasoar_examples::MODELS_PTX;
use dynasoar_models::smoke::{TRAP_AT, TrapParams};
use dynasoar_tests::{cpu_executor, gpu_executor};

#[test]
fn cuda_without_a_gpu_says_so_and_suggests_cpu() {
    match Executor::new(
        MODELS_PTX,
        ExecutorOptions { backend: Backend::Cuda, quiet: true, ..Default::default() },
    ) {
        Ok(exec) => println!("this machine has a GPU ({}); nothing to check", exec.description()),
        Err(e @ (Error::NoCudaDriver | Error::NoCudaDevice { .. })) => {
            let msg = e.to_string();
            assert!(msg.contains("Backend::Cpu") && msg.contains("Auto"), "{msg}");
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
