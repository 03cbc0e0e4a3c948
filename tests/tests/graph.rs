//! Step graphs (`Runtime::capture`, `Runtime::replay`): a replayed step computes what the same
//! step run launch by launch computes, bit for bit, on the CPU backend and on the GPU (a CUDA
//! graph); replays and direct steps mix in any order (a class listed an odd number of times in
//! a step keeps its listings' parity in step); what cannot be captured is refused without
//! leaving a trace; a graph replays only on the runtime that captured it.

use dynasoar::baselines::host::StoreChoice;
use dynasoar::host::{Backend, Error, ExecutorOptions};
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_examples::wator::{Config, DslSim, Simulation};
use dynasoar_examples::{Implementation, RunOptions, game_of_life, traffic, wator};
use dynasoar_models::wator::{CellState, Fish};
use dynasoar_tests::gpu_executor;

fn options(backend: Backend, graph: bool) -> RunOptions {
    let exec = ExecutorOptions { backend, cpu_threads: Some(4), quiet: true, ..Default::default() };
    RunOptions { graph, time_enumeration: false, ..RunOptions::from(exec) }
}

fn ocean(steps: u32) -> Config {
    Config { width: 96, height: 80, steps, ..Config::default() }
}

fn cells(sim: &DslSim) -> Vec<CellState> {
    sim.sync().unwrap();
    sim.cells().unwrap()
}

/// The apps' DSL versions with `--graph` agree with their SOA baselines (Game of Life: with
/// the sequential reference), on DynaSOAr's heap and on a general allocator's AOS store.
fn apps_match_their_baselines(backend: Backend) {
    let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
    let cfg = ocean(40);
    let soa = wator::run(Implementation::Soa, options(backend, false), &cfg, &mut recorder, false).unwrap();
    assert!(soa.populations.last().is_some_and(|p| p.fish > 0 && p.sharks > 0), "a living ocean");
    for store in [StoreChoice::Dynasoar, "atomic".parse().unwrap(), "bitmap".parse().unwrap()] {
        let opts = RunOptions { store, ..options(backend, true) };
        let dsl = wator::run(Implementation::Dynasoar, opts, &cfg, &mut recorder, false).unwrap();
        assert_eq!(dsl.fingerprint(), soa.fingerprint(), "Wa-Tor replayed on {store} on {backend:?}");
    }

    let pattern = game_of_life::Pattern::random(128, 96, 0.3, 7).unwrap();
    let cfg = game_of_life::Config { steps: 61, verify: true, ..game_of_life::Config::new(pattern.clone()) };
    let dsl = game_of_life::run(Implementation::Dynasoar, options(backend, true), &cfg, &mut recorder, false)
        .unwrap();
    let expected = game_of_life::reference_run(&pattern, cfg.steps);
    assert!(!expected.is_empty());
    assert_eq!(dsl.live, expected, "Game of Life replayed from a graph on {backend:?}");

    let cfg = traffic::Config {
        intersections: 24,
        steps: 60,
        cell_length: 0.03,
        producer_ratio: 0.05,
        target_ratio: 0.02,
        car_ratio: 0.2,
        ..traffic::Config::default()
    };
    let soa = traffic::run(Implementation::Soa, options(backend, false), &cfg, &mut recorder, false).unwrap();
    assert!(soa.created > 0 && soa.removed > 0, "cars came and went");
    let dsl =
        traffic::run(Implementation::Dynasoar, options(backend, true), &cfg, &mut recorder, false).unwrap();
    assert_eq!(dsl.fingerprint(), soa.fingerprint(), "traffic replayed from a graph on {backend:?}");
}

/// Replays and direct steps in a mixed order give the ocean that direct steps alone give,
/// checked after every step of the sequence, on DynaSOAr's heap (a parity per class) and on
/// BitmapAlloc's store (one parity for all its lists).
fn replays_and_direct_steps_mix(backend: Backend) {
    for store in [StoreChoice::Dynasoar, "bitmap".parse().unwrap()] {
        replays_and_direct_steps_mix_on(backend, store);
    }
}

