//! Wa-Tor: the DSL version agrees exactly with both baselines (the model is deterministic: no
//! two threads write one field in a launch, and random numbers move with their owners); the
//! ocean's references stay consistent while fish and sharks are created and freed every step;
//! energy is booked exactly; and the GPU computes the same ocean as the CPU.

use std::collections::{HashMap, HashSet};

use dynasoar::host::{Backend, ExecutorOptions};
use dynasoar::prelude::Handle;
use dynasoar::rand::Rng;
use dynasoar::{AllocatorSpec, ClassSpec, RawHandle};
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_examples::wator::{
    AosSim, Config, DslSim, Outcome, Population, Simulation, SoaSim, fingerprint, run,
};
use dynasoar_examples::{Implementation, RunOptions};
use dynasoar_models::wator::{
    CellState, EMPTY, FISH, Fish, OceanAgent, OceanCell, OceanHeap, SHARK, Shark, accept, choose,
    neighbor_indices, opposite,
};
use dynasoar_tests::gpu_executor;

fn options(backend: Backend) -> ExecutorOptions {
    ExecutorOptions { backend, cpu_threads: Some(4), quiet: true, ..Default::default() }
}

fn simulate(implementation: Implementation, backend: Backend, cfg: &Config) -> Outcome {
    let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
    run(implementation, options(backend), cfg, &mut recorder, false).unwrap()
}

fn small(width: u32, height: u32, steps: u32) -> Config {
    Config { width, height, steps, ..Config::default() }
}

/// Check every invariant of the DSL ocean now; returns its census.
fn check_invariants(sim: &DslSim, cfg: &Config) -> Population {
    let (w, h) = (cfg.width, cfg.height);
    let n = (w * h) as usize;
    let links = sim.links().unwrap();
    let cells = sim.cells().unwrap();
    assert_eq!((links.len(), cells.len()), (n, n));

    // Cells: one object per index, linked to the right neighbours.
    let cell_ids: HashMap<_, _> = links.iter().map(|l| (l.cell, l.id)).collect();
    assert_eq!(cell_ids.len(), n, "cell handles are not unique");
    for (i, l) in links.iter().enumerate() {
        assert_eq!(l.id as usize, i);
        let expected = neighbor_indices(i as u32, w, h);
        for d in 0..4 {
            assert_eq!(cell_ids.get(&l.neighbors[d]), Some(&expected[d]), "neighbour {d} of cell {i}");
            let back = links[expected[d] as usize].neighbors[opposite(d as u32) as usize];
            assert_eq!(back, l.cell, "neighbour {d} of cell {i} does not link back");
        }
    }

    // Agents: each on exactly one cell, pointing back to it, of the exported kind.
    let mut on_cells = HashSet::new();
    for (i, l) in links.iter().enumerate() {
        assert_eq!(l.kind, cells[i].kind, "cell {i}: links and export disagree");
        if l.agent.is_null() {
            assert_eq!(cells[i].kind, EMPTY);
            assert!(l.agent_position.is_null());
            continue;
        }
        assert!(on_cells.insert(l.agent), "agent {:?} is on two cells", l.agent);
        assert_eq!(l.agent_position, l.cell, "the agent on cell {i} thinks it is elsewhere");
        if cells[i].kind == SHARK {
            assert!(cells[i].energy >= 1, "a starved shark is still alive on cell {i}");
        }
    }
    let census = Population::of(0, &cells);

    // The allocator's view: counts, collected objects and live handles match the cells.
    let rt = sim.runtime();
    assert_eq!(rt.count::<Fish>().unwrap(), census.fish);
    assert_eq!(rt.count::<Shark>().unwrap(), census.sharks);
    assert_eq!(rt.count::<OceanAgent>().unwrap(), census.fish + census.sharks);
    let fish = rt.collect::<Fish>().unwrap();
    let sharks = rt.collect::<Shark>().unwrap();
    assert_eq!((fish.len() as u64, sharks.len() as u64), (census.fish, census.sharks));
    let kind_at = |cell| cells[*cell_ids.get(&cell).expect("an agent's position is no cell") as usize].kind;
    let mut positions = HashSet::new();
    for f in &fish {
        assert_eq!(kind_at(f.base.position), FISH);
        assert!(positions.insert(f.base.position), "two agents at one position");
    }
    for s in &sharks {
        assert_eq!(kind_at(s.base.position), SHARK);
        assert!(s.energy >= 1, "a starved shark is still alive");
        assert!(positions.insert(s.base.position), "two agents at one position");
    }
    let snapshot = rt.heap().expect("a DynaSOAr heap").snapshot(rt.executor()).unwrap();
    snapshot.check().unwrap_or_else(|e| panic!("heap inconsistent: {e}"));
    let live: HashSet<_> =
        [Fish::TYPE_ID, Shark::TYPE_ID].iter().flat_map(|&class| snapshot.live_objects(class)).collect();
    let referenced: HashSet<_> = on_cells.iter().map(|a| a.raw()).collect();
    assert_eq!(live, referenced, "live agent objects and agents on cells differ (leak or dangling)");
    census
}

