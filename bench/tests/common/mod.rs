//! What the integration tests share: running the binary and reading its JSON lines.

#![allow(dead_code)] // Each test binary uses its own part.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// The binary under test: cargo's build of it, or (in the GPU bundle, whose binaries moved)
/// the one in `DYNASOAR_BIN_DIR`.
pub fn binary() -> PathBuf {
    match std::env::var_os("DYNASOAR_BIN_DIR") {
        Some(dir) => Path::new(&dir).join("dynasoar-bench"),
        None => PathBuf::from(env!("CARGO_BIN_EXE_dynasoar-bench")),
    }
}

/// `dynasoar-bench args --out out`, whatever its exit status.
pub fn run_bench(out: &Path, args: &[&str]) -> Output {
    Command::new(binary())
        .args(args)
        .arg("--out")
        .arg(out)
        .env_remove("DYNASOAR_BACKEND")
        .output()
        .expect("the bench binary runs")
}

/// `dynasoar-bench args --out out`, which must succeed.
pub fn bench(out: &Path, args: &[&str]) -> Output {
    let output = run_bench(out, args);
    assert!(
        output.status.success(),
        "dynasoar-bench {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// `dynasoar-bench <subcommand> --quick` on the CPU backend with 2 threads, quietly, plus `args`.
pub fn quick_on_cpu(out: &Path, subcommand: &str, args: &[&str]) -> Output {
    let common = [subcommand, "--quick", "--backend", "cpu", "--cpu-threads", "2", "--quiet"];
    bench(out, &[&common[..], args].concat())
}

pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dynasoar-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The JSON lines of stdout (the table after them is not JSON).
pub fn json_lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

pub fn number(record: &Value, key: &str) -> Option<f64> {
    record.get(key).and_then(Value::as_f64)
}
