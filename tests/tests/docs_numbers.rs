//! Every measured number in README.md and docs/benchmarks.md is backed by a results file
//! (issue 26).
//!
//! The project's evidence rule: a number in the documentation comes from a file under
//! `docs/results/` whose first lines name the card, the commit and the command that made it.
//! This test checks three things:
//!
//! 1. every *unit* of the two pages (a paragraph, a list item, or a table row) that states a
//!    measured quantity also holds a Markdown link to a path under `docs/results/`;
//! 2. every such link points to a file or folder that exists;
//! 3. every linked results file names a card (or machine), a commit and a command in its first
//!    lines, or in the entry of its folder's `README.md` that names it; the files that do not
//!    are listed in [`KNOWN_HEADERLESS`], each with its reason.
//!
//! # What counts as a measured quantity
//!
//! A number followed by a unit of time, rate or proportion:
//! `ns`, `us`, `µs`, `ms`, `s`, `GB/s`, `TB/s`, `G interactions/s` (with or without a space
//! before the unit), `%` and `x` (directly after the number). The rules that keep the detector
//! from firing on things that are not measurements:
//!
//! - a number starts at a digit that follows no letter, digit, `_` or `.` (so `H100s`, `sm_90`,
//!   `x86`, version numbers such as `580.159.04` and dates are not numbers with units);
//! - the unit must end at a word boundary: `3 steps`, `2 cores`, `64-bit`, `1.5M nodes`,
//!   `20 seconds` are not quantities (`64-bit` has no unit of the list; `3 s.` is one);
//! - `x` counts only right after the number and not before another letter or digit, so sizes
//!   such as `2048 x 2560`, `1700x1700` and `9 apps x 21 allocators` and hex such as `0x1f`
//!   are not ratios, while `1.2x`, `258x-5869x` and `(2.3x)` are;
//! - text in code spans and fenced code blocks is skipped (command lines such as
//!   `--timeout-s 15` are configuration, not results), and so are link targets and headings;
//! - `k = 512`, `16 M objects`, `256 MiB` and other counts and sizes have no unit of the list.
//!
//! What the detector does not see: a bare number whose unit is only in its table's header or
//! caption (`| 0.494 / 0.670 |` under "ns per operation"), and counts without a unit. Such
//! tables are expected to link their file in the caption, as the measured units do.
//!
//! # What counts as backed
//!
//! A unit is backed when it holds a Markdown link (`[text](path)`) whose target, resolved from
//! the page's folder, lies under `docs/results/`. A table row is also backed by a link in the
//! paragraph directly above its table (the table's caption), so that a table quoting one file
//! needs the link once. The original DynaSOAr's figures, which we could not measure ourselves,
//! are cited from the issue that gives them: a unit that names "original" and cites
//! "(issue N)" is backed by that citation.

use std::fs;
use std::path::{Path, PathBuf};

/// The pages whose numbers must be backed, relative to the workspace root.
const PAGES: [&str; 2] = ["README.md", "docs/benchmarks.md"];

