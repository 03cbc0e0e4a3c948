//! `apps --quick` on the CPU backend, through the binary: Figures 10-12 for DynaSOAr, two
//! general allocators and the SOA and AOS baselines; every run is a JSON line with a status,
//! the runs that finished have positive times and a result that the SOA baseline's agrees
//! with, Figure 11 finds a largest size per allocator, and every figure writes its CSV, JSON
//! and SVG files. A run whose result is wrong is reported as `wrong` and fails the command.

mod common;

use common::{bench, json_lines, number, quick_on_cpu, run_bench, scratch};
use serde_json::Value;

const APPS: [&str; 9] = [
    "nbody",
    "collision",
    "wa-tor",
    "game-of-life",
    "sugarscape",
    "structure",
    "traffic",
    "generation",
    "barnes-hut",
];
const STORES: [&str; 5] = ["soa", "aos", "dynasoar", "atomic", "kma"];

#[test]
fn quick_apps_on_the_cpu_write_every_figure() {
    let out = scratch("apps");
    let args = [
        "--allocators",
        "atomic,kma",
        // Few probes and one app keep Figure 11 to seconds; the search logic is the same.
        "--fig11-apps",
        "wa-tor",
        "--fig11-probes",
        "5",
        "--timeout-s",
        "60",
    ];
    let output = quick_on_cpu(&out, "apps", &args);
    let records = json_lines(&output);
    let of = |test: &str| records.iter().filter(|r| r["test"] == test).collect::<Vec<&Value>>();

    let fig10 = of("fig10");
    for app in APPS {
        for store in STORES {
            let r = fig10
                .iter()
                .find(|r| r["app"] == app && r["allocator"] == store)
                .unwrap_or_else(|| panic!("no fig10 record of {app} on {store}"));
            assert_eq!(r["status"], "ok", "{app} on {store}: {r}");
            let total = number(r, "total_ms").expect("a run time");
            let enumeration = number(r, "enum_ms").expect("an enumeration time");
            assert!(total > 0.0 && total.is_finite(), "{app} on {store}: run time {total}");
            assert!(
                (0.0..=total).contains(&enumeration),
                "{app} on {store}: enumeration {enumeration} of {total}"
            );
            // The time Figure 10 compares: the run without its enumeration.
            let run = number(r, "run_ms").expect("a run time without enumeration");
            assert!((run - (total - enumeration)).abs() < 1e-9, "{app} on {store}: {r}");
            // Checked: every run but the baseline's has the baseline's result as expected; the
            // deterministic apps' are equal (the float apps' agree within the tolerance).
            let result = r["result"].as_str().unwrap_or_else(|| panic!("{app} on {store}: no result: {r}"));
            if store != "soa" {
                let expected =
                    r["expected"].as_str().unwrap_or_else(|| panic!("{app} on {store}: unchecked: {r}"));
                if !["nbody", "collision", "barnes-hut"].contains(&app) {
                    assert_eq!(result, expected, "{app} on {store}");
                }
            }
        }
    }

    let fig11 = of("fig11");
    for store in &STORES[2..] {
        let summary = fig11
            .iter()
            .rfind(|r| r["allocator"] == *store)
            .unwrap_or_else(|| panic!("no fig11 record of {store}"));
        // Either a largest size, or an out-of-memory at the smallest one; never an error.
        assert!(summary["status"] == "ok" || summary["status"] == "oom", "{store}: {summary}");
        assert!(number(summary, "heap_bytes").is_some_and(|b| b > 0.0), "{store}: the heap is recorded");
        if summary["status"] == "ok" {
            assert!(number(summary, "size").is_some_and(|s| s >= 40.0), "{store}: {summary}");
        }
    }

    let fig12 = of("fig12");
    for store in &STORES[2..] {
        let r =
            fig12.iter().find(|r| r["allocator"] == *store).unwrap_or_else(|| panic!("no fig12 of {store}"));
        let chunks = r["chunk_ms"].as_array().unwrap_or_else(|| panic!("{store}: no per-step times: {r}"));
        // Per step without enumeration (which is apart), every chunk.
        assert!(
            !chunks.is_empty() && chunks.iter().all(|t| t.as_f64().is_some_and(|t| t >= 0.0)),
            "{store}: {r}"
        );
        assert_eq!(r["chunk_enum_ms"].as_array().map(Vec::len), Some(chunks.len()), "{store}: {r}");
        assert!(number(r, "total_ms").is_some_and(|t| t > 0.0), "{store}: {r}");
        assert_eq!(r["status"], "ok", "{store}: {r}");
        assert!(r["expected"].is_string() && r["result"] == r["expected"], "{store}: {r}");
        // Fragmentation after every chunk in DynaSOAr's heap (a fraction), none elsewhere.
        let fragmentation = r.get("chunk_fragmentation").and_then(|f| f.as_array());
        let agents = r.get("chunk_fragmentation_agents").and_then(|f| f.as_array());
        if *store == "dynasoar" {
            for f in [fragmentation, agents] {
                let f = f.unwrap_or_else(|| panic!("no fragmentation series: {r}"));
                assert_eq!(f.len(), chunks.len(), "{r}");
                assert!(f.iter().all(|f| f.as_f64().is_some_and(|f| (0.0..1.0).contains(&f))), "{r}");
            }
            assert!(
                r["classes"].as_str().is_some_and(|c| c.contains("Fish ") && c.contains("Shark ")),
                "{r}"
            );
        } else {
            assert!(fragmentation.is_none() && agents.is_none(), "{store}: {r}");
        }
    }

    for file in [
        "fig10.csv",
        "fig10.json",
        "fig10-wa-tor.svg",
        "fig11.csv",
        "fig11-wa-tor.svg",
        "fig12.csv",
        "fig12b.csv",
        "fig12b-wator-sweep.svg",
        "fig12b-wator-fragmentation.svg",
        "fig12d.csv",
        "fig12d-variants.svg",
    ] {
        assert!(out.join(file).is_file(), "{file} was not written");
    }
    assert!(out.join("fig12-wator-steps.svg").is_file() && out.join("apps-summary.txt").is_file());
    assert!(out.join("fig12-wator-fragmentation.svg").is_file());
    let summary = std::fs::read_to_string(out.join("apps-summary.txt")).unwrap();
    assert!(!summary.contains("WRONG"), "{summary}");
    assert!(
        summary.lines().any(|l| l.starts_with("wa-tor") && (l.contains("atomic") || l.contains("kma"))),
        "a fastest general allocator per app: {summary}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// Arguments of a small run on the CPU where `atomic`'s results are made wrong by the hidden
/// test option, plus `more`.
fn wrong_atomic<'a>(more: &[&'a str]) -> Vec<&'a str> {
    let args = [
        "apps",
        "--quick",
        "--backend",
        "cpu",
        "--cpu-threads",
        "2",
        "--quiet",
        "--allocators",
        "atomic",
        "--timeout-s",
        "60",
        "--test-wrong-result",
        "atomic",
    ];
    [&args[..], more].concat()
}

