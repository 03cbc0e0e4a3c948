//! Generations: the DSL version and both baselines compute exactly the grid of a plain host
//! reference, step by step, on the benchmark's bursts and on random soups, under the benchmark
//! rule and others (the model is deterministic); dying cells count down and vanish on
//! schedule; Conway's rule reproduces the Game of Life; the DSL's grid and objects stay
//! consistent while cells are created and freed every step; bad input is a clear error; and
//! the GPU computes the same grid as the CPU.

use dynasoar::host::{Backend, ExecutorOptions};
use dynasoar_examples::Implementation;
use dynasoar_examples::game_of_life::reference_run;
use dynasoar_examples::generation::{
    AosSim, Config, DslSim, Outcome, Pattern, Reference, Simulation, SoaSim, burst_pattern, parse_rule,
    pattern_from_spec, rule_name, run,
};
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_models::generation::{ALIVE, DEAD, Rule, config, next_state};
use dynasoar_tests::gpu_executor;

fn options(backend: Backend) -> ExecutorOptions {
    ExecutorOptions { backend, cpu_threads: Some(4), quiet: true, ..Default::default() }
}

fn simulate(implementation: Implementation, backend: Backend, cfg: &Config) -> Outcome {
    let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
    run(implementation, options(backend), cfg, &mut recorder, false)
        .unwrap_or_else(|e| panic!("{} after {} steps: {e:#}", implementation.name(), cfg.steps))
}

fn with_rule(pattern: Pattern, rule: Rule, steps: u32) -> Config {
    Config { steps, rule, ..Config::new(pattern) }
}

/// Step all three implementations and the reference together, comparing every step and
/// checking the DSL's objects every `verify_every` steps.
fn lockstep(cfg: &Config, steps: u32, verify_every: u32) -> Vec<u16> {
    let (dsl, _) = DslSim::new(options(Backend::Cpu), cfg).unwrap();
    let (soa, _) = SoaSim::new(options(Backend::Cpu), cfg).unwrap();
    let (aos, _) = AosSim::new(options(Backend::Cpu), cfg).unwrap();
    let sims: [(&str, &dyn Simulation); 3] = [("dsl", &dsl), ("soa", &soa), ("aos", &aos)];
    let mut reference = Reference::new(&cfg.pattern, cfg.rule);
    dsl.verify().unwrap();
    for step in 1..=steps {
        reference.step();
        for (name, sim) in &sims {
            sim.step().unwrap();
            let states = sim.states().unwrap();
            if states != reference.states() {
                let i = (0..states.len()).find(|&i| states[i] != reference.states()[i]).unwrap();
                panic!(
                    "{name} differs from the reference after {step} steps ({} on {}): cell {i} is {}, \
                     should be {}",
                    cfg.pattern.name,
                    rule_name(&cfg.rule),
                    states[i],
                    reference.states()[i]
                );
            }
        }
        if step % verify_every == 0 {
            let (alive, _) = dsl.verify().unwrap();
            assert_eq!(alive, reference.states().iter().filter(|&&s| s == ALIVE).count() as u64);
        }
    }
    reference.states().to_vec()
}

#[test]
fn bursts_under_the_benchmark_rule_match_the_reference_step_by_step() {
    let pattern = burst_pattern(96, 80, 12, 48).unwrap();
    let cfg = with_rule(pattern, Rule::default(), 0);
    let end = lockstep(&cfg, 45, 9);
    let dying = end.iter().filter(|&&s| s > ALIVE).count();
    let alive = end.iter().filter(|&&s| s == ALIVE).count();
    assert!(alive > 100 && dying > 300, "{alive} alive, {dying} dying");
}

#[test]
fn short_dying_chains_match_the_reference_through_whole_life_cycles() {
    // Few dying states: cells die, count down, turn dead and are born again within the test.
    for (rule, density) in [("S0235678/B3468/D4", 0.3), ("S23/B36/D2", 0.35), ("S1358/B357/D6", 0.25)] {
        let rule = parse_rule(rule).unwrap();
        let pattern = Pattern::random(40, 36, density, 11).unwrap();
        lockstep(&with_rule(pattern, rule, 0), 40, 8);
    }
}

#[test]
fn conway_rule_is_the_game_of_life() {
    let pattern = Pattern::random(64, 48, 0.35, 5).unwrap();
    let cfg = with_rule(pattern.clone(), Rule::CONWAY, 60);
    let o = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    let alive: Vec<u32> = (0..o.states.len() as u32).filter(|&i| o.states[i as usize] == ALIVE).collect();
    assert_eq!(alive, reference_run(&pattern, 60), "the Game of Life app's reference disagrees");
    assert_eq!(o.dying(), 0);
    assert!(o.states.iter().all(|&s| s == DEAD || s == ALIVE));
    // A glider still glides.
    let glider = Pattern::glider(16, 16).unwrap();
    let o = simulate(Implementation::Soa, Backend::Cpu, &with_rule(glider.clone(), Rule::CONWAY, 8));
    let moved: Vec<u32> = glider.live.iter().map(|c| c + 2 * 16 + 2).collect();
    let alive: Vec<u32> = (0..256).filter(|&i| o.states[i as usize] == ALIVE).collect();
    assert_eq!(alive, moved);
}