/// Linked results files without card, commit or command in their first lines (or their
/// folder's README.md), with the reason. Paths relative to `docs/results/`; a path ending in
/// `/` covers the folder and every file in it.
const KNOWN_HEADERLESS: &[(&str, &str)] = &[
    (
        "h200-2026-11-22/fig10.csv",
        "raw CSV written by `dynasoar-bench apps --figures 10` (a header would break the CSV); \
         card (H200), date and command are given beside the link in docs/benchmarks.md, the \
         commit was not recorded",
    ),
    ("h200-2026-11-22/fig10-wa-tor.svg", "plot of fig10.csv (same run, same reason)"),
    (
        "h200-2026-11-22d/synthetic-frag.jsonl",
        "raw JSON lines of `dynasoar-bench synthetic`; card, commits (849898e, f7b0143) and \
         command beside the link in docs/benchmarks.md",
    ),
    (
        "h200-2026-11-22d/synthetic-oom.jsonl",
        "raw JSON lines of `dynasoar-bench synthetic`; card, commits (849898e, f7b0143) and \
         command beside the link in docs/benchmarks.md",
    ),
    (
        "h200-2026-11-22f/linux-scalability.txt",
        "raw output of `run.sh bench`; card and commit (24d8dc7) beside the link",
    ),
    (
        "2026-11-25/ab-h200-layout-loop.txt",
        "A/B output without a header; the folder's README.md names card (H200) and commits \
         (3d72309, 93bcced, 43f1e48), the runner's command line was not recorded",
    ),
    (
        "2026-11-25/ab-h100-prefetch.txt",
        "A/B output without a header; the folder's README.md names card (H100) and commits, the \
         runner's command line was not recorded",
    ),
    (
        "2026-11-25/ab-h100-warp-chunks.txt",
        "A/B output without a header; the folder's README.md names card (H100) and commits, the \
         runner's command line was not recorded",
    ),
    (
        "2026-11-25/ab-streaming-loop.txt",
        "A/B output; its header and the folder's README.md name cards (H100, H200) and commits \
         per block, the runner's command line was not recorded",
    ),
    (
        "2026-11-25/apps-summary-streaming-session.txt",
        "`run.sh apps` on an H100 \"at the final code of this session\"; the commit was not \
         recorded",
    ),
    (
        "h200-2026-11-22/fig11.jsonl",
        "raw JSON lines of `dynasoar-bench apps --figures 11`; card, date and command beside the \
         link in docs/benchmarks.md, the commit was not recorded",
    ),
    (
        "h200-2026-11-22/synthetic-alloc.jsonl",
        "raw JSON lines of `dynasoar-bench synthetic`; card, date and command beside the link, \
         the commit was not recorded",
    ),
    (
        "h200-2026-11-22/registers.csv",
        "raw CSV of `dynasoar-bench registers`; card (the H200 machine's ptxas) beside the link, \
         the commit was not recorded",
    ),
    (
        "h200-2026-11-22/kdtree.csv",
        "raw CSV of `dynasoar-bench workloads --workloads kdtree`; card, date and command beside \
         the link, the commit was not recorded",
    ),
    ("h200-2026-11-22/kdtree.svg", "plot of kdtree.csv (same run, same reason)"),
    ("h200-2026-11-22/kdtree-slowdown.svg", "plot of kdtree.csv (same run, same reason)"),
    (
        "h200-2026-11-22b/synthetic-mixed.jsonl",
        "raw JSON lines; card, commit (4a40781) and command beside the link in docs/benchmarks.md",
    ),
    (
        "h200-2026-11-22c/",
        "folder (and its files) of raw JSON lines of `dynasoar-bench synthetic`; card, commit (1300d11 and the \
         fix after it) and commands in the table beside the link in docs/benchmarks.md",
    ),
    (
        "h200-2026-11-22e/synthetic-oom.jsonl",
        "raw JSON lines; card, bench commit (620499a) and command beside the link",
    ),
    (
        "h200-2026-11-22e/synthetic-frag-circular.jsonl",
        "raw JSON lines; card, bench commit (620499a) and command beside the link",
    ),
    (
        "h200-2026-11-22e/fig12.jsonl",
        "raw JSON lines; card, commits (bench 620499a, cubins dee8437) and command beside the link",
    ),
    ("h200-2026-11-22e/fig12-wator-steps.svg", "plot of fig12.jsonl (same run, same reason)"),
    ("h200-2026-11-22e/fig12-wator-fragmentation.svg", "plot of fig12.jsonl (same run, same reason)"),
    (
        "h200-2026-11-22e/bench.jsonl",
        "raw key=value lines of `run.sh bench`; card and commit (dee8437) beside the link",
    ),
    (
        "h200-2026-11-22f/bench.jsonl",
        "raw key=value lines of `run.sh bench`; card and commit (24d8dc7) beside the link",
    ),
    (
        "h200-2026-11-22f/apps.jsonl",
        "raw key=value lines of `run.sh apps`; card and commit (24d8dc7) beside the link",
    ),
    (
        "h200-2026-11-22f/field-access.txt",
        "raw output of `run.sh bench`; card and commit (24d8dc7) beside the link",
    ),
];

