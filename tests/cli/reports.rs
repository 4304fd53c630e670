//! Every fixture's text and JSON report, byte for byte, against the copies
//! kept in `tests/reports/`: a refactor that changes one byte of a report
//! fails here. Only the timings are masked, since they differ run to run.
//!
//! After a change that alters reports on purpose, rewrite the copies with
//! `HEAPTUI_BLESS=1 cargo test --test cli reports` and read the diff before
//! committing it.

use std::path::{Path, PathBuf};

/// The dumps among `fixtures/` (Java sources, histograms, notes and
/// generators are not).
pub(crate) fn dumps() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in ["fixtures", "fixtures/layouts"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            let is_dump = name.ends_with(".gz") || name.ends_with(".gcdump") || {
                name.ends_with(".txt") && !name.ends_with(".histo.txt")
            };
            if is_dump {
                out.push(format!("{dir}/{name}"));
            }
        }
    }
    out.sort();
    out
}

/// The comparisons among the fixtures: the newest snapshot and its baselines,
/// oldest first.
const SERIES: &[&[&str]] = &[
    &[
        "fixtures/caches.3.txt",
        "fixtures/caches.1.txt",
        "fixtures/caches.2.txt",
    ],
    &[
        "fixtures/demo-series.3.txt",
        "fixtures/demo-series.1.txt",
        "fixtures/demo-series.2.txt",
    ],
    &["fixtures/seed002_after.txt", "fixtures/seed002_before.txt"],
    &[
        "fixtures/class_leak.2.hprof.gz",
        "fixtures/class_leak.1.hprof.gz",
    ],
];

/// The report's stdout with the timings masked: the text report's
/// `Timings:` and `Memory:` lines (the budget depends on the machine) and
/// the JSON `timings_ms` object.
fn report(args: &[&str]) -> String {
    let out = heaptui_testkit::common::heaptui()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("report")
        .arg("--no-cache")
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    mask_timings(&text)
}

pub(crate) fn mask_timings(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if line.starts_with("Timings:") {
            out.push_str("Timings: (masked)\n");
        } else if line.starts_with("Memory:") {
            out.push_str("Memory: (masked)\n");
        } else {
            out.push_str(line);
        }
    }
    let key = "\"timings_ms\":";
    if let Some(at) = out.find(key) {
        let start = at + key.len();
        if let Some(len) = out[start..].find('}') {
            out.replace_range(start..start + len + 1, "(masked)");
        }
    }
    out
}

pub(crate) fn golden_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/reports")
        .join(name)
}

/// Compares with the kept copy, or rewrites it under `HEAPTUI_BLESS`.
/// Returns a line naming the difference, if any.
fn check(name: &str, actual: &str) -> Option<String> {
    let path = golden_path(name);
    if std::env::var_os("HEAPTUI_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return None;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    if expected == actual {
        return None;
    }
    let line = expected
        .lines()
        .zip(actual.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(expected.lines().count().min(actual.lines().count()));
    Some(format!(
        "{name}: differs from line {}: kept {:?}, now {:?}",
        line + 1,
        expected.lines().nth(line),
        actual.lines().nth(line)
    ))
}

pub(crate) fn golden_name(dump: &str, suffix: &str) -> String {
    let stem = dump.trim_start_matches("fixtures/").replace('/', "__");
    format!("{stem}.{suffix}")
}

#[test]
fn every_fixture_report_is_unchanged() {
    let mut failures = Vec::new();
    let dumps = dumps();
    assert!(dumps.len() > 30, "fixtures not found: {dumps:?}");
    for dump in &dumps {
        failures.extend(check(&golden_name(dump, "txt"), &report(&[dump])));
        failures.extend(check(
            &golden_name(dump, "json"),
            &report(&["--json", dump]),
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_fixture_comparison_is_unchanged() {
    let mut failures = Vec::new();
    for series in SERIES {
        let (newest, older) = series.split_first().unwrap();
        let mut args: Vec<&str> = Vec::new();
        for old in older {
            args.extend(["--baseline", old]);
        }
        args.push(newest);
        let name = golden_name(newest, "compare");
        failures.extend(check(&format!("{name}.txt"), &report(&args)));
        args.insert(0, "--json");
        failures.extend(check(&format!("{name}.json"), &report(&args)));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn masking_leaves_everything_but_the_timings() {
    let text = "a\nTimings: parse 16 ms\nMemory: budget 1 B (--memory)\nb\n";
    assert_eq!(
        mask_timings(text),
        "a\nTimings: (masked)\nMemory: (masked)\nb\n"
    );
    let json = "{\"x\":1,\"timings_ms\":{\"parse\":1,\"graph\":0}}";
    assert_eq!(mask_timings(json), "{\"x\":1,\"timings_ms\":(masked)}");
}
