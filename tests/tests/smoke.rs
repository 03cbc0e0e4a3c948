//! The smoke model on both backends: atomics and warp aggregation give the host's result.

use dynasoar_examples::smoke::{SmokeResult, run_histogram, sample_values};
use dynasoar_tests::{cpu_executor, gpu_executor};

#[test]
fn histogram_on_cpu_matches_reference() {
    let exec = cpu_executor();
    let values = sample_values(50_000, 7);
    let got = run_histogram(&exec, &values, 97).unwrap();
    assert_eq!(got, SmokeResult::reference(&values, 97));
    assert!(!got.evens.is_empty());
}

#[test]
fn histogram_on_gpu_matches_cpu() {
    let Some(gpu) = gpu_executor("histogram_on_gpu_matches_cpu") else {
        return;
    };
    let values = sample_values(3_000_000, 11);
    for bins in [1, 2, 97, 4096] {
        let on_gpu = run_histogram(&gpu, &values, bins).unwrap();
        let on_cpu = run_histogram(&cpu_executor(), &values, bins).unwrap();
        assert_eq!(on_gpu, on_cpu, "bins = {bins}");
        assert_eq!(on_gpu, SmokeResult::reference(&values, bins), "bins = {bins}");
    }
}

#[test]
fn bad_bin_count_is_an_error() {
    let exec = cpu_executor();
    let err = run_histogram(&exec, &[1, 2, 3], 0).unwrap_err();
    assert!(err.to_string().contains("bins"), "{err}");
}
