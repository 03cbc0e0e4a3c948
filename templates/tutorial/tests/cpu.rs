//! Runs the app on the CPU backend: no grain of dust is lost or made up, and the pictures are
//! written.
use std::process::Command;

#[test]
fn every_grain_is_flying_or_swallowed_and_the_pictures_are_drawn() {
    let dir = std::env::temp_dir().join(format!("stardust-test-{}", std::process::id()));
    let output = Command::new(env!("CARGO_BIN_EXE_stardust"))
        .args(["--backend", "cpu", "--steps", "100", "--stars", "5", "--render"])
        .arg(&dir)
        .output()
        .expect("run the app");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&output.stderr));

    // "after 100 steps: 2000 grains emitted, S swallowed, F flying"
    let numbers: Vec<u64> = stdout
        .lines()
        .next()
        .unwrap()
        .split(' ')
        .filter_map(|w| w.trim_end_matches(',').parse().ok())
        .collect();
    let [steps, emitted, swallowed, flying] = numbers[..] else { panic!("{stdout}") };
    assert_eq!((steps, emitted), (100, 5 * u64::from(stardust::EMIT) * 100), "{stdout}");
    assert_eq!(swallowed + flying, emitted, "{stdout}");
    assert!(swallowed > 0 && flying > 0, "{stdout}");

    let gif = image::open(dir.join("last.png")).expect("last.png").to_rgba8();
    assert_eq!(gif.dimensions(), (256, 256));
    let frames = std::fs::read(dir.join("stardust.gif")).expect("stardust.gif");
    assert!(frames.starts_with(b"GIF89a"), "not a GIF");
    std::fs::remove_dir_all(&dir).unwrap();
}
