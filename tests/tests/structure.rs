//! Structure: the mesh generator builds the original's random mesh; the DSL version agrees bit
//! for bit with both baselines (the model is deterministic); after every phase of a step the
//! mesh's references are consistent (no dangling handles, no leaks), springs only break and
//! exactly what is connected to an anchor survives the pruning; and the GPU computes the same
//! mesh as the CPU.

use std::collections::{HashMap, HashSet};

use dynasoar::ClassSpec;
use dynasoar::host::{Backend, ExecutorOptions};
use dynasoar::math::Vec2;
use dynasoar_examples::Implementation;
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_examples::structure::{
    AosSim, Census, Config, DslSim, MAX_DEGREE, Mesh, MeshState, Outcome, Simulation, SoaSim, generate, run,
    slots_agree,
};
use dynasoar_models::structure::{
    ANCHOR, AnchorNode, AnchorPullNode, DEAD, LIVE_MASK, MeshNode, NONE, Node, NodeBase, PLAIN, PULL,
    Physics, Spring, breaks, config, distance, integrate, live_bit, p1_bit, p1_slots, pull, slot_in_p1,
    slot_in_p2, spring_force, spring_step, total_force, was_last,
};
use dynasoar_tests::gpu_executor;

fn options(backend: Backend) -> ExecutorOptions {
    ExecutorOptions { backend, cpu_threads: Some(4), quiet: true, ..Default::default() }
}

fn simulate(implementation: Implementation, backend: Backend, cfg: &Config) -> Outcome {
    let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
    run(implementation, options(backend), cfg, &mut recorder, false).unwrap()
}

/// A small mesh with the benchmark's proportions; `dt = 1` breaks springs within a few steps
/// (the benchmark's 0.2 takes five times as many).
fn small(nodes: u32, steps: u32) -> Config {
    Config { steps, physics: Physics { dt: 1.0, ..Physics::default() }, ..Config::with_nodes(nodes) }
}

/// As `small`, with fewer force computations per step (for the step-by-step tests).
fn quick(nodes: u32) -> Config {
    Config { iterations: 10, ..small(nodes, 0) }
}

fn finite(v: Vec2) -> bool {
    v.x.is_finite() && v.y.is_finite()
}