#[test]
fn a_wrong_result_is_reported_as_wrong_and_fails_the_command() {
    let out = scratch("apps-wrong");
    // Wa-Tor's result is an exact fingerprint, n-body's a float checksum.
    let args = ["--apps", "wa-tor,nbody", "--fig11-apps", "wa-tor", "--fig11-probes", "6", "--chunk", "10"];
    let output = run_bench(&out, &wrong_atomic(&args));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "a wrong result must fail the command: {stderr}");
    assert!(stderr.contains("computed a wrong result") && stderr.contains("--allow-wrong"), "{stderr}");
    let records = json_lines(&output);
    let find = |test: &str, app: &str, store: &str| {
        records
            .iter()
            .find(|r| r["test"] == test && r["app"] == app && r["allocator"] == store)
            .unwrap_or_else(|| panic!("no {test} record of {app} on {store}: {records:?}"))
    };
    for app in ["wa-tor", "nbody"] {
        assert_eq!(find("fig10", app, "soa")["status"], "ok", "the baseline is right");
        assert_eq!(find("fig10", app, "dynasoar")["status"], "ok", "DynaSOAr is right");
        let r = find("fig10", app, "atomic");
        assert_eq!(r["status"], "wrong", "{r}");
        assert!(r["expected"].is_string() && r["result"].is_string() && r["result"] != r["expected"], "{r}");
        assert!(number(r, "total_ms").is_some(), "the time is kept: {r}");
        assert!(r["note"].as_str().is_some_and(|n| n.contains("wrong result")), "{r}");
    }
    // Figure 12's run, and Figure 11's search: stopped, with no largest size.
    assert_eq!(find("fig12", "wa-tor", "atomic")["status"], "wrong");
    // (The search starts at the AOS baseline's largest size, which may not fit `atomic`: its
    // first probes can run out of memory; the first run that finishes is wrong and stops it.)
    let fig11: Vec<&Value> =
        records.iter().filter(|r| r["test"] == "fig11" && r["allocator"] == "atomic").collect();
    let summary = fig11.iter().find(|r| r["mode"] == "largest").unwrap_or_else(|| panic!("{records:?}"));
    assert_eq!(summary["status"], "wrong", "{summary}");
    assert_eq!(fig11.last().unwrap()["mode"], "largest", "the search stopped at the wrong run: {fig11:?}");
    let probes = &fig11[..fig11.len() - 1];
    assert_eq!(probes.last().unwrap()["status"], "wrong", "{fig11:?}");
    assert!(probes.iter().all(|r| r["status"] == "wrong" || r["status"] == "oom"), "{fig11:?}");
    assert!(fig11.iter().all(|r| r["note"] != "largest size that ran"), "{fig11:?}");
    // Every record was still written, the wrong ones marked so in the files.
    let csv = std::fs::read_to_string(out.join("fig10.csv")).expect("fig10.csv written");
    assert_eq!(csv.lines().filter(|l| l.contains(",atomic,") && l.contains(",wrong,")).count(), 2, "{csv}");
    let summary = std::fs::read_to_string(out.join("apps-summary.txt")).unwrap();
    assert!(summary.contains("WRONG fig10 wa-tor on atomic"), "{summary}");
    let row = summary.lines().find(|l| l.starts_with("nbody")).expect("a row for nbody");
    assert!(row.ends_with("atomic") && !row.contains("atomic "), "never the fastest: {summary}");
    let svg = std::fs::read_to_string(out.join("fig10-wa-tor.svg")).unwrap();
    assert!(svg.contains("WRONG RESULT"), "the plot marks it");
    let _ = std::fs::remove_dir_all(&out);

    // With --allow-wrong the command succeeds and still reports them.
    let out = scratch("apps-wrong-allowed");
    let records =
        json_lines(&bench(&out, &wrong_atomic(&["--allow-wrong", "--apps", "wa-tor", "--figures", "10"])));
    assert!(records.iter().any(|r| r["allocator"] == "atomic" && r["status"] == "wrong"), "{records:?}");
    assert!(records.iter().all(|r| r["allocator"] == "atomic" || r["status"] == "ok"), "{records:?}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_hung_run_is_killed_and_reported() {
    // A limit of one second cannot hold the Wa-Tor run of Figure 12 in a debug build with
    // many steps: the run must come back as `timeout`, not hang the suite.
    let out = scratch("apps-timeout");
    let args = [
        "apps",
        "--quick",
        "--backend",
        "cpu",
        "--cpu-threads",
        "1",
        "--quiet",
        "--allocators",
        "atomic",
        "--no-dynasoar",
        "--figures",
        "12",
        "--steps",
        "1000000",
        "--timeout-s",
        "1",
    ];
    let records = json_lines(&bench(&out, &args));
    assert!(records.iter().any(|r| r["test"] == "fig12" && r["status"] == "timeout"), "{records:?}");
    let _ = std::fs::remove_dir_all(&out);
}