#[test]
fn dsl_matches_both_baselines_on_cpu() {
    let cfg = small(48, 40, 40);
    let dsl = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    let soa = simulate(Implementation::Soa, Backend::Cpu, &cfg);
    let aos = simulate(Implementation::Aos, Backend::Cpu, &cfg);
    assert_eq!(dsl.cells.len(), 48 * 40);
    assert!(dsl.cells == soa.cells, "dsl vs soa");
    assert!(soa.cells == aos.cells, "soa vs aos");
    assert_eq!(dsl.populations, soa.populations);
    assert_eq!(dsl.objects, Some((dsl.fish(), dsl.sharks())));
    assert_eq!((soa.objects, aos.objects), (None, None));
    assert_eq!(dsl.fingerprint(), aos.fingerprint());
    assert!(dsl.fish() > 0 && dsl.sharks() > 0, "{:?}", dsl.populations);
}

#[test]
fn the_same_seed_gives_the_same_ocean_and_another_seed_another() {
    let cfg = small(32, 24, 15);
    let a = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    let b = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    let c = simulate(Implementation::Dynasoar, Backend::Cpu, &Config { seed: 7, ..cfg });
    assert_eq!(a.fingerprint(), b.fingerprint());
    assert_ne!(a.fingerprint(), c.fingerprint());
}

#[test]
fn invariants_hold_every_step_and_populations_evolve_on_cpu() {
    let cfg = small(40, 32, 0);
    let (sim, _) = DslSim::new(options(Backend::Cpu), &cfg).unwrap();
    let start = check_invariants(&sim, &cfg);
    // The initial densities: 25% fish, 25% sharks (give or take).
    let n = (cfg.width * cfg.height) as f64;
    assert!((start.fish as f64 / n - 0.25).abs() < 0.05, "{start:?}");
    assert!((start.sharks as f64 / n - 0.25).abs() < 0.05, "{start:?}");
    let mut history = vec![start];
    for _ in 0..30 {
        sim.step().unwrap();
        sim.sync().unwrap();
        history.push(check_invariants(&sim, &cfg));
    }
    let fish: HashSet<u64> = history.iter().map(|p| p.fish).collect();
    let sharks: HashSet<u64> = history.iter().map(|p| p.sharks).collect();
    assert!(fish.len() > 5 && sharks.len() > 5, "populations barely change: {history:?}");
    // A quarter of the cells are sharks: they eat most fish, then starve, and the fish recover.
    let fish_low = history.iter().map(|p| p.fish).min().unwrap();
    let shark_low = history.iter().map(|p| p.sharks).min().unwrap();
    assert!(fish_low < start.fish / 2 && shark_low < start.sharks / 2, "{history:?}");
    assert!(history.last().unwrap().fish > 2 * fish_low, "{history:?}");
}

#[test]
fn sharks_without_prey_starve_on_schedule() {
    // No fish and no births: every shark dies exactly when its start energy runs out.
    let cfg = Config {
        fish_percent: 0,
        shark_percent: 40,
        energy_start: 3,
        spawn_threshold: u32::MAX,
        ..small(24, 24, 0)
    };
    let (sim, _) = DslSim::new(options(Backend::Cpu), &cfg).unwrap();
    let sharks = check_invariants(&sim, &cfg).sharks;
    assert!(sharks > 100);
    for step in 1..=3 {
        sim.step().unwrap();
        sim.sync().unwrap();
        let census = check_invariants(&sim, &cfg);
        let cells = sim.cells().unwrap();
        if step < 3 {
            assert_eq!(census, Population { step: 0, fish: 0, sharks });
            assert!(cells.iter().filter(|c| c.kind == SHARK).all(|c| c.energy == 3 - step));
        } else {
            assert_eq!(census, Population { step: 0, fish: 0, sharks: 0 });
            assert!(cells.iter().all(|c| c.kind == EMPTY));
        }
    }
    assert_eq!(sim.runtime().count::<OceanAgent>().unwrap(), 0);
}