/// Check the DSL mesh's references now, from the exported handles and the allocator's own view
/// of the heap; returns the exported mesh.
fn check_references(sim: &DslSim) -> MeshState {
    let (nodes, springs) = sim.records().unwrap();
    let state = sim.state().unwrap();
    let node_ids: HashMap<_, _> =
        nodes.iter().filter(|r| r.kind != DEAD).map(|r| (r.handle.raw(), r.id)).collect();
    let spring_ids: HashMap<_, _> =
        springs.iter().filter(|r| r.alive != 0).map(|r| (r.handle.raw(), r.id)).collect();

    // The exported objects are exactly the live objects of the heap.
    let rt = sim.runtime();
    let snapshot = rt.heap().expect("a DynaSOAr heap").snapshot(rt.executor()).unwrap();
    snapshot.check().unwrap_or_else(|e| panic!("heap inconsistent: {e}"));
    let live_nodes: HashSet<_> = [Node::TYPE_ID, AnchorNode::TYPE_ID, AnchorPullNode::TYPE_ID]
        .iter()
        .flat_map(|&class| snapshot.live_objects(class))
        .collect();
    let live_springs: HashSet<_> = snapshot.live_objects(Spring::TYPE_ID).into_iter().collect();
    assert_eq!(live_nodes, node_ids.keys().copied().collect(), "node objects leaked or lost");
    assert_eq!(live_springs, spring_ids.keys().copied().collect(), "spring objects leaked or lost");
    assert_eq!(rt.count::<NodeBase>().unwrap(), node_ids.len() as u64);
    assert_eq!(rt.count::<Spring>().unwrap(), spring_ids.len() as u64);
    assert_eq!(rt.collect::<Spring>().unwrap().len(), spring_ids.len());

    // Every node's slots: live ones hold a live spring that names this node at this slot.
    for r in nodes.iter().filter(|r| r.kind != DEAD) {
        assert_eq!(r.links & !(LIVE_MASK | LIVE_MASK << 8), 0, "node {}: stray links bits", r.id);
        assert_eq!(p1_slots(r.links), (r.links >> 8) & LIVE_MASK, "node {}: p1 bit of an empty slot", r.id);
        for slot in 0..MAX_DEGREE {
            let h = r.springs[slot];
            if r.links & live_bit(slot) == 0 {
                assert!(h.is_null(), "node {} keeps a spring in empty slot {slot}", r.id);
                continue;
            }
            let id =
                *spring_ids.get(&h.raw()).unwrap_or_else(|| panic!("node {}: dangling spring handle", r.id));
            let s = &springs[id as usize];
            let is_p1 = r.links & p1_bit(slot) != 0;
            let (end, at) = if is_p1 { (s.p1, slot_in_p1(s.slots)) } else { (s.p2, slot_in_p2(s.slots)) };
            assert_eq!(
                (end, at),
                (r.handle, slot),
                "node {} slot {slot}: spring {id} does not link back",
                r.id
            );
        }
        assert!(finite(r.pos) && finite(r.vel), "node {} at {:?} moving {:?}", r.id, r.pos, r.vel);
    }
    // Every spring's ends are live nodes.
    for s in springs.iter().filter(|s| s.alive != 0) {
        assert!(node_ids.contains_key(&s.p1.raw()), "spring {}: dangling p1", s.id);
        assert!(node_ids.contains_key(&s.p2.raw()), "spring {}: dangling p2", s.id);
        assert_ne!(s.p1, s.p2);
    }
    assert!(state.springs.iter().filter(|s| s.alive).all(|s| s.force.is_finite() && s.force >= 0.0));
    state
}

/// The ids of the live springs of node `i`.
fn springs_of(state: &MeshState, i: usize) -> Vec<u32> {
    state.nodes[i].springs.iter().copied().filter(|&s| s != NONE).collect()
}

#[test]
fn the_rules() {
    let (a, b) = (Vec2::new(0.0, 0.0), Vec2::new(3.0, 4.0));
    assert_eq!(distance(a, b), 5.0);
    // At rest or compressed: no force (springs only pull).
    assert_eq!(spring_force(a, b, 5.0, 4.0), (0.0, Vec2::ZERO));
    assert_eq!(spring_force(a, b, 6.0, 4.0), (0.0, Vec2::ZERO));
    // Stretched by 1: force = factor, towards the other end.
    let (f, on_a) = spring_force(a, b, 4.0, 2.0);
    assert_eq!(f, 2.0);
    assert!((on_a.x - 1.2).abs() < 1e-6 && (on_a.y - 1.6).abs() < 1e-6, "{on_a:?}");
    assert!(!breaks(0.5, 0.5) && breaks(0.5001, 0.5));
    assert_eq!(spring_step(a, b, 4.0, 2.0, 2.0), Some(on_a));
    assert_eq!(spring_step(a, b, 4.0, 2.0, 1.9), None);
    // Forces are summed over live slots only.
    let forces = [
        Vec2::new(1.0, 0.0),
        Vec2::new(2.0, 0.0),
        Vec2::new(4.0, 0.0),
        Vec2::new(8.0, 0.0),
        Vec2::new(16.0, 1.0),
    ];
    assert_eq!(total_force(0b10101, |k| forces[k]), Vec2::new(21.0, 1.0));
    assert_eq!(total_force(0, |k| forces[k]), Vec2::ZERO);
    let p = Physics { dt: 0.5, dampening: 0.0 };
    let (pos, vel) = integrate(Vec2::new(1.0, 1.0), Vec2::new(0.0, 2.0), Vec2::new(100.0, 0.0), 50.0, &p);
    assert_eq!((pos, vel), (Vec2::new(1.5, 2.0), Vec2::new(1.0, 2.0)));
    assert_eq!(pull(Vec2::new(1.0, 1.0), Vec2::new(2.0, -2.0), &p), Vec2::new(2.0, 0.0));
    assert!(was_last(live_bit(3) | p1_bit(3), 3) && !was_last(live_bit(3) | live_bit(0), 3));
}

