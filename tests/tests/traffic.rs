//! Traffic: the generated street network is well formed and deterministic; the DSL version and
//! both baselines compute exactly the cars of a plain host reference, step by step (the model
//! is deterministic); the DSL's objects stay consistent with the network (at most one car per
//! cell, speed limits respected, no leaked or dangling car, counts match) while cars are
//! created at producers and freed at targets; the planning rule keeps its promises; bad input
//! is a clear error; and the GPU computes the same traffic as the CPU.

use std::collections::HashSet;

use dynasoar::host::{Backend, ExecutorOptions};
use dynasoar::rand::Rng;
use dynasoar_examples::Implementation;
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_examples::traffic::{
    AosSim, Config, DslSim, Network, Outcome, Reference, Simulation, SoaSim, run, run_on,
};
use dynasoar_models::traffic::{CarState, CellInfo, MAX_DEGREE, Streets, drive, light_step};
use dynasoar_tests::gpu_executor;

fn options(backend: Backend) -> ExecutorOptions {
    ExecutorOptions { backend, cpu_threads: Some(4), quiet: true, ..Default::default() }
}

/// A small network: longer cells (fewer per street), more producers, targets and cars.
fn small(intersections: u32, steps: u32) -> Config {
    Config {
        intersections,
        steps,
        cell_length: 0.03,
        producer_ratio: 0.05,
        target_ratio: 0.02,
        car_ratio: 0.2,
        ..Config::default()
    }
}

fn simulate(implementation: Implementation, backend: Backend, cfg: &Config, net: &Network) -> Outcome {
    let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
    run_on(implementation, options(backend), cfg, net, &mut recorder, false)
        .unwrap_or_else(|e| panic!("{} after {} steps: {e:#}", implementation.name(), cfg.steps))
}

#[test]
fn the_network_is_well_formed_and_deterministic() {
    let cfg = small(60, 0);
    let net = Network::generate(&cfg).unwrap();
    assert_eq!(net, Network::generate(&cfg).unwrap());
    assert_ne!(net, Network::generate(&Config { seed: 7, ..cfg }).unwrap());
    let n = net.num_cells();
    assert!(n > 1000, "{n} cells");
    let lights = net.light_cells();
    let streets: usize = net.lights.iter().map(|l| l.num_cells as usize).sum();
    assert_eq!(lights.len(), streets, "every street ends in its own light cell");
    assert!(net.lights.len() <= 60 && net.lights.iter().all(|l| (1..=4).contains(&l.num_cells)));
    let producers: HashSet<u32> = net.producers.iter().copied().collect();
    assert_eq!(producers.len() + net.plain_cells.len(), n as usize);
    assert!(net.plain_cells.iter().all(|c| !producers.contains(c)));
    let mut incoming = vec![0u32; n as usize];
    for c in 0..n as usize {
        let exits = net.num_outgoing[c] as usize;
        assert!(exits <= MAX_DEGREE);
        for &e in &net.outgoing[c][..exits] {
            assert!(e < n && e as usize != c, "cell {c} leads to {e}");
            incoming[e as usize] += 1;
        }
        // Only a street's last cell leads into an intersection; it starts red.
        assert_eq!(lights.contains(&(c as u32)), net.speed_limit[c] == 0, "cell {c}");
        assert!(exits == 1 || lights.contains(&(c as u32)), "cell {c} has {exits} exits");
        if !lights.contains(&(c as u32)) {
            assert_eq!(net.speed_limit[c], net.max_velocity[c]);
        }
        assert!((5..10).contains(&net.max_velocity[c]), "speed limit {}", net.max_velocity[c]);
        assert!(!(producers.contains(&(c as u32)) && net.is_target[c] != 0), "producer and target");
    }
    assert_eq!(net.dead_ends(), 0);
    // Every cell is entered from somewhere but the first cells of streets out of an
    // intersection without incoming streets.
    let unreachable = incoming.iter().filter(|&&k| k == 0).count();
    assert!(unreachable < 4 * 60, "{unreachable} cells nobody enters");
    // About 5% producers and 2% targets among the street cells.
    let (p, t) = (net.producers.len() as f64 / n as f64, net.targets() as f64 / n as f64);
    assert!((0.03..0.07).contains(&p) && (0.01..0.03).contains(&t), "{p} {t}");
    // The benchmark's network has about 4.5 million cells (generated on the host in well under
    // a second in release builds; here only the structure's first part is looked at).
    let bench = Config { intersections: 2000, ..Config::default() };
    let big = Network::generate(&bench).unwrap();
    let per_intersection = big.num_cells() as f64 / 2000.0;
    assert!((200.0..320.0).contains(&per_intersection), "{per_intersection} cells per intersection");
}

