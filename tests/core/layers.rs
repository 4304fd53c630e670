//! The layer order inside heaptui-core (README "Architecture"): a module
//! may use only the modules below it, so no import circle can form. Reads
//! every `crate::…` path in `crates/heaptui-core/src/` outside test modules
//! and fails on one that goes up or sideways. Between the crates the
//! compiler keeps the order: the core cannot name the UI.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Bottom to top. A module may use those of lower rank; equal ranks are
/// siblings that must not use each other.
const LAYERS: &[(&str, u8)] = &[
    ("mem", 0),
    ("progress", 0),
    ("log", 0),
    ("text", 0),
    ("demo", 0),
    ("work", 0),
    ("model", 1),
    ("import", 2),
    ("graph", 2),
    ("analysis", 3),
    ("cache", 4),
    ("report", 5),
    ("testing", 6),
];

fn rank(module: &str) -> Option<u8> {
    LAYERS.iter().find(|l| l.0 == module).map(|l| l.1)
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code before the file's test module (by convention at the end).
fn non_test_code(text: &str) -> &str {
    match text.find("#[cfg(test)]\nmod ") {
        Some(i) => &text[..i],
        None => text,
    }
}

/// Every module named right after `crate::` in code (`crate::graph::…`;
/// `crate::{model, graph}` counts both). Comment lines are skipped.
fn used_modules(code: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    let code: String = code
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                used.insert(name);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            used.insert(name);
        }
    }
    used
}

fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut bad = Vec::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        // lib.rs declares the modules.
        let Some(own) = rank(&top) else {
            assert!(
                top == "lib",
                "{}: module `{top}` is missing from LAYERS",
                rel.display()
            );
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        for used in used_modules(non_test_code(&text)) {
            if used == top || used.is_empty() || used == "self" {
                continue;
            }
            match rank(&used) {
                Some(r) if r < own => {}
                _ => bad.push(format!("{} ({top}) uses crate::{used}", rel.display())),
            }
        }
    }
    bad
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/heaptui-core/src");
    let bad = violations(&src);
    assert!(
        bad.is_empty(),
        "imports against the layer order:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_check_sees_a_circle() {
    // The shape of the old main: dump used graph and graph used dump.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("model")).unwrap();
    std::fs::create_dir_all(dir.path().join("graph")).unwrap();
    std::fs::write(
        dir.path().join("model/mod.rs"),
        "use crate::graph::Csr;\n#[cfg(test)]\nmod tests { use crate::tui; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("graph/mod.rs"),
        "use crate::{model, mem};\n",
    )
    .unwrap();
    let bad = violations(dir.path());
    assert_eq!(bad, ["model/mod.rs (model) uses crate::graph"]);
}

/// Inside the UI: panes are components that answer with intents; none uses
/// the app (the router) or the frame layout that draws them.
#[test]
fn no_pane_uses_the_app() {
    let panes = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/heaptui-tui/src/panes");
    let mut files = Vec::new();
    rust_files(&panes, &mut files);
    assert!(!files.is_empty());
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for bad in [
            "crate::app",
            "crate::ui::",
            "tui::app",
            "super::app",
            "super::super::app",
            "tui::ui::",
            "super::ui::",
        ] {
            assert!(
                !non_test_code(&text).contains(bad),
                "{} uses `{bad}`",
                file.display()
            );
        }
    }
}
