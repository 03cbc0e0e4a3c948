//! The `--quick` suite on the CPU backend, through the binary as users run it: every
//! measurement is a JSON line that parses, every test writes its CSV, JSON and SVG files, the
//! numbers are positive and finite, and a pool too small for the requests reports "oom"
//! instead of a time.

mod common;

use std::path::Path;
use std::process::Command;

use common::{json_lines, number, quick_on_cpu, scratch};
use dynasoar::baselines::malloc::MallocKind;
use serde_json::Value;

/// Allocators that are complete today and fast on the CPU.
const ALLOCATORS: &str = "atomic,bitmap,kma";
const TESTS: [&str; 7] = ["alloc", "mixed", "scaling", "frag", "oom", "write", "workgen"];

#[test]
fn quick_suite_on_the_cpu_writes_every_output() {
    let out = scratch("quick");
    let output = quick_on_cpu(&out, "synthetic", &["--allocators", ALLOCATORS]);
    let records = json_lines(&output);
    for test in TESTS {
        let of_test: Vec<&Value> = records.iter().filter(|r| r["test"] == test).collect();
        assert!(!of_test.is_empty(), "no JSON line for test {test}");
        for allocator in ALLOCATORS.split(',') {
            assert!(of_test.iter().any(|r| r["allocator"] == allocator), "{test}: no line for {allocator}");
        }
        let csv = std::fs::read_to_string(out.join(format!("{test}.csv"))).expect("CSV written");
        assert_eq!(csv.lines().count(), of_test.len() + 1, "{test}.csv: a header and one row per JSON line");
        let json: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(out.join(format!("{test}.json"))).unwrap())
                .expect("the JSON file parses");
        assert_eq!(json.len(), of_test.len());
        let svgs = std::fs::read_dir(&out)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.starts_with(test) && name.ends_with(".svg")
            })
            .count();
        assert!(svgs > 0, "no SVG for {test}");
    }
    for r in &records {
        assert_ne!(r["status"], "error", "{r}");
        assert_ne!(r["status"], "corrupt", "{r}");
        for key in ["alloc_ms", "free_ms", "write_ms", "usable_fraction"] {
            if let Some(v) = number(r, key) {
                assert!(v.is_finite() && v > 0.0, "{key} of {r}");
            }
        }
        if r["status"] == "ok" && r["test"] != "oom" && r["test"] != "frag" {
            assert!(
                number(r, "alloc_ms").or(number(r, "write_ms")).is_some(),
                "an ok measurement without a time: {r}"
            );
        }
    }
    // With a pool of 16x the demand, the working allocators serve everything in the timed
    // tests, and the out-of-memory test finds a failure and a sensible fraction.
    for r in records.iter().filter(|r| r["test"] == "alloc" || r["test"] == "scaling") {
        assert_eq!(r["status"], "ok", "{r}");
    }
    for r in records.iter().filter(|r| r["test"] == "oom") {
        let fraction = number(r, "usable_fraction").unwrap();
        assert!(fraction > 0.5 && fraction <= 1.0, "{r}");
        assert!(number(r, "failed").unwrap() > 0.0, "{r}");
    }
    assert!(out.join("summary.txt").exists());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("allocator") && stdout.contains("status"), "the table follows the JSON lines");
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn a_tiny_heap_reports_oom_not_a_time() {
    let out = scratch("tiny");
    let output =
        quick_on_cpu(&out, "synthetic", &["--tests", "alloc", "--allocators", ALLOCATORS, "--heap-mib", "1"]);
    let records = json_lines(&output);
    // 1024 threads of 4096 B need 4 MiB.
    for allocator in ALLOCATORS.split(',') {
        let big = records
            .iter()
            .find(|r| r["allocator"] == allocator && r["size"] == 4096 && r["threads"] == 1024)
            .unwrap_or_else(|| panic!("no 4096 B line for {allocator}"));
        assert_eq!(big["status"], "oom", "{big}");
        assert!(number(big, "failed").unwrap() > 0.0, "{big}");
        assert!(big.get("alloc_ms").is_none(), "a failed run reports no time: {big}");
    }
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn a_round_limit_stops_fragmentation_and_out_of_memory_as_timeouts() {
    let out = scratch("limit");
    // A limit of 0 s stops every measurement before its rounds: the round-based records are
    // timeouts with no value, and say how far they got; the first allocations still count.
    let output = quick_on_cpu(
        &out,
        "synthetic",
        &["--tests", "frag,oom", "--allocators", "atomic", "--round-limit-s", "0"],
    );
    let records = json_lines(&output);
    let frag: Vec<&Value> = records.iter().filter(|r| r["test"] == "frag").collect();
    let oom: Vec<&Value> = records.iter().filter(|r| r["test"] == "oom").collect();
    assert!(!frag.is_empty() && !oom.is_empty(), "{records:?}");
    for r in frag {
        if r["rounds"] == 0 {
            assert_eq!(r["status"], "ok", "{r}");
            assert!(number(r, "range_bytes").unwrap() > 0.0, "{r}");
        } else {
            assert_eq!(r["status"], "timeout", "{r}");
            assert!(r.get("range_bytes").is_none(), "{r}");
            assert!(r["note"].as_str().unwrap().contains("0 of 4 rounds"), "{r}");
        }
    }
    for r in oom {
        assert_eq!(r["status"], "timeout", "{r}");
        assert!(r.get("usable_fraction").is_none(), "{r}");
        assert!(r["note"].as_str().unwrap().contains("limit"), "{r}");
    }
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn bad_input_is_an_error_message_not_a_panic() {
    let out = scratch("bad");
    for args in [
        vec!["synthetic", "--allocators", "nosuch"],
        vec!["synthetic", "--runs", "0"],
        vec!["synthetic", "--tests", "nosuch"],
        vec!["synthetic", "--backend", "tpu"],
    ] {
        let output = Command::new(common::binary()).args(&args).arg("--out").arg(&out).output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    let output =
        Command::new(common::binary()).args(["synthetic", "--allocators", "nosuch"]).output().unwrap();
    assert!(String::from_utf8_lossy(&output.stderr).contains("choose from: cuda, atomic"));
}

/// `registers` over every allocator (no `--allocators`: all of them), where a ptxas is found:
/// one JSON line, CSV row and JSON entry per allocator, in `MallocKind::ALL`'s order, each with
/// the registers of both its probes (a probe missing from ptxas's report leaves them empty).
/// Without a ptxas it says that it skipped and writes nothing, which
/// `registers_without_ptxas_says_it_skipped` checks on every machine.
#[test]
fn registers_skips_or_reports_every_allocator() {
    let out = scratch("regs");
    // The repository's own ptxas (scripts/install-ptxas.sh), where it was installed.
    let tools = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools/ptxas/nvidia/cu13/bin/ptxas");
    let mut command = Command::new(common::binary());
    command.args(["registers", "--out"]).arg(&out);
    if std::env::var_os("DYNASOAR_PTXAS").is_none() && tools.is_file() {
        command.env("DYNASOAR_PTXAS", &tools);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.contains("skipped: no ptxas") {
        assert!(
            json_lines(&output).is_empty() && !out.join("registers.csv").exists(),
            "a skip wrote records"
        );
        println!("registers: no ptxas here; the skip message was printed");
        return;
    }
    let names: Vec<&str> = MallocKind::ALL.iter().map(|k| k.name()).collect();
    let records = json_lines(&output);
    let reported: Vec<&str> = records.iter().map(|r| r["allocator"].as_str().unwrap_or("?")).collect();
    assert_eq!(reported, names, "one line per allocator, in order");
    for r in &records {
        assert_eq!(r["test"], "registers", "{r}");
        assert_eq!(r["arch"], "sm_90", "{r}");
        // Every probe is a kernel that calls the allocator: it needs registers.
        assert!(number(r, "malloc_registers").is_some_and(|n| n > 0.0), "{r}");
        assert!(number(r, "free_registers").is_some_and(|n| n > 0.0), "{r}");
        for key in ["malloc_stack_bytes", "free_stack_bytes", "malloc_spill_bytes", "free_spill_bytes"] {
            assert!(number(r, key).is_some_and(|n| n >= 0.0), "{key} of {r}");
        }
    }
    let csv = std::fs::read_to_string(out.join("registers.csv")).expect("registers.csv written");
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), names.len(), "registers.csv: a header and one row per allocator:\n{csv}");
    for ((row, name), r) in rows.iter().zip(&names).zip(&records) {
        let expected = format!("{name},sm_90,{},{},", r["malloc_registers"], r["free_registers"]);
        assert!(row.starts_with(&expected), "registers.csv: {row:?}, expected {expected:?}...");
    }
    let json: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(out.join("registers.json")).unwrap()).unwrap();
    assert_eq!(json, records, "registers.json holds the JSON lines");
    std::fs::remove_dir_all(&out).unwrap();
}

/// With no ptxas (none in `DYNASOAR_PTXAS`, none on the `PATH`) `registers` says it skipped,
/// names the way out and writes nothing: on every machine, ptxas installed or not.
#[test]
fn registers_without_ptxas_says_it_skipped() {
    let out = scratch("regs-none");
    let empty = scratch("regs-empty-path");
    std::fs::create_dir_all(&empty).unwrap();
    let output = Command::new(common::binary())
        .args(["registers", "--out"])
        .arg(&out)
        .env_remove("DYNASOAR_PTXAS")
        .env("PATH", &empty)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("skipped: no ptxas") && stderr.contains("DYNASOAR_PTXAS"), "{stderr}");
    assert!(json_lines(&output).is_empty(), "{}", String::from_utf8_lossy(&output.stdout));
    assert!(!out.join("registers.csv").exists(), "a skipped run wrote registers.csv");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::remove_dir_all(&empty).unwrap();
}
