//! The `heaptui` binary: the JSON contract of SPEC §4 key by key, the text
//! report, `--immediate-dominators`, exit codes, broken pipes, unusable input
//! and the rule that a dump file is only ever read.

mod common;

use std::path::Path;

use assert_cmd::Command;
use serde_json::{json, Value};

use common::fixture;

fn heaptui() -> Command {
    Command::cargo_bin("heaptui").unwrap()
}

/// Runs `heaptui report` in the fixtures directory; returns the parsed JSON.
fn report_json(args: &[&str]) -> Value {
    let out = heaptui()
        .current_dir(fixture(""))
        .arg("report")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v.as_object().unwrap().keys().map(|s| s.as_str()).collect();
    k.sort();
    k
}

#[test]
fn json_contract_key_by_key() {
    let v = report_json(&["seed004_corrected.txt"]);
    assert_eq!(
        keys(&v),
        [
            "diagnostics",
            "dominators",
            "duplicates",
            "file",
            "format",
            "summary",
            "timings_ms",
            "types"
        ],
        "`objects` only with --objects"
    );
    assert_eq!(v["file"], "seed004_corrected.txt");
    assert_eq!(v["format"], "rpm");
    // 15 objects; references: 8 from the array, 1ce079→7c79f, 2 from the
    // AppDomain object, 22c81e→7c79f. 7cb42 (100 bytes) is garbage.
    assert_eq!(
        v["summary"],
        json!({
            "objects": 15, "references": 12, "types": 5, "roots": 3,
            "app_domains": ["bubblecs.exe"], "total_bytes": 852,
            "reachable_objects": 14, "reachable_bytes": 752,
            "unreachable_objects": 1, "unreachable_bytes": 100
        })
    );
    assert_eq!(
        v["diagnostics"],
        json!({
            "skipped_lines": 0, "dangling_references": 0, "undefined_types": 0,
            "duplicate_objects": 0, "missing_root_objects": 0, "messages": []
        })
    );
    let dom = |id: &str, ty: &str, shallow: u64, retained: u64, objects: u64| {
        json!({"id": id, "type": ty, "shallow_bytes": shallow,
               "retained_bytes": retained, "retained_objects": objects})
    };
    assert_eq!(
        v["dominators"],
        json!([
            dom("22c81b", "System.AppDomain", 0x30, 576, 11),
            dom("7c79f", "System.RuntimeType", 100, 100, 1),
            dom("22c823", "System.String", 0x28, 0x28, 1),
            dom("22c81e", "System.String", 0x24, 0x24, 1),
        ])
    );
    // By shallow bytes: 8 × 0x1c + 0x24 + 0x28 = 300 of strings first.
    // System.OutOfMemoryException has no instance.
    let ty = |name: &str, count: u64, shallow: u64, min: u64| json!({"name": name, "count": count, "shallow_bytes": shallow, "min_retained_bytes": min});
    assert_eq!(
        v["types"],
        json!([
            ty("System.String", 10, 300, 300),
            ty("System.Object[]", 1, 0x118, 504),
            ty("System.RuntimeType", 2, 200, 100),
            ty("System.AppDomain", 1, 0x30, 576),
            ty("System.NullReferenceException", 1, 0x18, 24),
        ])
    );
    assert_eq!(v["summary"]["types"], v["types"].as_array().unwrap().len());
    // The seven reachable leaf strings of 0x1c bytes are one trivial set
    // (1ce079 references 7c79f, so it is not a copy of them).
    assert_eq!(
        v["duplicates"],
        json!([{
            "set": 0, "type": "System.String", "instances": 7, "instance_bytes": 0x1c,
            "objects_per_copy": 1, "additional_bytes": 6 * 0x1c, "trivial": true,
            "held_by": [], "holding_set": null,
            "members": ["1ce113", "1ce116", "1ce11f", "1ce14c", "1ce267", "1ce26a", "1ce26d"]
        }])
    );
    let t = &v["timings_ms"];
    assert_eq!(keys(t), ["dominators", "duplicates", "graph", "parse"]);
    assert!(keys(t).iter().all(|k| t[k].is_u64()));
}

