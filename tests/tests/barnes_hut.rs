//! Barnes-Hut: the quadtree stays valid while bodies move and tree nodes are created and freed
//! every step (every body in exactly one slot of its square, squares nested, summaries equal
//! to the sums over the bodies below, nothing dangling, nothing left to collapse); the forces
//! approximate the exact pairwise sum within the opening angle; the DSL version computes
//! exactly the same bodies and tree as both baselines (the tree is canonical and every sum runs
//! in slot order); nearly and exactly coincident bodies fall back to buckets; quadrants tile
//! their squares and bodies stay in the root's square; bad input is an error; and the GPU
//! agrees with the CPU.

use dynasoar::host::{Backend, ExecutorOptions};
use dynasoar::math::Vec2;
use dynasoar::{AllocatorSpec, BlockSpan, Packer};
use dynasoar_examples::Implementation;
use dynasoar_examples::barnes_hut::{
    AosSim, BodyState, Child, Config, DslSim, Outcome, Simulation, SoaSim, TreeSnapshot, TreeStats,
    direct_forces, run,
};
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_models::barnes_hut::{
    BarnesHutHeap, BodyNode, MAX_DEPTH, Physics, ROOT_P1, ROOT_P2, TreeNode, UPPER, bucket_slot,
    child_region, contains, integrate, quadrant, stays,
};
use dynasoar_tests::gpu_executor;

fn options(backend: Backend) -> ExecutorOptions {
    ExecutorOptions { backend, cpu_threads: Some(4), quiet: true, ..Default::default() }
}

/// Run `cfg` to the end; an error in full (with its causes).
fn simulate(implementation: Implementation, backend: Backend, cfg: &Config) -> Result<Outcome, String> {
    let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
    run(implementation, options(backend), cfg, &mut recorder, false).map_err(|e| format!("{e:#}"))
}

fn small(bodies: u32, steps: u32) -> Config {
    Config { bodies, steps, ..Config::default() }
}

/// Gravity strong enough that bodies cross many squares per step (and bounce off the walls).
fn stirred(bodies: u32, steps: u32) -> Config {
    let physics = Physics { gravity: 2e-6, dt: 0.02, ..Physics::default() };
    Config { bodies, steps, physics, ..Config::default() }
}

/// Check the tree of `sim` now; returns its shape and the bodies.
fn check(sim: &dyn Simulation, what: &str) -> (TreeStats, Vec<BodyState>, TreeSnapshot) {
    let bodies = sim.bodies().unwrap();
    let tree = sim.tree().unwrap();
    let stats = tree.check(&bodies).unwrap_or_else(|e| panic!("{what}: {e}"));
    (stats, bodies, tree)
}

/// The square and slot each body sits in (DSL snapshots: from the bodies' own links).
fn homes(tree: &TreeSnapshot) -> Vec<(u32, [u32; 4], u32)> {
    tree.body_links
        .as_ref()
        .unwrap()
        .iter()
        .map(|&(parent, slot)| match parent {
            Child::Node(r) => {
                let n = &tree.nodes[r];
                (n.depth, [n.p1.x, n.p1.y, n.p2.x, n.p2.y].map(f32::to_bits), slot)
            }
            other => panic!("a body links to {other:?}"),
        })
        .collect()
}

#[test]
fn quadrants_tile_their_square() {
    let mut rng = dynasoar::rand::Rng::new(7, 0);
    for _ in 0..10_000 {
        let pos = Vec2::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0));
        // Descend as insertion does: every level's quadrant contains the position.
        let (mut p1, mut p2) = (ROOT_P1, ROOT_P2);
        for depth in 0..MAX_DEPTH + 2 {
            assert!(contains(p1, p2, pos));
            let q = if depth < MAX_DEPTH { quadrant(p1, p2, pos) } else { 0 };
            assert!(stays(p1, p2, depth, q, pos), "{pos:?} at depth {depth}");
            assert!(depth >= MAX_DEPTH || !stays(p1, p2, depth, q ^ 1, pos));
            (p1, p2) = child_region(p1, p2, depth, q);
            assert!(p1.x < p2.x && p1.y < p2.y, "empty square at depth {depth}");
        }
    }
    assert_eq!(bucket_slot([false, true, false, true], [true; 4]), 1);
    assert_eq!(bucket_slot([false; 4], [false, false, true, true]), 2);
    assert_eq!(bucket_slot([false; 4], [false; 4]), 3);
}

#[test]
fn bodies_stay_in_the_square() {
    let p = Physics { dt: 1.0, ..Physics::default() };
    let (pos, vel) = integrate(Vec2::new(0.9, -0.9), Vec2::new(0.5, -0.5), Vec2::ZERO, 1.0, &p);
    assert_eq!((pos, vel), (Vec2::new(UPPER, -1.0), Vec2::new(-0.5, 0.5)));
    assert!(contains(ROOT_P1, ROOT_P2, pos));
}