#[test]
fn the_generator_builds_the_original_mesh() {
    let cfg = Config::with_nodes(2000);
    let mesh = generate(&cfg).unwrap();
    assert_eq!((mesh.plain, mesh.pull_end, mesh.nodes.len()), (1300, 1800, 2000));
    assert_eq!(mesh.springs.len(), 3500, "1.75 springs per node");
    assert!(slots_agree(&mesh));
    let (lo, hi) = (config::BORDER_MARGIN, 1.0 - config::BORDER_MARGIN);
    let mut degrees = vec![0u32; mesh.nodes.len()];
    for (i, n) in mesh.nodes.iter().enumerate() {
        assert!(n.pos.x >= lo && n.pos.x < hi && n.pos.y >= lo && n.pos.y < hi, "node {i} at {:?}", n.pos);
        let expected = if i < 1300 {
            PLAIN
        } else if i < 1800 {
            PULL
        } else {
            ANCHOR
        };
        assert_eq!(n.kind, expected);
        match n.kind {
            PLAIN => assert_eq!((n.mass, n.vel), (config::MASS, Vec2::ZERO)),
            PULL => assert!(n.vel.x.abs() <= config::PULL_SPEED && n.vel.y.abs() <= config::PULL_SPEED),
            _ => assert_eq!((n.mass, n.vel), (0.0, Vec2::ZERO)),
        }
        // Slots are filled from 0, and `links` names exactly the filled ones.
        let filled = mesh.node_springs[i].iter().take_while(|&&s| s != NONE).count();
        assert!(mesh.node_springs[i][filled..].iter().all(|&s| s == NONE));
        assert_eq!(n.links & LIVE_MASK, (1 << filled) - 1, "node {i}");
        degrees[i] = filled as u32;
    }
    for (id, s) in mesh.springs.iter().enumerate() {
        assert_ne!(s.p1, s.p2, "spring {id}");
        let (a, b) = (&mesh.nodes[s.p1 as usize], &mesh.nodes[s.p2 as usize]);
        assert_eq!(s.rest_length, distance(a.pos, b.pos));
        assert!(s.rest_length > 0.0);
        assert!(s.factor >= config::SPRING_FACTOR_MIN && s.factor < config::SPRING_FACTOR_MAX);
        assert_eq!(s.max_force, config::MAX_FORCE);
        assert!(a.links & p1_bit(slot_in_p1(s.slots)) != 0, "spring {id}: p1 bit missing");
        assert!(b.links & p1_bit(slot_in_p2(s.slots)) == 0, "spring {id}: p1 bit on p2");
    }
    assert_eq!(degrees.iter().map(|&d| d as u64).sum::<u64>(), 7000);
    assert!(degrees.iter().all(|&d| d as usize <= MAX_DEGREE));
    let isolated = degrees.iter().filter(|&&d| d == 0).count();
    assert!((20..150).contains(&isolated), "{isolated} isolated nodes (about e^-3.5 of them expected)");

    assert_eq!(generate(&cfg).unwrap(), mesh, "the same seed gives the same mesh");
    assert_ne!(generate(&Config { seed: 7, ..cfg }).unwrap().springs, mesh.springs);
    // A full mesh takes every slot, or (when the last free slots end up in one node) fails
    // with an error that says why.
    match generate(&Config { springs: 250, ..Config::with_nodes(100) }) {
        Ok(full) => assert!(full.nodes.iter().all(|n| n.links & LIVE_MASK == LIVE_MASK)),
        Err(e) => assert!(e.to_string().contains("free slot"), "{e}"),
    }
}

