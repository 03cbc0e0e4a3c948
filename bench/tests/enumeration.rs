//! `dynasoar-bench enumeration --quick` on the CPU backend, through the binary: every
//! measurement is checked by the bench itself (the listed count against the class's blocks,
//! the hierarchical listing against the flat one), here each line is checked again, with the
//! files; and a run whose hierarchical listings lose a block fails.

mod common;

use std::collections::HashMap;

use common::{json_lines, number, quick_on_cpu, run_bench, scratch};
use serde_json::Value;

#[test]
fn quick_enumeration_on_the_cpu_lists_the_same_blocks_both_ways() {
    let out = scratch("enumeration");
    let output = quick_on_cpu(&out, "enumeration", &[]);
    let records = json_lines(&output);
    // Two heaps, five fills, two classes, two enumerations.
    assert_eq!(records.len(), 2 * 5 * 2 * 2, "{}", String::from_utf8_lossy(&output.stdout));
    let mut pairs: HashMap<(u64, u64, String), Vec<&Value>> = HashMap::new();
    for r in &records {
        assert_eq!(r["test"], "enumeration", "{r}");
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["verified"], true, "{r}");
        assert_eq!(number(r, "listed"), number(r, "class_blocks"), "{r}");
        let t = number(r, "enum_ms").expect("a time");
        assert!(t.is_finite() && t > 0.0, "{r}");
        assert!(number(r, "unchanged_ms").is_some_and(|t| t > 0.0), "{r}");
        let key = (
            number(r, "heap_bytes").unwrap() as u64,
            (number(r, "fill_target").unwrap() * 100.0).round() as u64,
            r["class"].as_str().unwrap().to_string(),
        );
        pairs.entry(key).or_default().push(r);
    }
    for (key, rs) in &pairs {
        let modes: Vec<&str> = rs.iter().map(|r| r["mode"].as_str().unwrap()).collect();
        assert_eq!(modes, ["flat", "hierarchical"], "{key:?}");
        assert_eq!(number(rs[0], "listed"), number(rs[1], "listed"), "{key:?}");
        assert!(number(rs[1], "vs_flat").is_some(), "{key:?}");
        let (fill, class) = (key.1, key.2.as_str());
        let blocks = number(rs[0], "class_blocks").unwrap();
        if fill == 0 {
            assert_eq!(blocks, 0.0, "{key:?}: an empty heap");
        } else if class == "Huge" {
            assert!(blocks > 0.0, "{key:?}");
        }
    }
    // Both heaps' bitmaps have levels above the blocks for the hierarchical form to use.
    let mut levels: Vec<u64> = records.iter().map(|r| number(r, "levels").unwrap() as u64).collect();
    levels.dedup();
    assert_eq!(levels, [2, 3]);
    // The fills approach their targets.
    for r in records.iter().filter(|r| number(r, "fill_target") == Some(0.5)) {
        let fill = number(r, "heap_fill").unwrap();
        assert!((0.4..=0.6).contains(&fill), "{r}");
    }
    for name in ["enumeration.csv", "enumeration.json", "enumeration-summary.txt"] {
        assert!(out.join(name).exists(), "{name} written");
    }
    assert!(out.join("enumeration-huge.svg").exists(), "Figure 13(b) of Huge drawn");
    let csv = std::fs::read_to_string(out.join("enumeration.csv")).unwrap();
    assert_eq!(csv.lines().count(), records.len() + 1);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("flat/hier"), "the table follows the lines");
}

#[test]
fn a_listing_that_loses_a_block_fails_the_run() {
    let out = scratch("enumeration-wrong");
    let output = run_bench(
        &out,
        &[
            "enumeration",
            "--quick",
            "--backend",
            "cpu",
            "--cpu-threads",
            "2",
            "--quiet",
            "--heap-mib",
            "1",
            "--fills",
            "0,50",
            "--test-drop-block",
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stderr).contains("status `wrong`"));
    let records = json_lines(&output);
    assert_eq!(records.len(), 2 * 2 * 2);
    for r in &records {
        let empty = number(r, "class_blocks") == Some(0.0);
        let flat = r["mode"] == "flat";
        // Only non-empty hierarchical listings lose a block.
        assert_eq!(r["verified"], empty || flat, "{r}");
        assert_eq!(r["status"], if empty || flat { "ok" } else { "wrong" }, "{r}");
        if !(empty || flat) {
            let note = r["note"].as_str().unwrap();
            assert!(note.contains("missing") && note.contains("listed"), "{note}");
        }
    }
}