#[test]
fn all_implementations_match_the_reference_step_by_step_on_cpu() {
    let cfg = small(40, 0);
    let net = Network::generate(&cfg).unwrap();
    let (dsl, _) = DslSim::new(options(Backend::Cpu), &cfg, &net).unwrap();
    let (soa, _) = SoaSim::new(options(Backend::Cpu), &cfg, &net).unwrap();
    let (aos, _) = AosSim::new(options(Backend::Cpu), &cfg, &net).unwrap();
    let sims: [(&str, &dyn Simulation); 3] = [("dsl", &dsl), ("soa", &soa), ("aos", &aos)];
    let mut reference = Reference::new(&cfg, &net);
    let mut counts = Vec::new();
    for step in 1..=150 {
        reference.step();
        for (_, sim) in &sims {
            sim.step().unwrap();
        }
        if step % 3 == 0 {
            let expected = reference.cars();
            for (name, sim) in &sims {
                let cars = sim.cars().unwrap();
                assert!(cars == expected, "{name} differs from the reference after {step} steps");
                assert_eq!(sim.counters().unwrap(), reference.counters(), "{name} counters, step {step}");
            }
            counts.push(expected.len());
        }
        if step % 25 == 0 {
            assert_eq!(dsl.verify(&net).unwrap(), reference.cars().len() as u64);
        }
    }
    let (created, removed) = reference.counters();
    assert!(created > 200 && removed > 50, "created {created}, removed {removed}");
    assert!(counts.iter().collect::<HashSet<_>>().len() > 5, "{counts:?}");
}

#[test]
fn cars_are_removed_only_at_targets_and_created_only_at_producers() {
    // Without targets no car leaves; without producers none appears.
    let cfg = Config { target_ratio: 0.0, ..small(30, 0) };
    let net = Network::generate(&cfg).unwrap();
    assert_eq!((net.targets(), net.dead_ends()), (0, 0));
    let (sim, _) = DslSim::new(options(Backend::Cpu), &cfg, &net).unwrap();
    let mut last = 0;
    for _ in 0..4 {
        for _ in 0..10 {
            sim.step().unwrap();
        }
        let cars = sim.verify(&net).unwrap();
        let (created, removed) = sim.counters().unwrap();
        assert_eq!((removed, created), (0, cars));
        assert!(cars >= last);
        last = cars;
    }
    assert!(last > 20);
    let cfg = Config { producer_ratio: 0.0, ..small(30, 20) };
    let net = Network::generate(&cfg).unwrap();
    assert!(net.producers.is_empty());
    let o = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg, &net);
    assert_eq!((o.cars.len(), o.created, o.removed, o.objects), (0, 0, 0, Some(0)));
}

#[test]
fn new_cars_appear_on_free_producers_only() {
    let cfg = small(30, 0);
    let net = Network::generate(&cfg).unwrap();
    let producers: HashSet<u32> = net.producers.iter().copied().collect();
    let mut reference = Reference::new(&cfg, &net);
    let (sim, _) = DslSim::new(options(Backend::Cpu), &cfg, &net).unwrap();
    // After the first step every car was created in it: on a producer, or up to its velocity
    // (at most 2 after accelerating from 0) cells further.
    sim.step().unwrap();
    reference.step();
    let cars = sim.cars().unwrap();
    assert_eq!(cars, reference.cars());
    assert!(!cars.is_empty());
    for car in &cars {
        assert!(car.velocity <= 2, "{car:?}");
        if car.velocity == 0 {
            assert!(producers.contains(&car.cell), "a standing new car off a producer: {car:?}");
        }
    }
    assert_eq!(sim.counters().unwrap(), (cars.len() as u64 + reference.counters().1, reference.counters().1));
}

/// A straight street of `len` cells, with speed limits and cars given per cell.
struct Street {
    limits: Vec<u32>,
    cars: Vec<bool>,
    target: Option<u32>,
}

impl Streets for Street {
    type Cell = u32;
    fn info(&self, cell: u32) -> (CellInfo, u32) {
        let exits = (cell + 1 < self.limits.len() as u32) as u32;
        let info = CellInfo::new(
            self.limits[cell as usize],
            self.cars[cell as usize],
            exits,
            self.target == Some(cell),
        );
        (info, cell + 1)
    }
    fn branch(&self, _cell: u32, _k: u32) -> u32 {
        unreachable!("a straight street has one exit per cell")
    }
}

