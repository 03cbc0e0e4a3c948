//! The code that README.md and docs/tutorial.md show is code that CI compiles: every ```rust and
//! ```toml block of theirs is, word for word, part of a file of one of the packages in
//! templates/, which scripts/check-template.sh builds, tests and runs (indentation may differ
//! by a constant prefix, for pieces of a function).
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The `.rs` and `.toml` files under `dir`, without build outputs.
fn sources(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n != "target") {
                sources(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs" || e == "toml") {
            out.push((path.clone(), std::fs::read_to_string(&path).unwrap()));
        }
    }
}

/// The fenced code blocks of a Markdown text in these languages: (language, first line, text).
fn blocks(markdown: &str, languages: &[&str]) -> Vec<(String, usize, String)> {
    let mut out = Vec::new();
    let mut open: Option<(String, usize, Vec<&str>)> = None;
    for (n, line) in markdown.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => open = Some((info.trim().to_string(), n + 1, Vec::new())),
            (Some(_), Some("")) => {
                let (lang, first, lines) = open.take().unwrap();
                if languages.contains(&lang.as_str()) {
                    out.push((lang, first, lines.join("\n")));
                }
            }
            (Some((_, _, lines)), _) => lines.push(line),
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "an unclosed code block");
    out
}

/// Whether `block` is a run of lines of `text`, each with the same indentation added (empty
/// lines aside).
fn contains(text: &str, block: &str) -> bool {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    let wanted: Vec<&str> = block.lines().map(str::trim_end).collect();
    let Some(anchor) = wanted.iter().position(|l| !l.is_empty()) else { return true };
    (0..lines.len().saturating_sub(wanted.len() - 1)).any(|start| {
        let Some(indent) = lines[start + anchor].strip_suffix(wanted[anchor]) else { return false };
        indent.chars().all(char::is_whitespace)
            && wanted
                .iter()
                .zip(&lines[start..])
                .all(|(w, l)| if w.is_empty() { l.is_empty() } else { l.strip_prefix(indent) == Some(*w) })
    })
}

#[test]
fn the_matcher_allows_an_indentation_and_nothing_else() {
    let text = "fn f() {\n    let a = 1;\n\n    let b = 2;\n}\n";
    assert!(contains(text, "let a = 1;\n\nlet b = 2;"));
    assert!(contains(text, "fn f() {\n    let a = 1;"));
    assert!(!contains(text, "let a = 1;\nlet b = 2;"), "a line left out");
    assert!(!contains(text, "let a = 2;"));
    assert!(!contains(text, "let a = 1;\n  let b = 2;"), "indentation changed within the block");
}

#[test]
fn readme_and_tutorial_code_is_compiled_code() {
    let root = root();
    let mut files = Vec::new();
    sources(&root.join("templates"), &mut files);
    assert!(files.len() >= 8, "templates/ has {} source files", files.len());
    for (doc, languages, at_least) in
        [("README.md", &["rust", "toml"][..], 2), ("docs/tutorial.md", &["rust", "toml"][..], 10)]
    {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        let blocks = blocks(&text, languages);
        assert!(blocks.len() >= at_least, "{doc}: {} code blocks, expected {at_least} or more", blocks.len());
        for (lang, line, block) in blocks {
            assert!(
                files.iter().any(|(_, text)| contains(text, &block)),
                "{doc}:{line}: this ```{lang} block is not part of any file under templates/ (CI \
                 compiles those); copy it from there:\n{block}"
            );
        }
    }
}
