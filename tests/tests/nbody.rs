//! N-body: the DSL version agrees with both baselines, conserves momentum (pairwise forces), and
//! gives the same bodies on the GPU as on the CPU.

use dynasoar::host::{Backend, ExecutorOptions};
use dynasoar_examples::Implementation;
use dynasoar_examples::nbody::{Config, Outcome, run};
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_models::nbody::Physics;
use dynasoar_tests::gpu_executor;

fn options(backend: Backend) -> ExecutorOptions {
    ExecutorOptions { backend, cpu_threads: Some(4), quiet: true, ..Default::default() }
}

fn simulate(implementation: Implementation, backend: Backend, cfg: &Config) -> Outcome {
    let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
    run(implementation, options(backend), cfg, &mut recorder, false).unwrap()
}

/// Largest difference of positions and velocities between two runs, relative to the values.
fn max_relative_difference(a: &Outcome, b: &Outcome) -> f32 {
    assert_eq!(a.bodies.len(), b.bodies.len());
    a.bodies
        .iter()
        .zip(&b.bodies)
        .map(|(x, y)| {
            assert_eq!((x.id, x.mass), (y.id, y.mass));
            let dp = (x.pos - y.pos).length() / x.pos.length().max(1e-3);
            let dv = (x.vel - y.vel).length() / x.vel.length().max(1e-6);
            dp.max(dv)
        })
        .fold(0.0, f32::max)
}

#[test]
fn dsl_matches_both_baselines_on_cpu() {
    let cfg = Config { bodies: 500, steps: 20, ..Config::default() };
    let dsl = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    let soa = simulate(Implementation::Soa, Backend::Cpu, &cfg);
    let aos = simulate(Implementation::Aos, Backend::Cpu, &cfg);
    assert_eq!(dsl.bodies.len(), 500);
    assert!(max_relative_difference(&dsl, &soa) < 1e-5, "dsl vs soa");
    assert!(max_relative_difference(&soa, &aos) < 1e-6, "soa vs aos");
    assert!((dsl.checksum() - soa.checksum()).abs() < 1e-3);
}

#[test]
fn momentum_is_conserved_while_no_body_hits_a_wall() {
    // Stronger gravity than the benchmark's so that forces matter within a few steps.
    let physics = Physics { gravity: 1e-8, ..Physics::default() };
    let cfg = Config { bodies: 300, steps: 30, physics, ..Config::default() };
    let start = simulate(Implementation::Dynasoar, Backend::Cpu, &Config { steps: 0, ..cfg });
    let end = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    assert!(end.bodies.iter().all(|b| b.pos.x.abs() < 1.0 && b.pos.y.abs() < 1.0), "a body reached a wall");
    // The bodies did move and accelerate.
    assert!(max_relative_difference(&start, &end) > 1e-3);
    let (p0, p1) = (start.momentum(), end.momentum());
    let scale: f64 = end.bodies.iter().map(|b| b.mass as f64 * b.vel.length() as f64).sum();
    let drift = ((p1.0 - p0.0).powi(2) + (p1.1 - p0.1).powi(2)).sqrt();
    assert!(drift < 1e-5 * scale, "momentum drifted by {drift} (scale {scale})");
}

#[test]
fn gpu_gives_the_same_bodies_as_cpu() {
    if gpu_executor("gpu_gives_the_same_bodies_as_cpu").is_none() {
        return;
    }
    let cfg = Config { bodies: 4000, steps: 50, ..Config::default() };
    let gpu = simulate(Implementation::Dynasoar, Backend::Cuda, &cfg);
    let cpu = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    // Forces are summed in a different order (objects sit in other blocks): rounding differs.
    let d = max_relative_difference(&gpu, &cpu);
    assert!(d < 1e-3, "GPU and CPU differ by {d}");
    let soa = simulate(Implementation::Soa, Backend::Cuda, &cfg);
    assert!(max_relative_difference(&gpu, &soa) < 1e-3);
}

/// `--fast-math` changes nothing on the CPU backend, where `math::fast` is exact (the SOA
/// baseline, whose summation order does not depend on where the workers put the bodies).
#[test]
fn fast_math_on_cpu_gives_the_exact_bodies() {
    let cfg = Config { bodies: 300, steps: 10, ..Config::default() };
    let exact = simulate(Implementation::Soa, Backend::Cpu, &cfg);
    let fast = simulate(Implementation::Soa, Backend::Cpu, &Config { fast_math: true, ..cfg });
    assert_eq!(fast.bodies, exact.bodies);
    let again = simulate(Implementation::Soa, Backend::Cpu, &Config { seed: cfg.seed + 1, ..cfg });
    assert_ne!(again.bodies, exact.bodies, "the comparison finds a difference");
}

/// On the GPU, `--fast-math` gives other bits than the exact forces (the approximate instructions
/// are in use) but stays as close to them as the CPU backend's run is, and the fast DSL version
/// and the fast SOA baseline agree as closely as the exact ones.
#[test]
fn fast_math_on_gpu_stays_close_to_exact() {
    if gpu_executor("fast_math_on_gpu_stays_close_to_exact").is_none() {
        return;
    }
    let cfg = Config { bodies: 4000, steps: 50, ..Config::default() };
    let fast_cfg = Config { fast_math: true, ..cfg };
    let exact = simulate(Implementation::Dynasoar, Backend::Cuda, &cfg);
    let fast = simulate(Implementation::Dynasoar, Backend::Cuda, &fast_cfg);
    assert_ne!(fast.bodies, exact.bodies, "fast math changed no bit on the GPU");
    let d = max_relative_difference(&fast, &exact);
    assert!(d < 1e-3, "fast and exact forces differ by {d}");
    let soa = simulate(Implementation::Soa, Backend::Cuda, &fast_cfg);
    let d = max_relative_difference(&fast, &soa);
    assert!(d < 1e-3, "the fast DSL version and the fast SOA baseline differ by {d}");
}