fn replays_and_direct_steps_mix_on(backend: Backend, store: StoreChoice) {
    let cfg = ocean(0);
    let (replayed, _) = DslSim::new(RunOptions { store, ..options(backend, true) }, &cfg).unwrap();
    let (direct, _) = DslSim::new(RunOptions { store, ..options(backend, false) }, &cfg).unwrap();
    // Replays (true) and direct steps (false): odd runs of each, so that replays start from
    // both parities of the listings.
    let order = [true, false, true, true, false, false, false, true, false, true, true, true];
    for (i, &replay) in order.iter().enumerate() {
        if replay {
            replayed.step().unwrap()
        } else {
            replayed.step_directly().unwrap()
        }
        direct.step().unwrap();
        assert!(cells(&replayed) == cells(&direct), "step {i} ({backend:?}, {store}): the oceans differ");
    }
    // Consecutive replays queue nothing but the graph (one write on the executor's count): each
    // starts from the listing state the one before left, whichever parity that is. (The first
    // after the export above lists the cells once: the export listed them.)
    let exec = replayed.runtime().executor();
    replayed.step().unwrap();
    direct.step().unwrap();
    for i in 0..3 {
        let before = exec.device_writes();
        replayed.step().unwrap();
        assert_eq!(
            exec.device_writes(),
            before + 1,
            "replay {i} ({backend:?}, {store}) queued more than its graph"
        );
        direct.step().unwrap();
    }
    assert!(
        cells(&replayed) == cells(&direct),
        "{backend:?}, {store}: the oceans differ after consecutive replays"
    );
}

/// A read inside a capture fails with `NotCapturable`, and the runtime goes on as if the
/// capture had not been tried (its listings' state is restored); a graph does not replay on
/// another runtime.
fn refusals(backend: Backend) {
    let cfg = ocean(0);
    let (sim, _) = DslSim::new(options(backend, false), &cfg).unwrap();
    let (reference, _) = DslSim::new(options(backend, false), &cfg).unwrap();
    // Steps first, so that every class has been listed (both counters of a listing in use).
    for _ in 0..3 {
        sim.step().unwrap();
        reference.step().unwrap();
    }
    let rt = sim.runtime();
    let grid = sim.grid();
    let failed = rt.capture(|rt| {
        rt.parallel_do_with(Fish::prepare, grid)?;
        rt.count::<Fish>().map(|_| ())
    });
    assert!(matches!(failed, Err(Error::NotCapturable { .. })), "got {failed:?}");
    for i in 0..5 {
        sim.step().unwrap();
        reference.step().unwrap();
        assert!(cells(&sim) == cells(&reference), "step {i} after the refused capture ({backend:?})");
    }
    let graph = rt.capture(|rt| rt.parallel_do_with(Fish::prepare, grid)).unwrap();
    assert!(graph.launches() >= 2, "a listing and the do-all: {:?}", graph.kernels());
    let foreign = reference.runtime().replay(&graph);
    assert!(matches!(foreign, Err(Error::InvalidArgument(_))), "got {foreign:?}");
    rt.replay(&graph).unwrap();
    rt.sync().unwrap();
}

#[test]
fn cpu_apps_replayed_from_graphs_match_their_baselines() {
    apps_match_their_baselines(Backend::Cpu);
}

#[test]
fn cpu_replays_and_direct_steps_mix() {
    replays_and_direct_steps_mix(Backend::Cpu);
}

#[test]
fn cpu_refusals() {
    refusals(Backend::Cpu);
}

#[test]
fn gpu_apps_replayed_from_graphs_match_their_baselines() {
    if gpu_executor("gpu_apps_replayed_from_graphs_match_their_baselines").is_some() {
        apps_match_their_baselines(Backend::Cuda);
    }
}

#[test]
fn gpu_replays_and_direct_steps_mix() {
    if gpu_executor("gpu_replays_and_direct_steps_mix").is_some() {
        replays_and_direct_steps_mix(Backend::Cuda);
    }
}

#[test]
fn gpu_refusals() {
    if gpu_executor("gpu_refusals").is_some() {
        refusals(Backend::Cuda);
    }
}
