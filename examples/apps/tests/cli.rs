//! The app binaries given bad inputs, on the CPU backend: each must end with a one-line error
//! that says what to do (exit 1, or 2 for arguments clap rejects), never with a panic or an
//! abort; and output into a closed pipe must end the program quietly. Sizes are tiny (the
//! tests run in the debug profile).

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The path of the app binary `name`: cargo's build of it, or (in the GPU bundle, whose
/// binaries moved) the one in `DYNASOAR_BIN_DIR`.
fn bin(name: &str) -> std::path::PathBuf {
    match std::env::var_os("DYNASOAR_BIN_DIR") {
        Some(dir) => std::path::Path::new(&dir).join(name),
        None => cargo_bin(name).into(),
    }
}

/// Cargo's build of the app binary `name`.
fn cargo_bin(name: &str) -> &'static str {
    match name {
        "nbody" => env!("CARGO_BIN_EXE_nbody"),
        "collision" => env!("CARGO_BIN_EXE_collision"),
        "barnes-hut" => env!("CARGO_BIN_EXE_barnes-hut"),
        "game-of-life" => env!("CARGO_BIN_EXE_game-of-life"),
        "generation" => env!("CARGO_BIN_EXE_generation"),
        "structure" => env!("CARGO_BIN_EXE_structure"),
        "sugarscape" => env!("CARGO_BIN_EXE_sugarscape"),
        "traffic" => env!("CARGO_BIN_EXE_traffic"),
        "wa-tor" => env!("CARGO_BIN_EXE_wa-tor"),
        "smoke" => env!("CARGO_BIN_EXE_smoke"),
        "field-access" => env!("CARGO_BIN_EXE_field-access"),
        "linux-scalability" => env!("CARGO_BIN_EXE_linux-scalability"),
        "sequential" => env!("CARGO_BIN_EXE_sequential"),
        other => panic!("no app binary {other}"),
    }
}

/// The simulation apps (those with `--render`, `--compare` and `--impl`).
const SIMULATIONS: [&str; 9] = [
    "nbody",
    "collision",
    "barnes-hut",
    "game-of-life",
    "generation",
    "structure",
    "sugarscape",
    "traffic",
    "wa-tor",
];

/// A command for `name` on the CPU backend, with the environment's app settings removed.
fn command(name: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(bin(name));
    cmd.args(args)
        .args(["--backend", "cpu", "--cpu-threads", "2"])
        .env_remove("DYNASOAR_BACKEND")
        .env_remove("DYNASOAR_ALLOCATOR")
        .stdin(Stdio::null());
    cmd
}

fn run(name: &str, args: &[&str]) -> Output {
    command(name, args).output().unwrap_or_else(|e| panic!("cannot run {name}: {e}"))
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// No panic, no abort, no death by a signal.
fn assert_clean(name: &str, args: &[&str], out: &Output) {
    let err = stderr(out);
    assert!(out.status.code().is_some(), "{name} {args:?} was killed by a signal: {err}");
    assert!(!err.contains("panicked"), "{name} {args:?} panicked: {err}");
    assert!(!err.contains("memory allocation of"), "{name} {args:?} aborted: {err}");
}

/// `name args` fails with exit code `code` and an error (on stderr) containing `message`.
#[track_caller]
fn assert_fails(name: &str, args: &[&str], code: i32, message: &str) {
    let out = run(name, args);
    assert_clean(name, args, &out);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(code), "{name} {args:?}: exit status; stderr: {err}");
    assert!(err.contains("error:"), "{name} {args:?}: no error line: {err}");
    assert!(err.contains(message), "{name} {args:?}: {err:?} does not say {message:?}");
}

/// `name args` succeeds; returns its output.
#[track_caller]
fn assert_succeeds(name: &str, args: &[&str]) -> Output {
    let out = run(name, args);
    assert_clean(name, args, &out);
    assert_eq!(out.status.code(), Some(0), "{name} {args:?} failed: {}", stderr(&out));
    out
}