#[test]
fn eaten_fish_feed_sharks_exactly() {
    // Without births, fish only vanish by being eaten, and a step changes the sharks' total
    // energy by `boost * eaten - sharks` (each shark pays one; a starving one pays its last).
    let cfg = Config { spawn_threshold: u32::MAX, energy_start: 4, energy_boost: 3, ..small(32, 32, 0) };
    let (sim, _) = DslSim::new(options(Backend::Cpu), &cfg).unwrap();
    let energy = |cells: &[CellState]| cells.iter().map(|c| c.energy as i64).sum::<i64>();
    let mut cells = sim.cells().unwrap();
    let mut eaten_total = 0;
    for _ in 0..12 {
        let before = Population::of(0, &cells);
        let e0 = energy(&cells);
        sim.step().unwrap();
        cells = sim.cells().unwrap();
        let after = Population::of(0, &cells);
        assert!(after.fish <= before.fish && after.sharks <= before.sharks);
        let eaten = (before.fish - after.fish) as i64;
        eaten_total += eaten;
        assert_eq!(energy(&cells), e0 + 3 * eaten - before.sharks as i64);
    }
    assert!(eaten_total > 20, "sharks ate only {eaten_total} fish");
    check_invariants(&sim, &cfg);
}

#[test]
fn fish_alone_only_multiply() {
    let cfg = Config { fish_percent: 10, shark_percent: 0, ..small(32, 32, 0) };
    let (sim, _) = DslSim::new(options(Backend::Cpu), &cfg).unwrap();
    let mut last = check_invariants(&sim, &cfg).fish;
    let first = last;
    for _ in 0..15 {
        sim.step().unwrap();
        let census = Population::of(0, &sim.cells().unwrap());
        assert!(census.fish >= last && census.sharks == 0, "{census:?} after {last} fish");
        last = census.fish;
    }
    assert!(last > 2 * first, "fish grew from {first} to {last} only");
    check_invariants(&sim, &cfg);
}

#[test]
fn baselines_step_by_step_match_the_dsl() {
    let cfg = small(20, 17, 0);
    let (dsl, _) = DslSim::new(options(Backend::Cpu), &cfg).unwrap();
    let (soa, _) = SoaSim::new(options(Backend::Cpu), &cfg).unwrap();
    let (aos, _) = AosSim::new(options(Backend::Cpu), &cfg).unwrap();
    let sims: [&dyn Simulation; 3] = [&dsl, &soa, &aos];
    for step in 0..25 {
        let states: Vec<Vec<CellState>> = sims.iter().map(|s| s.cells().unwrap()).collect();
        assert!(states[0] == states[1] && states[1] == states[2], "implementations differ at step {step}");
        for s in sims {
            s.step().unwrap();
        }
    }
}