#[test]
fn dsl_matches_both_baselines_on_cpu() {
    let cfg = small(4000, 20);
    let dsl = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    let soa = simulate(Implementation::Soa, Backend::Cpu, &cfg);
    let aos = simulate(Implementation::Aos, Backend::Cpu, &cfg);
    assert!(dsl.state == soa.state, "dsl vs soa");
    assert!(soa.state == aos.state, "soa vs aos");
    assert_eq!(dsl.fingerprint(), aos.fingerprint());
    assert_eq!(dsl.history, soa.history);
    assert_eq!(dsl.objects, Some((dsl.nodes(), dsl.springs())));
    assert_eq!((soa.objects, aos.objects), (None, None));
    assert_eq!(dsl.history[0], Census { step: 0, nodes: 4000, springs: 7000 });
    let end = dsl.history.last().unwrap();
    assert!(end.springs < 6000 && end.nodes < 3800, "too little broke: {:?}", dsl.history);
    assert!(end.springs > 1000, "too much broke: {:?}", dsl.history);
    assert!(dsl.checksum().is_finite() && dsl.checksum() == soa.checksum());
}

#[test]
fn baselines_step_by_step_match_the_dsl() {
    let cfg = quick(400);
    let mesh = generate(&cfg).unwrap();
    let (dsl, _) = DslSim::new(options(Backend::Cpu), &cfg, &mesh).unwrap();
    let (soa, _) = SoaSim::new(options(Backend::Cpu), &cfg, &mesh).unwrap();
    let (aos, _) = AosSim::new(options(Backend::Cpu), &cfg, &mesh).unwrap();
    let sims: [&dyn Simulation; 3] = [&dsl, &soa, &aos];
    let same = |what: &str| {
        let states: Vec<MeshState> = sims.iter().map(|s| s.state().unwrap()).collect();
        assert!(states[0] == states[1] && states[1] == states[2], "implementations differ {what}");
        states.into_iter().next().unwrap()
    };
    let start = same("at the start");
    for step in 1..=10 {
        for s in sims {
            s.compute().unwrap();
        }
        same(&format!("after the forces of step {step}"));
        for s in sims {
            s.prune().unwrap();
        }
        same(&format!("after step {step}"));
    }
    assert!(same("at the end").live_springs() < start.live_springs());
}

