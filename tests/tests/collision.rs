//! Collision: bodies merge and disappear, total mass and the count of initial bodies are kept,
//! a body absorbs at most one other per step, the DSL version and both baselines merge the
//! same bodies, and the GPU agrees with the CPU.

use std::collections::BTreeSet;

use dynasoar::host::{Backend, ExecutorOptions};
use dynasoar::math::Vec2;
use dynasoar_examples::Implementation;
use dynasoar_examples::collision::{Config, Outcome, run};
use dynasoar_examples::render::{Recorder, RenderArgs};
use dynasoar_models::collision::{Nearest, Physics, heavier, merge};
use dynasoar_tests::gpu_executor;

const ALL: [Implementation; 3] = [Implementation::Dynasoar, Implementation::Soa, Implementation::Aos];

fn options(backend: Backend) -> ExecutorOptions {
    ExecutorOptions { backend, cpu_threads: Some(4), quiet: true, ..Default::default() }
}

fn simulate(implementation: Implementation, backend: Backend, cfg: &Config) -> Outcome {
    let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
    run(implementation, options(backend), cfg, &mut recorder, false).unwrap()
}

/// `bodies` bodies with merge threshold `threshold` (denser than the benchmark's, so that small
/// runs merge a lot).
fn dense(bodies: u32, steps: u32, threshold: f32) -> Config {
    Config {
        bodies,
        steps,
        physics: Physics { merge_threshold: threshold, ..Physics::default() },
        ..Config::default()
    }
}

/// The invariants every run keeps: ids unique, every initial body accounted for exactly once,
/// total mass kept up to float rounding, no body lighter than what it holds.
fn check_invariants(what: &str, cfg: &Config, o: &Outcome) {
    let ids: BTreeSet<u32> = o.bodies.iter().map(|b| b.id).collect();
    assert_eq!(ids.len(), o.bodies.len(), "{what}: duplicate ids");
    assert!(ids.iter().all(|&id| id < cfg.bodies), "{what}: unknown id");
    assert_eq!(o.total_members(), cfg.bodies as u64, "{what}: initial bodies lost or counted twice");
    let (start, end) = (cfg.initial_mass(), o.total_mass());
    assert!(((end - start) / start).abs() < 1e-6, "{what}: mass {start} became {end}");
    let initial = cfg.initial_bodies();
    for b in &o.bodies {
        assert!(b.members >= 1, "{what}: body {} holds no body", b.id);
        assert!(b.mass >= initial[b.id as usize].2, "{what}: body {} lost mass", b.id);
        assert!(b.pos.x.is_finite() && b.pos.y.is_finite() && b.vel.x.is_finite(), "{what}: not finite");
    }
}

#[test]
fn rules_pick_the_nearest_heavier_body_and_merge_inelastically() {
    // Heavier: by mass, then by id; never itself.
    assert!(heavier(2.0, || unreachable!(), 1.0, 7));
    assert!(!heavier(1.0, || unreachable!(), 2.0, 7));
    assert!(heavier(1.0, || 8, 1.0, 7) && !heavier(1.0, || 7, 1.0, 7) && !heavier(1.0, || 6, 1.0, 7));
    // Nearest within the threshold; equal distances: the smaller id; the threshold is exclusive.
    let mut n = Nearest::new(0.5);
    assert!(!n.offer(0.25, || 1) && !n.found(), "exactly on the threshold");
    assert!(!n.offer(f32::NAN, || 1) && !n.offer(0.3, || 1));
    assert!(n.offer(0.1, || 5) && n.offer(0.05, || 9) && n.offer(0.05, || 3));
    assert!(!n.offer(0.05, || 4) && !n.offer(0.06, || 0));
    assert_eq!((n.dist2, n.id), (0.05, 3));
    // Perfectly inelastic: masses add, momentum and centre of mass are kept.
    let (pos, vel, mass) =
        merge((Vec2::new(0.0, 0.0), Vec2::new(1.0, 0.0), 3.0), Vec2::new(4.0, 0.0), Vec2::new(0.0, 2.0), 1.0);
    assert_eq!((pos, vel, mass), (Vec2::new(1.0, 0.0), Vec2::new(0.75, 0.5), 4.0));
}