/// Units of measured quantities, longest first (so `GB/s` is tried before `s`).
const UNITS: [&str; 10] = ["G interactions/s", "GB/s", "TB/s", "ms", "us", "µs", "ns", "s", "%", "x"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// One unit of a page: a paragraph, a list item or a table row.
#[derive(Debug)]
struct Unit {
    /// 1-based line of the unit's first line.
    line: usize,
    text: String,
    /// For a table row: the paragraph above its table.
    caption: Option<String>,
}

/// Splits a page into paragraphs, list items and table rows; fenced code blocks and headings
/// are left out.
fn units(page: &str) -> Vec<Unit> {
    let mut out = Vec::new();
    let mut current: Option<Unit> = None;
    let mut last_paragraph: Option<String> = None;
    let mut in_table = false;
    let mut table_caption: Option<String> = None;
    let mut in_fence = false;
    let flush = |current: &mut Option<Unit>, out: &mut Vec<Unit>, last: &mut Option<String>| {
        if let Some(u) = current.take() {
            *last = Some(u.text.clone());
            out.push(u);
        }
    };
    for (i, line) in page.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            flush(&mut current, &mut out, &mut last_paragraph);
            last_paragraph = None;
            in_fence = !in_fence;
            in_table = false;
            continue;
        }
        if in_fence {
            continue;
        }
        if trimmed.is_empty() {
            flush(&mut current, &mut out, &mut last_paragraph);
            in_table = false;
            continue;
        }
        if trimmed.starts_with('#') {
            flush(&mut current, &mut out, &mut last_paragraph);
            last_paragraph = None;
            in_table = false;
            continue;
        }
        if trimmed.starts_with('|') {
            if !in_table {
                // The caption is the paragraph that ends right above the table (after no
                // heading or code block).
                flush(&mut current, &mut out, &mut last_paragraph);
                table_caption = last_paragraph.clone();
                in_table = true;
            }
            out.push(Unit { line: i + 1, text: line.to_string(), caption: table_caption.clone() });
            continue;
        }
        in_table = false;
        let item = trimmed.starts_with("- ")
            || trimmed.starts_with("* ")
            || trimmed
                .split_once(". ")
                .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if item {
            flush(&mut current, &mut out, &mut last_paragraph);
        }
        match &mut current {
            Some(u) => {
                u.text.push('\n');
                u.text.push_str(line);
            }
            None => current = Some(Unit { line: i + 1, text: line.to_string(), caption: None }),
        }
    }
    flush(&mut current, &mut out, &mut last_paragraph);
    out
}