/// A fresh empty directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dynasoar-cli-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("creating a scratch directory");
    dir
}

/// Address space (KiB) of the children of [`huge_baselines_fail_with_the_flag_to_make_smaller`]:
/// enough to start an app, far less than any of the sizes asks for.
const HUGE_TEST_ADDRESS_SPACE_KIB: u64 = 16 << 20;

/// `name args` in an address space of `kib` KiB (`ulimit -v`), which the apps count as all
/// the memory the host has if it is less than `MemAvailable`: the same result on any host,
/// whatever its memory.
fn run_limited(name: &str, args: &[&str], kib: u64) -> Output {
    let app = command(name, args);
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" \"$@\""))
        .arg(app.get_program())
        .args(app.get_args())
        .env_remove("DYNASOAR_BACKEND")
        .env_remove("DYNASOAR_ALLOCATOR")
        .stdin(Stdio::null());
    cmd.output().unwrap_or_else(|e| panic!("cannot run {name} under ulimit -v: {e}"))
}

/// `name args` fails (exit 1) with an error naming `message`, in an address space too small
/// for the size asked for (see [`run_limited`]).
#[track_caller]
fn assert_too_large(name: &str, args: &[&str], message: &str) {
    let out = run_limited(name, args, HUGE_TEST_ADDRESS_SPACE_KIB);
    assert_clean(name, args, &out);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{name} {args:?}: exit status; stderr: {err}");
    assert!(err.contains("error: out of host memory"), "{name} {args:?}: not the size check: {err}");
    assert!(err.contains(message), "{name} {args:?}: {err:?} does not say {message:?}");
}

#[test]
fn huge_baselines_fail_with_the_flag_to_make_smaller() {
    for (app, bodies) in [("nbody", "4000000000"), ("collision", "4000000000"), ("barnes-hut", "2000000000")]
    {
        for implementation in ["soa", "aos"] {
            let args = ["--bodies", bodies, "--steps", "1", "--impl", implementation];
            assert_too_large(app, &args, "use a smaller --bodies");
        }
    }
    assert_too_large("structure", &["--nodes", "800000000", "--steps", "1"], "use a smaller --nodes");
    assert_too_large(
        "traffic",
        &["--intersections", "16000000", "--steps", "1"],
        "use a smaller --intersections",
    );
    for app in ["game-of-life", "generation"] {
        assert_too_large(app, &["--pattern", "random:65535x65535", "--steps", "1"], "use a smaller grid");
    }
}