#[test]
fn invariants_hold_after_every_phase_on_cpu() {
    let cfg = small(1500, 0);
    let mesh = generate(&cfg).unwrap();
    let (sim, _) = DslSim::new(options(Backend::Cpu), &cfg, &mesh).unwrap();
    let mut before = check_references(&sim);
    assert_eq!((before.live_nodes(), before.live_springs()), (1500, 2625));
    let isolated_plain = (0..mesh.plain as usize).filter(|&i| mesh.nodes[i].links == 0).count() as u64;
    let mut pulled: Vec<Vec2> = mesh.nodes.iter().map(|n| n.pos).collect();
    let mut broken_total = 0;
    for step in 1..=12 {
        sim.compute().unwrap();
        let computed = check_references(&sim);
        // Springs only break; a node that lost all its springs is gone; nothing else is.
        for (id, s) in computed.springs.iter().enumerate() {
            if s.alive {
                assert!(before.springs[id].alive, "spring {id} came back");
                assert_eq!((s.p1, s.p2), (before.springs[id].p1, before.springs[id].p2));
            }
        }
        broken_total += before.live_springs() - computed.live_springs();
        for (i, n) in computed.nodes.iter().enumerate() {
            let had = springs_of(&before, i);
            if !before.nodes[i].alive() {
                assert!(!n.alive(), "node {i} came back");
            } else if n.alive() {
                assert_eq!(n.kind, before.nodes[i].kind);
                assert!(
                    !springs_of(&computed, i).is_empty() || had.is_empty(),
                    "node {i} kept without springs"
                );
            } else {
                assert!(!had.is_empty(), "step {step}: node {i} with springs vanished in the force phase");
                assert!(
                    had.iter().all(|&s| !computed.springs[s as usize].alive),
                    "node {i} freed with a spring"
                );
            }
        }
        // Anchors stay put, pull nodes move by their velocity.
        for (i, at) in pulled.iter_mut().enumerate().skip(mesh.plain as usize) {
            if i < mesh.pull_end as usize {
                *at = pull(*at, mesh.nodes[i].vel, &cfg.physics);
            }
            if computed.nodes[i].alive() {
                assert_eq!(computed.nodes[i].pos, *at, "anchor {i} in step {step}");
            }
        }

        let reach = computed.reachable_from_anchors();
        sim.prune().unwrap();
        let pruned = check_references(&sim);
        for (i, n) in pruned.nodes.iter().enumerate() {
            let expected = computed.nodes[i].alive() && reach[i];
            assert_eq!(n.alive(), expected, "step {step}: node {i} (reached: {})", reach[i]);
            if n.alive() {
                assert_eq!(n, &computed.nodes[i], "node {i} changed in the pruning");
            }
        }
        for (id, s) in pruned.springs.iter().enumerate() {
            let c = &computed.springs[id];
            let expected = c.alive && reach[c.p1 as usize] && reach[c.p2 as usize];
            assert_eq!(s.alive, expected, "step {step}: spring {id}");
        }
        // What is left is all connected to anchors.
        assert!(
            pruned.reachable_from_anchors().iter().zip(&pruned.nodes).all(|(&r, n)| r || !n.alive()),
            "step {step}: an unreachable node survived"
        );
        if step == 1 {
            assert!(before.live_nodes() - pruned.live_nodes() >= isolated_plain, "isolated nodes stay");
        }
        before = pruned;
    }
    assert!(broken_total > 200, "only {broken_total} springs broke");
}

#[test]
fn without_pull_nodes_nothing_moves_or_breaks() {
    let cfg = Config { pull_percent: 0, ..quick(300) };
    let mesh = generate(&cfg).unwrap();
    let (sim, _) = DslSim::new(options(Backend::Cpu), &cfg, &mesh).unwrap();
    for _ in 0..3 {
        sim.step().unwrap();
    }
    let state = check_references(&sim);
    // Springs are at rest (rest length = distance, computed the same way): no force, no move.
    assert_eq!(state.live_springs(), mesh.springs.len() as u64);
    for (i, n) in state.nodes.iter().enumerate() {
        let isolated = mesh.nodes[i].links == 0;
        if isolated && n.kind != ANCHOR {
            assert!(!n.alive(), "isolated node {i} was not removed");
            continue;
        }
        assert!(n.alive(), "node {i}");
        assert_eq!((n.pos, n.vel), (mesh.nodes[i].pos, Vec2::ZERO), "node {i} moved");
    }
    assert!(state.springs.iter().all(|s| s.force == 0.0));
}