/// The text of a unit with code spans and link targets removed (the link texts stay).
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '`' => {
                // Skip to the closing backtick (an unclosed one skips the rest).
                for d in chars.by_ref() {
                    if d == '`' {
                        break;
                    }
                }
                out.push(' ');
            }
            ']' if chars.peek() == Some(&'(') => {
                let mut depth = 0;
                for d in chars.by_ref() {
                    match d {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

/// The measured quantities in `text` (already [`prose`]), as written.
fn quantities(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts = chars[i].is_ascii_digit()
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_' || chars[i - 1] == '.'));
        if !starts {
            i += 1;
            continue;
        }
        // The number: digits, thousands separators, one decimal part.
        let mut j = i;
        while j < chars.len()
            && (chars[j].is_ascii_digit()
                || ((chars[j] == ',' || chars[j] == '.')
                    && chars.get(j + 1).is_some_and(char::is_ascii_digit)))
        {
            j += 1;
        }
        let number: String = chars[i..j].iter().collect();
        let after_space =
            if chars.get(j) == Some(&' ') || chars.get(j) == Some(&'\u{a0}') { j + 1 } else { j };
        let mut matched = None;
        for unit in UNITS {
            // `%` and `x` only right after the number.
            let at = if unit == "%" || unit == "x" { j } else { after_space };
            let u: Vec<char> = unit.chars().collect();
            if chars.len() >= at + u.len() && chars[at..at + u.len()] == u[..] {
                let next = chars.get(at + u.len());
                let boundary = next.is_none_or(|c| !(c.is_alphanumeric() || *c == '_'));
                if boundary {
                    matched = Some(format!("{number}{}{unit}", if at > j { " " } else { "" }));
                    break;
                }
            }
        }
        if let Some(q) = matched {
            found.push(q);
        }
        i = j.max(i + 1);
    }
    found
}

/// The targets of the Markdown links in `text`.
fn link_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(p) = rest.find("](") {
        let after = &rest[p + 2..];
        match after.find(')') {
            Some(end) => {
                out.push(after[..end].trim().to_string());
                rest = &after[end..];
            }
            None => break,
        }
    }
    out
}

/// The results paths (relative to `docs/results/`) that the links of `text` on `page` name.
fn results_links(page: &Path, text: &str) -> Vec<(String, PathBuf)> {
    let results = root().join("docs/results");
    let dir = page.parent().unwrap();
    link_targets(text)
        .into_iter()
        .filter(|t| !t.contains("://") && !t.starts_with('#'))
        .filter_map(|t| {
            let path = normalize(&dir.join(t.split('#').next().unwrap()));
            let rel = path.strip_prefix(&results).ok()?.to_string_lossy().replace('\\', "/");
            let rel = if t.ends_with('/') { format!("{rel}/") } else { rel };
            Some((rel, path))
        })
        .collect()
}

/// `a/b/../c` -> `a/c`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// Whether a unit cites the original DynaSOAr's figures from an issue.
fn cites_issue_for_original(text: &str) -> bool {
    let lower = text.to_lowercase();
    lower.contains("original") && lower.contains("(issue ")
}

/// The unbacked units of a page: (line, quantities, text).
fn unbacked(page: &Path, content: &str) -> Vec<(usize, Vec<String>, String)> {
    let mut out = Vec::new();
    for unit in units(content) {
        let q = quantities(&prose(&unit.text));
        if q.is_empty() {
            continue;
        }
        let backed = !results_links(page, &unit.text).is_empty()
            || unit.caption.as_deref().is_some_and(|c| !results_links(page, c).is_empty())
            || cites_issue_for_original(&unit.text);
        if !backed {
            out.push((unit.line, q, unit.text));
        }
    }
    out
}

#[test]
fn every_measured_number_links_to_a_results_file() {
    let mut failures = Vec::new();
    for page in PAGES {
        let path = root().join(page);
        let content = fs::read_to_string(&path).unwrap();
        for (line, q, text) in unbacked(&path, &content) {
            let first = text.lines().next().unwrap_or("");
            failures
                .push(format!("{page}:{line}: {} without a link to docs/results/: {first}", q.join(", ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} units state measured numbers without a results file (link the file under docs/results/ \
         that holds them in the same paragraph, list item or table row, or remove the number):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_results_link_exists() {
    let mut missing = Vec::new();
    for page in PAGES {
        let path = root().join(page);
        let content = fs::read_to_string(&path).unwrap();
        for (rel, target) in results_links(&path, &content) {
            if !target.exists() {
                missing.push(format!("{page}: docs/results/{rel}"));
            }
        }
    }
    assert!(missing.is_empty(), "links to results files that do not exist:\n{}", missing.join("\n"));
}

/// Whether `text` names a card or machine, a commit and a command.
fn header_parts(text: &str) -> [bool; 3] {
    let card =
        ["H100", "H200", "NVIDIA", "machine:", "Card:", "CPU", "no GPU"].iter().any(|c| text.contains(c));
    let commit = text.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| {
        (7..=40).contains(&w.len())
            && w.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            && w.bytes().any(|b| b.is_ascii_digit())
            && w.bytes().any(|b| b.is_ascii_alphabetic())
    });
    let lower = text.to_lowercase();
    let command = [
        "run.sh",
        "cargo ",
        "dynasoar-bench",
        "gpu-ab.sh",
        "run-ab.sh",
        "ptxas",
        "ncu ",
        "ab-apps.sh",
        "command",
        "linux-scalability --",
        "linux scalability --",
        "--backend",
        "dynasoar_",
    ]
    .iter()
    .any(|c| lower.contains(c));
    [card, commit, command]
}

/// Whether a [`KNOWN_HEADERLESS`] entry covers `rel`: the same path, or a folder (ending in
/// `/`) that holds it.
fn covers(known: &str, rel: &str) -> bool {
    known == rel || (known.ends_with('/') && rel.starts_with(known))
}

/// The header of a results file: its first lines, and the lines of its folder's README.md that
/// name it (with that README's first lines, which name the session's card).
fn header_of(path: &Path) -> String {
    let mut header = String::new();
    if path.is_file() {
        let content = fs::read(path).unwrap();
        let content = String::from_utf8_lossy(&content);
        for line in content.lines().take(12) {
            header.push_str(line);
            header.push('\n');
        }
    }
    let (readme, name) = if path.is_dir() {
        (path.join("README.md"), None)
    } else {
        (path.parent().unwrap().join("README.md"), path.file_name().map(|n| n.to_string_lossy().into_owned()))
    };
    if readme != path
        && let Ok(index) = fs::read_to_string(&readme)
    {
        let naming: Vec<&str> = match &name {
            Some(name) => index.lines().filter(|l| l.contains(name.as_str())).collect(),
            None => index.lines().collect(),
        };
        if !naming.is_empty() {
            for line in index.lines().take(6).chain(naming) {
                header.push_str(line);
                header.push('\n');
            }
        }
    }
    header
}

#[test]
fn every_linked_results_file_names_card_commit_and_command() {
    let mut failures = Vec::new();
    let mut used_exceptions = Vec::new();
    for page in PAGES {
        let path = root().join(page);
        let content = fs::read_to_string(&path).unwrap();
        for (rel, target) in results_links(&path, &content) {
            if !target.exists() {
                continue; // every_results_link_exists reports it
            }
            if let Some((known, _)) = KNOWN_HEADERLESS.iter().find(|(k, _)| covers(k, &rel)) {
                used_exceptions.push(*known);
                continue;
            }
            let [card, commit, command] = header_parts(&header_of(&target));
            if !(card && commit && command) {
                let lacks: Vec<&str> = [(card, "card"), (commit, "commit"), (command, "command")]
                    .iter()
                    .filter(|(ok, _)| !ok)
                    .map(|(_, what)| *what)
                    .collect();
                failures.push(format!("{page}: docs/results/{rel} lacks {}", lacks.join(", ")));
            }
        }
    }
    failures.sort();
    failures.dedup();
    assert!(
        failures.is_empty(),
        "results files whose first lines (or folder README.md) do not name card, commit and command \
         (add a header, or list the file in KNOWN_HEADERLESS with the reason):\n{}",
        failures.join("\n")
    );
    // A listed exception that no page links any more is stale.
    let stale: Vec<&str> =
        KNOWN_HEADERLESS.iter().map(|(k, _)| *k).filter(|k| !used_exceptions.contains(k)).collect();
    assert!(stale.is_empty(), "KNOWN_HEADERLESS lists files no page links: {stale:?}");
}

/// The detector itself, on lines that must and must not count.
#[test]
fn the_detector_finds_measurements_and_nothing_else() {
    let measured = [
        ("k = 512 took 2.5 ms", "2.5 ms"),
        ("0.062 ns per allocation", "0.062 ns"),
        ("53.2 us (66% of a copy)", "53.2 us"),
        ("1,815 GB/s", "1,815 GB/s"),
        ("2.2 TB/s", "2.2 TB/s"),
        ("n-body 16.4 s (original 22.4 s)", "16.4 s"),
        ("1.2x to 4.8x", "1.2x"),
        ("CUDA's malloc 258x-5869x slower", "258x"),
        ("Wa-Tor -5%", "5%"),
        ("12.5 G interactions/s", "12.5 G interactions/s"),
        ("63.9-65.1 us by default", "65.1 us"),
        ("took 3 s.", "3 s"),
        ("57.5 µs", "57.5 µs"),
    ];
    for (text, want) in measured {
        let got = quantities(&prose(text));
        assert!(got.iter().any(|q| q == want), "{text:?}: found {got:?}, expected {want:?}");
    }
    let not_measured = [
        "named by 64-bit handles",
        "Linux Scalability, k = 512",
        "a 2-core CPU, 2 cores",
        "the paper's 2048 x 2560 ocean, 1700x1700",
        "9 apps x 21 allocators",
        "driver 580.159.04, CUDA 13, Rust 1.95 or newer",
        "nightly-2026-05-20 on 2026-11-26",
        "H100s and H200s, sm_90, x86_64",
        "3 steps, 500 steps, 1.5M nodes, 20 seconds",
        "a pool of 256 MiB, 16 M objects",
        "0x1f and 0xff",
        "run `--timeout-s 15` and `--steps 300`",
        "see [the file](results/2026-11-26/x1.txt)",
        "(`docs/results/2026-11-26-newcomer/`)",
    ];
    for text in not_measured {
        let got = quantities(&prose(text));
        assert!(got.is_empty(), "{text:?}: found {got:?}, expected nothing");
    }
}

/// A page with a planted unlinked number fails, the same page with the link passes, and a
/// table row is backed by its caption's link.
#[test]
fn a_planted_unlinked_number_is_reported() {
    let page = root().join("docs/benchmarks.md");
    let planted = "# T\n\nWa-Tor took 0.34 s on the H200.\n";
    let found = unbacked(&page, planted);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, 3);
    assert_eq!(found[0].1, vec!["0.34 s".to_string()]);

    let linked = "# T\n\nWa-Tor took 0.34 s on the H200 ([apps](results/2026-11-26/ab-apps.txt)).\n";
    assert!(unbacked(&page, linked).is_empty());

    let table = "Times ([file](results/2026-11-26/ab-apps.txt)):\n\n| app | time |\n| --- | ---: |\n| Wa-Tor | 0.34 s |\n";
    assert!(unbacked(&page, table).is_empty(), "{:?}", unbacked(&page, table));
    let table_alone = "Times:\n\n| app | time |\n| --- | ---: |\n| Wa-Tor | 0.34 s |\n";
    assert_eq!(unbacked(&page, table_alone).len(), 1);

    let list = "Intro ([file](results/2026-11-26/ab-apps.txt)).\n\n- first: 2.5 ms\n- second, no number\n";
    assert_eq!(unbacked(&page, list).len(), 1, "a list item needs its own link");

    let original = "The original took 17.9 ms (the original's figures measured on an H200 on \
                    2026-11-26 (issue 26)).\n";
    assert!(unbacked(&page, original).is_empty());
}
