//! `--memory`: with a budget of one byte every heap is over it and its big
//! arrays go to disk, and every fixture's report (text and JSON) is still
//! byte for byte the one kept in `tests/reports/` (timings and the memory
//! line masked); a spill directory that cannot be made leaves the analysis
//! in memory with a note saying why.

use std::path::Path;

use super::reports::{dumps, golden_name, golden_path, mask_timings};

/// `heaptui report --no-cache ARGS` with the spill directory under
/// `cache_home`.
fn run(cache_home: &Path, args: &[&str]) -> std::process::Output {
    heaptui_testkit::common::heaptui()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("XDG_CACHE_HOME", cache_home)
        .arg("report")
        .arg("--no-cache")
        .args(args)
        .output()
        .unwrap()
}

/// [`run`]: (masked stdout, stderr, exit code).
fn report(cache_home: &Path, args: &[&str]) -> (String, String, i32) {
    let out = run(cache_home, args);
    (
        mask_timings(&String::from_utf8(out.stdout).unwrap()),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code().unwrap_or(-1),
    )
}

fn kept(name: &str) -> String {
    std::fs::read_to_string(golden_path(name)).unwrap()
}

#[test]
fn every_fixture_spilled_to_disk_reports_as_in_memory() {
    let home = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for dump in dumps() {
        for (json, suffix) in [(false, "txt"), (true, "json")] {
            let mut args = vec!["--memory", "1", dump.as_str()];
            if json {
                args.insert(0, "--json");
            }
            let (out, err, code) = report(home.path(), &args);
            let name = golden_name(&dump, suffix);
            if code != 0 || out != kept(&name) {
                failures.push(format!("{name}: exit {code}, differs; stderr: {err}"));
            }
            if !err.contains("more than the memory budget 1 B (--memory): spilling to ") {
                failures.push(format!("{name}: no spill note: {err}"));
            }
            // The text, HPROF, V8 and gcdump importers build their own arrays on
            // disk from the start (their peak comes before the model exists).
            let own = [
                ".txt",
                ".txt.gz",
                ".hprof",
                ".hprof.gz",
                ".heapsnapshot",
                ".heapsnapshot.gz",
                ".gcdump",
                ".gcdump.gz",
            ];
            if own.iter().any(|e| dump.ends_with(e))
                && !err
                    .contains("more than the memory budget 1 B (--memory): the import spills to ")
            {
                failures.push(format!("{name}: no import spill note: {err}"));
            }
            if !json && !out.contains("Memory: (masked)") {
                failures.push(format!("{name}: no memory line"));
            }
        }
    }
    let left: Vec<_> = std::fs::read_dir(home.path().join("heaptui"))
        .unwrap()
        .collect();
    assert!(left.is_empty(), "spill files left: {left:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_memory_line_says_what_went_to_disk() {
    let home = tempfile::tempdir().unwrap();
    let out = run(home.path(), &["--memory", "1", "fixtures/queries.txt"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.lines().find(|l| l.starts_with("Memory: ")).unwrap();
    assert!(
        line.starts_with("Memory: budget 1 B (--memory), estimated peak ")
            && line.contains(" of arrays on disk in ")
            && line.ends_with("/heaptui"),
        "{line}"
    );
    let out = run(home.path(), &["--memory", "none", "fixtures/queries.txt"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.lines().find(|l| l.starts_with("Memory: ")).unwrap();
    assert!(
        line.starts_with("Memory: budget none (--memory none), estimated peak "),
        "{line}"
    );
    assert!(String::from_utf8(out.stderr).unwrap().is_empty());
}

#[test]
fn an_unusable_spill_directory_leaves_the_analysis_in_memory() {
    // A file where the cache directory's parent should be: no directory
    // can be made under it, whoever runs the test.
    let file = tempfile::NamedTempFile::new().unwrap();
    let dump = "fixtures/leaky.hprof.gz";
    let (out, err, code) = report(file.path(), &["--memory", "1", dump]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("more than the memory budget 1 B (--memory), and cannot spill to ")
            && err.contains("(cannot make the directory: ")
            && err.contains("): going on in memory"),
        "{err}"
    );
    assert_eq!(out, kept(&golden_name(dump, "txt")));
}

#[test]
fn a_bad_budget_is_a_usage_error() {
    let home = tempfile::tempdir().unwrap();
    for bad in ["0", "much"] {
        let (_, err, code) = report(home.path(), &["--memory", bad, "fixtures/queries.txt"]);
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("--memory"), "{err}");
    }
}

/// A reopened cache file over the memory budget (one byte: every file is)
/// has its pages dropped as each section is checked and at each checkpoint
/// after; what is read back comes from the page cache again, and every
/// fixture's report is still the one kept.
#[test]
fn every_fixture_reopened_over_the_budget_reports_as_kept() {
    let home = tempfile::tempdir().unwrap();
    let reopen = |args: &[&str]| {
        let out = heaptui_testkit::common::heaptui()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("XDG_CACHE_HOME", home.path())
            .env("HEAPTUI_CACHE_MIN", "0")
            .arg("report")
            .args(args)
            .output()
            .unwrap();
        (
            String::from_utf8(out.stdout).unwrap(),
            String::from_utf8(out.stderr).unwrap(),
        )
    };
    let mut failures = Vec::new();
    for dump in dumps() {
        // Written by an analysis within its budget, then read back over it.
        reopen(&["--memory", "none", dump.as_str()]);
        let (out, err) = reopen(&["--memory", "1", dump.as_str()]);
        let name = golden_name(&dump, "txt");
        if !out.contains("Timings: read from the reopen cache") {
            failures.push(format!("{name}: not read from the cache; stderr: {err}"));
        }
        if mask_timings(&out) != kept(&name) {
            failures.push(format!("{name}: differs; stderr: {err}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_text_import_that_cannot_spill_says_so_and_goes_on_in_memory() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let dump = "fixtures/queries.txt";
    let (out, err, code) = report(file.path(), &["--memory", "1", dump]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("more than the memory budget 1 B (--memory), and the import cannot spill to ")
            && err.contains("(cannot make the directory: ")
            && err.contains("): it goes on in memory"),
        "{err}"
    );
    assert_eq!(out, kept(&golden_name(dump, "txt")));
}

/// A V8 snapshot over the budget whose spill directory cannot be made:
/// the import says why and builds its arrays in memory, the report the same.
#[test]
fn a_v8_import_that_cannot_spill_says_so_and_goes_on_in_memory() {
    let file = tempfile::NamedTempFile::new().unwrap();
    let dump = "fixtures/node_leak.heapsnapshot.gz";
    let (out, err, code) = report(file.path(), &["--memory", "1", dump]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("more than the memory budget 1 B (--memory), and the import cannot spill to ")
            && err.contains("(cannot make the directory: ")
            && err.contains("): it goes on in memory"),
        "{err}"
    );
    assert_eq!(out, kept(&golden_name(dump, "txt")));
}

/// An HPROF file read in place (mapped, not gzipped) over the budget: the
/// importer builds its arrays on disk and gives the file's pages back as
/// it goes, and the report is the one made in memory.
#[test]
fn a_mapped_hprof_spilled_by_its_import_reports_as_in_memory() {
    use std::io::Read;
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("leaky.hprof");
    let gz =
        std::fs::File::open(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/leaky.hprof.gz"))
            .unwrap();
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_end(&mut bytes)
        .unwrap();
    std::fs::write(&plain, bytes).unwrap();
    let dump = plain.to_str().unwrap();
    let (kept, _, code) = report(home.path(), &["--json", "--memory", "none", dump]);
    assert_eq!(code, 0);
    let (out, err, code) = report(home.path(), &["--json", "--memory", "1", dump]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("more than the memory budget 1 B (--memory): the import spills to "),
        "{err}"
    );
    assert_eq!(out, kept);
}
