//! The `heaptui` binary: the JSON contract of docs/json.md key by key, the text
//! report, `--immediate-dominators`, exit codes, broken pipes, unusable input
//! and the rule that a dump file is only ever read.

use heaptui_testkit::common;

use std::path::Path;

use serde_json::{json, Value};

use common::report_ok as report;
use common::{assert_contains_all, assert_refused, fixture, heaptui, report_in_fixtures};

/// `heaptui report ARGS --json` in the fixtures directory, parsed.
fn report_json(args: &[&str]) -> Value {
    let out = report(&[args, &["--json"]].concat());
    serde_json::from_slice(&out).expect("stdout is one JSON document")
}

/// `heaptui report ARGS` in the fixtures directory, as text.
fn report_text(args: &[&str]) -> String {
    String::from_utf8_lossy(&report(args)).into_owned()
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
            "duplicate_owners",
            "duplicates",
            "file",
            "format",
            "summary",
            "suspects",
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
            "duplicate_objects": 0, "missing_root_objects": 0, "clamped_roots": 0,
            "messages": []
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
            "unverified": true, "held_by": [], "holding_set": null,
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
            "duplicate_objects": 1, "missing_root_objects": 1, "clamped_roots": 0,
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
    assert_contains_all(
        &text,
        &[
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
        ],
    );
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
    let text = report_text(&["weak_roots.txt"]);
    // Roots on 1, 2, 3 (twice) and 5; only 1 and 3 strongly.
    assert!(
        text.contains("Roots:       5 records (2 strong, 3 weak) on 4 objects (2 strongly rooted)"),
        "{text}"
    );
    assert!(text.contains("Unreachable: 3 objects, 44 B"), "{text}");
}

#[test]
fn text_report_lists_objects_with_objects_flag() {
    let run = |extra: &[&str]| report_text(&[&["devtools_six_nodes.txt"], extra].concat());
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
    let text = report_text(&["unknown_kinds.txt"]);
    assert_contains_all(
        &text,
        &[
            "kind 9 [-]",
            "local variable [0x18]",
            "local variable [weak|0x18]",
            "line 8: unknown record kind `x`",
        ],
    );
}

/// Exit code 2 and exactly one line on stderr that names `path` and says `why`.
fn unusable(path: &Path, why: &str) {
    for json in [false, true] {
        let mut cmd = heaptui();
        cmd.arg("report").arg(path);
        if json {
            cmd.arg("--json");
        }
        assert_refused(&cmd.output().unwrap(), &path.display().to_string(), why);
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
    // checksum: gzip is read (docs/formats.md), corrupt gzip is refused.
    let gz: &[u8] = &[
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xcb, 0x57, 0x30, 0x54, 0x30,
        0x04, 0x42, 0x2e, 0x00, 0x8e, 0x52, 0x5e, 0x4d, 0x08, 0x00, 0x00, 0x00,
    ];
    std::fs::write(p("dump.txt.gz"), gz).unwrap();
    unusable(&p("dump.txt.gz"), "corrupt gzip data");
    // Random-looking binary without NUL bytes, mostly control characters.
    let junk: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 31 + 1) as u8).collect();
    std::fs::write(p("junk.bin"), junk).unwrap();
    unusable(
        &p("junk.bin"),
        "binary data of no known format; it starts with bytes 01 08 0f",
    );
    let utf16: Vec<u8> = b"\xff\xfe"
        .iter()
        .copied()
        .chain("o 1 1 8\r\n".bytes().flat_map(|b| [b, 0]))
        .collect();
    std::fs::write(p("utf16.txt"), utf16).unwrap();
    unusable(&p("utf16.txt"), "UTF-16 text");
    // Text, but not a dump.
    std::fs::write(p("readme.txt"), b"hello\nworld\n").unwrap();
    unusable(
        &p("readme.txt"),
        "not a heap dump heaptui reads (HPROF, V8 heap snapshot, .NET gcdump, RPM text): \
         no record of any in its first 2 lines; it starts with \"hello\\x0aworld\\x0a\"",
    );
    // A script opened by mistake.
    std::fs::write(p("server.js"), b"// server.js\nconst x = 1;\n").unwrap();
    unusable(
        &p("server.js"),
        "it starts with \"// server.js\\x0aconst x = 1…\"",
    );
}