#[test]
fn tree_stays_valid_while_bodies_move_on_cpu() {
    let cfg = stirred(3000, 15);
    let (dsl, _) = DslSim::new(options(Backend::Cpu), &cfg).unwrap();
    let soa = SoaSim::new(options(Backend::Cpu), &cfg).unwrap();
    let (first, _, tree) = check(&dsl, "after setup");
    assert!(first.nodes > 500 && first.depth >= 5, "{first:?}");
    let mut homes_before = homes(&tree);
    let (mut moved_total, mut unlinked_total) = (0, 0);
    for step in 1..=cfg.steps {
        dsl.step().unwrap();
        soa.step().unwrap();
        dsl.sync().unwrap();
        let (stats, bodies, tree) = check(&dsl, &format!("step {step}"));
        // The same tree as the baseline's, built from scratch over the same positions.
        let (_, soa_bodies, soa_tree) = check(&soa, &format!("soa step {step}"));
        assert_eq!(bodies, soa_bodies, "step {step}: bodies differ from the SOA baseline");
        assert_eq!(tree.canonical(), soa_tree.canonical(), "step {step}: the trees differ");
        // Bodies changed squares: insertion, splits and collapses all ran.
        let now = homes(&tree);
        moved_total += now.iter().zip(&homes_before).filter(|(a, b)| a != b).count();
        homes_before = now;
        // No tree node leaks: the heap holds the tree and the nodes the last pass unlinked
        // (freed in the next one); no spare node of a lost race is left over.
        let in_heap = dsl.runtime().count::<TreeNode>().unwrap();
        assert_eq!(in_heap, stats.nodes + tree.unlinked, "step {step}: {stats:?}");
        unlinked_total += tree.unlinked;
        assert_eq!(dsl.runtime().count::<BodyNode>().unwrap(), cfg.bodies as u64);
    }
    assert!(unlinked_total > 100, "only {unlinked_total} tree nodes collapsed");
    assert!(
        moved_total > cfg.bodies as usize,
        "only {moved_total} moves between squares in {} steps: the test does not stir enough",
        cfg.steps
    );
}

/// The DSL's force walk keeps its stack in packed handles (`Device::packer`) on the heaps the
/// app makes: a small run's, and the default size's (its block count).
#[test]
fn the_walk_stack_packs_its_handles() {
    let (dsl, _) = DslSim::new(options(Backend::Cpu), &small(3000, 1)).unwrap();
    let span =
        BlockSpan::of_heap(dsl.runtime().heap().expect("the DSL version runs on DynaSOAr's heap").config());
    assert!(Packer::<BarnesHutHeap>::packs(span), "{span:?}");
    let blocks = Config::default().heap_bytes() / BarnesHutHeap::BLOCK_BYTES;
    assert!(blocks <= Packer::<BarnesHutHeap>::MAX_BLOCKS, "{blocks} blocks");
    assert!(!Packer::<BarnesHutHeap>::packs(BlockSpan {
        count: Packer::<BarnesHutHeap>::MAX_BLOCKS + 1,
        ..span
    }));
}

#[test]
fn dsl_matches_both_baselines_exactly_on_cpu() {
    let cfg = small(5000, 20);
    let dsl = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg).unwrap();
    let soa = simulate(Implementation::Soa, Backend::Cpu, &cfg).unwrap();
    let aos = simulate(Implementation::Aos, Backend::Cpu, &cfg).unwrap();
    assert_eq!(dsl.bodies.len(), 5000);
    assert!(dsl.bodies == soa.bodies, "dsl vs soa");
    assert!(soa.bodies == aos.bodies, "soa vs aos");
    assert_eq!((dsl.tree, dsl.checksum()), (soa.tree, soa.checksum()));
    assert_eq!(soa.tree, aos.tree);
    assert!(dsl.bodies.iter().any(|b| b.force != Vec2::ZERO));
}

/// Relative error of `forces` against the exact ones: (sum of error norms over sum of force
/// norms, largest error of a body over the mean force norm).
fn force_errors(bodies: &[BodyState], exact: &[(f64, f64)]) -> (f64, f64) {
    let (mut err, mut norm, mut worst) = (0.0, 0.0, 0.0f64);
    for (b, &(fx, fy)) in bodies.iter().zip(exact) {
        let e = ((b.force.x as f64 - fx).powi(2) + (b.force.y as f64 - fy).powi(2)).sqrt();
        err += e;
        worst = worst.max(e);
        norm += (fx * fx + fy * fy).sqrt();
    }
    (err / norm, worst / (norm / bodies.len() as f64))
}

