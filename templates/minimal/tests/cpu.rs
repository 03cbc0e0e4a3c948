//! Runs the app on the CPU backend and checks its result against a sequential simulation of
//! the same rules.
use std::process::Command;

use dynasoar::prelude::Rng;
use minimal::LIFETIME;

/// The model's rules, one walker after another: (walkers, total distance from 0).
fn reference(walkers: u64, steps: u32, seed: u64) -> (usize, u64) {
    let mut now: Vec<(i32, u32, Rng)> = (0..walkers).map(|i| (0, 0, Rng::new(seed, i))).collect();
    for _ in 0..steps {
        let mut next = Vec::new();
        for (pos, age, mut rng) in now {
            let pos = pos + if rng.below(2) == 0 { -1 } else { 1 };
            if rng.below(LIFETIME) == 0 {
                next.push((pos, 0, Rng::new(rng.next_u64(), 0)));
            }
            if age + 1 < LIFETIME {
                next.push((pos, age + 1, rng));
            }
        }
        now = next;
    }
    (now.len(), now.iter().map(|w| u64::from(w.0.unsigned_abs())).sum())
}

#[test]
fn the_app_on_the_cpu_matches_a_sequential_simulation() {
    let (walkers, steps, seed) = (2_000, 60, 7);
    let output = Command::new(env!("CARGO_BIN_EXE_minimal"))
        .args(["--backend", "cpu", "--steps", &steps.to_string()])
        .args(["--walkers", &walkers.to_string(), "--seed", &seed.to_string()])
        .output()
        .expect("run the app");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let (count, distance) = reference(walkers, steps, seed);
    assert!(count > 0, "the reference died out: pick another seed");
    let expected = format!("after {steps} steps: {count} walkers, total distance from 0: {distance}");
    assert_eq!(stdout.trim(), expected);
}
