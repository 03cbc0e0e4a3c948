//! The figures as the paper defines them, on the CPU backend at small sizes (seconds): Figure
//! 12(d)'s variants of DynaSOAr's allocator compute what the default computes, with both
//! fragmentations; Figures 10 and 11 report the run without enumeration, the enumeration, the
//! AOS baseline and sizes relative to it; a spent time budget skips the rest and still writes
//! every file.

mod common;

use common::{json_lines, number, quick_on_cpu, scratch};
use serde_json::Value;

fn of<'a>(records: &'a [Value], test: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["test"] == test).collect()
}

#[test]
fn the_variants_compute_what_the_default_computes() {
    let out = scratch("figures-variants");
    let args = ["--figures", "12", "--allocators", "kma", "--sweep", "24,32"];
    let records = json_lines(&quick_on_cpu(&out, "apps", &args));
    let default = of(&records, "fig12")
        .into_iter()
        .find(|r| r["allocator"] == "dynasoar")
        .unwrap_or_else(|| panic!("no default run: {records:?}"));
    let variants = of(&records, "fig12d");
    let names: Vec<&str> = variants.iter().filter_map(|r| r["variant"].as_str()).collect();
    assert_eq!(names, ["nocoal", "noshift"], "{variants:?}");
    for r in variants.iter().chain([&default]) {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["allocator"], "dynasoar", "{r}");
        // Checked against the SOA baseline, and the same as the default's.
        assert!(r["expected"].is_string() && r["result"] == r["expected"], "{r}");
        assert_eq!(r["result"], default["result"], "{r}");
        assert_eq!(r["steps"], default["steps"], "{r}");
        let all = r["chunk_fragmentation"].as_array().expect("over all classes");
        let agents = r["chunk_fragmentation_agents"].as_array().expect("over the fish and sharks");
        assert!(!all.is_empty() && all.len() == agents.len(), "{r}");
        for (a, f) in all.iter().zip(agents) {
            let (a, f) = (a.as_f64().unwrap(), f.as_f64().unwrap());
            assert!((0.0..1.0).contains(&a) && (0.0..1.0).contains(&f), "{r}");
            // The ocean's cells fill their blocks: counting them can only lower the fraction.
            assert!(f >= a, "{r}");
        }
    }
    // (b): every ocean of the sweep in the same heap, per store, checked.
    let sweep = of(&records, "fig12b");
    assert_eq!(sweep.len(), 4, "{sweep:?}");
    for r in &sweep {
        assert_eq!(r["status"], "ok", "{r}");
        assert!(r["result"] == r["expected"] && number(r, "heap_bytes") == Some(4.0 * 1048576.0), "{r}");
        assert!(number(r, "run_ms").is_some() && number(r, "problem_size").is_some(), "{r}");
    }
    let summary = std::fs::read_to_string(out.join("apps-summary.txt")).unwrap();
    for line in ["dynasoar nocoal", "dynasoar noshift", "Figure 12(b)", "over all classes (the paper's)"] {
        assert!(summary.contains(line), "{line}: {summary}");
    }
    for file in ["fig12d.csv", "fig12d-variants.svg", "fig12-wator-fragmentation.svg", "fig12b.csv"] {
        assert!(out.join(file).is_file(), "{file} was not written");
    }
    let svg = std::fs::read_to_string(out.join("fig12-wator-fragmentation.svg")).unwrap();
    assert!(svg.contains("(fish and sharks)") && svg.contains("noshift"), "both ways, every variant");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn figures_10_and_11_have_the_papers_columns() {
    let out = scratch("figures-10-11");
    let args = [
        "--figures",
        "10,11",
        "--apps",
        "wa-tor,nbody",
        "--fig11-apps",
        "wa-tor",
        "--allocators",
        "kma",
        "--fig11-probes",
        "3",
    ];
    let records = json_lines(&quick_on_cpu(&out, "apps", &args));
    for r in of(&records, "fig10") {
        assert_eq!(r["status"], "ok", "{r}");
        let (total, enumeration, run) =
            (number(r, "total_ms").unwrap(), number(r, "enum_ms").unwrap(), number(r, "run_ms").unwrap());
        assert!((run - (total - enumeration)).abs() < 1e-9, "{r}");
        if r["allocator"] != "soa" {
            assert!(r["expected"].is_string(), "checked against the SOA baseline: {r}");
        }
    }
    let aos = of(&records, "fig10").into_iter().filter(|r| r["allocator"] == "aos").count();
    assert_eq!(aos, 2, "the AOS baseline of every app");

    // Figure 11: the baselines by their memory, every store relative to the AOS baseline.
    let summaries: Vec<&Value> =
        of(&records, "fig11").into_iter().filter(|r| r["mode"] == "largest").collect();
    let find = |store: &str| summaries.iter().find(|r| r["allocator"] == store).copied().unwrap();
    let aos = find("aos");
    assert_eq!(aos["status"], "ok", "{aos}");
    assert_eq!(number(aos, "relative_to_aos"), Some(1.0));
    let heap = number(aos, "heap_bytes").unwrap();
    assert!(number(aos, "footprint_bytes").is_some_and(|b| b > 0.0 && b <= heap), "{aos}");
    for store in ["soa", "dynasoar", "kma"] {
        let r = find(store);
        assert_eq!(number(r, "heap_bytes"), Some(heap), "one heap per app: {r}");
        if r["status"] == "ok" {
            let relative = number(r, "relative_to_aos").unwrap_or_else(|| panic!("{r}"));
            let expected = number(r, "problem_size").unwrap() / number(aos, "problem_size").unwrap();
            assert!((relative - expected).abs() < 1e-9, "{r}");
        }
    }
    let summary = std::fs::read_to_string(out.join("apps-summary.txt")).unwrap();
    let header = summary.lines().find(|l| l.starts_with("app ")).expect("Figure 10's header");
    for column in ["soa", "aos", "dynasoar", "dyn. enum", "fastest general allocator: run, enum"] {
        assert!(header.contains(column), "{column}: {summary}");
    }
    let row =
        summary.lines().find(|l| l.starts_with("wa-tor") && l.contains("heap")).expect("Figure 11's row");
    assert!(row.contains("aos ") && row.contains("(1.00)") && row.contains("dynasoar "), "{row}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_spent_budget_skips_the_rest_and_writes_every_file() {
    let out = scratch("figures-budget");
    // Figure 12's first run takes its whole 2 s limit; the budget of 1 s is spent by then.
    let args = [
        "--figures",
        "12",
        "--allocators",
        "kma",
        "--fig12-steps",
        "1000000",
        "--timeout-s",
        "2",
        "--budget-s",
        "1",
    ];
    let records = json_lines(&quick_on_cpu(&out, "apps", &args));
    assert_eq!(records[0]["status"], "timeout", "{records:?}");
    let skipped: Vec<&Value> = records.iter().filter(|r| r["status"] == "skipped").collect();
    assert!(skipped.len() >= 4, "{records:?}");
    assert!(skipped.iter().all(|r| r["note"].as_str().is_some_and(|n| n.contains("--budget-s"))));
    for file in ["fig12.csv", "fig12b.csv", "fig12d.csv", "apps-summary.txt"] {
        assert!(out.join(file).is_file(), "{file} was not written");
    }
    let _ = std::fs::remove_dir_all(&out);
}