/// The forces of one step of `cfg` (DSL version) and the exact forces for the same positions.
fn one_step_forces(cfg: &Config) -> (Vec<BodyState>, Vec<(f64, f64)>) {
    let (sim, _) = DslSim::new(options(Backend::Cpu), cfg).unwrap();
    let before = sim.bodies().unwrap();
    sim.step().unwrap();
    let after = sim.bodies().unwrap();
    (after, direct_forces(&before, &cfg.physics))
}

#[test]
fn forces_approximate_the_direct_sum_within_theta() {
    let cfg = Config { bodies: 2000, steps: 1, ..Config::default() };
    let (bodies, exact) = one_step_forces(&cfg);
    let (mean, worst) = force_errors(&bodies, &exact);
    println!("theta {}: relative error {mean:.2e}, worst body {worst:.2e}", cfg.physics.theta);
    let theta = cfg.physics.theta as f64;
    assert!(mean < 0.05 * theta, "mean relative error {mean} for theta {theta}");
    assert!(worst < theta, "worst relative error {worst} for theta {theta}");

    // A smaller angle opens more nodes: closer to the exact forces.
    let narrow = Config { physics: Physics { theta: 0.2, ..cfg.physics }, ..cfg };
    let (bodies, exact) = one_step_forces(&narrow);
    let (narrow_mean, _) = force_errors(&bodies, &exact);
    assert!(narrow_mean < mean / 2.0, "theta 0.2: {narrow_mean}, theta {theta}: {mean}");

    // Angle 0 opens every node: the exact sum, up to f32 rounding.
    let exact_walk = Config { physics: Physics { theta: 0.0, ..cfg.physics }, ..cfg };
    let (bodies, exact) = one_step_forces(&exact_walk);
    let (mean, worst) = force_errors(&bodies, &exact);
    assert!(mean < 1e-5 && worst < 1e-4, "theta 0: {mean}, worst {worst}");
}

#[test]
fn coincident_bodies_fall_back_to_buckets() {
    // Bodies within 2e-6 of each other (and short steps, so that they stay so): the tree
    // reaches MAX_DEPTH, below which tree nodes are buckets (they do not split their square
    // any more).
    let physics = Physics { dt: 1e-5, ..Physics::default() };
    let cfg = Config { spread: 1e-6, physics, ..small(800, 4) };
    let (sim, _) = DslSim::new(options(Backend::Cpu), &cfg).unwrap();
    for step in 0..=cfg.steps {
        if step > 0 {
            sim.step().unwrap();
        }
        let (stats, bodies, _) = check(&sim, &format!("clustered, step {step}"));
        assert!(stats.depth >= MAX_DEPTH && stats.buckets > 0, "step {step}: {stats:?}");
        assert!(bodies.iter().all(|b| b.pos.x.is_finite() && b.force.x.is_finite()));
    }

    // All bodies at one point: a chain of buckets (the force walk runs out of stack and
    // approximates the rest, which is exact here: every force is zero).
    let cfg = Config { spread: 0.0, ..small(300, 2) };
    for implementation in [Implementation::Dynasoar, Implementation::Soa, Implementation::Aos] {
        let (sim, _) =
            dynasoar_examples::barnes_hut::simulation(implementation, options(Backend::Cpu), &cfg).unwrap();
        let (stats, bodies, _) = check(sim.as_ref(), &format!("{} at one point", implementation.name()));
        assert!(stats.depth > MAX_DEPTH + 50, "{stats:?}");
        sim.step().unwrap();
        sim.sync().unwrap();
        assert!(sim.bodies().unwrap().iter().all(|b| b.force == Vec2::ZERO));
        assert_eq!(bodies.len(), 300);
        sim.step().unwrap();
        check(sim.as_ref(), &format!("{} spreading out", implementation.name()));
    }
}

#[test]
fn bad_input_is_an_error() {
    let error = |cfg: Config, implementation: Implementation| -> String {
        match simulate(implementation, Backend::Cpu, &cfg) {
            Ok(_) => panic!("{cfg:?} ran"),
            Err(e) => e,
        }
    };
    for implementation in [Implementation::Dynasoar, Implementation::Soa, Implementation::Aos] {
        assert!(error(small(0, 1), implementation).contains("at least one body"));
        let cfg = Config { spread: 1.5, ..small(10, 1) };
        assert!(error(cfg, implementation).contains("spread"));
        let cfg = Config { physics: Physics { theta: f32::NAN, ..Physics::default() }, ..small(10, 1) };
        assert!(error(cfg, implementation).contains("theta"));
    }
    let cfg = Config { heap_bytes: Some(1 << 20), ..small(20_000, 1) };
    let e = error(cfg, Implementation::Dynasoar);
    assert!(e.contains("--heap-mib"), "{e}");
    let cfg = Config { node_capacity: Some(100), ..small(2000, 1) };
    for implementation in [Implementation::Soa, Implementation::Aos] {
        let e = error(cfg, implementation);
        assert!(e.contains("--node-capacity"), "{e}");
    }
}