#[test]
fn run_renders_frames_and_reports_populations() {
    let dir = std::env::temp_dir().join(format!("dynasoar-wator-test-{}", std::process::id()));
    let args = RenderArgs { render: Some(dir.clone()), render_every: 4, gif: true, render_width: 64 };
    let mut recorder = Recorder::new(&args).unwrap();
    let cfg = small(30, 20, 10);
    let o = run(Implementation::Dynasoar, options(Backend::Cpu), &cfg, &mut recorder, false).unwrap();
    assert_eq!(recorder.finish().unwrap(), 4, "frames 0, 4, 8 and 10");
    let steps: Vec<u32> = o.populations.iter().map(|p| p.step).collect();
    assert_eq!(steps, [0, 4, 8, 10]);
    assert_eq!(o.populations.last().unwrap(), &Population { step: 10, fish: o.fish(), sharks: o.sharks() });
    let png = std::fs::read(dir.join("frame_000010.png")).unwrap();
    let be = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    assert_eq!((be(16), be(20)), (60, 40), "2 pixels per cell (PNG header: width, height)");
    assert!(dir.join("animation.gif").exists());
    // Rendering does not change the simulation.
    let plain = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    assert_eq!(plain.fingerprint(), o.fingerprint());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_configurations_are_errors() {
    let bad = [
        Config { width: 0, ..small(8, 8, 1) },
        Config { height: 0, ..small(8, 8, 1) },
        Config { fish_percent: 60, shark_percent: 41, ..small(8, 8, 1) },
        Config { spawn_threshold: 0, ..small(8, 8, 1) },
        Config { energy_start: 0, ..small(8, 8, 1) },
        Config { heap_bytes: Some(0), ..small(8, 8, 1) },
    ];
    for cfg in bad {
        assert!(cfg.validate().is_err(), "{cfg:?}");
        let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
        assert!(run(Implementation::Soa, options(Backend::Cpu), &cfg, &mut recorder, false).is_err());
    }
    // A heap too small for the ocean is an error that says so, not a hang or a panic.
    let cfg = Config { heap_bytes: Some(1 << 20), ..small(128, 128, 5) };
    let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
    let err = run(Implementation::Dynasoar, options(Backend::Cpu), &cfg, &mut recorder, false).unwrap_err();
    assert!(format!("{err:#}").contains("heap"), "{err:#}");
}

#[test]
fn rules_choose_only_offered_directions() {
    let mut rng = Rng::new(1, 2);
    assert_eq!(choose(0, &mut rng), None);
    let before = rng;
    assert_eq!(choose(0, &mut rng), None);
    assert_eq!(rng, before, "no candidates: no random number drawn");
    let mut seen = [0u32; 4];
    for _ in 0..4000 {
        let d = choose(0b1011, &mut rng).unwrap();
        assert_ne!(d, 2);
        seen[d as usize] += 1;
    }
    assert!(seen.iter().enumerate().all(|(d, &k)| d == 2 || k > 1100), "{seen:?}");
    assert_eq!(accept(0b10000, &mut rng), None, "only the four neighbour bits count");
    // The torus wraps, and every neighbour's opposite neighbour is the cell itself.
    assert_eq!(neighbor_indices(0, 5, 4), [4, 15, 1, 5]);
    for i in 0..20 {
        for (d, n) in neighbor_indices(i, 5, 4).into_iter().enumerate() {
            assert_eq!(neighbor_indices(n, 5, 4)[opposite(d as u32) as usize], i);
        }
    }
}

/// The cells of `sim` by index agree with the handles its cells export, computed where `dense`.
fn check_cells_by_index(sim: &DslSim, dense: bool) {
    let cells = sim.grid().cells;
    let links = sim.links().unwrap();
    assert_eq!(cells.len() as usize, links.len());
    assert_eq!(cells.is_dense(), dense, "the cells' table is dense: {}", cells.is_dense());
    for (i, l) in links.iter().enumerate() {
        if dense {
            // Computed, so this holds on either backend (the table is never read).
            assert_eq!(cells.get(i as u32), l.cell, "handle of cell {i}");
            assert_eq!(cells.index_of(l.cell), Some(i as u32), "index of cell {i}");
        } else {
            assert_eq!(cells.index_of(l.cell), None, "a table that is not dense gives no index");
        }
        if !l.agent.is_null() {
            // An agent is no cell: its handle names another class. SAFETY: only its bits are
            // looked at (`index_of` reads no memory).
            assert_eq!(cells.index_of(unsafe { Handle::from_raw(l.agent.raw()) }), None);
        }
    }
    assert!(cells.get(cells.len()).is_null(), "an index past the end gives null");
    assert_eq!(cells.index_of(Handle::NULL), None);
    if dense {
        // Handles of the class in the blocks just before the first cell's and just after the
        // last cell's (any slot) are none of the cells. SAFETY (both): only their bits are
        // looked at.
        let (first, last) = (links[0].cell.raw(), links[links.len() - 1].cell.raw());
        let per_block = first.objects_per_block();
        let block_bytes = OceanHeap::BLOCK_BYTES;
        for slot in [0, per_block - 1] {
            for addr in [first.block_addr().wrapping_sub(block_bytes), last.block_addr() + block_bytes] {
                let h = RawHandle::new(addr, slot, per_block, first.type_id());
                assert_eq!(cells.index_of(unsafe { Handle::from_raw(h) }), None, "{h:?}");
            }
        }
        if !links.len().is_multiple_of(per_block as usize) {
            // A slot past the last cell in its block.
            let h = RawHandle::new(last.block_addr(), per_block - 1, per_block, first.type_id());
            assert_eq!(cells.index_of(unsafe { Handle::from_raw(h) }), None, "{h:?}");
        }
    }
}

#[test]
fn cells_by_index_are_computed_on_dynasoars_heap_and_read_elsewhere_on_cpu() {
    let cfg = small(100, 70, 3);
    let (sim, _) = DslSim::new(options(Backend::Cpu), &cfg).unwrap();
    check_cells_by_index(&sim, true);
    sim.step().unwrap();
    check_cells_by_index(&sim, true);

    // A general-purpose allocator's objects are not in blocks: the table is read, and the
    // ocean is the same.
    let general = RunOptions { store: "bitmap".parse().unwrap(), ..options(Backend::Cpu).into() };
    let (other, _) = DslSim::new(general, &cfg).unwrap();
    let table = other.grid().cells;
    check_cells_by_index(&other, false);
    let links = other.links().unwrap();
    for (i, l) in links.iter().enumerate() {
        // On the CPU backend the table lies in host memory.
        assert_eq!(table.get(i as u32), l.cell, "table entry {i}");
    }
    other.step().unwrap();
    assert_eq!(fingerprint(&other.cells().unwrap()), fingerprint(&sim.cells().unwrap()));

    // A table with a null entry is refused, naming the class and the entry.
    let rt = sim.runtime();
    let empty = rt.executor().alloc_zeroed::<Handle<OceanCell>>(3).unwrap();
    let err = rt.by_index(empty).unwrap_err().to_string();
    assert!(err.contains("entry 0 of the OceanCell table is null"), "{err}");
}

#[test]
fn gpu_cells_by_index_are_computed() {
    if gpu_executor("gpu_cells_by_index_are_computed").is_none() {
        return;
    }
    let cfg = small(300, 200, 0);
    let (sim, _) = DslSim::new(options(Backend::Cuda), &cfg).unwrap();
    check_cells_by_index(&sim, true);
    let (soa, _) = SoaSim::new(options(Backend::Cuda), &cfg).unwrap();
    for _ in 0..20 {
        sim.step().unwrap();
        soa.step().unwrap();
    }
    sim.sync().unwrap();
    check_cells_by_index(&sim, true);
    assert_eq!(fingerprint(&sim.cells().unwrap()), fingerprint(&soa.cells().unwrap()));
}

#[test]
fn gpu_gives_the_same_ocean_as_cpu() {
    if gpu_executor("gpu_gives_the_same_ocean_as_cpu").is_none() {
        return;
    }
    let cfg = small(192, 160, 80);
    let cpu = simulate(Implementation::Soa, Backend::Cpu, &cfg);
    for implementation in [Implementation::Dynasoar, Implementation::Soa, Implementation::Aos] {
        let gpu = simulate(implementation, Backend::Cuda, &cfg);
        assert!(gpu.cells == cpu.cells, "{} on the GPU differs from the CPU", implementation.name());
        assert_eq!(gpu.populations, cpu.populations);
    }
}

#[test]
fn gpu_invariants_hold_while_allocating_heavily() {
    if gpu_executor("gpu_invariants_hold_while_allocating_heavily").is_none() {
        return;
    }
    let cfg = small(512, 384, 0);
    let (sim, _) = DslSim::new(options(Backend::Cuda), &cfg).unwrap();
    let (soa, _) = SoaSim::new(options(Backend::Cuda), &cfg).unwrap();
    let mut history = vec![check_invariants(&sim, &cfg)];
    for round in 0..12 {
        for _ in 0..10 {
            sim.step().unwrap();
            soa.step().unwrap();
        }
        sim.sync().unwrap();
        history.push(check_invariants(&sim, &cfg));
        let (a, b) = (sim.cells().unwrap(), soa.cells().unwrap());
        assert_eq!(fingerprint(&a), fingerprint(&b), "DSL and SOA differ after {} steps", 10 * (round + 1));
    }
    let fish: HashSet<u64> = history.iter().map(|p| p.fish).collect();
    assert!(fish.len() > 6, "{history:?}");
}

#[test]
fn gpu_large_ocean_matches_the_baseline() {
    if gpu_executor("gpu_large_ocean_matches_the_baseline").is_none() {
        return;
    }
    // A quarter of the benchmark's ocean, through the allocation waves of the first steps.
    let cfg = small(1024, 1280, 150);
    let dsl = simulate(Implementation::Dynasoar, Backend::Cuda, &cfg);
    let soa = simulate(Implementation::Soa, Backend::Cuda, &cfg);
    assert_eq!(dsl.fingerprint(), soa.fingerprint());
    assert_eq!(dsl.objects, Some((soa.fish(), soa.sharks())));
    assert!(dsl.total > std::time::Duration::ZERO && dsl.enumeration < dsl.total);
}