#[test]
fn a_pulled_chain_tears_where_expected() {
    // Plain nodes 0, 1, 2; pull node 3 racing away from node 1; fixed anchor 4 and an
    // isolated anchor 5. Springs: 4-0, 0-1, 1-3, 2-3. Node 2 hangs on the pull node only.
    let node = |kind, x: f32, y: f32| MeshNode {
        pos: Vec2::new(x, y),
        mass: if kind == PLAIN { 500.0 } else { 0.0 },
        vel: if kind == PULL { Vec2::new(1.0, 0.0) } else { Vec2::ZERO },
        kind,
        ..MeshNode::default()
    };
    let nodes = vec![
        node(PLAIN, 0.3, 0.5),
        node(PLAIN, 0.4, 0.5),
        node(PLAIN, 0.5, 0.6),
        node(PULL, 0.5, 0.5),
        node(ANCHOR, 0.2, 0.5),
        node(ANCHOR, 0.9, 0.9),
    ];
    let mut mesh = Mesh::new(nodes, 3, 4).unwrap();
    for (a, b) in [(4, 0), (0, 1), (1, 3), (2, 3)] {
        mesh.add_spring(a, b, 4.0, 0.5).unwrap();
    }
    assert!(mesh.add_spring(2, 2, 4.0, 0.5).is_err());
    let cfg = Config { nodes: 6, springs: 4, iterations: 5, ..small(6, 0) };
    let (dsl, _) = DslSim::new(options(Backend::Cpu), &cfg, &mesh).unwrap();
    let (soa, _) = SoaSim::new(options(Backend::Cpu), &cfg, &mesh).unwrap();
    let (aos, _) = AosSim::new(options(Backend::Cpu), &cfg, &mesh).unwrap();
    for s in [&dsl as &dyn Simulation, &soa, &aos] {
        s.step().unwrap();
    }
    // After one step the pull node has moved by 1: both of its springs broke (force 4 * ~1 >
    // 0.5), so it lost all springs and is gone; node 2 hung on it only and is pruned; nodes 0
    // and 1 hang on anchor 4; the isolated anchor 5 stays.
    let state = check_references(&dsl);
    let kinds: Vec<u32> = state.nodes.iter().map(|n| n.kind).collect();
    assert_eq!(kinds, [PLAIN, PLAIN, DEAD, DEAD, ANCHOR, ANCHOR]);
    let alive: Vec<bool> = state.springs.iter().map(|s| s.alive).collect();
    assert_eq!(alive, [true, true, false, false]);
    assert_eq!(state, soa.state().unwrap());
    assert_eq!(state, aos.state().unwrap());
    assert_eq!(state.nodes[0].springs, [0, 1, NONE, NONE, NONE]);
    assert_eq!(state.nodes[1].springs, [1, NONE, NONE, NONE, NONE], "the broken spring's slot is cleared");
}

#[test]
fn the_same_seed_gives_the_same_mesh_and_another_seed_another() {
    let cfg = Config { iterations: 10, ..small(300, 4) };
    let a = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    let b = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    let c = simulate(Implementation::Dynasoar, Backend::Cpu, &Config { seed: 7, ..cfg });
    assert_eq!(a.fingerprint(), b.fingerprint());
    assert_ne!(a.fingerprint(), c.fingerprint());
}

