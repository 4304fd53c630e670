//! The layering inside the TUI crate, checked: each of its modules may
//! import only the modules of a lower layer ([`LAYERS`]), so no import
//! circle can form and the module docs' description stays true. Reads the
//! crate's sources (the code before each file's test module) and resolves
//! every `crate::…` and `super::…` path to the module it names.

use std::path::{Path, PathBuf};

/// Bottom to top. A submodule may import those of a lower layer; those of
/// one layer are siblings that must not import each other. The crate root
/// (lib.rs: the terminal, the threads) and the test harness (`testing`)
/// sit above all.
const LAYERS: &[(&str, u8)] = &[
    // Leaves: the pane registry, colours, signals, the fuzzy matcher, the
    // instance rows.
    ("pane_id", 0),
    ("theme", 0),
    ("signals", 0),
    ("matcher", 0),
    ("instance_rows", 0),
    // Text, the frame layout, the key table.
    ("fmt", 1),
    ("layout", 1),
    ("keys", 1),
    // Comparison figures; the help overlay.
    ("compared", 2),
    ("help", 2),
    // What the background threads send.
    ("msg", 3),
    // The analysis worker, the filter thread, the arrival of stages.
    ("worker", 4),
    ("filtering", 4),
    ("loading", 4),
    ("jobs", 5),
    // The components, then the router, the view, the loop.
    ("panes", 6),
    ("app", 7),
    ("ui", 8),
    ("event_loop", 9),
];

fn rank(module: &str) -> Option<u8> {
    LAYERS.iter().find(|l| l.0 == module).map(|l| l.1)
}

/// The code before the file's test module (by convention at the end),
/// without comment lines.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first identifier of `rest` (a path segment), if any.
fn ident(rest: &str) -> &str {
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    &rest[..end]
}

/// The first segments named by a path tail: `x::…` gives `x`, `{x, y::z}`
/// gives both.
fn heads(rest: &str) -> Vec<&str> {
    match rest.strip_prefix('{') {
        Some(group) => {
            let mut depth = 0;
            let mut start = 0;
            let mut out = Vec::new();
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        out.push(ident(group[start..i].trim_start()));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.push(ident(group[start..i].trim_start()));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            out.retain(|s| !s.is_empty());
            out
        }
        None => vec![ident(rest)],
    }
}

/// The other modules of the crate (or items of its root) that the code of
/// the file at `module` (its path inside the crate, e.g. `["panes",
/// "types"]`) names.
fn imports(module: &[&str], code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let top = module[0];
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        out.extend(heads(rest).into_iter().map(str::to_string));
    }
    let mut rest = code;
    while let Some(i) = rest.find("super::") {
        // Only the first `super` of a chain starts one.
        let starts = i == 0 || !rest[..i].ends_with("::");
        let mut tail = &rest[i..];
        let mut ups = 0;
        while let Some(t) = tail.strip_prefix("super::") {
            ups += 1;
            tail = t;
        }
        rest = tail;
        if !starts || ups > module.len() {
            continue;
        }
        let base = &module[..module.len() - ups];
        match base.first() {
            // Inside the file's own submodule.
            Some(_) => {}
            None => out.extend(heads(tail).into_iter().map(str::to_string)),
        }
    }
    out.retain(|m| m != top && m != "*");
    out.sort();
    out.dedup();
    out
}

/// The imports of one file that break the layering, as `file uses module`.
fn violations_in(module: &[&str], code: &str) -> Vec<String> {
    let Some(own) = rank(module[0]) else {
        return vec![format!("{}: not in LAYERS", module.join("::"))];
    };
    imports(module, code)
        .into_iter()
        .filter(|m| !matches!(rank(m), Some(r) if r < own))
        .map(|m| format!("{} uses {m}", module.join("::")))
        .collect()
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

/// The module path inside the crate of a file under its `src`.
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

#[test]
fn every_tui_module_imports_only_lower_layers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut bad = Vec::new();
    let mut seen = Vec::new();
    for file in &files {
        let module = module_of(file.strip_prefix(&root).unwrap());
        // The crate root, the test harness, and this test.
        if module == ["lib"] || module == ["testing"] || module == ["layering"] {
            continue;
        }
        let module: Vec<&str> = module.iter().map(String::as_str).collect();
        seen.push(module[0].to_string());
        let text = std::fs::read_to_string(file).unwrap();
        bad.extend(violations_in(&module, &code(&text)));
    }
    assert!(bad.is_empty(), "{bad:#?}");
    for (m, _) in LAYERS {
        assert!(
            seen.iter().any(|s| s == m),
            "{m} is in LAYERS, not in the crate"
        );
    }
}

#[test]
fn an_import_up_or_sideways_is_found() {
    // Up: a pane naming the router, directly or through `super`.
    assert_eq!(
        violations_in(&["panes", "types"], "use crate::app::App;"),
        ["panes::types uses app"]
    );
    assert_eq!(
        violations_in(&["panes", "types"], "use super::super::ui;"),
        ["panes::types uses ui"]
    );
    // Sideways, in a group.
    assert_eq!(
        violations_in(&["worker"], "use super::{loading::Totals, msg::Msg};"),
        ["worker uses loading"]
    );
    // Down, and inside the module itself, are fine.
    assert!(violations_in(&["panes", "types"], "use super::Ctx; use crate::keys::Cmd;").is_empty());
    // The crate root (the terminal, the threads) is above every module.
    assert_eq!(
        violations_in(&["event_loop"], "super::suspend();"),
        ["event_loop uses suspend"]
    );
    assert!(violations_in(&["app", "navigation"], "use super::{Nav, PaneId};").is_empty());
}