/// Largest difference of positions and velocities between two runs, relative to the values.
fn max_relative_difference(a: &[BodyState], b: &[BodyState]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            assert_eq!((x.id, x.mass), (y.id, y.mass));
            let dp = (x.pos - y.pos).length() / x.pos.length().max(1e-3);
            let dv = (x.vel - y.vel).length() / x.vel.length().max(1e-6);
            dp.max(dv)
        })
        .fold(0.0, f32::max)
}

/// Whether two tree sizes agree up to bodies that float rounding may have moved across a
/// quadrant boundary.
fn close_sizes(a: u64, b: u64) -> bool {
    a.abs_diff(b) <= 2 + a / 1000
}

#[test]
fn gpu_computes_the_same_bodies_as_cpu() {
    if gpu_executor("gpu_computes_the_same_bodies_as_cpu").is_none() {
        return;
    }
    let cfg = small(20_000, 20);
    let cpu = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg).unwrap();
    // `run` checks each final tree.
    for implementation in [Implementation::Dynasoar, Implementation::Soa, Implementation::Aos] {
        let gpu = simulate(implementation, Backend::Cuda, &cfg).unwrap();
        // The tree does not depend on timing and every sum runs in the same order; the PTX
        // rounds every operation (`.rn`, no contraction), so the backends should agree exactly.
        // Allow float noise all the same.
        let d = max_relative_difference(&gpu.bodies, &cpu.bodies);
        println!(
            "{}: GPU and CPU differ by {d} (exactly equal: {})",
            implementation.name(),
            gpu.bodies == cpu.bodies
        );
        assert!(d < 1e-3, "{}: GPU and CPU differ by {d}", implementation.name());
        assert!(
            close_sizes(gpu.tree.nodes, cpu.tree.nodes),
            "{}: {:?} vs {:?}",
            implementation.name(),
            gpu.tree,
            cpu.tree
        );
    }
}

#[test]
fn gpu_stirred_tree_stays_valid() {
    if gpu_executor("gpu_stirred_tree_stays_valid").is_none() {
        return;
    }
    let cfg = stirred(50_000, 8);
    let (dsl, _) = DslSim::new(options(Backend::Cuda), &cfg).unwrap();
    let soa = SoaSim::new(options(Backend::Cuda), &cfg).unwrap();
    let aos = AosSim::new(options(Backend::Cuda), &cfg).unwrap();
    check(&dsl, "gpu after setup");
    for step in 1..=cfg.steps {
        dsl.step().unwrap();
        soa.step().unwrap();
        aos.step().unwrap();
        let (stats, bodies, tree) = check(&dsl, &format!("gpu step {step}"));
        let (_, soa_bodies, _) = check(&soa, &format!("gpu soa step {step}"));
        let (_, aos_bodies, _) = check(&aos, &format!("gpu aos step {step}"));
        let in_heap = dsl.runtime().count::<TreeNode>().unwrap();
        assert_eq!(in_heap, stats.nodes + tree.unlinked, "gpu step {step}: tree nodes leaked, {stats:?}");
        // Exactly the same bodies, every step (tolerance 0), as on the CPU
        // (`tree_stays_valid_while_bodies_move_on_cpu`): on one device the three versions build
        // the same canonical tree, run every sum in slot order and round every operation alike
        // (the PTX's `.rn`, no contraction), so nothing can differ; an H200 agreed exactly at all
        // 8 steps. No tolerance would do instead: the stirred bodies are chaotic, so any
        // difference grows step by step and a bound would have to grow with it.
        let (ds, da) = (
            max_relative_difference(&bodies, &soa_bodies),
            max_relative_difference(&soa_bodies, &aos_bodies),
        );
        println!("gpu step {step}: dsl vs soa {ds}, soa vs aos {da}");
        assert!(bodies == soa_bodies, "gpu step {step}: dsl and soa bodies differ by up to {ds}");
        assert!(soa_bodies == aos_bodies, "gpu step {step}: soa and aos bodies differ by up to {da}");
    }
}

#[test]
fn gpu_benchmark_size_keeps_invariants() {
    if gpu_executor("gpu_benchmark_size_keeps_invariants").is_none() {
        return;
    }
    // The benchmark's bodies, a few steps: setup at full size, tree checked by `run`.
    let cfg = small(300_000, 5);
    let dsl = simulate(Implementation::Dynasoar, Backend::Cuda, &cfg).unwrap();
    let soa = simulate(Implementation::Soa, Backend::Cuda, &cfg).unwrap();
    assert!(close_sizes(dsl.tree.nodes, soa.tree.nodes), "{:?} vs {:?}", dsl.tree, soa.tree);
    assert!(max_relative_difference(&dsl.bodies, &soa.bodies) < 1e-3);
}
