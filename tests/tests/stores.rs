//! Every app on every general-purpose allocator (the AOS object store, paper Figure 10): the
//! DSL version run on each allocator gives the same result as the hand-written SOA baseline
//! (exactly where the app is deterministic; within rounding for the two whose force sums run in
//! object order), on the CPU here and on the GPU in the bundle.

use dynasoar::baselines::host::StoreChoice;
use dynasoar::host::{Backend, ExecutorOptions};
use dynasoar::math::Vec2;
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_examples::{Implementation, RunOptions};
use dynasoar_examples::{
    barnes_hut, collision, game_of_life, generation, nbody, structure, sugarscape, traffic, wator,
};
use dynasoar_models::generation::Rule;
use dynasoar_tests::{general_stores, gpu_executor};

fn exec(backend: Backend) -> ExecutorOptions {
    ExecutorOptions { backend, cpu_threads: Some(4), quiet: true, ..Default::default() }
}

/// The DSL version on `store`, or a baseline (`store` ignored).
fn on(backend: Backend, store: StoreChoice) -> RunOptions {
    RunOptions { exec: exec(backend), store, fixed_pool: false, time_enumeration: true, graph: false }
}

/// The DSL version's heap: on the GPU a generous 1 GiB for every app, as allocators with per-
/// multiprocessor structures (XMalloc's superblocks, ...) need more than the apps' estimate
/// for the dynasoar heap on a machine with 132 multiprocessors, and CUDA's own allocator takes
/// its heap size once per process (from the first app). The CPU uses the apps' defaults.
fn heap(backend: Backend) -> Option<u64> {
    (backend == Backend::Cuda).then_some(1 << 30)
}

fn recorder() -> Recorder {
    Recorder::new(&RenderArgs::default()).unwrap()
}

/// Run `check(store)` for every store, naming the store in a failure.
fn for_every_store(backend: Backend, check: impl Fn(RunOptions)) {
    for store in general_stores() {
        // Progress (shown with --nocapture): a store that hangs is the last one named.
        eprintln!("store {store} ({backend:?}): {}", std::any::type_name_of_val(&check));
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(on(backend, store))));
        if let Err(e) = result {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            panic!("on allocator `{store}`: {msg}");
        }
    }
}

fn close(a: Vec2, b: Vec2, tolerance: f32) -> bool {
    (a - b).length() <= tolerance * b.length().max(1e-3)
}

fn nbody_case(backend: Backend, bodies: u32, steps: u32) {
    let cfg = nbody::Config { bodies, steps, ..nbody::Config::default() };
    let soa = nbody::run(Implementation::Soa, exec(backend), &cfg, &mut recorder(), false)
        .unwrap_or_else(|e| panic!("{e:#}"));
    for_every_store(backend, |opts| {
        let dsl = nbody::run(Implementation::Dynasoar, opts, &cfg, &mut recorder(), false)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!(dsl.bodies.len(), soa.bodies.len());
        for (d, s) in dsl.bodies.iter().zip(&soa.bodies) {
            assert_eq!(d.id, s.id);
            assert!(close(d.pos, s.pos, 1e-4) && close(d.vel, s.vel, 1e-3), "body {}", d.id);
        }
    });
}

fn collision_case(backend: Backend, bodies: u32, steps: u32) {
    let physics = dynasoar_models::collision::Physics { merge_threshold: 0.04, ..Default::default() };
    let cfg = collision::Config {
        bodies,
        steps,
        physics,
        heap_bytes: heap(backend),
        ..collision::Config::default()
    };
    let soa = collision::run(Implementation::Soa, exec(backend), &cfg, &mut recorder(), false)
        .unwrap_or_else(|e| panic!("{e:#}"));
    assert!(soa.bodies.len() < bodies as usize, "bodies merged");
    for_every_store(backend, |opts| {
        let dsl = collision::run(Implementation::Dynasoar, opts, &cfg, &mut recorder(), false)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!(dsl.bodies.len(), soa.bodies.len(), "the same merges");
        for (d, s) in dsl.bodies.iter().zip(&soa.bodies) {
            assert_eq!((d.id, d.members, d.mass), (s.id, s.members, s.mass));
            assert!(close(d.pos, s.pos, 1e-4), "body {}", d.id);
        }
    });
}

fn wator_case(backend: Backend, width: u32, height: u32, steps: u32) {
    let cfg = wator::Config { width, height, steps, heap_bytes: heap(backend), ..wator::Config::default() };
    let soa = wator::run(Implementation::Soa, exec(backend), &cfg, &mut recorder(), false)
        .unwrap_or_else(|e| panic!("{e:#}"));
    for_every_store(backend, |opts| {
        let dsl = wator::run(Implementation::Dynasoar, opts, &cfg, &mut recorder(), false)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert!(dsl.cells == soa.cells, "the same ocean");
        assert_eq!(dsl.populations, soa.populations);
        assert_eq!(dsl.objects, Some((dsl.fish(), dsl.sharks())), "the store counts every agent");
    });
}

fn game_of_life_case(backend: Backend, size: u32, steps: u32) {
    let pattern = game_of_life::Pattern::random(size, size, 0.35, 1).unwrap();
    let cfg = game_of_life::Config {
        steps,
        verify: true,
        heap_bytes: heap(backend),
        ..game_of_life::Config::new(pattern.clone())
    };
    let expected = game_of_life::reference_run(&pattern, steps);
    for_every_store(backend, |opts| {
        let dsl = game_of_life::run(Implementation::Dynasoar, opts, &cfg, &mut recorder(), false)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!(dsl.live, expected);
    });
}