#[test]
fn json_top_n_and_top_zero() {
    let v = report_json(&["lengauer_tarjan.txt", "--top", "1"]);
    assert_eq!(v["dominators"].as_array().unwrap().len(), 1);
    let ids = |v: &Value| -> Vec<String> {
        v["dominators"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["id"].as_str().unwrap().to_string())
            .collect()
    };
    // Shapes has six roots: 30 (63), 1 (31), 10 (15), 20 (15), 40 (10), 50 (7).
    let v = report_json(&["dominator_shapes.txt", "--top", "2"]);
    assert_eq!(ids(&v), ["30", "1"]);
    let v = report_json(&["dominator_shapes.txt", "--top", "0"]);
    assert_eq!(ids(&v), ["30", "1", "10", "20", "40", "50"]);
    let v = report_json(&["dominator_shapes.txt"]);
    assert_eq!(v["dominators"].as_array().unwrap().len(), 6, "default 50");
}

#[test]
fn json_objects_idom_null_absent_and_lowercase_ids() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("upper.txt");
    // Upper-case ids in the dump come out in lowercase.
    std::fs::write(
        &path,
        "t 1 T\no ABC 1 8 DEF\no DEF 1 4\no F00 1 2\nr abc 1 0\n",
    )
    .unwrap();
    let out = heaptui()
        .args(["report", "--json", "--objects"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v.get("objects").is_some());
    assert_eq!(
        v["objects"],
        json!([
            {"id": "abc", "type": "T", "shallow_bytes": 8, "reachable": true, "idom": null,
             "retained_bytes": 12, "retained_objects": 2},
            {"id": "def", "type": "T", "shallow_bytes": 4, "reachable": true, "idom": "abc",
             "retained_bytes": 4, "retained_objects": 1},
            {"id": "f00", "type": "T", "shallow_bytes": 2, "reachable": false,
             "retained_bytes": 0, "retained_objects": 0},
        ])
    );
}

#[test]
fn json_diagnostics_of_a_broken_dump() {
    let v = report_json(&["garbage_dangling.txt"]);
    assert_eq!(
        v["diagnostics"],
        json!({
            "skipped_lines": 0, "dangling_references": 2, "undefined_types": 1,
            "duplicate_objects": 1, "missing_root_objects": 1,
            "messages": [
                "line 4: reference from 1 to dead, which is not in the dump; dropped",
                "line 6: reference from 3 to beef, which is not in the dump; dropped",
                "line 7: object 2 appears again; the first record is kept",
                "line 8: object 4 has type id 7, which this section never defines",
                "line 13: root for object 99, which is not in the dump; ignored"
            ]
        })
    );
    // Three root records on object 1 are kept; the missing one is not.
    assert_eq!(v["summary"]["roots"], 3);
    assert_eq!(v["summary"]["unreachable_objects"], 2);
    assert_eq!(v["summary"]["unreachable_bytes"], 0x20 + 4);
}

#[test]
fn duplicates_none_gives_an_empty_list() {
    let v = report_json(&["seed004_corrected.txt", "--duplicates", "none"]);
    assert_eq!(v["duplicates"], json!([]));
}