/// `prepare_merge` splits its search among lanes: the best of each part, combined with
/// `prefers` in any grouping, is the candidate one search over all bodies finds.
#[test]
fn the_nearest_of_parts_is_the_nearest_of_all() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for round in 0..500 {
        // Squared distances from a few values, so that ties between ids occur; those of 0.07
        // lie beyond the threshold (0.25^2 = 0.0625).
        let candidates: Vec<(f32, u32)> =
            (0..(next() % 40) as u32).map(|id| ((next() % 8) as f32 * 0.01, (id * 7 + round) % 97)).collect();
        let search = |part: &[(f32, u32)]| {
            let mut n = Nearest::new(0.25);
            for &(d, id) in part {
                n.offer(d, || id);
            }
            n
        };
        let all = search(&candidates);
        for parts in [2usize, 3, 8] {
            let split: Vec<Nearest> = (0..parts)
                .map(|p| search(&candidates.iter().copied().skip(p).step_by(parts).collect::<Vec<_>>()))
                .collect();
            let best = split.into_iter().reduce(|a, b| if a.prefers(&b) { b } else { a }).unwrap();
            assert_eq!((best.dist2, best.id), (all.dist2, all.id), "round {round}, {parts} parts");
        }
    }
}

#[test]
fn bodies_merge_and_mass_and_bodies_are_kept() {
    let cfg = dense(800, 30, 0.04);
    let o = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    check_invariants("dynasoar", &cfg, &o);
    assert!(o.bodies.len() < 600, "only {} of 800 bodies merged", 800 - o.bodies.len());
    assert!(o.bodies.iter().any(|b| b.members >= 3), "no body merged more than once over 30 steps");
    // Without merges nothing disappears.
    let none = simulate(Implementation::Dynasoar, Backend::Cpu, &dense(300, 5, 0.0));
    assert_eq!(none.bodies.len(), 300);
    assert!(none.bodies.iter().all(|b| b.members == 1));
}

#[test]
fn one_step_merges_disjoint_pairs_only() {
    // Many bodies within reach of several heavier ones: bids compete.
    let cfg = dense(400, 1, 0.15);
    let initial = cfg.initial_bodies();
    for implementation in ALL {
        let o = simulate(implementation, Backend::Cpu, &cfg);
        let what = implementation.name();
        check_invariants(what, &cfg, &o);
        // Each survivor absorbed at most one body, and an absorbed body did not absorb one itself.
        assert!(o.bodies.iter().all(|b| b.members <= 2), "{what}: a body absorbed two in one step");
        let removed: Vec<u32> = {
            let alive: BTreeSet<u32> = o.bodies.iter().map(|b| b.id).collect();
            (0..cfg.bodies).filter(|i| !alive.contains(i)).collect()
        };
        assert!(removed.len() > 50, "{what}: only {} merges", removed.len());
        assert_eq!(removed.len(), o.bodies.iter().filter(|b| b.members == 2).count(), "{what}");
        // The mass each survivor gained is the mass of exactly one removed body.
        let mut gained: Vec<f32> =
            o.bodies.iter().filter(|b| b.members == 2).map(|b| b.mass - initial[b.id as usize].2).collect();
        let mut lost: Vec<f32> = removed.iter().map(|&i| initial[i as usize].2).collect();
        gained.sort_by(f32::total_cmp);
        lost.sort_by(f32::total_cmp);
        for (g, l) in gained.iter().zip(&lost) {
            assert!((g - l).abs() < 1e-4 * l, "{what}: gained {g} where a body of {l} was removed");
        }
        // A removed body was never heavier than the one it merged into.
        for b in o.bodies.iter().filter(|b| b.members == 2) {
            let own = initial[b.id as usize].2;
            assert!(b.mass - own <= own, "{what}: body {} absorbed a heavier body", b.id);
        }
    }
}

