//! Sugarscape: the DSL version agrees exactly with both baselines (the model is deterministic:
//! requests and proposals are order-independent atomics, random numbers move with their owners);
//! sugar is booked exactly every step (grown, diffused, harvested, burnt, given to children); the
//! grid's references stay consistent while agents are born, move and die; and the GPU computes the
//! same world as the CPU.

use std::collections::{HashMap, HashSet};

use dynasoar::ClassSpec;
use dynasoar::host::{Backend, ExecutorOptions};
use dynasoar::rand::Rng;
use dynasoar_examples::Implementation;
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_examples::sugarscape::{
    AosSim, Config, DslSim, Outcome, Population, Simulation, SoaSim, fingerprint, run,
};
use dynasoar_models::sugarscape::{Agent, Male};
use dynasoar_models::sugarscape::{
    Cell, CellState, EMPTY, FEMALE, Female, MALE, MoveTargets, NO_RANK, Traits, WINDOW, cell_at,
    child_traits, choose, diffusion, diffusion_share, for_each_in_window, grow, initial_agent, initial_cell,
    metabolize, mirror, proposal_key, proposer_rank, rank,
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

/// Check every invariant of the DSL world now; returns its census.
fn check_invariants(sim: &DslSim, cfg: &Config) -> Population {
    let (w, h) = (cfg.width, cfg.height);
    let n = (w * h) as usize;
    let links = sim.links().unwrap();
    let cells = sim.cells().unwrap();
    assert_eq!((links.len(), cells.len()), (n, n));

    // Cells: one object per index.
    let cell_ids: HashMap<_, _> = links.iter().map(|l| (l.cell, l.id)).collect();
    assert_eq!(cell_ids.len(), n, "cell handles are not unique");

    // Agents: each on exactly one cell, pointing back to it, of the exported kind and sane.
    let mut on_cells = HashSet::new();
    for (i, (l, c)) in links.iter().zip(&cells).enumerate() {
        assert_eq!(l.id as usize, i);
        assert_eq!(l.kind, c.kind, "cell {i}: links and export disagree");
        if l.agent.is_null() {
            assert_eq!(c.kind, EMPTY);
            assert!(l.agent_cell.is_null());
            continue;
        }
        assert!(on_cells.insert(l.agent), "agent {:?} is on two cells", l.agent);
        assert_eq!(l.agent_cell, l.cell, "the agent on cell {i} thinks it is on another cell");
        assert_eq!(l.agent_position, l.id, "the agent on cell {i} thinks it is elsewhere");
        assert!(c.age <= c.max_age, "cell {i}: an agent older than its maximum age lives: {c:?}");
        assert!(c.agent_sugar >= 0, "cell {i}: an agent with negative sugar lives: {c:?}");
        assert!(c.vision >= 0 && c.vision <= cfg.max_vision as i32, "{c:?}");
        if c.kind == FEMALE {
            assert!(c.num_children <= c.max_children, "cell {i}: too many children: {c:?}");
            assert!((2..cfg.max_children.max(3) as i32).contains(&c.max_children), "{c:?}");
        }
    }
    let census = Population::of(0, &cells);

    // The allocator's view: counts, collected objects and live handles match the cells.
    let rt = sim.runtime();
    assert_eq!(rt.count::<Male>().unwrap(), census.males);
    assert_eq!(rt.count::<Female>().unwrap(), census.females);
    assert_eq!(rt.count::<Agent>().unwrap(), census.agents());
    assert_eq!(rt.count::<Cell>().unwrap(), n as u64);
    let males = rt.collect::<Male>().unwrap();
    let females = rt.collect::<Female>().unwrap();
    assert_eq!((males.len() as u64, females.len() as u64), (census.males, census.females));
    let mut positions = HashSet::new();
    for (base, kind) in males.iter().map(|m| (&m.base, MALE)).chain(females.iter().map(|f| (&f.base, FEMALE)))
    {
        let at = *cell_ids.get(&base.cell).expect("an agent's cell is no cell");
        assert_eq!(at, base.position, "an agent's cell and position disagree");
        assert_eq!(cells[at as usize].kind, kind);
        assert!(positions.insert(at), "two agents at one position");
    }
    // Between steps, the protocols leave nothing behind: requests and proposals are consumed.
    assert!(males.iter().all(|m| !m.proposal_accepted), "an acceptance survived the step");
    assert!(females.iter().all(|f| f.proposal == 0), "a proposal survived the step");
    assert!(rt.collect::<Cell>().unwrap().iter().all(|c| c.requests == 0), "a request survived the step");

    let snapshot = rt.heap().expect("a DynaSOAr heap").snapshot(rt.executor()).unwrap();
    snapshot.check().unwrap_or_else(|e| panic!("heap inconsistent: {e}"));
    let live: HashSet<_> =
        [Male::TYPE_ID, Female::TYPE_ID].iter().flat_map(|&class| snapshot.live_objects(class)).collect();
    let referenced: HashSet<_> = on_cells.iter().map(|a| a.raw()).collect();
    assert_eq!(live, referenced, "live agent objects and agents on cells differ (leak or dangling)");
    census
}

/// What one step did, as [`check_step`] books it.
#[derive(Clone, Copy, Debug, Default)]
struct StepBook {
    births: u64,
    deaths: u64,
    harvested: i64,
}

/// Check that the step from `before` to `after` booked all sugar: the cells' sugar is what
/// growing and diffusing predict, except on cells whose agent harvested it all; the agents'
/// sugar is what they had, less metabolism, plus the harvest, less what parents gave to
/// children (half their endowment each; a child's endowment is the parents' average, so the
/// gifts are its endowment or one less); deaths and births explain the population change, and
/// every birth counts for one mother.
fn check_step(before: &[CellState], after: &[CellState], cfg: &Config) -> StepBook {
    let p = cfg.params();
    let (w, h) = (cfg.width, cfg.height);
    let grown: Vec<i32> = before.iter().map(|c| grow(c.sugar, c.grow_rate, &p)).collect();
    let given: Vec<i32> = grown.iter().map(|&s| diffusion(s, &p)).collect();
    let predicted: Vec<i32> = (0..before.len())
        .map(|i| {
            let mut gained = 0;
            for_each_in_window(w, h, i as u32, p.max_vision, |_, j| {
                gained += diffusion_share(given[j as usize], &p)
            });
            grown[i] - given[i] + gained
        })
        .collect();

    let (mut survivors, mut deaths, mut expected, mut mothers_children) = (0u64, 0u64, 0i64, 0i64);
    for c in before.iter().filter(|c| c.kind != EMPTY) {
        let (_, sugar, dead) = metabolize(c.age, c.agent_sugar, c.metabolism, c.max_age);
        if dead {
            deaths += 1;
        } else {
            survivors += 1;
            expected += sugar as i64;
            mothers_children += c.num_children as i64;
        }
    }

    let mut book = StepBook { deaths, ..StepBook::default() };
    let (mut old, mut old_sugar, mut endowments, mut children) = (0u64, 0i64, 0i64, 0i64);
    for (i, c) in after.iter().enumerate() {
        let newborn = c.kind != EMPTY && c.age == 0;
        if c.kind == EMPTY || newborn {
            assert_eq!(c.sugar, predicted[i], "cell {i}: sugar after growth and diffusion");
        } else {
            assert_eq!(c.sugar, 0, "cell {i}: its agent did not harvest it");
            book.harvested += predicted[i] as i64;
        }
        if newborn {
            book.births += 1;
            endowments += c.endowment as i64;
            assert_eq!(c.agent_sugar, c.endowment, "cell {i}: a child starts with its endowment");
            assert_eq!(c.num_children, 0);
        } else if c.kind != EMPTY {
            old += 1;
            old_sugar += c.agent_sugar as i64;
            children += c.num_children as i64;
        }
    }
    assert_eq!(old, survivors, "agents appeared or vanished outside birth and death");
    let gifts = expected + book.harvested - old_sugar;
    assert!(
        (endowments - book.births as i64..=endowments).contains(&gifts),
        "agents' sugar does not balance: {gifts} given for {endowments} endowed to {} children",
        book.births
    );
    assert_eq!(children - mothers_children, book.births as i64, "each birth counts for one mother");
    book
}

#[test]
fn dsl_matches_both_baselines_on_cpu() {
    let cfg = small(96, 80, 250);
    let dsl = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    let soa = simulate(Implementation::Soa, Backend::Cpu, &cfg);
    let aos = simulate(Implementation::Aos, Backend::Cpu, &cfg);
    assert_eq!(dsl.cells.len(), 96 * 80);
    assert!(dsl.cells == soa.cells, "dsl vs soa");
    assert!(soa.cells == aos.cells, "soa vs aos");
    assert_eq!(dsl.populations, soa.populations);
    assert_eq!(dsl.objects, Some((dsl.males(), dsl.females())));
    assert_eq!((soa.objects, aos.objects), (None, None));
    assert_eq!(dsl.fingerprint(), aos.fingerprint());
    // By now children were born (the simulation is not trivially empty).
    assert!(dsl.cells.iter().any(|c| c.kind == FEMALE && c.num_children > 0), "{:?}", dsl.populations);
    assert!(dsl.census().agents() > 0);
}

#[test]
fn the_same_seed_gives_the_same_world_and_another_seed_another() {
    let cfg = small(32, 24, 30);
    let a = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    let b = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    let c = simulate(Implementation::Dynasoar, Backend::Cpu, &Config { seed: 7, ..cfg });
    assert_eq!(a.fingerprint(), b.fingerprint());
    assert_ne!(a.fingerprint(), c.fingerprint());
}

#[test]
fn invariants_and_sugar_accounting_hold_every_step_on_cpu() {
    let cfg = small(48, 40, 0);
    let (sim, _) = DslSim::new(options(Backend::Cpu), &cfg).unwrap();
    let start = check_invariants(&sim, &cfg);
    // The initial densities: 12% males, 15% females (give or take).
    let n = (cfg.width * cfg.height) as f64;
    assert!((start.males as f64 / n - 0.12).abs() < 0.03, "{start:?}");
    assert!((start.females as f64 / n - 0.15).abs() < 0.03, "{start:?}");
    let mut cells = sim.cells().unwrap();
    let mut total = StepBook::default();
    // Through the die-off, the recovery, the baby boom and the famine it causes.
    let mut peak = 0;
    for step in 1..=180 {
        sim.step().unwrap();
        sim.sync().unwrap();
        let next = sim.cells().unwrap();
        let book = check_step(&cells, &next, &cfg);
        (total.births, total.deaths, total.harvested) =
            (total.births + book.births, total.deaths + book.deaths, total.harvested + book.harvested);
        cells = next;
        if step % 10 == 0 {
            peak = peak.max(check_invariants(&sim, &cfg).agents());
        }
    }
    // Agents starved at first, then ate, and the survivors had many children.
    assert!(total.deaths > start.agents() / 2, "{total:?}");
    assert!(total.births > 200 && total.harvested > 0, "{total:?}");
    assert!(peak > start.agents() / 2, "the population never recovered: peak {peak}, {total:?}");
}

#[test]
fn baselines_step_by_step_match_the_dsl_and_book_all_sugar() {
    let cfg = small(40, 34, 0);
    let (dsl, _) = DslSim::new(options(Backend::Cpu), &cfg).unwrap();
    let (soa, _) = SoaSim::new(options(Backend::Cpu), &cfg).unwrap();
    let (aos, _) = AosSim::new(options(Backend::Cpu), &cfg).unwrap();
    let sims: [&dyn Simulation; 3] = [&dsl, &soa, &aos];
    let mut last: Option<Vec<CellState>> = None;
    for step in 0..160 {
        let states: Vec<Vec<CellState>> = sims.iter().map(|s| s.cells().unwrap()).collect();
        assert!(states[0] == states[1] && states[1] == states[2], "implementations differ at step {step}");
        if let Some(before) = &last {
            check_step(before, &states[1], &cfg);
        }
        last = Some(states.into_iter().nth(1).unwrap());
        for s in sims {
            s.step().unwrap();
        }
    }
}

#[test]
fn lonely_agents_starve_or_age_and_nobody_is_born() {
    // Only males: nobody mates; every agent dies by step `max_age` at the latest.
    let cfg = Config { prob_male: 0.3, prob_female: 0.0, max_age: 30, ..small(24, 24, 0) };
    let (sim, _) = DslSim::new(options(Backend::Cpu), &cfg).unwrap();
    let start = check_invariants(&sim, &cfg);
    assert!(start.males > 100 && start.females == 0);
    let mut cells = sim.cells().unwrap();
    for _ in 0..cfg.max_age {
        sim.step().unwrap();
        let next = sim.cells().unwrap();
        assert_eq!(check_step(&cells, &next, &cfg).births, 0);
        cells = next;
    }
    assert_eq!(check_invariants(&sim, &cfg).agents(), 0);
    assert_eq!(sim.runtime().count::<Agent>().unwrap(), 0);
}

#[test]
fn sugar_grows_and_diffuses_without_agents() {
    let cfg = Config { prob_male: 0.0, prob_female: 0.0, ..small(30, 20, 0) };
    let (sim, _) = DslSim::new(options(Backend::Cpu), &cfg).unwrap();
    let mut cells = sim.cells().unwrap();
    assert!(cells.iter().all(|c| c.sugar == 0 && c.kind == EMPTY));
    let growing = cells.iter().filter(|c| c.grow_rate > 0).count();
    assert!(growing > 0 && growing < cells.len() / 4, "{growing} of {} cells grow", cells.len());
    for _ in 0..40 {
        sim.step().unwrap();
        let next = sim.cells().unwrap();
        let book = check_step(&cells, &next, &cfg);
        assert_eq!((book.births, book.deaths, book.harvested), (0, 0, 0));
        cells = next;
    }
    // Diffusion spread sugar beyond the growing cells, and nothing exceeds what it can hold.
    let sweet = cells.iter().filter(|c| c.sugar > 0).count();
    assert!(sweet > 2 * growing, "{sweet} cells with sugar, {growing} growing");
    let most = cells.iter().map(|c| c.sugar).max().unwrap();
    assert!(most <= cfg.sugar_capacity as i32 + 24 * cfg.max_sugar_diffusion as i32 / 8, "{most}");
}

#[test]
fn run_renders_frames_and_reports_populations() {
    let dir = std::env::temp_dir().join(format!("dynasoar-sugarscape-test-{}", std::process::id()));
    let args = RenderArgs { render: Some(dir.clone()), render_every: 4, gif: true, render_width: 64 };
    let mut recorder = Recorder::new(&args).unwrap();
    let cfg = small(30, 20, 10);
    let o = run(Implementation::Dynasoar, options(Backend::Cpu), &cfg, &mut recorder, false).unwrap();
    assert_eq!(recorder.finish().unwrap(), 4, "frames 0, 4, 8 and 10");
    let steps: Vec<u32> = o.populations.iter().map(|p| p.step).collect();
    assert_eq!(steps, [0, 4, 8, 10]);
    assert_eq!(o.populations.last().unwrap(), &o.census());
    assert_eq!(o.checksum(), o.males() + 2 * o.females());
    let png = std::fs::read(dir.join("frame_000010.png")).unwrap();
    let be = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    assert_eq!((be(16), be(20)), (60, 40), "2 pixels per cell (PNG header: width, height)");
    assert!(dir.join("animation.gif").exists());
    // Rendering does not change the simulation.
    let plain = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    assert_eq!(plain.fingerprint(), o.fingerprint());
    assert_eq!(fingerprint(&plain.cells), o.fingerprint());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_configurations_are_errors() {
    let bad = [
        Config { width: 0, ..small(8, 8, 1) },
        Config { height: 0, ..small(8, 8, 1) },
        Config { prob_male: 0.6, prob_female: 0.5, ..small(8, 8, 1) },
        Config { prob_male: -0.1, ..small(8, 8, 1) },
        Config { prob_female: f32::NAN, ..small(8, 8, 1) },
        Config { diffusion_rate: 1.5, ..small(8, 8, 1) },
        Config { max_vision: 0, ..small(8, 8, 1) },
        Config { max_vision: 3, ..small(8, 8, 1) },
        Config { max_age: 0, ..small(8, 8, 1) },
        Config { max_endowment: 0, ..small(8, 8, 1) },
        Config { max_children: 1, ..small(8, 8, 1) },
        Config { sugar_capacity: u32::MAX, ..small(8, 8, 1) },
        Config { heap_bytes: Some(0), ..small(8, 8, 1) },
    ];
    for cfg in bad {
        assert!(cfg.validate().is_err(), "{cfg:?}");
        for implementation in [Implementation::Soa, Implementation::Dynasoar] {
            let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
            assert!(run(implementation, options(Backend::Cpu), &cfg, &mut recorder, false).is_err());
        }
    }
    // A heap too small for the grid is an error that says so, not a hang or a panic.
    let cfg = Config { heap_bytes: Some(1 << 20), ..small(256, 256, 5) };
    let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
    let Err(err) = run(Implementation::Dynasoar, options(Backend::Cpu), &cfg, &mut recorder, false) else {
        panic!("a 1 MiB heap held {} cells", cfg.cells());
    };
    assert!(format!("{err:#}").contains("heap"), "{err:#}");
}

#[test]
fn rules_window_geometry() {
    // Ranks run row by row over the 5x5 window; mirrors reverse the offset.
    assert_eq!((rank(-2, -2), rank(0, 0), rank(2, 2), rank(1, 0)), (0, 12, 24, 13));
    for r in 0..WINDOW {
        let (dx, dy) = ((r % 5) as i32 - 2, (r / 5) as i32 - 2);
        assert_eq!(rank(dx, dy), r);
        assert_eq!(mirror(r), rank(-dx, -dy));
    }
    // The window stays inside the grid (no wrapping), skips the cell itself, honours the
    // radius, and `cell_at` inverts it.
    let (w, h) = (7, 6);
    for cell in 0..w * h {
        for radius in 1..=2 {
            let mut seen = Vec::new();
            for_each_in_window(w, h, cell, radius, |r, n| {
                assert_eq!(cell_at(cell, r, w), n);
                assert_eq!(cell_at(n, mirror(r), w), cell, "the mirror leads back");
                let (dx, dy) = ((n % w) as i32 - (cell % w) as i32, (n / w) as i32 - (cell / w) as i32);
                assert_eq!(rank(dx, dy), r);
                assert!(dx.unsigned_abs() <= radius && dy.unsigned_abs() <= radius);
                seen.push(r);
            });
            assert!(seen.windows(2).all(|p| p[0] < p[1]), "in rank order");
            let (x, y) = (cell % w, cell / w);
            let span = |v: u32, max: u32| (v.saturating_sub(radius)..=(v + radius).min(max - 1)).count();
            assert_eq!(seen.len(), span(x, w) * span(y, h) - 1, "cell {cell}, radius {radius}");
        }
    }
}

#[test]
fn rules_choices_and_keys() {
    let mut rng = Rng::new(1, 2);
    let before = rng;
    assert_eq!(choose(0, &mut rng), None);
    assert_eq!(rng, before, "no candidates: no random number drawn");
    let mut seen = [0u32; 25];
    for _ in 0..6000 {
        seen[choose(0b1_0000_0000_0001_0000_0010_0001, &mut rng).unwrap() as usize] += 1;
    }
    for (r, &k) in seen.iter().enumerate() {
        let offered = [0, 5, 12, 24].contains(&r);
        assert!(if offered { k > 1300 } else { k == 0 }, "rank {r}: {k} of 6000");
    }
    // Moves go to the free cells with the most sugar (empty cells count, with no sugar).
    let mut t = MoveTargets::default();
    t.offer(3, 0);
    assert_eq!((t.sugar, t.mask), (0, 1 << 3));
    t.offer(4, 7);
    t.offer(9, 2);
    t.offer(11, 7);
    assert_eq!((t.sugar, t.mask), (7, 1 << 4 | 1 << 11));
    // Proposals: the richest suitor wins, ties go to the smaller rank; keys are never zero.
    assert!(proposal_key(100, 20) > proposal_key(99, 0));
    assert!(proposal_key(100, 3) > proposal_key(100, 4));
    assert!(proposal_key(0, 24) > 0 && proposal_key(-5, 24) > 0);
    for r in 0..WINDOW {
        assert_eq!(proposer_rank(proposal_key(1234, r)), r);
    }
    assert!(NO_RANK as u32 >= WINDOW, "no rank is not a position");
}

#[test]
fn rules_sugar_life_and_inheritance() {
    let p = Config::default().params();
    assert_eq!(grow(100, 50, &p), 150);
    assert_eq!(grow(3490, 50, &p), 3500, "growth stops at the capacity");
    assert_eq!(grow(3600, 12, &p), 3500, "diffusion can overfill a cell; growth trims it");
    assert_eq!((diffusion(100, &p), diffusion(7, &p), diffusion(10_000, &p)), (12, 0, 60));
    assert_eq!((diffusion_share(60, &p), diffusion_share(7, &p)), (7, 0));
    assert_eq!(metabolize(5, 100, 30, 50), (6, 70, false));
    assert_eq!(metabolize(50, 100, 30, 50), (51, 70, true), "too old");
    assert_eq!(metabolize(5, 30, 30, 50), (6, 0, true), "out of sugar");
    let father = Traits { vision: 1, max_age: 70, endowment: 101, metabolism: 40 };
    let mother = Traits { vision: 2, max_age: 91, endowment: 60, metabolism: 31 };
    assert_eq!(
        child_traits(father, mother),
        Traits { vision: 1, max_age: 80, endowment: 80, metabolism: 35 }
    );
    // Initial cells and agents: the original's ranges.
    let (mut rates, mut kinds) = ([0u32; 4], [0u32; 3]);
    for i in 0..20_000 {
        let (mut rng, rate) = initial_cell(i, &p);
        rates[[0, 12, 25, 50].iter().position(|&r| r == rate).expect("a grow rate of the original")] += 1;
        let a = initial_agent(&mut rng, &p);
        kinds[a.kind as usize] += 1;
        if a.kind != EMPTY {
            let t = a.traits;
            assert_eq!(t.vision, 1);
            assert!((66..99).contains(&t.max_age) && (50..200).contains(&t.endowment), "{a:?}");
            assert!((26..79).contains(&t.metabolism) && (2..8).contains(&a.max_children), "{a:?}");
        }
    }
    assert!((rates[1] as f32 / 20_000.0 - 0.04).abs() < 0.01, "{rates:?}");
    assert!((rates[3] as f32 / 20_000.0 - 0.02).abs() < 0.01, "{rates:?}");
    assert!((kinds[MALE as usize] as f32 / 20_000.0 - 0.12).abs() < 0.01, "{kinds:?}");
    assert!((kinds[FEMALE as usize] as f32 / 20_000.0 - 0.15).abs() < 0.01, "{kinds:?}");
}

#[test]
fn gpu_gives_the_same_world_as_cpu() {
    if gpu_executor("gpu_gives_the_same_world_as_cpu").is_none() {
        return;
    }
    let cfg = small(192, 160, 150);
    let cpu = simulate(Implementation::Soa, Backend::Cpu, &cfg);
    assert!(cpu.census().agents() > 0);
    for implementation in [Implementation::Dynasoar, Implementation::Soa, Implementation::Aos] {
        let gpu = simulate(implementation, Backend::Cuda, &cfg);
        assert!(gpu.cells == cpu.cells, "{} on the GPU differs from the CPU", implementation.name());
        assert_eq!(gpu.populations, cpu.populations);
    }
}

#[test]
fn gpu_invariants_and_sugar_accounting_hold() {
    if gpu_executor("gpu_invariants_and_sugar_accounting_hold").is_none() {
        return;
    }
    let cfg = small(512, 384, 0);
    let (sim, _) = DslSim::new(options(Backend::Cuda), &cfg).unwrap();
    let (soa, _) = SoaSim::new(options(Backend::Cuda), &cfg).unwrap();
    let mut history = vec![check_invariants(&sim, &cfg)];
    for round in 0..12 {
        for _ in 0..14 {
            sim.step().unwrap();
            soa.step().unwrap();
        }
        // One step checked in detail per round.
        let before = sim.cells().unwrap();
        sim.step().unwrap();
        soa.step().unwrap();
        check_step(&before, &sim.cells().unwrap(), &cfg);
        history.push(check_invariants(&sim, &cfg));
        let (a, b) = (sim.cells().unwrap(), soa.cells().unwrap());
        assert_eq!(fingerprint(&a), fingerprint(&b), "DSL and SOA differ after {} steps", 15 * (round + 1));
    }
    let agents: HashSet<u64> = history.iter().map(|p| p.agents()).collect();
    assert!(agents.len() > 6, "{history:?}");
}

#[test]
fn gpu_large_grid_matches_the_baseline() {
    if gpu_executor("gpu_large_grid_matches_the_baseline").is_none() {
        return;
    }
    // A quarter of the benchmark's grid, through the die-off, the baby boom and the famine.
    let cfg = small(850, 850, 300);
    let dsl = simulate(Implementation::Dynasoar, Backend::Cuda, &cfg);
    let soa = simulate(Implementation::Soa, Backend::Cuda, &cfg);
    let aos = simulate(Implementation::Aos, Backend::Cuda, &cfg);
    assert_eq!(dsl.fingerprint(), soa.fingerprint());
    assert_eq!(aos.fingerprint(), soa.fingerprint());
    assert_eq!(dsl.objects, Some((soa.males(), soa.females())));
    assert!(dsl.total > std::time::Duration::ZERO && dsl.enumeration < dsl.total);
}