#[test]
fn an_isolated_cell_dies_counts_down_and_vanishes() {
    // S23: alone, the cell dies at once; it is then dying for 3 steps and dead after them.
    let rule = parse_rule("S23/B3/D3").unwrap();
    let pattern = Pattern::from_cells("one", 9, 9, [(4, 4)]).unwrap();
    let cfg = with_rule(pattern, rule, 0);
    let (sim, _) = DslSim::new(options(Backend::Cpu), &cfg).unwrap();
    // (alive, candidates) and the state of the cell after each step: 8 dead candidates around
    // the new cell; they vanish once it no longer lives; the dying candidate stays until it is
    // dead and nothing is around it.
    let expected = [
        ((1, 8), ALIVE),
        ((0, 9), ALIVE + 1),
        ((0, 1), ALIVE + 2),
        ((0, 1), ALIVE + 3),
        ((0, 1), DEAD),
        ((0, 0), DEAD),
        ((0, 0), DEAD),
    ];
    for (step, &(objects, state)) in expected.iter().enumerate() {
        if step > 0 {
            sim.step().unwrap();
        }
        assert_eq!(sim.verify().unwrap(), objects, "objects after {step} steps");
        let states = sim.states().unwrap();
        assert_eq!(states[4 * 9 + 4], state, "state after {step} steps");
        assert!(states.iter().enumerate().all(|(i, &s)| i == 40 || s == DEAD));
    }
    // The benchmark rule survives with 0 neighbours: the cell lives on.
    let cfg = Config { rule: Rule::default(), ..cfg };
    let (sim, _) = DslSim::new(options(Backend::Cpu), &cfg).unwrap();
    for _ in 0..10 {
        sim.step().unwrap();
    }
    assert_eq!(sim.verify().unwrap(), (1, 8));
}

#[test]
fn the_rule_functions_follow_the_definition() {
    let rule = Rule::default();
    assert_eq!(rule_name(&rule), "S0235678/B3468/D255");
    assert_eq!(parse_rule("S0235678/B3468/D255").unwrap(), rule);
    assert_eq!(parse_rule("S23/B3").unwrap(), Rule::CONWAY);
    for n in 0..=8 {
        let survives = [0, 2, 3, 5, 6, 7, 8].contains(&n);
        let born = [3, 4, 6, 8].contains(&n);
        assert_eq!(next_state(ALIVE, &rule, || n), if survives { ALIVE } else { ALIVE + 1 }, "{n}");
        assert_eq!(next_state(DEAD, &rule, || n), if born { ALIVE } else { DEAD }, "{n}");
    }
    let never = || -> u32 { panic!("a dying cell does not count its neighbours") };
    assert_eq!(next_state(ALIVE + 1, &rule, never), ALIVE + 2);
    assert_eq!(next_state(ALIVE + 255, &rule, never), DEAD);
    assert_eq!(next_state(ALIVE, &Rule::CONWAY, || 1), DEAD, "no dying states: dead at once");
}

#[test]
fn the_burst_pattern_is_the_original() {
    // One burst: arms of 2 * 100 + 1 and 2 * 95 cells, and a diamond of 62 cells.
    let one = burst_pattern(300, 300, 100, 400).unwrap();
    assert_eq!(one.live.len(), 453);
    let bench = Config::benchmark().unwrap();
    assert_eq!((bench.pattern.width, bench.pattern.height, bench.steps), (5000, 5000, 25_000));
    assert_eq!(bench.pattern.live.len(), 12 * 12 * 453, "bursts every 400 cells from 110 to 4510");
    assert_eq!(bench.pattern.name, "burst");
    let spec = pattern_from_spec("burst:10:30", Some((100, 70)), 0).unwrap();
    assert_eq!(spec, burst_pattern(100, 70, 10, 30).unwrap());
    assert_eq!(spec.live.len(), 2 * (21 + 10 + 62), "two bursts with arms of 10 cells");
    // Symmetric under both reflections.
    let w = one.width;
    let mirrored = |f: &dyn Fn(u32, u32) -> (u32, u32)| {
        let mut v: Vec<u32> = one
            .live
            .iter()
            .map(|&c| {
                let (x, y) = f(c % w, c / w);
                y * w + x
            })
            .collect();
        v.sort_unstable();
        v
    };
    assert_eq!(mirrored(&|x, y| (220 - x, y)), one.live);
    assert_eq!(mirrored(&|x, y| (x, 220 - y)), one.live);
}