#[test]
fn dsl_and_baselines_merge_the_same_bodies_on_cpu() {
    let cfg = dense(600, 20, 0.04);
    let dsl = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    let soa = simulate(Implementation::Soa, Backend::Cpu, &cfg);
    let aos = simulate(Implementation::Aos, Backend::Cpu, &cfg);
    for (what, o) in [("dynasoar", &dsl), ("soa", &soa), ("aos", &aos)] {
        check_invariants(what, &cfg, o);
    }
    assert!(dsl.bodies.len() < 500, "too few merges to compare: {} bodies left", dsl.bodies.len());
    // Each sums forces in its own order (the AOS baseline by index, the SOA baseline in 32
    // strided parts, the DSL in heap order): the same merges, positions equal up to rounding.
    for (what, o) in [("dsl", &dsl), ("aos", &aos)] {
        assert_eq!(o.bodies.len(), soa.bodies.len(), "{what} vs soa: body count");
        for (d, s) in o.bodies.iter().zip(&soa.bodies) {
            assert_eq!((d.id, d.members, d.mass), (s.id, s.members, s.mass), "{what} vs soa");
            let at = (d.pos - s.pos).length();
            assert!(at < 1e-5, "{what} vs soa: body {} at {:?} / {:?}", d.id, d.pos, s.pos);
            assert!(
                (d.vel - s.vel).length() < 1e-7 + 1e-4 * s.vel.length(),
                "{what} vs soa: body {} velocity",
                d.id
            );
        }
    }
}

#[test]
fn merges_keep_momentum() {
    // Gravity is pairwise and merges are perfectly inelastic: momentum only changes at walls,
    // which no body reaches in these few steps.
    let cfg = dense(600, 4, 0.06);
    let start = simulate(Implementation::Dynasoar, Backend::Cpu, &Config { steps: 0, ..cfg });
    let end = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    assert_eq!(start.bodies.len(), 600);
    assert!(end.bodies.len() < 500, "too few merges: {} bodies left", end.bodies.len());
    assert!(end.bodies.iter().all(|b| b.pos.x.abs() < 1.0 && b.pos.y.abs() < 1.0), "a body reached a wall");
    let (p0, p1) = (start.momentum(), end.momentum());
    let scale: f64 = start.bodies.iter().map(|b| b.mass as f64 * b.vel.length() as f64).sum();
    let drift = ((p1.0 - p0.0).powi(2) + (p1.1 - p0.1).powi(2)).sqrt();
    assert!(drift < 1e-5 * scale, "momentum drifted by {drift} (scale {scale})");
}

#[test]
fn bad_settings_are_errors() {
    let mut recorder = Recorder::new(&RenderArgs::default()).unwrap();
    let mut attempt = |cfg: Config| {
        run(Implementation::Dynasoar, options(Backend::Cpu), &cfg, &mut recorder, false)
            .expect_err("a bad setting was accepted")
            .to_string()
    };
    assert!(attempt(Config { bodies: 0, ..Config::default() }).contains("bodies"));
    let nan = Physics { merge_threshold: f32::NAN, ..Physics::default() };
    assert!(attempt(Config { bodies: 10, physics: nan, ..Config::default() }).contains("threshold"));
    let small = Config { bodies: 20_000, steps: 1, heap_bytes: Some(1 << 20), ..Config::default() };
    assert!(attempt(small).contains("out of memory"));
}

