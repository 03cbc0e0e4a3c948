//! The crates' module graphs have no cycle: a module uses only modules below it in its crate's
//! layer list (`lib.rs`). Read from the sources: every `crate::name` a module's files mention
//! (in code, not comments) is an edge to top-level module `name`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules of the crate at `src` and the top-level modules each one's files name.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entry in std::fs::read_dir(src).expect("crate source folder") {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" || name == "main" {
            continue;
        }
        let files = if path.is_dir() { rust_files(&path) } else { vec![path.clone()] };
        let edges = graph.entry(name.clone()).or_default();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for line in text.lines() {
                let code = line.split("//").next().unwrap_or("");
                let mut rest = code;
                while let Some(at) = rest.find("crate::") {
                    rest = &rest[at + "crate::".len()..];
                    // `crate::{a::X, b, Plain}`: each lowercase name at the group's top level.
                    let names: Vec<String> = match rest.strip_prefix('{') {
                        Some(group) => top_level_names(group),
                        None => vec![leading_name(rest)],
                    };
                    // Re-exported items (`crate::Plain`) are not module edges.
                    for target in names {
                        if target.starts_with(|c: char| c.is_ascii_lowercase())
                            && target != name
                            && target != "self"
                        {
                            edges.insert(target);
                        }
                    }
                }
            }
        }
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for edges in graph.values_mut() {
        edges.retain(|e| modules.contains(e));
    }
    graph
}

fn leading_name(text: &str) -> String {
    text.trim_start().chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect()
}

/// The leading names of the comma-separated parts of a `{ ... }` group (until its `}`).
fn top_level_names(group: &str) -> Vec<String> {
    let (mut depth, mut start, mut names) = (0, 0, Vec::new());
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                names.push(leading_name(&group[start..i]));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                names.push(leading_name(&group[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    names
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// A cycle of `graph`, if it has one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_string());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in &graph[node] {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn grouped_imports_name_their_modules() {
    assert_eq!(top_level_names("arch::{self, X}, heap::Heap, Plain};"), ["arch", "heap", "Plain"]);
    assert_eq!(leading_name(" block::DATA_OFFSET"), "block");
}

#[test]
fn the_checker_finds_a_cycle() {
    let mut graph = BTreeMap::new();
    graph.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    graph.insert("b".to_string(), BTreeSet::from(["c".to_string()]));
    graph.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(find_cycle(&graph), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    graph.get_mut("c").unwrap().clear();
    assert_eq!(find_cycle(&graph), None);
}

#[test]
fn no_crate_has_an_import_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    for krate in
        ["dynasoar-device", "dynasoar-host", "dynasoar-baselines", "dynasoar-macros", "dynasoar-build"]
    {
        let graph = module_graph(&root.join(krate).join("src"));
        assert!(graph.len() > 1 || krate == "dynasoar-build", "{krate}: no modules found");
        if let Some(cycle) = find_cycle(&graph) {
            panic!("{krate}: the modules import each other in a circle: {}", cycle.join(" -> "));
        }
    }
}