#[test]
fn the_driving_rule_keeps_its_promises() {
    let street = |limits: Vec<u32>| Street { cars: vec![false; limits.len()], limits, target: None };
    let mut rng = Rng::new(3, 4);
    for _ in 0..500 {
        // Open street: accelerate by 1 or 2, maybe slow down by 1; the destination is that far.
        let s = street(vec![9; 30]);
        let (to, v) = drive(&s, 0, 4, 9, 0.2, &mut rng);
        assert!((4..=6).contains(&v) && to == v, "{v} {to}");
        // Never beyond the car's maximum.
        let (_, v) = drive(&s, 0, 9, 7, 0.0, &mut rng);
        assert_eq!(v, 7);
        // A car 3 cells ahead: at most 2 cells.
        let mut s = street(vec![9; 30]);
        s.cars[3] = true;
        let (to, v) = drive(&s, 0, 8, 9, 0.0, &mut rng);
        assert_eq!((to, v), (2, 2));
        // A red light 2 cells ahead: stop before it; on a red light: stay.
        let mut limits = vec![9; 30];
        limits[2] = 0;
        let (to, v) = drive(&street(limits.clone()), 0, 8, 9, 0.0, &mut rng);
        assert_eq!((to, v), (1, 1));
        let (to, v) = drive(&street(limits), 2, 8, 9, 0.0, &mut rng);
        assert_eq!((to, v), (2, 0));
        // A slow cell: slow down to its limit if that still reaches it.
        let mut limits = vec![9; 30];
        limits[4] = 3;
        let (to, v) = drive(&street(limits.clone()), 0, 8, 9, 0.0, &mut rng);
        assert_eq!((to, v), (3, 3), "3 cells at limit 3 reach the cell before the slow one");
        limits[2] = 1;
        let (to, v) = drive(&street(limits), 0, 8, 9, 0.0, &mut rng);
        assert_eq!((to, v), (1, 1));
        // A target stops the walk (the car leaves the network there).
        let s = Street { target: Some(3), ..street(vec![9; 30]) };
        let (to, v) = drive(&s, 0, 8, 9, 0.0, &mut rng);
        assert_eq!((to, v), (3, 3));
        // The end of the street.
        let (to, v) = drive(&street(vec![9; 4]), 0, 8, 9, 0.0, &mut rng);
        assert_eq!((to, v), (3, 3));
    }
    // Lights: every `phase_time` steps the next street gets green.
    let (mut timer, mut phase) = (0, 0);
    let mut switches = Vec::new();
    for step in 1..=20 {
        let (t, p, switched) = light_step(timer, phase, 3, 5);
        if switched {
            switches.push((step, p));
        }
        (timer, phase) = (t, p);
    }
    assert_eq!(switches, [(5, 1), (10, 2), (15, 0), (20, 1)]);
}

#[test]
fn tiny_networks_work_too() {
    // Two intersections, streets without cells between them (the cell length exceeds every
    // distance): every cell is an intersection's exit and a light at once.
    for (intersections, cell_length) in [(2, 2.0), (3, 0.2), (5, 0.05)] {
        let cfg = Config { cell_length, car_ratio: 0.5, ..small(intersections, 0) };
        let net = Network::generate(&cfg).unwrap();
        let (sim, _) = DslSim::new(options(Backend::Cpu), &cfg, &net).unwrap();
        let (soa, _) = SoaSim::new(options(Backend::Cpu), &cfg, &net).unwrap();
        let mut reference = Reference::new(&cfg, &net);
        for _ in 0..25 {
            sim.step().unwrap();
            soa.step().unwrap();
            reference.step();
        }
        assert_eq!(sim.cars().unwrap(), reference.cars(), "{intersections} intersections");
        assert_eq!(soa.cars().unwrap(), reference.cars(), "{intersections} intersections");
        sim.verify(&net).unwrap();
    }
}

#[test]
fn the_same_seed_gives_the_same_traffic_and_another_seed_another() {
    let cfg = small(25, 30);
    let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
    let a = run(Implementation::Aos, options(Backend::Cpu), &cfg, &mut recorder, false).unwrap();
    let b = run(Implementation::Aos, options(Backend::Cpu), &cfg, &mut recorder, false).unwrap();
    let c = run(Implementation::Aos, options(Backend::Cpu), &Config { seed: 9, ..cfg }, &mut recorder, false)
        .unwrap();
    assert_eq!(a.fingerprint(), b.fingerprint());
    assert_ne!(a.fingerprint(), c.fingerprint());
    assert_eq!(a.checksum(), a.cars.len() as u64);
}