#[test]
fn run_renders_frames_and_reports_history() {
    let dir = std::env::temp_dir().join(format!("dynasoar-structure-test-{}", std::process::id()));
    let args = RenderArgs { render: Some(dir.clone()), render_every: 2, gif: true, render_width: 64 };
    let mut recorder = Recorder::new(&args).unwrap();
    let cfg = Config { iterations: 5, ..small(200, 5) };
    let o = run(Implementation::Dynasoar, options(Backend::Cpu), &cfg, &mut recorder, false).unwrap();
    assert_eq!(recorder.finish().unwrap(), 4, "frames 0, 2, 4 and 5");
    let steps: Vec<u32> = o.history.iter().map(|c| c.step).collect();
    assert_eq!(steps, [0, 2, 4, 5]);
    assert_eq!(o.history.last().unwrap(), &o.state.census(5));
    let png = std::fs::read(dir.join("frame_000005.png")).unwrap();
    let be = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    assert_eq!((be(16), be(20)), (64, 64), "PNG header: width, height");
    assert!(dir.join("animation.gif").exists());
    // Rendering does not change the simulation.
    let plain = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    assert_eq!(plain.fingerprint(), o.fingerprint());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_configurations_are_errors() {
    let bad = [
        Config { nodes: 0, ..small(8, 1) },
        Config { springs: 21, ..small(8, 1) },
        Config { springs: 1, ..small(1, 1) },
        Config { pull_percent: 60, anchor_percent: 41, ..small(8, 1) },
        Config { physics: Physics { dt: f32::NAN, dampening: 0.0 }, ..small(8, 1) },
        Config { physics: Physics { dt: 0.2, dampening: 2.0 }, ..small(8, 1) },
        Config { heap_bytes: Some(0), ..small(8, 1) },
    ];
    for cfg in bad {
        assert!(cfg.validate().is_err(), "{cfg:?}");
        for implementation in [Implementation::Soa, Implementation::Dynasoar] {
            let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
            assert!(run(implementation, options(Backend::Cpu), &cfg, &mut recorder, false).is_err());
        }
    }
    // A heap too small for the mesh is an error that says so, not a hang or a panic.
    let cfg = Config { heap_bytes: Some(1 << 20), ..small(20_000, 1) };
    let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
    let err = run(Implementation::Dynasoar, options(Backend::Cpu), &cfg, &mut recorder, false).unwrap_err();
    assert!(format!("{err:#}").contains("heap"), "{err:#}");
    // A mesh with nodes out of kind order is rejected.
    let n = MeshNode { kind: PLAIN, mass: 1.0, ..MeshNode::default() };
    assert!(Mesh::new(vec![MeshNode { kind: ANCHOR, ..n }, n], 1, 1).is_err());
}

#[test]
fn gpu_gives_the_same_mesh_as_cpu() {
    if gpu_executor("gpu_gives_the_same_mesh_as_cpu").is_none() {
        return;
    }
    let cfg = small(20_000, 15);
    let cpu = simulate(Implementation::Soa, Backend::Cpu, &cfg);
    for implementation in [Implementation::Dynasoar, Implementation::Soa, Implementation::Aos] {
        let gpu = simulate(implementation, Backend::Cuda, &cfg);
        assert!(gpu.state == cpu.state, "{} on the GPU differs from the CPU", implementation.name());
        assert_eq!(gpu.history, cpu.history);
    }
    assert!(cpu.springs() < cfg.springs as u64 * 9 / 10, "{:?}", cpu.history);
}

#[test]
fn gpu_invariants_hold_while_breaking() {
    if gpu_executor("gpu_invariants_hold_while_breaking").is_none() {
        return;
    }
    let cfg = small(100_000, 0);
    let mesh = generate(&cfg).unwrap();
    let (sim, _) = DslSim::new(options(Backend::Cuda), &cfg, &mesh).unwrap();
    let (soa, _) = SoaSim::new(options(Backend::Cuda), &cfg, &mesh).unwrap();
    let mut last = check_references(&sim);
    for round in 0..8 {
        for _ in 0..3 {
            sim.compute().unwrap();
            soa.compute().unwrap();
        }
        let computed = check_references(&sim);
        let reach = computed.reachable_from_anchors();
        sim.prune().unwrap();
        soa.prune().unwrap();
        let pruned = check_references(&sim);
        for (i, n) in pruned.nodes.iter().enumerate() {
            assert_eq!(n.alive(), computed.nodes[i].alive() && reach[i], "round {round}: node {i}");
        }
        assert!(pruned.live_springs() <= last.live_springs() && pruned.live_nodes() <= last.live_nodes());
        assert!(pruned == soa.state().unwrap(), "DSL and SOA differ in round {round}");
        last = pruned;
    }
    assert!(last.live_springs() < cfg.springs as u64 * 9 / 10);
}

#[test]
fn gpu_large_mesh_matches_the_baseline() {
    if gpu_executor("gpu_large_mesh_matches_the_baseline").is_none() {
        return;
    }
    // A fifth of the benchmark's mesh, through its first 60 steps (default time step).
    let cfg = Config { steps: 60, ..Config::with_nodes(300_000) };
    let dsl = simulate(Implementation::Dynasoar, Backend::Cuda, &cfg);
    let soa = simulate(Implementation::Soa, Backend::Cuda, &cfg);
    assert_eq!(dsl.fingerprint(), soa.fingerprint());
    assert_eq!(dsl.objects, Some((soa.nodes(), soa.springs())));
    assert!(dsl.springs() < cfg.springs as u64);
    assert!(dsl.total > std::time::Duration::ZERO && dsl.enumeration < dsl.total);
}
