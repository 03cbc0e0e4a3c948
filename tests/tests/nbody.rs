//! N-body: the DSL version gives the SOA baseline's bodies bit for bit (its bodies lie in the
//! heap in the order of their indices, so forces are summed in the same order), agrees with the
//! AOS baseline, conserves momentum (pairwise forces), and gives the same bodies, bit for bit,
//! on the GPU as on the CPU.

use dynasoar::host::{Backend, ExecutorOptions, Runtime};
use dynasoar_examples::Implementation;
use dynasoar_examples::nbody::{Config, Outcome, run};
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_models::nbody::{Body, NbodyHeap, Physics};
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
    assert_eq!(dsl.bodies, soa.bodies, "the DSL version sums the forces as the SOA baseline does");
    assert!(max_relative_difference(&soa, &aos) < 1e-6, "soa vs aos");
    assert_eq!(dsl.checksum(), soa.checksum());
}

/// `parallel_new` places object `i` in the heap before object `i + 1` (block by block, slot by
/// slot), whichever thread or warp makes it, and fills the blocks: `count` bodies on `backend`,
/// twice (the second creation's bodies after the first's).
fn check_bulk_placement(backend: Backend, test: &str) {
    let rt = Runtime::<NbodyHeap>::builder(dynasoar_examples::MODELS_PTX)
        .backend(backend)
        .cpu_threads(4)
        .heap_bytes(16 << 20)
        .quiet(true)
        .build()
        .unwrap_or_else(|e| panic!("{test}: {e}"));
    let count = 5000u64;
    rt.parallel_new_with(Body::random, count, 7).unwrap();
    rt.parallel_new_with(Body::random, count, 8).unwrap();
    let mut bodies = rt.collect_with_handles::<Body>().unwrap();
    assert_eq!(bodies.len() as u64, 2 * count);
    // The first creation's bodies, then the second's, each by index (ids repeat across them:
    // tell them apart by their initial state).
    let first_of = |b: &Body| {
        let (pos, ..) = dynasoar_models::nbody::initial_state(7, b.id as u64);
        pos == b.pos
    };
    bodies.sort_by_key(|(_, b)| (!first_of(b), b.id));
    let places: Vec<(u64, u32)> =
        bodies.iter().map(|(h, _)| (h.raw().block_addr(), h.raw().slot())).collect();
    for (k, w) in places.windows(2).enumerate() {
        assert!(w[0] < w[1], "{test}: body {k} lies at {:?}, after body {} at {:?}", w[0], k + 1, w[1]);
    }
    let blocks: std::collections::BTreeSet<u64> = places.iter().map(|p| p.0).collect();
    let per_block = places.iter().map(|p| p.1).max().unwrap() as u64 + 1;
    assert_eq!(blocks.len() as u64, 2 * count.div_ceil(per_block), "{test}: the bodies fill their blocks");
}

#[test]
fn bulk_creation_places_bodies_in_index_order_on_cpu() {
    check_bulk_placement(Backend::Cpu, "bulk_creation_places_bodies_in_index_order_on_cpu");
}

#[test]
fn bulk_creation_places_bodies_in_index_order_on_gpu() {
    let test = "bulk_creation_places_bodies_in_index_order_on_gpu";
    if gpu_executor(test).is_some() {
        check_bulk_placement(Backend::Cuda, test);
    }
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
    // The bodies lie in the order of their indices on both backends, so every force sums the
    // others in the same order, and the exact (IEEE) operations round alike: the same bits.
    let d = max_relative_difference(&gpu, &cpu);
    println!(
        "GPU and CPU bodies: {}, largest relative difference {d:e}",
        if gpu.bodies == cpu.bodies { "identical" } else { "differ" }
    );
    assert_eq!(gpu.bodies, cpu.bodies, "GPU and CPU differ (largest relative difference {d:e})");
    // The order of the sums is the SOA baseline's, and so are the bits.
    let soa = simulate(Implementation::Soa, Backend::Cuda, &cfg);
    assert_eq!(gpu.bodies, soa.bodies, "the GPU's DSL version and SOA baseline differ");
    let again = simulate(Implementation::Dynasoar, Backend::Cuda, &cfg);
    assert_eq!(again.bodies, gpu.bodies, "two GPU runs differ");
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