#[test]
fn run_renders_frames() {
    let dir = std::env::temp_dir().join(format!("dynasoar-traffic-test-{}", std::process::id()));
    let args = RenderArgs { render: Some(dir.clone()), render_every: 4, gif: true, render_width: 96 };
    let mut recorder = Recorder::new(&args).unwrap();
    let cfg = small(20, 10);
    let net = Network::generate(&cfg).unwrap();
    let o =
        run_on(Implementation::Dynasoar, options(Backend::Cpu), &cfg, &net, &mut recorder, false).unwrap();
    assert_eq!(recorder.finish().unwrap(), 4, "frames 0, 4, 8 and 10");
    let png = std::fs::read(dir.join("frame_000010.png")).unwrap();
    let be = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    assert_eq!((be(16), be(20)), (96, 96), "PNG header: width, height");
    assert!(dir.join("animation.gif").exists());
    // Rendering does not change the simulation.
    assert_eq!(simulate(Implementation::Soa, Backend::Cpu, &cfg, &net).fingerprint(), o.fingerprint());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_configurations_are_errors() {
    let bad = [
        Config { intersections: 0, ..small(8, 1) },
        Config { intersections: 1, ..small(8, 1) },
        Config { max_velocity: 1, ..small(8, 1) },
        Config { max_velocity: 300, ..small(8, 1) },
        Config { cell_length: 0.0, ..small(8, 1) },
        Config { cell_length: f32::NAN, ..small(8, 1) },
        Config { producer_ratio: 1.5, ..small(8, 1) },
        Config { car_ratio: -0.1, ..small(8, 1) },
        Config { phase_time: 0, ..small(8, 1) },
        Config { heap_bytes: Some(0), ..small(8, 1) },
    ];
    for cfg in bad {
        assert!(cfg.validate().is_err(), "{cfg:?}");
        assert!(Network::generate(&cfg).is_err(), "{cfg:?}");
        let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
        assert!(run(Implementation::Soa, options(Backend::Cpu), &cfg, &mut recorder, false).is_err());
    }
    // A heap too small for the network is an error that says so, not a hang or a panic.
    let cfg = Config { heap_bytes: Some(1 << 20), cell_length: 0.005, ..small(200, 5) };
    let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
    match run(Implementation::Dynasoar, options(Backend::Cpu), &cfg, &mut recorder, false) {
        Ok(o) => panic!("{} cells fit into a 1 MiB heap", o.cells),
        Err(err) => assert!(format!("{err:#}").contains("heap"), "{err:#}"),
    }
}

fn assert_same_cars(name: &str, a: &[CarState], b: &[CarState]) {
    assert_eq!(a.len(), b.len(), "{name}: car counts differ");
    if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
        panic!("{name}: car {i} differs: {:?} vs {:?}", a[i], b[i]);
    }
}

#[test]
fn gpu_gives_the_same_traffic_as_cpu() {
    if gpu_executor("gpu_gives_the_same_traffic_as_cpu").is_none() {
        return;
    }
    let cfg = Config { steps: 300, ..Config { intersections: 400, ..Config::default() } };
    let net = Network::generate(&cfg).unwrap();
    let cpu = simulate(Implementation::Soa, Backend::Cpu, &cfg, &net);
    assert!(cpu.cars.len() > 1000, "{} cars", cpu.cars.len());
    for implementation in [Implementation::Dynasoar, Implementation::Soa, Implementation::Aos] {
        let gpu = simulate(implementation, Backend::Cuda, &cfg, &net);
        assert_same_cars(implementation.name(), &gpu.cars, &cpu.cars);
        assert_eq!((gpu.created, gpu.removed), (cpu.created, cpu.removed), "{}", implementation.name());
    }
}

#[test]
fn gpu_invariants_hold_on_a_large_network() {
    if gpu_executor("gpu_invariants_hold_on_a_large_network").is_none() {
        return;
    }
    // A fifth of the benchmark's network (about 900,000 cells), through 1500 steps, checked
    // object by object every 300 steps against the SOA baseline.
    let cfg = Config { intersections: 3500, ..Config::default() };
    let net = Network::generate(&cfg).unwrap();
    let (dsl, _) = DslSim::new(options(Backend::Cuda), &cfg, &net).unwrap();
    let (soa, _) = SoaSim::new(options(Backend::Cuda), &cfg, &net).unwrap();
    for round in 1..=5 {
        for _ in 0..300 {
            dsl.step().unwrap();
            soa.step().unwrap();
        }
        let cars = dsl.verify(&net).unwrap();
        let expected = soa.cars().unwrap();
        assert_same_cars(&format!("after {} steps", 300 * round), &dsl.cars().unwrap(), &expected);
        assert_eq!(cars, expected.len() as u64);
        assert_eq!(dsl.counters().unwrap(), soa.counters().unwrap());
    }
}