#[test]
fn run_renders_frames_and_agrees_across_implementations() {
    let dir = std::env::temp_dir().join(format!("dynasoar-generation-test-{}", std::process::id()));
    let args = RenderArgs { render: Some(dir.clone()), render_every: 5, gif: true, render_width: 120 };
    let mut recorder = Recorder::new(&args).unwrap();
    let cfg = with_rule(burst_pattern(60, 60, 10, 40).unwrap(), Rule::default(), 12);
    let o = run(Implementation::Dynasoar, options(Backend::Cpu), &cfg, &mut recorder, false).unwrap();
    assert_eq!(recorder.finish().unwrap(), 4, "frames 0, 5, 10 and 12");
    let png = std::fs::read(dir.join("frame_000012.png")).unwrap();
    let be = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
    assert_eq!((be(16), be(20)), (120, 120), "2 pixels per cell (PNG header: width, height)");
    assert!(dir.join("animation.gif").exists());
    std::fs::remove_dir_all(&dir).unwrap();
    let soa = simulate(Implementation::Soa, Backend::Cpu, &cfg);
    let aos = simulate(Implementation::Aos, Backend::Cpu, &cfg);
    assert_eq!(o.fingerprint(), soa.fingerprint());
    assert_eq!(aos.fingerprint(), soa.fingerprint());
    let (alive, candidates) = o.objects.unwrap();
    assert_eq!(alive, o.alive());
    assert!(candidates >= o.dying());
    assert!(o.total > std::time::Duration::ZERO && o.enumeration <= o.total);
}

#[test]
fn bad_input_is_an_error() {
    assert!(parse_rule("S23/B03").is_err(), "birth with 0 neighbours");
    assert!(parse_rule("S23/B3/D256").is_err());
    assert!(parse_rule("S29/B3").is_err());
    assert!(parse_rule("B3").is_err());
    assert!(parse_rule("S23/X3").is_err());
    assert!(pattern_from_spec("burst:4", Some((50, 50)), 0).is_err());
    assert!(pattern_from_spec("burst:x", Some((50, 50)), 0).is_err());
    assert!(pattern_from_spec("/no/such/pattern.pgm", None, 0).is_err());
    assert!(dynasoar_examples::generation::parse_size("0x10").is_err());
    let bad = Rule { birth: 0b1001, ..Rule::default() };
    let cfg = with_rule(Pattern::glider(8, 8).unwrap(), bad, 3);
    assert!(cfg.validate().is_err());
    let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
    assert!(run(Implementation::Soa, options(Backend::Cpu), &cfg, &mut recorder, false).is_err());
    // A heap too small for the grid is an error that says so, not a hang or a panic.
    let cfg = Config {
        heap_bytes: Some(1 << 20),
        ..with_rule(Pattern::random(400, 400, 0.4, 1).unwrap(), Rule::default(), 3)
    };
    match run(Implementation::Dynasoar, options(Backend::Cpu), &cfg, &mut recorder, false) {
        Ok(_) => panic!("160,000 cells fit into a 1 MiB heap"),
        Err(err) => assert!(format!("{err:#}").contains("heap"), "{err:#}"),
    }
}

#[test]
fn gpu_gives_the_same_grid_as_cpu() {
    if gpu_executor("gpu_gives_the_same_grid_as_cpu").is_none() {
        return;
    }
    for (pattern, steps) in [
        (Pattern::random(256, 192, 0.3, 3).unwrap(), 120),
        (burst_pattern(600, 600, config::BURST_LENGTH, config::BURST_SPACING).unwrap(), 300),
    ] {
        let cfg = with_rule(pattern, Rule::default(), steps);
        let cpu = simulate(Implementation::Soa, Backend::Cpu, &cfg);
        for implementation in [Implementation::Dynasoar, Implementation::Soa, Implementation::Aos] {
            let gpu = simulate(implementation, Backend::Cuda, &cfg);
            assert!(gpu.states == cpu.states, "{} on the GPU differs from the CPU", implementation.name());
        }
    }
}

#[test]
fn gpu_invariants_hold_while_the_grid_fills_up() {
    if gpu_executor("gpu_invariants_hold_while_the_grid_fills_up").is_none() {
        return;
    }
    // The benchmark's bursts on a 1200 x 1200 grid grow into most of it: objects are created
    // and freed by the hundred thousand every step; checked against the SOA baseline.
    let cfg = with_rule(burst_pattern(1200, 1200, 100, 400).unwrap(), Rule::default(), 0);
    let (dsl, _) = DslSim::new(options(Backend::Cuda), &cfg).unwrap();
    let (soa, _) = SoaSim::new(options(Backend::Cuda), &cfg).unwrap();
    let mut counts = Vec::new();
    for round in 1..=6 {
        for _ in 0..100 {
            dsl.step().unwrap();
            soa.step().unwrap();
        }
        counts.push(dsl.verify().unwrap());
        assert!(
            dsl.states().unwrap() == soa.states().unwrap(),
            "DSL and SOA differ after {} steps",
            100 * round
        );
    }
    assert!(counts.windows(2).any(|w| w[0] != w[1]), "{counts:?}");
}