#[test]
fn render_writes_frames_and_a_gif() {
    let dir = std::env::temp_dir().join(format!("dynasoar-collision-render-{}", std::process::id()));
    let args = RenderArgs { render: Some(dir.clone()), render_every: 2, gif: true, render_width: 64 };
    let mut recorder = Recorder::new(&args).unwrap();
    run(Implementation::Soa, options(Backend::Cpu), &dense(100, 5, 0.05), &mut recorder, false).unwrap();
    assert_eq!(recorder.finish().unwrap(), 3, "frames of steps 2, 4 and 5");
    for file in ["frame_000002.png", "frame_000004.png", "frame_000005.png", "animation.gif"] {
        assert!(dir.join(file).is_file(), "{file} missing");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Ids of the bodies that remain in `a` but not in `b` or the other way round.
fn differing_bodies(a: &Outcome, b: &Outcome) -> usize {
    let a: BTreeSet<u32> = a.bodies.iter().map(|b| b.id).collect();
    let b: BTreeSet<u32> = b.bodies.iter().map(|b| b.id).collect();
    a.symmetric_difference(&b).count()
}

#[test]
fn gpu_merges_the_same_bodies_as_cpu() {
    if gpu_executor("gpu_merges_the_same_bodies_as_cpu").is_none() {
        return;
    }
    let cfg = dense(2000, 20, 0.02);
    let cpu = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    check_invariants("cpu dynasoar", &cfg, &cpu);
    assert!(cpu.bodies.len() < 1900);
    for implementation in ALL {
        let gpu = simulate(implementation, Backend::Cuda, &cfg);
        let what = format!("gpu {}", implementation.name());
        check_invariants(&what, &cfg, &gpu);
        // Merges do not depend on timing; only float rounding (contracted multiply-adds, summation
        // order) can flip a pair that sits exactly at the threshold.
        let d = differing_bodies(&gpu, &cpu);
        assert!(d <= 5, "{what}: {d} bodies differ from the CPU run");
    }
}

#[test]
fn gpu_benchmark_density_keeps_invariants() {
    if gpu_executor("gpu_benchmark_density_keeps_invariants").is_none() {
        return;
    }
    // The benchmark's settings, fewer steps.
    let cfg = Config { steps: 40, ..Config::default() };
    let dsl = simulate(Implementation::Dynasoar, Backend::Cuda, &cfg);
    check_invariants("gpu dynasoar", &cfg, &dsl);
    assert!(dsl.bodies.len() < 35_000, "{} bodies left", dsl.bodies.len());
    let soa = simulate(Implementation::Soa, Backend::Cuda, &cfg);
    check_invariants("gpu soa", &cfg, &soa);
    let d = differing_bodies(&dsl, &soa);
    assert!(d <= 40, "gpu: {d} bodies differ between the DSL version and the SOA baseline");
}

/// `--fast-math` changes nothing on the CPU backend, where `math::fast` is exact (the SOA
/// baseline, whose order of the sums does not depend on where the workers put the bodies).
#[test]
fn fast_math_on_cpu_gives_the_exact_bodies() {
    let cfg = dense(500, 10, 0.02);
    let exact = simulate(Implementation::Soa, Backend::Cpu, &cfg);
    let fast = simulate(Implementation::Soa, Backend::Cpu, &Config { fast_math: true, ..cfg });
    assert_eq!(fast.bodies, exact.bodies);
    assert!(exact.bodies.len() < 500, "no merge: the comparison would show little");
}

/// On the GPU, with `--fast-math` every implementation keeps the invariants and merges the bodies
/// the exact CPU run merges (but for pairs that rounding flips at the threshold).
#[test]
fn gpu_fast_math_merges_the_same_bodies_as_cpu() {
    if gpu_executor("gpu_fast_math_merges_the_same_bodies_as_cpu").is_none() {
        return;
    }
    let cfg = dense(2000, 20, 0.02);
    let cpu = simulate(Implementation::Dynasoar, Backend::Cpu, &cfg);
    let fast = Config { fast_math: true, ..cfg };
    for implementation in ALL {
        let gpu = simulate(implementation, Backend::Cuda, &fast);
        let what = format!("gpu {} fast", implementation.name());
        check_invariants(&what, &fast, &gpu);
        let d = differing_bodies(&gpu, &cpu);
        assert!(d <= 5, "{what}: {d} bodies differ from the exact CPU run");
    }
}