#[test]
fn bad_arguments_exit_2() {
    let f = fixture("devtools_six_nodes.txt");
    for args in [
        vec!["report", "--duplicates", "bogus"],
        vec!["report", "--top", "many"],
        vec!["report", "--skip", "System.*"],
        vec!["report", "--no-such-flag"],
        vec!["report", "--object", "1", "--what-if", "A.b"],
        vec!["report", "--object", "1", "--paths", "A"],
        vec!["report", "--object", "1", "--objects"],
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

/// `report NEW --baseline OLD …` in the fixtures directory: exit code, JSON.
fn compared(args: &[&str]) -> (Option<i32>, Value, String) {
    let out = heaptui()
        .current_dir(fixture(""))
        .arg("report")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (
        out.status.code(),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const SERIES: [&str; 5] = [
    "caches.3.txt",
    "--baseline",
    "caches.1.txt",
    "--baseline",
    "caches.2.txt",
];

#[test]
fn comparison_json_contract_key_by_key() {
    let (code, v, stderr) = compared(&SERIES);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(keys(&v).contains(&"comparison") && keys(&v).contains(&"suspects"));
    let c = &v["comparison"];
    assert_eq!(
        keys(c),
        ["duplicate_owners", "duplicates", "files", "paths", "types"]
    );
    assert_eq!(
        c["files"],
        json!(["caches.1.txt", "caches.2.txt", "caches.3.txt"]),
        "oldest first, the report's own file last"
    );
    // Every type of any snapshot, by shallow growth: 2 → 6 orders of 0x40
    // (+0x100) first; no `new`/`deleted` without stable ids (not V8).
    let types = c["types"].as_array().unwrap();
    assert_eq!(types.len(), 9);
    assert_eq!(
        types[0],
        json!({"name": "App.Order", "count": [2, 4, 6],
               "shallow_bytes": [0x80, 0x100, 0x180],
               "min_retained_bytes": [0x80, 0x100, 0x180]})
    );
    // Rows that changed, by retained growth: the App first (0x10 + 0x10 +
    // 0x20 + 2·0x40 + 0x10 + 0x20 + 2·8 = 256 → 408 → 520 bytes); the
    // Config rows did not change and are not listed.
    let paths = c["paths"].as_array().unwrap();
    assert_eq!(paths.len(), 7);
    assert_eq!(
        paths[0],
        json!({"path": ["App.Main"], "count": [1, 1, 1],
               "retained_bytes": [256, 408, 520],
               "retained_objects": [9, 14, 14], "grows_steadily": true})
    );
    let thumbs = paths
        .iter()
        .find(|p| p["path"].as_array().unwrap().last() == Some(&json!("App.Thumbnail")))
        .unwrap();
    assert_eq!(
        thumbs,
        &json!({"path": ["App.Main", "App.Thumbnails", "App.Thumbnail[]", "App.Thumbnail"],
                "count": [2, 5, 3], "retained_bytes": [16, 40, 24],
                "retained_objects": [2, 5, 3], "grows_steadily": false})
    );
    for p in paths {
        assert_eq!(
            keys(p),
            [
                "count",
                "grows_steadily",
                "path",
                "retained_bytes",
                "retained_objects"
            ]
        );
    }
    // Orders (0x40, no references) and thumbnails are trivial duplicates.
    let dups = c["duplicates"].as_array().unwrap();
    assert_eq!(
        dups[0],
        json!({"type": "App.Order", "instance_bytes": 0x40, "objects_per_copy": 1,
               "instances": [2, 4, 6], "additional_bytes": [0x40, 0xc0, 0x140]})
    );
    // --top limits the paths.
    let mut top = SERIES.to_vec();
    top.extend(["--top", "2"]);
    let (_, v, _) = compared(&top);
    assert_eq!(v["comparison"]["paths"].as_array().unwrap().len(), 2);
}

#[test]
fn suspects_key_in_every_report() {
    let v = report_json(&["suspects.txt"]);
    let s = v["suspects"].as_array().unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(
        s[0],
        json!({"kind": "object", "type": "App.Holder", "id": "100",
               "retained_bytes": 600, "instances": 1,
               "accumulation_point": {"id": "103", "type": "App.Item[]", "retained_bytes": 570,
                   "path": ["App.Holder", "App.Chain", "App.Chain", "App.Item[]"]},
               "top_types": [{"name": "App.Item", "retained_bytes": 550}],
               "retention_path": [{"id": "100", "type": "App.Holder"},
                                  {"id": "101", "type": "App.Chain"},
                                  {"id": "102", "type": "App.Chain"},
                                  {"id": "103", "type": "App.Item[]"}]})
    );
    assert_eq!(s[1]["kind"], "type");
    assert_eq!(s[1]["id"], Value::Null);
    assert_eq!(s[1]["retained_bytes"], 300);
    // A heap without suspects still has the key.
    let v = report_json(&["dominator_shapes.txt"]);
    assert!(v["suspects"].is_array());
    // With a comparison, the steadily growing orders are a growth suspect.
    let (_, v, _) = compared(&SERIES);
    let growth: Vec<&Value> = v["suspects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "growth")
        .collect();
    assert_eq!(growth.len(), 1);
    assert_eq!(growth[0]["type"], "App.Order");
    assert_eq!(growth[0]["accumulation_point"]["type"], "App.Order[]");
    assert_eq!(
        growth[0]["growth"]["path"],
        json!(["App.Main", "App.RecentOrders", "App.Order[]", "App.Order"])
    );
}

#[test]
fn fail_if_grows_exits_1_when_crossed() {
    // The largest growth is the App's: 520 − 256 = 264 bytes.
    for (size, code) in [
        ("263", 1),
        ("264", 0),
        ("100B", 1),
        ("1KiB", 0),
        ("0.2kB", 1),
    ] {
        let mut args = SERIES.to_vec();
        args.extend(["--fail-if-grows", size]);
        let (got, v, stderr) = compared(&args);
        assert_eq!(got, Some(code), "{size}: {stderr}");
        assert!(
            v["comparison"].is_object(),
            "the report is written either way"
        );
        if code == 1 {
            assert!(stderr.contains("App.Main grew by"), "{stderr}");
            // The gate names where the growth piles up, as the Leaks pane
            // does, with its figures per snapshot.
            assert!(
                stderr.contains(
                    "it accumulates at App.Main / App.RecentOrders / App.Order[] / App.Order: \
                     grew by 256 B (128 B → 256 B → 384 B; 2 → 4 → 6 instances)"
                ),
                "{stderr}"
            );
            // Suspects in the Leaks pane's order: growth first.
            assert_eq!(v["suspects"][0]["kind"], "growth", "{}", v["suspects"]);
        }
    }
    // Shrinking never fails the gate: the newest as the baseline.
    let (code, _, _) = compared(&[
        "caches.1.txt",
        "--baseline",
        "caches.3.txt",
        "--fail-if-grows",
        "0",
    ]);
    assert_eq!(code, Some(0));
    // Text report too.
    let out = heaptui()
        .current_dir(fixture(""))
        .args(["report", "caches.2.txt", "--baseline", "caches.1.txt"])
        .args(["--fail-if-grows", "10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Dominator paths that changed"), "{text}");
    assert!(text.contains("Leak suspects"), "{text}");
    assert!(
        text.contains("Leak suspects (3)\n  1. grows in every snapshot: App.Main / "),
        "growth first: {text}"
    );
}

/// `fixtures/class_leak.{1,2}.hprof.gz` (one JVM, 500 then 1000 orders in
/// `OrderService`'s static HashMap): the class object is a row of its own,
/// named by its class, in the gate's message and in every type path; the
/// type statistics keep `java.lang.Class` as its type.
#[test]
fn a_java_class_is_named_by_its_class_in_paths_and_the_gate() {
    let service = "class ClassLeak$OrderService";
    let (code, v, stderr) = compared(&[
        "class_leak.2.hprof.gz",
        "--baseline",
        "class_leak.1.hprof.gz",
        "--fail-if-grows",
        "10KB",
        "--no-cache",
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "it accumulates at jdk.internal.loader.ClassLoaders$AppClassLoader / {service} / \
             java.util.HashMap / java.util.HashMap$Node[] / java.util.HashMap$Node: grew by"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("500 → 1,000 instances"), "{stderr}");
    assert!(!stderr.contains("java.lang.Class"), "{stderr}");
    // The growth suspect's path and its accumulation point's.
    let growth = &v["suspects"][0];
    assert_eq!(growth["kind"], "growth", "{}", v["suspects"]);
    let path = growth["growth"]["path"].as_array().unwrap();
    assert_eq!(path[1], service, "{path:?}");
    assert_eq!(path[2], "java.util.HashMap", "{path:?}");
    assert_eq!(growth["accumulation_point"]["path"][1], service);
    // The comparison's rows: the class's own row grew by its map.
    let row = v["comparison"]["paths"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["path"].as_array().unwrap().last() == Some(&json!(service)))
        .expect("the class's row");
    let bytes = row["retained_bytes"].as_array().unwrap();
    assert!(bytes[1].as_u64() > bytes[0].as_u64(), "{row}");
    // Types: class objects stay `java.lang.Class`, one per class dump; no
    // type is named `class …`.
    let types = v["types"].as_array().unwrap();
    assert!(types
        .iter()
        .all(|t| !t["name"].as_str().unwrap().starts_with("class ")));
    let classes = types
        .iter()
        .find(|t| t["name"] == "java.lang.Class")
        .unwrap();
    // Every class dump, and the nine primitive types' mirrors (instances).
    let dumped: u64 = v["details"]["classes"].as_str().unwrap().parse().unwrap();
    assert_eq!(classes["count"].as_u64(), Some(dumped + 9), "{classes}");
}

#[test]
fn unusable_comparisons_exit_2() {
    for args in [
        vec!["caches.2.txt", "--fail-if-grows", "1MB"],
        vec![
            "caches.2.txt",
            "--baseline",
            "caches.1.txt",
            "--fail-if-grows",
            "lots",
        ],
        vec![
            "caches.2.txt",
            "--baseline",
            "caches.1.txt",
            "--fail-if-grows",
            "-5",
        ],
        vec!["caches.2.txt", "--baseline", "no_such_file.txt"],
        vec!["caches.2.txt", "--baseline", "."],
        vec!["no_such_file.txt", "--baseline", "caches.1.txt"],
        vec![
            "caches.2.txt",
            "--baseline",
            "caches.1.txt",
            "--schedule",
            "sometimes",
        ],
    ] {
        let (code, v, stderr) = compared(&args);
        assert_eq!(code, Some(2), "{args:?}");
        assert_eq!(v, Value::Null, "{args:?}: nothing on stdout");
        assert!(
            stderr.starts_with("heaptui: ") || stderr.starts_with("error: "),
            "{stderr}"
        );
    }
    let (_, _, stderr) = compared(&["caches.2.txt", "--baseline", "no_such_file.txt"]);
    assert!(stderr.contains("no_such_file.txt"), "{stderr}");
}

#[test]
fn seed_002_pair_shows_only_the_collected_types() {
    for schedule in ["sequential", "parallel"] {
        let (code, v, _) = compared(&[
            "seed002_after.txt",
            "--baseline",
            "seed002_before.txt",
            "--schedule",
            schedule,
        ]);
        assert_eq!(code, Some(0));
        let c = &v["comparison"];
        assert_eq!(c["paths"], json!([]), "{schedule}");
        let changed: Vec<&str> = c["types"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["count"][0] != t["count"][1])
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            changed,
            [
                "System.Text.StringBuilder",
                "System.String",
                "System.Char[]"
            ],
            "by shallow growth: −0x18, −0x1c, −0x40"
        );
    }
}

#[test]
fn several_dumps_for_the_ui_are_accepted() {
    // Without a terminal the UI refuses (exit 2), but the arguments parse:
    // the message names the newest dump.
    let out = heaptui()
        .current_dir(fixture(""))
        .args(["caches.1.txt", "caches.2.txt", "caches.3.txt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("heaptui report caches.3.txt"), "{stderr}");
}

/// `heaptui DUMP` on a file that cannot be opened says why in one line and
/// exits 2 before anything else (no terminal needed to tell, no report
/// suggested for a file the report would refuse too).
fn refused_before_the_ui(path: &Path, why: &str) {
    let out = heaptui().arg(path).output().unwrap();
    let err = assert_refused(&out, &path.display().to_string(), why);
    assert!(!err.contains("heaptui report"), "{err:?}");
}

#[test]
fn the_ui_checks_the_file_before_taking_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    refused_before_the_ui(&p("missing.hprof"), "no such file");
    refused_before_the_ui(dir.path(), "is a directory");
    std::fs::write(p("empty"), b"").unwrap();
    refused_before_the_ui(&p("empty"), "empty");
    // A README (small: imported whole, the import's own reason).
    std::fs::write(p("README.md"), b"# heaptui\n\nA terminal UI.\n").unwrap();
    refused_before_the_ui(&p("README.md"), "not a heap dump heaptui reads");
    // Large text that is not a dump: its first 64 KiB hold no record.
    let prose = "Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n".repeat(3000);
    std::fs::write(p("notes.txt"), &prose).unwrap();
    refused_before_the_ui(&p("notes.txt"), "no record of any in its first");
    // An HPROF header with an identifier size no JVM writes.
    let mut hprof = b"JAVA PROFILE 1.0.2\0".to_vec();
    hprof.extend(3u32.to_be_bytes());
    hprof.resize(100_000, 0);
    std::fs::write(p("bad.hprof"), &hprof).unwrap();
    refused_before_the_ui(&p("bad.hprof"), "identifier size 3");
    // A gzip magic followed by no gzip.
    let mut gz = vec![0x1f, 0x8b];
    gz.extend((0..100_000u32).map(|i| (i * 13 % 251) as u8));
    std::fs::write(p("dump.gz"), &gz).unwrap();
    refused_before_the_ui(&p("dump.gz"), "corrupt gzip data");
    // A gzipped README larger than 64 KiB once compressed is still read
    // far enough to be refused.
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::none());
    e.write_all(prose.repeat(2).as_bytes()).unwrap();
    std::fs::write(p("notes.txt.gz"), e.finish().unwrap()).unwrap();
    refused_before_the_ui(&p("notes.txt.gz"), "no record of any in its first");
}

#[test]
fn a_large_dump_passes_the_check_and_is_pointed_to_report() {
    // Over the 64 KiB the check reads; without a terminal the UI then
    // refuses and points to the report, which works.
    let dir = tempfile::tempdir().unwrap();
    let path = big_dump(dir.path());
    assert!(std::fs::metadata(&path).unwrap().len() > 64 << 10);
    let out = heaptui().arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("heaptui report"), "{err}");
    let gz = fixture("leaky.hprof.gz");
    let out = heaptui().arg(&gz).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("heaptui report"), "{err}");
}

#[test]
fn report_reads_standard_input_with_a_dash() {
    let text = std::fs::read(fixture("dominator_shapes.txt")).unwrap();
    let from_file = report_json(&["dominator_shapes.txt", "--no-cache"]);
    let out = heaptui()
        .args(["report", "-", "--json"])
        .write_stdin(text.clone())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"], from_file["summary"]);
    assert_eq!(v["dominators"], from_file["dominators"]);
    // Gzip through the pipe too.
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(&text).unwrap();
    let out = heaptui()
        .args(["report", "-", "--json"])
        .write_stdin(e.finish().unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"], from_file["summary"]);
    // Nothing piped in: one line, exit 2.
    let out = heaptui()
        .args(["report", "-"])
        .write_stdin("")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("empty"), "{err}");
    // `-` is for the dump only.
    let out = heaptui()
        .args(["report", "x.txt", "--baseline", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn report_demo_analyses_the_built_in_heap() {
    let out = heaptui()
        .args(["report", "--demo", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["file"], "demo.dump.txt");
    assert!(v["summary"]["objects"].as_u64().unwrap() > 1000);
    for args in [
        vec!["report", "--demo", "x.txt"],
        vec!["report", "--demo", "--baseline", "x.txt"],
    ] {
        let out = heaptui().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn top_limits_every_list() {
    let v = report_json(&["--demo", "--top", "3"]);
    for list in ["dominators", "types", "duplicates"] {
        assert_eq!(v[list].as_array().unwrap().len(), 3, "{list}");
    }
    // Without --top, JSON lists every type and set.
    let all = report_json(&["--demo"]);
    assert!(all["types"].as_array().unwrap().len() > 20);
    assert!(all["duplicates"].as_array().unwrap().len() > 3);
    let text = |args: &[&str]| {
        let out = heaptui()
            .args(["report", "--demo"])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let t = text(&["--top", "3"]);
    assert!(t.contains("Top dominators (3 of"), "{t}");
    assert!(t.contains("Types (3 of"), "{t}");
    assert!(t.contains("more sets (--top 0 lists them all)"), "{t}");
    let t = text(&["--top", "0"]);
    assert!(!t.contains("more sets"), "{t}");
    let t = text(&[]);
    assert!(t.contains("Types (20 of"), "{t}");
}

#[test]
fn completions_and_the_manual_page() {
    for (shell, needle) in [
        ("bash", "_heaptui()"),
        ("zsh", "#compdef heaptui"),
        ("fish", "complete -c heaptui"),
    ] {
        let out = heaptui().args(["completions", shell]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let s = String::from_utf8(out.stdout).unwrap();
        assert!(s.contains(needle), "{shell}: {s}");
        assert!(
            s.contains("duplicate-budget"),
            "{shell}: flags are completed"
        );
    }
    let out = heaptui().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = heaptui().arg("man").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(
        page.starts_with(".ie") || page.contains(".TH heaptui"),
        "{page}"
    );
    assert!(page.contains("report"), "subcommands are listed");
    // A real page: the report's options, the keys, the exit codes and the
    // cache; no reference to a page that does not exist.
    for part in [
        ".SH REPORT OPTIONS",
        "\\-\\-fail\\-if\\-grows",
        ".SH KEYS",
        "detect possible duplicates of the type",
        ".SH EXIT STATUS",
        ".SH FILES",
    ] {
        assert!(page.contains(part), "{part}: {page}");
    }
    assert!(!page.contains("heaptui\\-report(1)"), "{page}");
    assert_eq!(page.matches(".SH OPTIONS").count(), 1, "{page}");
    // A description of its own, before the options: what heaptui reads,
    // shows and reports, in paragraphs.
    let description = page
        .split_once(".SH DESCRIPTION\n")
        .and_then(|(_, rest)| rest.split_once(".SH OPTIONS"))
        .map(|(d, _)| d)
        .expect("DESCRIPTION before OPTIONS");
    assert!(description.matches(".PP").count() >= 3, "{description}");
    for part in [
        "HPROF",
        "V8 heap snapshot",
        "gcdump",
        "dominator tree",
        "duplicate instances",
        "leak suspects",
        "heaptui report DUMP",
        "\\-\\-fail\\-if\\-grows",
    ] {
        assert!(description.contains(part), "{part}: {description}");
    }
}

#[test]
fn the_text_report_names_objects_by_their_text() {
    // A Java class by its name, a string by its characters: in the leak
    // suspects (whose row names the class: `class Leaky`), their retention
    // paths, the top dominators and the duplicate sets.
    let text = report_text(&["leaky.hprof.gz", "--no-cache"]);
    assert_contains_all(
        &text,
        &[
            "one class Leaky (fd5bf630) retains",
            "→ java.lang.Class \"Leaky\" fd5bf630 → java.util.HashMap",
            "fd5bf630         java.lang.Class \"Leaky\"\n",
            // A duplicate set by the text its members hold.
            "  full    -            java.lang.String \"duplicate me please\"\n",
        ],
    );
    // A format without values shows no text.
    let text = report_text(&["demo.dump.txt", "--no-cache"]);
    let top = text
        .split("Top dominators")
        .nth(1)
        .and_then(|t| t.split("\n\n").next())
        .unwrap();
    assert!(!top.contains('"'), "{top}");
}

#[test]
fn the_text_report_lists_ten_messages_unless_asked_for_more() {
    let text =
        |args: &[&str]| report_text(&[&["seed004_as_printed.txt", "--no-cache"], args].concat());
    let listed = |t: &str| t.lines().filter(|l| l.starts_with("  line ")).count();
    let short = text(&[]);
    assert_eq!(listed(&short), 10, "{short}");
    assert!(
        short.contains("  … 2 more not listed (12 with --top 0)\n"),
        "{short}"
    );
    let all = text(&["--top", "0"]);
    assert_eq!(listed(&all), 12, "{all}");
    assert!(!all.contains("more not listed"), "{all}");
    assert_eq!(listed(&text(&["--top", "3"])), 3);
}

#[test]
fn referents_retain_only_with_references_all() {
    let weak = report_text(&["leaky.hprof.gz", "--no-cache", "--duplicates", "none"]);
    assert!(
        weak.contains("Held only by references: 657 objects, 27.23 KiB (part of unreachable; soft 657 objects"),
        "{weak}"
    );
    let all = report_text(&[
        "leaky.hprof.gz",
        "--no-cache",
        "--duplicates",
        "none",
        "--references",
        "all",
    ]);
    assert!(
        all.contains("References:  referents of 363 reference objects retain (--references all)"),
        "{all}"
    );
    let reachable = |t: &str| {
        t.lines()
            .find(|l| l.starts_with("Reachable:"))
            .unwrap()
            .to_string()
    };
    assert_eq!(
        reachable(&weak),
        "Reachable:   24,431 objects, 1015.30 KiB (95.6%)"
    );
    assert_eq!(
        reachable(&all),
        "Reachable:   25,088 objects, 1.02 MiB (98.2%)"
    );
}

#[test]
fn report_object_prints_every_field_with_its_value() {
    // The leaking HashMap (Leaky.LEAK) and the Leaky class.
    let text = report_text(&["leaky.hprof.gz", "--no-cache", "--object", "fd5bfff0"]);
    assert_contains_all(
        &text,
        &[
            "Object fd5bfff0 java.util.HashMap\n",
            "Fields, own class first (8)\n",
            "  float loadFactor = 0.75\n",
            "  int threshold = 1536\n",
            "  int size = 1000\n",
            "  ref table → java.util.HashMap$Node[] fd5f08b0\n",
            "  ref keySet = null\n",
            "References (2)\n",
        ],
    );
    let text = report_text(&["leaky.hprof.gz", "--no-cache", "--object", "0xfd5bf630"]);
    assert_contains_all(
        &text,
        &[
            "Object fd5bf630 java.lang.Class\n",
            "  value \"Leaky\"\n",
            "Static fields (6)\n",
            "  ref LEAK → java.util.HashMap fd5bfff0\n",
            "  ref NUMBERS → int[] fd5c00a8\n",
        ],
    );
    let text = report_text(&["leaky.hprof.gz", "--no-cache", "--object", "fd5c00a8"]);
    assert!(text.contains("  int[5]\n  {1, 2, 3, 4, 5}\n"), "{text}");
    let v = report_json(&["leaky.hprof.gz", "--no-cache", "--object", "fd5bfff0"]);
    assert_eq!(keys(&v), ["file", "format", "object"]);
    let o = &v["object"];
    assert_eq!(o["type"], "java.util.HashMap");
    let size = o["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "size")
        .unwrap();
    assert_eq!(
        size,
        &serde_json::json!({"name": "size", "type": "int", "value": "1000"})
    );
    let table = o["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "table")
        .unwrap();
    assert_eq!(table["object"]["id"], "fd5f08b0");
    // A soft reference's referent, marked.
    let v = report_json(&["leaky.hprof.gz", "--no-cache", "--object", "fd5bf968"]);
    let referent = v["object"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "referent")
        .unwrap()
        .clone();
    assert_eq!(referent["referent"], "soft");
    assert_eq!(referent["retains"], false);
    // An id not in the dump: exit 2, one line.
    let out = heaptui()
        .current_dir(fixture(""))
        .args([
            "report",
            "leaky.hprof.gz",
            "--no-cache",
            "--object",
            "12345",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no object with id 12345"));
}

/// Argument errors are one line on stderr, as the README promises (clap's
/// took four or five), with exit 2; help still prints whole.
#[test]
fn argument_errors_are_one_line() {
    for args in [
        &["report", "--bogus"][..],
        &["report", "--top", "x", "f"],
        &["report"],
        &["report", "--json", "--immediate-dominators", "--frobnicate"],
    ] {
        let out = heaptui().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("heaptui: ") && err.contains("--help"),
            "{err}"
        );
    }
    let out = heaptui().args(["report", "--help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8(out.stdout).unwrap().lines().count() > 5);
}

/// A baseline of another format is refused (a Java dump against a Node one
/// used to report `java.lang.Class` as grown, exit 1).
#[test]
fn a_baseline_of_another_format_is_refused() {
    let out = heaptui()
        .current_dir(fixture(""))
        .args(["report", "--no-cache", "node_leak.heapsnapshot.gz"])
        .args(["--baseline", "leaky.hprof.gz", "--fail-if-grows", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("leaky.hprof.gz: a Java HPROF, not a V8 heap snapshot")
            && err.contains("compare only within one format"),
        "{err}"
    );
}

/// The text report's `Format:` line names the format and its short
/// details, not a V8 header's lists of fields and types.
#[test]
fn the_format_line_leaves_out_the_v8_header_lists() {
    let out = report(&["node_leak.heapsnapshot.gz"]);
    let text = String::from_utf8_lossy(&out);
    let line = text.lines().find(|l| l.starts_with("Format:")).unwrap();
    assert!(
        line.starts_with("Format:      V8 heap snapshot (nodes 47406, edges 198696"),
        "{line}"
    );
    assert!(
        !line.contains("node types") && !line.contains("edge fields"),
        "{line}"
    );
    assert!(line.chars().count() < 200, "{line}");
}

/// The text report names how an HPROF's objects were sized on a line of
/// its own (the `Format:` line leaves out values with lists in them).
#[test]
fn the_text_report_shows_the_object_layout_found() {
    let text = report_text(&["leaky.hprof.gz", "--no-cache", "--duplicates", "none"]);
    assert!(
        text.contains(
            "\nLayout:      compressed oops, 12-byte headers, 8-byte alignment (from the dump: "
        ),
        "{text}"
    );
    let forced = report_text(&[
        "leaky.hprof.gz",
        "--no-cache",
        "--duplicates",
        "none",
        "--model-sizes",
    ]);
    let layout = forced.lines().find(|l| l.starts_with("Layout:")).unwrap();
    assert!(!layout.contains("from the dump"), "{layout}");
}

#[test]
fn skip_walks_past_the_classes_it_names_but_not_past_the_users() {
    // A Java class object's row is `class X`; `--skip 'java.*'` skips the
    // JDK's classes as it skips their instances, and stops at the user's
    // class, whose static map holds the leak.
    let out = report(&[
        "leaky.hprof.gz",
        "--immediate-dominators",
        "byte[]",
        "--skip",
        "java.*",
    ]);
    let text = String::from_utf8(out).unwrap();
    let section = &text[text.find("Immediate dominators").unwrap()..];
    // The section ends at the next blank line (the duplicate owners, with
    // their own patterns, follow it).
    let section = &section[..section.find("\n\n").unwrap_or(section.len())];
    assert!(section.contains("  class Leaky\n"), "{section}");
    assert!(!section.contains("class java."), "{section}");
}

#[test]
fn duplicate_owners_are_cut_past_the_runtime_or_the_given_patterns() {
    let owners = |extra: &[&str]| {
        let mut args = vec!["leaky.hprof.gz"];
        args.extend_from_slice(extra);
        report_json(&args)["duplicate_owners"].clone()
    };
    let by_default = owners(&[]);
    assert_eq!(
        by_default["exclude"],
        serde_json::json!(["java.*", "javax.*", "jdk.*", "sun.*"])
    );
    let rows = by_default["owners"].as_array().unwrap();
    let sum = |rows: &[Value]| {
        rows.iter()
            .map(|o| o["bytes"].as_u64().unwrap())
            .sum::<u64>()
    };
    assert_eq!(sum(rows), by_default["bytes"].as_u64().unwrap());
    for o in rows {
        let sets = o["sets"].as_array().unwrap();
        assert_eq!(sum(sets), o["bytes"].as_u64().unwrap(), "{o}");
    }
    // The leak's strings: held by the user's class, through the JDK's list.
    let leaky = rows
        .iter()
        .find(|o| o["path"][0] == "class Leaky")
        .expect("class Leaky owns duplicates");
    assert_eq!(leaky["anchored"], true);
    assert!(leaky["path"].as_array().unwrap().len() > 1, "{leaky}");

    // Nothing skipped: each owner is the copies' immediate dominator's row.
    let none = owners(&["--owner-skip", ""]);
    assert_eq!(none["exclude"], serde_json::json!([]));
    assert_eq!(none["bytes"], by_default["bytes"]);
    for o in none["owners"].as_array().unwrap() {
        assert!(o["path"].as_array().unwrap().len() <= 1, "{o}");
    }
    let text = report_text(&["leaky.hprof.gz", "--owner-skip", "java.*"]);
    assert!(
        text.contains("cut at the first type not matching java.*)"),
        "{text}"
    );
}

#[test]
fn what_if_a_field_were_gone() {
    // Leaky.java's static LEAK is the only reference to its HashMap of
    // 1,000 entries (Integer keys, Strings and their byte[] values).
    let v = report_json(&[
        "leaky.hprof.gz",
        "--what-if",
        "Leaky.LEAK",
        "--what-if",
        "java.util.HashMap.table",
    ]);
    let w = v["what_if"].as_array().unwrap();
    assert_eq!(w.len(), 2);
    assert_eq!(
        (&w[0]["type"], &w[0]["field"], &w[0]["references"]),
        (&json!("Leaky"), &json!("LEAK"), &json!(1))
    );
    let of = |t: &str| {
        w[0]["by_type"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["type"] == t)
            .map(|r| r["objects"].clone())
    };
    assert_eq!(of("java.util.HashMap$Node"), Some(json!(1000)));
    assert_eq!(of("java.util.HashMap"), Some(json!(1)));
    let sum: u64 = w[0]["by_type"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(json!(sum), w[0]["freed_bytes"]);
    assert!(w[1]["references"].as_u64().unwrap() > 1);
    let text = report_text(&["leaky.hprof.gz", "--what-if", "Leaky.LEAK"]);
    assert_contains_all(
        &text,
        &[
            "What if every Leaky.LEAK were gone (1 reference): 3,874 objects",
            "1,000    31.25 KiB  java.util.HashMap$Node",
        ],
    );
}

#[test]
fn what_if_refuses_what_it_cannot_cut() {
    for (args, says) in [
        (
            ["leaky.hprof.gz", "--what-if", "Leaky.nothing"],
            "no instance of Leaky has a reference named 'nothing'; its references are named:",
        ),
        (
            ["leaky.hprof.gz", "--what-if", "No.Such.field"],
            "no type named 'No.Such'",
        ),
        (
            ["queries.txt", "--what-if", "MyApp.Node.next"],
            "records no field names",
        ),
    ] {
        let out = report_in_fixtures(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
