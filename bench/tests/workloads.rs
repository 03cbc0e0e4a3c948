//! `dynasoar-bench workloads --quick` on the CPU backend, through the binary: the graph and
//! kd-tree workloads run on a few allocators, their results pass the host's checks, the
//! counts are plausible, and the files are written.

mod common;

use common::{json_lines, number, quick_on_cpu, scratch};
use serde_json::Value;

/// Allocators that free and reuse (kma, scatter), the bump reference (atomic) and one that
/// cannot free single allocations (fdg: skipped where it must free).
const ALLOCATORS: &str = "atomic,kma,scatter,fdg";

#[test]
fn quick_workloads_on_the_cpu_verify_and_write_every_output() {
    let out = scratch("workloads");
    let output = quick_on_cpu(&out, "workloads", &["--allocators", ALLOCATORS]);
    let records = json_lines(&output);
    let of = |test: &str, allocator: &str| -> Vec<&Value> {
        records.iter().filter(|r| r["test"] == test && r["allocator"] == allocator).collect()
    };
    for test in ["graph-init", "graph-update-uniform", "graph-update-focused", "kdtree"] {
        for allocator in ["atomic", "kma", "scatter"] {
            let rs = of(test, allocator);
            assert_eq!(rs.len(), 2, "{test}/{allocator}: one line per quick size");
            for r in rs {
                assert_eq!(r["status"], "ok", "{r}");
                assert_eq!(r["verified"], true, "{r}");
                assert_eq!(number(r, "failed"), Some(0.0), "{r}");
                let t = number(r, "time_ms").expect("a time");
                assert!(t.is_finite() && t > 0.0, "{r}");
            }
        }
    }
    for r in records.iter().filter(|r| r["test"] == "graph-init" && r["status"] == "ok") {
        // At least the smallest degree (2) per vertex, at most the largest (256).
        let (v, e) = (number(r, "threads").unwrap(), number(r, "edges").unwrap());
        assert!(e >= 2.0 * v && e <= 256.0 * v, "{r}");
    }
    for r in records
        .iter()
        .filter(|r| r["test"].as_str().unwrap().starts_with("graph-update") && r["status"] == "ok")
    {
        assert!(number(r, "updates").unwrap() > 0.0, "{r}");
        assert!(number(r, "reallocs").unwrap() > 0.0, "updates move some adjacencies: {r}");
    }
    for r in records.iter().filter(|r| r["test"] == "kdtree" && r["status"] == "ok") {
        let prims = number(r, "threads").unwrap();
        let n_ref = number(r, "n_ref").unwrap();
        let n_alloc = number(r, "n_alloc").unwrap();
        assert!((1.0..64.0).contains(&n_ref), "every primitive in a leaf, some duplicated: {r}");
        assert!(n_alloc > 1.0, "{r}");
        assert!(number(r, "leaves").unwrap() >= prims * n_ref / 64.0, "{r}");
        let mean = number(r, "alloc_mean_bytes").unwrap();
        assert!((16.0..=4.0 * prims + 16.0).contains(&mean), "{r}");
        assert!(number(r, "alloc_std_bytes").unwrap() >= 0.0, "{r}");
        assert_eq!(number(r, "pool_bytes").unwrap() as u64 % 1000, 0, "1000x the root's array: {r}");
        assert!(number(r, "vs_atomic").unwrap() > 0.0, "{r}");
    }
    // Same scene, same tree on every allocator.
    for prims in [500.0, 2000.0] {
        let trees: Vec<(f64, f64)> = records
            .iter()
            .filter(|r| r["test"] == "kdtree" && r["status"] == "ok" && number(r, "threads") == Some(prims))
            .map(|r| (number(r, "n_ref").unwrap(), number(r, "n_alloc").unwrap()))
            .collect();
        assert!(trees.windows(2).all(|w| w[0] == w[1]), "{trees:?}");
    }
    // FDGMalloc frees only everything at once: it initialises graphs but skips the rest.
    assert!(of("graph-init", "fdg").iter().all(|r| r["status"] == "ok"));
    for test in ["graph-update-uniform", "kdtree"] {
        for r in of(test, "fdg") {
            assert_eq!(r["status"], "skipped", "{r}");
            assert!(r["note"].as_str().unwrap().contains("at once"), "{r}");
        }
    }
    for name in ["graph.csv", "graph.json", "kdtree.csv", "kdtree.json", "graph-init.svg", "kdtree.svg"] {
        assert!(out.join(name).exists(), "{name} written");
    }
    let csv = std::fs::read_to_string(out.join("kdtree.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + records.iter().filter(|r| r["test"] == "kdtree").count());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("N_alloc") && stdout.contains("vs_atomic"), "the table follows the JSON lines");
    assert!(out.join("workloads-summary.txt").exists());
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn a_tiny_graph_pool_reports_oom_not_corrupt() {
    let out = scratch("workloads-tiny");
    let output = quick_on_cpu(
        &out,
        "workloads",
        &["--workloads", "graph", "--allocators", "atomic", "--heap-mib", "1", "--graph-vertices", "100000"],
    );
    let records = json_lines(&output);
    let init = records.iter().find(|r| r["test"] == "graph-init").expect("a graph-init line");
    assert_eq!(init["status"], "oom", "{init}");
    assert!(number(init, "failed").unwrap() > 0.0, "{init}");
    assert!(init.get("time_ms").is_none(), "{init}");
    std::fs::remove_dir_all(&out).unwrap();
}