/// The sequential versions compute what the CPU backend does: each run prints the sequential
/// line and the CPU backend's, with the same fingerprint (the binary fails if they differ).
#[test]
fn sequential_versions_agree_with_the_cpu_backend() {
    let runs: [&[&str]; 4] = [
        &["wa-tor", "--width", "48", "--height", "40", "--steps", "6"],
        &["wa-tor", "--width", "48", "--height", "40", "--steps", "6", "--impl", "soa"],
        &["game-of-life", "--pattern", "random:50x40", "--steps", "6"],
        &["game-of-life", "--pattern", "glider", "--steps", "6"],
    ];
    for args in runs {
        let out = Command::new(bin("sequential"))
            .args(args)
            .args(["--cpu-threads", "2"])
            .stdin(Stdio::null())
            .output()
            .expect("running sequential");
        assert_clean("sequential", args, &out);
        assert_eq!(out.status.code(), Some(0), "sequential {args:?} failed: {}", stderr(&out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let fingerprints: Vec<&str> =
            stdout.lines().filter_map(|l| l.split(' ').find(|f| f.starts_with("fingerprint="))).collect();
        assert_eq!(fingerprints.len(), 2, "{args:?}: {stdout}");
        assert_eq!(fingerprints[0], fingerprints[1], "{args:?}: {stdout}");
        assert!(stdout.starts_with(&format!("app={} backend=sequential", args[0])), "{stdout}");
    }
}

#[test]
fn smoke_rejects_lengths_beyond_the_kernel() {
    assert_fails("smoke", &["--len", "40000000000"], 2, "--len");
    assert_fails("smoke", &["--len", "0"], 2, "--len");
    assert_fails("smoke", &["--bins", "0"], 2, "--bins");
}

#[test]
fn render_width_is_bounded_on_every_app() {
    let dir = scratch("width");
    let dir = dir.to_str().expect("a UTF-8 temporary directory");
    for app in SIMULATIONS {
        assert_fails(app, &["--render", dir, "--render-width", "1000000"], 2, "--render-width");
    }
}

#[test]
fn zero_counts_are_rejected() {
    assert_fails("linux-scalability", &["--reps", "0"], 2, "--reps");
    assert_fails("linux-scalability", &["--k", "1,0"], 2, "--k");
    assert_fails("linux-scalability", &["--threads", "0"], 2, "--threads");
    assert_fails("field-access", &["--reps", "0"], 2, "--reps");
    assert_fails("field-access", &["--objects", "0"], 2, "--objects");
    assert_fails("nbody", &["--bodies", "0"], 2, "--bodies");
    assert_fails("nbody", &["--bodies", "2", "--render", "x", "--render-every", "0"], 2, "--render-every");
}

#[test]
fn allocator_is_honoured_or_rejected() {
    assert_fails(
        "smoke",
        &["--len", "100", "--allocator", "atomic"],
        1,
        "smoke does not take --allocator atomic",
    );
    let args = ["--k", "1", "--blocks", "1", "--threads", "32", "--allocator", "atomic"];
    assert_fails("linux-scalability", &args, 1, "linux-scalability does not take --allocator atomic");
    let out = assert_succeeds("field-access", &["--objects", "1000", "--reps", "1", "--allocator", "atomic"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("allocator=atomic"), "field-access ignored --allocator: {stdout}");
    assert!(stdout.contains("results correct"), "{stdout}");
}

#[test]
fn options_that_would_be_ignored_are_rejected() {
    for app in SIMULATIONS {
        assert_fails(app, &["--gif"], 2, "--render");
        assert_fails(app, &["--compare", "--impl", "soa"], 2, "cannot be used with");
    }
}

#[test]
fn graph_is_honoured_or_rejected() {
    for app in SIMULATIONS {
        assert_fails(app, &["--graph", "--enum-timing"], 2, "cannot be used with");
    }
    assert_fails(
        "barnes-hut",
        &["--graph", "--bodies", "64", "--steps", "1"],
        1,
        "barnes-hut does not take --graph",
    );
    assert_fails("smoke", &["--len", "100", "--graph"], 1, "smoke does not take --graph");
    assert_fails("field-access", &["--objects", "1000", "--graph"], 1, "field-access does not take --graph");
    let args = ["--k", "1", "--blocks", "1", "--threads", "32", "--graph"];
    assert_fails("linux-scalability", &args, 1, "linux-scalability does not take --graph");
    // Replayed steps, checked against the baselines by --compare (which fails on a difference).
    let args = ["--width", "24", "--height", "20", "--steps", "12", "--graph", "--compare"];
    let out = assert_succeeds("wa-tor", &args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("allocator=dynasoar") && stdout.contains("graph=on"), "{stdout}");
}

#[test]
fn host_advice_names_the_flags() {
    let out = run("wa-tor", &["--width", "256", "--height", "256", "--steps", "1", "--heap-mib", "1"]);
    assert_clean("wa-tor", &[], &out);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("rerun with a larger --heap-mib"), "{err}");
    assert!(!err.contains("RuntimeBuilder") && !err.contains("give the runtime"), "{err}");
    let help = assert_succeeds("wa-tor", &["--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("2 x this + 32 MiB"), "--heap-mib's help: {help}");
    assert!(help.contains("prints a note"), "--backend's help says the default-size policy: {help}");
}

#[test]
fn gpu_default_sizes_get_a_note_on_the_cpu() {
    let out = assert_succeeds("nbody", &["--steps", "0"]);
    let err = stderr(&out);
    assert!(err.contains("note: nbody runs at the GPU benchmark's default size"), "{err}");
    assert!(err.contains("--bodies 2000"), "{err}");
    let out = assert_succeeds("nbody", &["--steps", "0", "--bodies", "10"]);
    assert!(!stderr(&out).contains("note:"), "{}", stderr(&out));
}

#[test]
fn compare_agrees_and_picks_the_backend_once() {
    let mut cmd = Command::new(bin("wa-tor"));
    cmd.args(["--width", "16", "--height", "16", "--steps", "2", "--compare", "--backend", "auto"])
        .env_remove("DYNASOAR_BACKEND")
        .env_remove("DYNASOAR_ALLOCATOR");
    let out = cmd.output().expect("running wa-tor");
    assert_clean("wa-tor", &["--compare"], &out);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(err.matches("backend auto").count(), 1, "the backend is said once: {err}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().filter(|l| l.starts_with("app=wa-tor")).count(), 3, "{stdout}");
    for app in ["nbody", "collision", "barnes-hut"] {
        assert_succeeds(app, &["--bodies", "40", "--steps", "2", "--compare"]);
    }
}

#[test]
fn render_replaces_old_frames() {
    let dir = scratch("frames");
    std::fs::write(dir.join("frame_999999.png"), b"old").expect("writing an old frame");
    std::fs::write(dir.join("animation.gif"), b"old").expect("writing an old GIF");
    std::fs::write(dir.join("notes.txt"), b"keep").expect("writing another file");
    let d = dir.to_str().expect("a UTF-8 temporary directory");
    let out =
        assert_succeeds("nbody", &["--bodies", "10", "--steps", "1", "--render", d, "--render-width", "16"]);
    let err = stderr(&out);
    assert!(err.contains("wrote 1 frame to"), "{err}");
    assert!(!dir.join("frame_999999.png").exists(), "the old frame is still there");
    assert!(!dir.join("animation.gif").exists(), "the old GIF is still there");
    assert!(dir.join("frame_000001.png").exists(), "the new frame is missing");
    assert!(dir.join("notes.txt").exists(), "another file was removed");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Run `name args` with stdout a pipe whose read end is closed after `lines` lines; the app
/// must end with 0 or 1 and no panic.
fn assert_closed_pipe_is_quiet(name: &str, args: &[&str], lines: usize) {
    let mut child = command(name, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {name}: {e}"));
    let mut stdout = child.stdout.take().expect("a piped stdout");
    let mut read = 0;
    let mut byte = [0u8; 1];
    while read < lines && stdout.read(&mut byte).unwrap_or(0) == 1 {
        if byte[0] == b'\n' {
            read += 1;
        }
    }
    drop(stdout);
    let out = child.wait_with_output().expect("waiting for the app");
    assert_clean(name, args, &out);
    let code = out.status.code();
    assert!(matches!(code, Some(0 | 1)), "{name} {args:?} ended with {code:?}: {}", stderr(&out));
}

#[test]
fn output_into_a_closed_pipe_ends_quietly() {
    let compare = ["--bodies", "20", "--steps", "1", "--compare"];
    for lines in [0, 1] {
        assert_closed_pipe_is_quiet("nbody", &compare, lines);
        assert_closed_pipe_is_quiet(
            "wa-tor",
            &["--width", "16", "--height", "16", "--steps", "1", "--compare"],
            lines,
        );
        assert_closed_pipe_is_quiet("smoke", &["--len", "1000"], lines);
        assert_closed_pipe_is_quiet("field-access", &["--objects", "1000", "--reps", "1"], lines);
        let args = ["--k", "1,2", "--blocks", "1", "--threads", "32", "--reps", "1"];
        assert_closed_pipe_is_quiet("linux-scalability", &args, lines);
    }
}