#[test]
fn immediate_dominators_with_skip() {
    let v = report_json(&[
        "queries.txt",
        "--immediate-dominators",
        "System.Char[]",
        "--skip",
        "System.*",
    ]);
    assert_eq!(
        v["immediate_dominators"],
        json!([
            {"type": "MyApp.Cache", "dominators": 1, "dominated_objects": 2,
             "dominated_shallow_bytes": 0x80, "dominators_retained_bytes": 320},
            {"type": "MyApp.Node", "dominators": 1, "dominated_objects": 1,
             "dominated_shallow_bytes": 0x20, "dominators_retained_bytes": 48},
            {"type": null, "dominators": 0, "dominated_objects": 2,
             "dominated_shallow_bytes": 0x18, "dominators_retained_bytes": 0},
        ])
    );
    let v = report_json(&["queries.txt", "--immediate-dominators", "System.Char[]"]);
    let types: Vec<&Value> = v["immediate_dominators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["type"])
        .collect();
    assert_eq!(
        types,
        [&json!("System.String"), &json!("MyApp.Node"), &Value::Null]
    );
}

#[test]
fn text_report_has_its_sections() {
    let out = heaptui()
        .current_dir(fixture(""))
        .args([
            "report",
            "queries.txt",
            "--immediate-dominators",
            "System.Char[]",
            "--skip",
            "System.*",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "heaptui report: queries.txt",
        "AppDomains:  query.exe (14 objects)",
        "Reachable:",
        "Unreachable:",
        "Diagnostics: none",
        "Top dominators (3 of 3",
        "Types (6 of 6",
        "Immediate dominators of 5 objects of `System.Char[]`, skipping `System.*`",
        "MyApp.Cache",
        "<GC roots>",
        "Duplicates (all mode",
        "Timings:",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    // The largest dominator comes first, with its retained size.
    let top = text
        .lines()
        .skip_while(|l| !l.starts_with("Top dominators"))
        .nth(2)
        .unwrap();
    assert!(
        top.contains("320 B") && top.ends_with("MyApp.Cache"),
        "{top}"
    );
}

#[test]
fn text_report_counts_rooted_objects() {
    let out = heaptui()
        .current_dir(fixture(""))
        .args(["report", "weak_roots.txt"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // Roots on 1, 2, 3 (twice) and 5; only 1 and 3 strongly.
    assert!(
        text.contains("Roots:       5 records (2 strong, 3 weak) on 4 objects (2 strongly rooted)"),
        "{text}"
    );
    assert!(text.contains("Unreachable: 3 objects, 44 B"), "{text}");
}

#[test]
fn text_report_lists_objects_with_objects_flag() {
    let run = |extra: &[&str]| {
        let out = heaptui()
            .current_dir(fixture(""))
            .args(["report", "devtools_six_nodes.txt"])
            .args(extra)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(!run(&[]).contains("Objects (5"));
    let text = run(&["--objects"]);
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip_while(|l| !l.starts_with("Objects (5, in file order"))
        .skip(2)
        .take(5)
        .map(|l| l.split_whitespace().collect())
        .collect();
    // id, shallow, retained, retained objects, idom, type (sizes as "N B").
    assert_eq!(
        rows,
        [
            ["a", "2", "B", "2", "B", "1", "<roots>", "A"],
            ["b", "3", "B", "8", "B", "2", "<roots>", "B"],
            ["c", "4", "B", "10", "B", "2", "<roots>", "C"],
            ["d", "5", "B", "5", "B", "1", "b", "D"],
            ["e", "6", "B", "6", "B", "1", "c", "E"],
        ]
    );
}

#[test]
fn text_report_shows_unknown_root_kinds_flags_and_diagnostics() {
    let out = heaptui()
        .current_dir(fixture(""))
        .args(["report", "unknown_kinds.txt"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "kind 9 [-]",
        "local variable [0x18]",
        "local variable [weak|0x18]",
        "line 8: unknown record kind `x`",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
}

/// Exit code 2 and exactly one line on stderr that names `path` and says `why`.
fn unusable(path: &Path, why: &str) {
    for json in [false, true] {
        let mut cmd = heaptui();
        cmd.arg("report").arg(path);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{path:?}");
        assert!(out.stdout.is_empty(), "nothing on stdout for {path:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "one line: {err:?}");
        assert!(err.contains(&path.display().to_string()), "{err:?}");
        assert!(err.contains(why), "{err:?} should say {why:?}");
        assert!(!err.contains("panicked"), "{err:?}");
    }
}

#[test]
fn unusable_input_exits_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    unusable(&p("missing.txt"), "no such file");
    unusable(dir.path(), "is a directory");
    std::fs::write(p("empty.txt"), b"").unwrap();
    unusable(&p("empty.txt"), "empty");
    std::fs::write(p("noobj.txt"), b"a 1 x.exe\nt 1 T\nr 1 1 0\nc x.exe\n").unwrap();
    unusable(&p("noobj.txt"), "no object records");
    std::fs::write(p("blank.txt"), b"\n \r\n\t\n").unwrap();
    unusable(&p("blank.txt"), "no object records");
    // A gzip stream (header, deflate data, trailer) of a dump, with a wrong
    // checksum: gzip is read (SPEC §1.1), corrupt gzip is refused.
    let gz: &[u8] = &[
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xcb, 0x57, 0x30, 0x54, 0x30,
        0x04, 0x42, 0x2e, 0x00, 0x8e, 0x52, 0x5e, 0x4d, 0x08, 0x00, 0x00, 0x00,
    ];
    std::fs::write(p("dump.txt.gz"), gz).unwrap();
    unusable(&p("dump.txt.gz"), "corrupt gzip data");
    // Random-looking binary without NUL bytes, mostly control characters.
    let junk: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 31 + 1) as u8).collect();
    std::fs::write(p("junk.bin"), junk).unwrap();
    unusable(&p("junk.bin"), "binary data");
    let utf16: Vec<u8> = b"\xff\xfe"
        .iter()
        .copied()
        .chain("o 1 1 8\r\n".bytes().flat_map(|b| [b, 0]))
        .collect();
    std::fs::write(p("utf16.txt"), utf16).unwrap();
    unusable(&p("utf16.txt"), "UTF-16 text");
    // Text, but not a dump.
    std::fs::write(p("readme.txt"), b"hello\nworld\n").unwrap();
    unusable(&p("readme.txt"), "no object records");
}

#[test]
fn bad_arguments_exit_2() {
    let f = fixture("devtools_six_nodes.txt");
    for args in [
        vec!["report", "--duplicates", "bogus"],
        vec!["report", "--top", "many"],
        vec!["report", "--skip", "System.*"],
        vec!["report", "--no-such-flag"],
        vec!["report"],
    ] {
        let mut cmd = heaptui();
        cmd.args(&args);
        if args.len() > 1 {
            cmd.arg(&f);
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}");
    }
    let out = heaptui()
        .args(["report", "--duplicates", "bogus"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("bogus"));
}

#[test]
fn success_exits_0_and_help_too() {
    heaptui()
        .arg("report")
        .arg(fixture("devtools_six_nodes.txt"))
        .assert()
        .code(0);
    heaptui().arg("--help").assert().code(0);
    heaptui().args(["report", "--help"]).assert().code(0);
}

#[test]
fn without_a_terminal_the_ui_refuses_and_points_to_report() {
    let out = heaptui()
        .arg(fixture("devtools_six_nodes.txt"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("heaptui report"));
}

/// A dump big enough that its JSON report overflows a pipe buffer.
fn big_dump(dir: &Path) -> std::path::PathBuf {
    let mut text = String::from("t 1 Big.Node\n");
    for i in 0..20_000u32 {
        text.push_str(&format!(
            "o {:x} 1 10 {:x}\nr {:x} 1 0\n",
            0x1000 + i,
            0x1001 + i,
            0x1000 + i
        ));
    }
    let path = dir.join("big.txt");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_broken_pipe_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let big = big_dump(dir.path());
    let bin = assert_cmd::cargo::cargo_bin("heaptui");
    for extra in ["--json --objects", "--top 0"] {
        let script = format!(
            "'{}' report '{}' {extra} | head -1 >/dev/null; echo \"${{PIPESTATUS[0]}}\"",
            bin.display(),
            big.display()
        );
        let out = std::process::Command::new("bash")
            .args(["-c", &script])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0", "{extra}");
        assert!(
            out.stderr.is_empty(),
            "{extra}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn snapshot(path: &Path) -> (Vec<u8>, std::time::SystemTime, u64) {
    let meta = std::fs::metadata(path).unwrap();
    (
        std::fs::read(path).unwrap(),
        meta.modified().unwrap(),
        meta.len(),
    )
}

#[test]
fn the_dump_file_is_never_modified() {
    for name in [
        "seed004_as_printed.txt",
        "messy_whitespace.txt",
        "garbage_dangling.txt",
    ] {
        let path = fixture(name);
        let before = snapshot(&path);
        heaptui().arg("report").arg(&path).assert().code(0);
        heaptui()
            .args(["report", "--json", "--objects"])
            .arg(&path)
            .assert()
            .code(0);
        assert!(snapshot(&path) == before, "{name} changed");
    }
}

#[test]
fn a_large_file_is_mapped_read_only_and_left_unchanged() {
    // Over the 64 MiB copy limit, so the memory-mapped path runs: a few
    // records, then one huge blank line, then more records.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.txt");
    let mut text = b"t 1 T\no 1 1 8 2\nr 1 1 0\n".to_vec();
    text.resize(text.len() + (65 << 20), b' ');
    text.extend_from_slice(b"\no 2 1 4\n");
    std::fs::write(&path, &text).unwrap();
    drop(text);
    let before = snapshot(&path);
    let out = heaptui()
        .args(["report", "--json", "--objects"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["objects"], 2);
    assert_eq!(v["summary"]["reachable_bytes"], 12);
    assert_eq!(v["objects"][1]["idom"], "1");
    assert!(snapshot(&path) == before, "the mapped file changed");
}

#[test]
fn a_mapped_file_truncated_while_read_fails_cleanly() {
    // Over the copy limit, so it is memory-mapped; mostly one long blank
    // line, so the parser is still touching pages when the file shrinks.
    // Depending on timing the run sees the whole file (exit 0), an empty
    // file (exit 2) or the truncation (exit 2, from the SIGBUS handler):
    // never a death by signal, always one line naming the file.
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shrinking.txt");
    let mut text = b"t 1 T\no 1 1 8\nr 1 1 0\n".to_vec();
    text.resize(text.len() + (160 << 20), b' ');
    text.extend_from_slice(b"\no 2 1 4\n");
    std::fs::write(&path, &text).unwrap();
    drop(text);
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("heaptui"))
        .args(["report", "--json"])
        .arg(&path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(30));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.signal(), None, "killed by a signal");
    let err = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        Some(0) => {
            serde_json::from_slice::<Value>(&out.stdout).unwrap();
        }
        Some(2) => {
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(err.contains(&path.display().to_string()), "{err}");
            eprintln!("{err}");
        }
        other => panic!("exit {other:?}: {err}"),
    }
}

#[test]
fn a_dump_read_from_a_pipe() {
    // `heaptui report /dev/stdin` or `<(zcat dump.gz)`: a pipe's length is
    // 0 until read, which once made heaptui call it "empty".
    let out = heaptui()
        .args(["report", "--json", "/dev/stdin"])
        .write_stdin(common::fixture_bytes("devtools_six_nodes.txt"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["reachable_bytes"], 2 + 3 + 4 + 5 + 6);
    let out = heaptui()
        .args(["report", "/dev/stdin"])
        .write_stdin(Vec::new())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "heaptui: /dev/stdin: the file is empty\n"
    );
}

/// Issue 13.1: seventeen rooted objects and not one reference between them
/// (or only dangling ones) panicked in the dominator pass's prefetch, which
/// indexed an empty retainers array.
#[test]
fn a_heap_without_references_does_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    for dangling in [false, true] {
        let mut text = String::from("t 1 T\n");
        for i in 1..=40u32 {
            let extra = if dangling { " dead" } else { "" };
            text.push_str(&format!("o {i:x} 1 10{extra}\nr {i:x} 1 0\n"));
        }
        let path = dir.path().join(format!("edge_free_{dangling}.txt"));
        std::fs::write(&path, text).unwrap();
        let out = heaptui()
            .args(["report", "--json"])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["summary"]["reachable_objects"], 40);
        assert_eq!(v["dominators"].as_array().unwrap().len(), 40);
    }
}