fn sugarscape_case(backend: Backend, width: u32, height: u32, steps: u32) {
    let cfg = sugarscape::Config {
        width,
        height,
        steps,
        heap_bytes: heap(backend),
        ..sugarscape::Config::default()
    };
    let soa = sugarscape::run(Implementation::Soa, exec(backend), &cfg, &mut recorder(), false)
        .unwrap_or_else(|e| panic!("{e:#}"));
    for_every_store(backend, |opts| {
        let dsl = sugarscape::run(Implementation::Dynasoar, opts, &cfg, &mut recorder(), false)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert!(dsl.cells == soa.cells, "the same world");
        assert_eq!(dsl.populations, soa.populations);
    });
}

fn structure_case(backend: Backend, nodes: u32, steps: u32) {
    let physics = dynasoar_models::structure::Physics { dt: 1.0, ..Default::default() };
    let cfg = structure::Config {
        steps,
        physics,
        heap_bytes: heap(backend),
        ..structure::Config::with_nodes(nodes)
    };
    let soa = structure::run(Implementation::Soa, exec(backend), &cfg, &mut recorder(), false)
        .unwrap_or_else(|e| panic!("{e:#}"));
    for_every_store(backend, |opts| {
        let dsl = structure::run(Implementation::Dynasoar, opts, &cfg, &mut recorder(), false)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert!(dsl.state == soa.state, "the same mesh");
        assert_eq!(dsl.history, soa.history);
    });
}

fn traffic_case(backend: Backend, intersections: u32, steps: u32) {
    let cfg = traffic::Config {
        intersections,
        steps,
        cell_length: 0.03,
        producer_ratio: 0.05,
        target_ratio: 0.02,
        car_ratio: 0.2,
        heap_bytes: heap(backend),
        ..traffic::Config::default()
    };
    let soa = traffic::run(Implementation::Soa, exec(backend), &cfg, &mut recorder(), false)
        .unwrap_or_else(|e| panic!("{e:#}"));
    assert!(soa.created > 0 && soa.removed > 0, "cars came and went");
    for_every_store(backend, |opts| {
        let dsl = traffic::run(Implementation::Dynasoar, opts, &cfg, &mut recorder(), false)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert!(dsl.cars == soa.cars, "the same cars");
        assert_eq!((dsl.created, dsl.removed), (soa.created, soa.removed));
    });
}

fn generation_case(backend: Backend, size: u32, steps: u32) {
    let pattern = generation::burst_pattern(size, size, 10, 40).unwrap();
    let cfg = generation::Config {
        steps,
        rule: Rule::default(),
        heap_bytes: heap(backend),
        ..generation::Config::new(pattern)
    };
    let soa = generation::run(Implementation::Soa, exec(backend), &cfg, &mut recorder(), false)
        .unwrap_or_else(|e| panic!("{e:#}"));
    for_every_store(backend, |opts| {
        let dsl = generation::run(Implementation::Dynasoar, opts, &cfg, &mut recorder(), false)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!(dsl.fingerprint(), soa.fingerprint());
    });
}

fn barnes_hut_case(backend: Backend, bodies: u32, steps: u32) {
    let cfg =
        barnes_hut::Config { bodies, steps, heap_bytes: heap(backend), ..barnes_hut::Config::default() };
    let soa = barnes_hut::run(Implementation::Soa, exec(backend), &cfg, &mut recorder(), false)
        .unwrap_or_else(|e| panic!("{e:#}"));
    for_every_store(backend, |opts| {
        let dsl = barnes_hut::run(Implementation::Dynasoar, opts, &cfg, &mut recorder(), false)
            .unwrap_or_else(|e| panic!("{e:#}"));
        assert!(dsl.bodies == soa.bodies, "the same bodies");
        assert_eq!(dsl.tree, soa.tree);
    });
}

#[test]
fn nbody_on_every_allocator_on_cpu() {
    nbody_case(Backend::Cpu, 300, 5);
}

#[test]
fn collision_on_every_allocator_on_cpu() {
    collision_case(Backend::Cpu, 400, 10);
}

#[test]
fn wator_on_every_allocator_on_cpu() {
    wator_case(Backend::Cpu, 40, 32, 20);
}

#[test]
fn game_of_life_on_every_allocator_on_cpu() {
    game_of_life_case(Backend::Cpu, 48, 20);
}

#[test]
fn sugarscape_on_every_allocator_on_cpu() {
    sugarscape_case(Backend::Cpu, 48, 40, 30);
}

#[test]
fn structure_on_every_allocator_on_cpu() {
    structure_case(Backend::Cpu, 1500, 5);
}

#[test]
fn traffic_on_every_allocator_on_cpu() {
    traffic_case(Backend::Cpu, 30, 60);
}

#[test]
fn generation_on_every_allocator_on_cpu() {
    generation_case(Backend::Cpu, 60, 12);
}

#[test]
fn barnes_hut_on_every_allocator_on_cpu() {
    barnes_hut_case(Backend::Cpu, 1000, 5);
}

/// The same on the GPU, at sizes where thousands of threads allocate at once.
#[test]
fn every_app_on_every_allocator_on_gpu() {
    if gpu_executor("every_app_on_every_allocator_on_gpu").is_none() {
        return;
    }
    nbody_case(Backend::Cuda, 4000, 5);
    collision_case(Backend::Cuda, 4000, 10);
    wator_case(Backend::Cuda, 256, 200, 30);
    game_of_life_case(Backend::Cuda, 256, 30);
    sugarscape_case(Backend::Cuda, 200, 160, 40);
    structure_case(Backend::Cuda, 20_000, 5);
    traffic_case(Backend::Cuda, 400, 100);
    generation_case(Backend::Cuda, 300, 20);
    barnes_hut_case(Backend::Cuda, 20_000, 5);
}
