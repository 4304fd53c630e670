//! `heaptui mcp`: the binary spoken to as an MCP client does, JSON-RPC
//! lines over its standard input and output. Every tool is called on the
//! fixtures and its figures checked against `heaptui report --json` of the
//! same fixture; then paging, the 32 KB bound, `--redact`, and calls that
//! are malformed or hostile (the server answers each with an error and
//! goes on answering).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_heaptui");
/// The longest one answer may take (the fixtures analyse in well under a
/// second; the analysis of a debug build takes a few).
const PATIENCE: Duration = Duration::from_secs(60);

fn fixture(name: &str) -> String {
    format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// `heaptui report --json` of the same dumps, for the expected figures.
fn report(dumps: &[&str]) -> Value {
    report_with(dumps, &[])
}

/// `heaptui report --json` of the dumps with more arguments.
fn report_with(dumps: &[&str], args: &[&str]) -> Value {
    let (newest, older) = dumps.split_last().unwrap();
    let mut cmd = Command::new(BIN);
    cmd.args(["report", "--no-cache", "--json", "--top", "0"])
        .arg(newest)
        .args(args);
    for o in older {
        cmd.arg("--baseline").arg(o);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A server and its lines.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Session {
    /// `heaptui mcp ARGS…`, initialised.
    fn start(args: &[&str]) -> Session {
        let mut child = Command::new(BIN)
            .arg("mcp")
            .arg("--no-cache")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut s = Session {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        let init = s.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "heaptui-tests", "version": "0"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "heaptui", "{init}");
        assert!(init["result"]["capabilities"]["tools"].is_object());
        s.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        s
    }

    fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string());
    }

    fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message with this id (notifications before it are kept
    /// in `notes`).
    fn reply(&mut self, id: &Value, notes: &mut Vec<Value>) -> Value {
        loop {
            let line = self
                .lines
                .recv_timeout(PATIENCE)
                .expect("an answer in time");
            let v: Value = serde_json::from_str(&line).expect("each line is JSON");
            if &v["id"] == id {
                return v;
            }
            notes.push(v);
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = json!(self.next_id);
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.reply(&id, &mut Vec::new())
    }

    /// A tool call that waits for the analysis (it carries a progress
    /// token); returns the raw reply and the notifications before it.
    fn call_raw(&mut self, tool: &str, args: Value) -> (Value, Vec<Value>) {
        let id = json!(self.next_id);
        self.next_id += 1;
        let params = json!({"name": tool, "arguments": args, "_meta": {"progressToken": id}});
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}));
        let mut notes = Vec::new();
        let reply = self.reply(&id, &mut notes);
        (reply, notes)
    }

    /// A tool call's answer (its text, parsed); panics on an error.
    fn call(&mut self, tool: &str, args: Value) -> Value {
        let (reply, _) = self.call_raw(tool, args);
        let result = &reply["result"];
        assert_eq!(result["isError"], false, "{tool}: {reply}");
        let text = result["content"][0]["text"]
            .as_str()
            .expect("a text answer");
        assert!(text.len() <= 32 * 1024, "{tool}: {} bytes", text.len());
        serde_json::from_str(text).unwrap()
    }

    /// A tool call that must fail: the error's message (a tool error's
    /// text or a protocol error's message).
    fn refused(&mut self, tool: &str, args: Value) -> String {
        let (reply, _) = self.call_raw(tool, args);
        if let Some(e) = reply.get("error") {
            return e["message"].as_str().unwrap_or_default().to_string();
        }
        assert_eq!(
            reply["result"]["isError"], true,
            "{tool} should fail: {reply}"
        );
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Closes standard input; the server must exit at once, with 0.
    fn close(mut self) {
        drop(self.stdin.take());
        for _ in 0..600 {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "{status}");
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        panic!("the server did not exit when its input closed");
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const TOOLS: [&str; 14] = [
    "comparison",
    "dominator_group",
    "dominators",
    "duplicate_owners",
    "duplicate_set",
    "duplicates",
    "instances",
    "merged_paths",
    "object",
    "object_list",
    "summary",
    "suspects",
    "types",
    "what_if",
];

#[test]
fn tools_are_listed_with_their_schemas() {
    let mut s = Session::start(&[&fixture("demo.dump.txt")]);
    let list = s.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, TOOLS);
    for t in tools {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert!(!t["description"].as_str().unwrap().is_empty());
    }
    let object = tools.iter().find(|t| t["name"] == "object").unwrap();
    assert_eq!(object["inputSchema"]["required"], json!(["id"]));
    s.close();
}

#[test]
fn every_tool_answers_on_a_java_heap_as_the_report_does() {
    let dump = fixture("leaky.hprof.gz");
    let r = report(&[&dump]);
    let mut s = Session::start(&[&dump]);
    // Without a progress token a call made while the dump is analysed
    // answers at once with the stage and its progress (or, on a fast
    // machine, with the summary).
    let early = s.request("tools/call", json!({"name": "summary", "arguments": {}}));
    let text = early["result"]["content"][0]["text"].as_str().unwrap();
    let early: Value = serde_json::from_str(text).unwrap();
    match early.get("loading") {
        Some(loading) => {
            let stage = loading["stage"].as_str().unwrap();
            assert!(["parse", "graph", "dominators", "duplicates", "done"].contains(&stage));
            let percent = loading["stage_percent"].as_f64().unwrap();
            assert!((0.0..=100.0).contains(&percent));
            assert!(early["retry"].as_str().unwrap().contains("progressToken"));
        }
        None => assert_eq!(early["format"], "hprof"),
    }
    let (reply, notes) = s.call_raw("summary", json!({}));
    // A waiting call's progress comes as notifications of its token.
    assert!(notes
        .iter()
        .all(|n| n["method"] == "notifications/progress"));
    let summary: Value =
        serde_json::from_str(reply["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(summary["format"], "hprof");
    assert_eq!(summary["totals"]["objects"], r["summary"]["objects"]);
    assert_eq!(
        summary["totals"]["total_bytes"],
        r["summary"]["total_bytes"]
    );
    assert_eq!(
        summary["reachability"]["reachable_bytes"],
        r["summary"]["reachable_bytes"]
    );
    assert_eq!(
        summary["duplicates"]["sets"],
        r["duplicates"].as_array().unwrap().len()
    );

    // The top of the dominator tree: the report's first dominator leads.
    let top = s.call("dominators", json!({"limit": 3}));
    let first = &r["dominators"][0];
    let group = &top["groups"][0];
    assert_eq!(group["largest"][0]["id"], first["id"]);
    assert_eq!(
        group["largest"][0]["retained_bytes"],
        first["retained_bytes"]
    );
    // Its children, then the members of one of their groups.
    let id = first["id"].as_str().unwrap();
    let children = s.call("dominators", json!({"parent": id}));
    let child_type = children["groups"][0]["type"].as_str().unwrap().to_string();
    let members = s.call("dominator_group", json!({"parent": id, "type": child_type}));
    assert_eq!(members["total"], children["groups"][0]["count"]);
    assert_eq!(members["parent"]["id"], id);

    // Types, with the filter syntax; instances of one.
    let types = s.call(
        "types",
        json!({"filter": "java.util.* !a", "sort": "count", "limit": 5}),
    );
    let rows = types["types"].as_array().unwrap();
    assert!(rows.iter().all(|t| {
        let n = t["name"].as_str().unwrap();
        n.starts_with("java.util.") && !n.ends_with(']')
    }));
    let expected = r["types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "java.lang.String")
        .unwrap();
    let strings = s.call("types", json!({"filter": "lang.String", "sort": "name"}));
    let row = strings["types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "java.lang.String")
        .unwrap();
    assert_eq!(row["count"], expected["count"]);
    assert_eq!(row["shallow_bytes"], expected["shallow_bytes"]);
    let inst = s.call("instances", json!({"type": "java.lang.String", "limit": 3}));
    assert_eq!(inst["total"], expected["count"]);
    let r0 = inst["instances"][0]["retained_bytes"].as_u64().unwrap();
    let r1 = inst["instances"][1]["retained_bytes"].as_u64().unwrap();
    assert!(r0 >= r1, "largest retained first");

    // One object in full, as report --object shows it; its lists paged.
    let obj = s.call("object", json!({"id": id}));
    let expected = report_object(&dump, id);
    assert_eq!(obj["object"]["retained_bytes"], expected["retained_bytes"]);
    assert_eq!(obj["object"]["type"], expected["type"]);
    assert_eq!(
        obj["domination_path"].as_array().unwrap().last().unwrap()["id"],
        id
    );
    let path = obj["retention_path"].as_array().unwrap();
    assert_eq!(path.last().unwrap()["id"], id);
    let refs = s.call(
        "object_list",
        json!({"id": id, "list": "references", "limit": 2}),
    );
    assert_eq!(refs["total"], expected["references_total"]);
    assert_eq!(refs["references"][0]["id"], expected["references"][0]["id"]);

    // Duplicates, a set and what holds it.
    let dups = s.call("duplicates", json!({"limit": 2}));
    assert_eq!(dups["total"], r["duplicates"].as_array().unwrap().len());
    assert_eq!(
        dups["sets"][0]["additional_bytes"],
        r["duplicates"][0]["additional_bytes"]
    );
    let set = s.call("duplicate_set", json!({"set": 0}));
    assert_eq!(set["members"][0]["id"], r["duplicates"][0]["members"][0]);
    assert_eq!(set["set"]["holding_set"], r["duplicates"][0]["holding_set"]);

    // Suspects as the report lists them.
    let sus = s.call("suspects", json!({}));
    assert_eq!(sus["total"], r["suspects"].as_array().unwrap().len());
    assert_eq!(sus["suspects"][0], r["suspects"][0]);

    // No comparison with one dump: an error that says why.
    assert!(s
        .refused("comparison", json!({}))
        .contains("older snapshots"));
    s.close();
}

fn report_object(dump: &str, id: &str) -> Value {
    let out = Command::new(BIN)
        .args(["report", "--no-cache", "--json", dump, "--object", id])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["object"].clone()
}

#[test]
fn each_format_is_served() {
    for name in [
        "demo.dump.txt",
        "node_leak.heapsnapshot.gz",
        "perfview_test1.gcdump",
    ] {
        let dump = fixture(name);
        let r = report(&[&dump]);
        let mut s = Session::start(&[&dump]);
        let summary = s.call("summary", json!({}));
        assert_eq!(summary["format"], r["format"], "{name}");
        assert_eq!(
            summary["totals"]["objects"], r["summary"]["objects"],
            "{name}"
        );
        // The report's largest dominator leads its type's group.
        let id = r["dominators"][0]["id"].as_str().unwrap();
        let top = s.call("dominators", json!({"limit": 200}));
        let groups = top["groups"].as_array().unwrap();
        assert!(groups.iter().any(|g| g["largest"][0]["id"] == id), "{name}");
        let obj = s.call("object", json!({"id": id}));
        assert_eq!(
            obj["object"]["retained_bytes"],
            r["dominators"][0]["retained_bytes"]
        );
        let types = s.call("types", json!({"limit": 1}));
        assert_eq!(types["types"][0]["name"], r["types"][0]["name"], "{name}");
        s.close();
    }
}

#[test]
fn a_comparison_lists_steady_growth_first() {
    let dumps = [
        fixture("demo-series.1.txt"),
        fixture("demo-series.2.txt"),
        fixture("demo-series.3.txt"),
    ];
    let names: Vec<&str> = dumps.iter().map(String::as_str).collect();
    let r = report(&names);
    let mut s = Session::start(&names);
    let c = s.call("comparison", json!({"limit": 200}));
    let paths = c["paths"].as_array().unwrap();
    let expected = r["comparison"]["paths"].as_array().unwrap();
    assert_eq!(c["total"], expected.len());
    let steady: Vec<bool> = paths.iter().map(|p| p["grows_steadily"] == true).collect();
    assert!(steady[0], "a steadily growing path leads");
    assert!(
        steady.windows(2).all(|w| w[0] || !w[1]),
        "steady growth first"
    );
    for p in paths {
        let e = expected
            .iter()
            .find(|e| e["path"] == p["type_path"])
            .unwrap();
        assert_eq!(p["retained_bytes"], e["retained_bytes"]);
    }
    let sus = s.call("suspects", json!({}));
    assert_eq!(sus["suspects"][0]["kind"], r["suspects"][0]["kind"]);
    s.close();
}

#[test]
fn long_lists_are_paged_and_every_answer_is_bounded() {
    let mut s = Session::start(&[&fixture("leaky.hprof.gz")]);
    let first = s.call(
        "instances",
        json!({"type": "java.lang.String", "limit": 200}),
    );
    let total = first["total"].as_u64().unwrap();
    assert!(total > 400);
    let shown = first["instances"].as_array().unwrap().len() as u64;
    assert!(first["cut"]
        .as_str()
        .unwrap()
        .ends_with(&format!("ask with offset {shown} for more")));
    // Every page of the list, each bounded, together the whole list once.
    let mut seen = std::collections::HashSet::new();
    let mut offset = 0;
    while offset < total {
        let page = s.call(
            "instances",
            json!({"type": "java.lang.String", "offset": offset, "limit": 200}),
        );
        let rows = page["instances"].as_array().unwrap();
        assert!(!rows.is_empty());
        for r in rows {
            assert!(seen.insert(r["id"].as_str().unwrap().to_string()));
        }
        offset += rows.len() as u64;
    }
    assert_eq!(seen.len() as u64, total);
    // The largest pages asked for still fit in 32 KB (checked by `call`).
    for tool in ["types", "dominators", "duplicates", "suspects"] {
        s.call(tool, json!({"limit": 200}));
    }
    s.close();
}

#[test]
fn redact_leaves_out_strings_and_values() {
    let dump = fixture("leaky.hprof.gz");
    // HELLO1, a char[] holding "hello", and its class's static fields.
    let mut plain = Session::start(&[&dump]);
    let shown = plain.call("object", json!({"id": "fd5c0100"}));
    assert_eq!(shown["object"]["text"], "hello");
    let path = plain.call(
        "object_list",
        json!({"id": "fd572e38", "list": "retention_path"}),
    );
    assert_eq!(
        path["retention_path"][0]["root"],
        "thread Signal Dispatcher"
    );
    plain.close();
    let mut s = Session::start(&["--redact", &dump]);
    for id in ["fd5c0100", "fd5bf630"] {
        let obj = s.call("object", json!({"id": id}));
        let text = obj.to_string();
        assert!(!text.contains("hello") && !text.contains("'h'"), "{text}");
        assert!(obj["object"].get("text").is_none());
        assert!(obj["object"]["redacted"].is_string());
    }
    // A string's value fields: names and types, no values.
    let strings = s.call("instances", json!({"type": "java.lang.String", "limit": 1}));
    let id = strings["instances"][0]["id"].as_str().unwrap().to_string();
    let fields = s.call("object_list", json!({"id": id, "list": "fields"}));
    for f in fields["fields"].as_array().unwrap() {
        assert!(f.get("value").is_none(), "{f}");
    }
    let summary = s.call("summary", json!({}));
    assert!(summary["diagnostics"].get("messages").is_none());
    // Thread names are strings of the dump: no root places (the thread
    // fd572e38 is rooted as "thread Signal Dispatcher").
    let path = s.call(
        "object_list",
        json!({"id": "fd572e38", "list": "retention_path"}),
    );
    assert_eq!(path["retention_path"][0]["id"], "fd572e38");
    assert!(path["retention_path"][0].get("root").is_none(), "{path}");
    let sus = s.call("suspects", json!({}));
    assert!(!sus.to_string().contains("retention_root"), "{sus}");
    // Owners, cuts and merged paths carry ids, types and sizes only.
    for (tool, args) in [
        ("duplicate_owners", json!({"limit": 200})),
        (
            "what_if",
            json!({"objects": ["fd572e38", "fd5c0100"], "limit": 200}),
        ),
        (
            "merged_paths",
            json!({"type_pattern": "java.lang.Thread", "limit": 200}),
        ),
    ] {
        let text = s.call(tool, args).to_string();
        assert!(
            !text.contains("Signal Dispatcher") && !text.contains("hello"),
            "{text}"
        );
    }
    s.close();
}

#[test]
fn malformed_and_hostile_calls_get_errors_and_the_server_goes_on() {
    let mut s = Session::start(&[&fixture("leaky.hprof.gz")]);
    s.call("summary", json!({})); // loaded
    let long = "f".repeat(100_000);
    let hostile = [
        ("no_such_tool", json!({})),
        ("object", json!({})),
        ("object", json!({"id": 42})),
        ("object", json!({"id": "not hex"})),
        ("object", json!({"id": long})),
        ("object", json!({"id": "ffffffffffffffff"})),
        ("object", json!({"id": "-1"})),
        ("instances", json!({"type": long})),
        (
            "instances",
            json!({"type": "java.lang.String", "offset": u64::MAX}),
        ),
        (
            "instances",
            json!({"type": "java.lang.String", "offset": -1}),
        ),
        (
            "instances",
            json!({"type": "java.lang.String", "limit": "all"}),
        ),
        ("dominators", json!({"parent": "0"})),
        ("dominators", json!({"offset": 1_000_000_000u64})),
        (
            "dominator_group",
            json!({"type": "java.lang.String", "offset": 1e300}),
        ),
        ("duplicate_set", json!({"set": u64::MAX})),
        ("duplicate_set", json!({"set": -5})),
        ("object_list", json!({"id": "fd5bf630", "list": "secrets"})),
        ("types", json!({"sort": ["count"]})),
        ("summary", json!({"path": "/etc/passwd"})),
        ("duplicate_owners", json!({"exclude": "java.*"})),
        ("duplicate_owners", json!({"exclude": vec!["*"; 1000]})),
        ("what_if", json!({})),
        ("what_if", json!({"objects": vec!["fd5bf630"; 1001]})),
        ("what_if", json!({"fields": [long]})),
        ("merged_paths", json!({})),
        ("merged_paths", json!({"type_pattern": long})),
        (
            "merged_paths",
            json!({"type_pattern": "*", "objects": ["fd5bf630"]}),
        ),
    ];
    for (tool, args) in hostile {
        let message = s.refused(tool, args.clone());
        assert!(!message.is_empty(), "{tool} {args}");
        assert!(message.len() < 1000, "a short message: {tool} {message}");
    }
    // A huge limit is clamped, never refused.
    let page = s.call("types", json!({"limit": u64::MAX}));
    assert!(page["types"].as_array().unwrap().len() <= 200);
    // Not JSON, not a request, an unknown method: the protocol's errors.
    s.send_line("{this is not json");
    s.send_line("[]");
    let unknown = s.request("no/such/method", json!({}));
    assert!(unknown["error"].is_object(), "{unknown}");
    // And the server still answers.
    let summary = s.call("summary", json!({}));
    assert_eq!(summary["format"], "hprof");
    s.close();
}

#[test]
fn a_dump_that_fails_to_analyse_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.hprof");
    std::fs::write(&bad, b"JAVA PROFILE 1.0.2\0\0\0\0\x08").unwrap();
    let out = Command::new(BIN)
        .args(["mcp", "--no-cache"])
        .arg(&bad)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "nothing on the protocol's stream");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.hprof"), "{err}");
}

/// Every page of a list, asked with the largest limit.
fn all_rows(s: &mut Session, tool: &str, args: Value, key: &str) -> Vec<Value> {
    let mut rows = Vec::new();
    loop {
        let mut a = args.clone();
        a["offset"] = json!(rows.len());
        a["limit"] = json!(200);
        let page = s.call(tool, a);
        let got = page[key].as_array().unwrap();
        assert!(!got.is_empty(), "{tool}: {page}");
        rows.extend(got.iter().cloned());
        if rows.len() as u64 >= page["total"].as_u64().unwrap() {
            return rows;
        }
    }
}

#[test]
fn owners_cuts_and_paths_answer_as_the_report_does() {
    let dump = fixture("leaky.hprof.gz");
    let node = "java.util.HashMap$Node";
    let r = report_with(
        &[&dump],
        &[
            "--what-if",
            "Leaky.LEAK",
            "--paths",
            node,
            "--skip",
            "java.util.HashMap",
        ],
    );
    let mut s = Session::start(&[&dump]);

    // Duplicate owners: the report's, page by page.
    let first = s.call("duplicate_owners", json!({"limit": 1}));
    let expected = &r["duplicate_owners"];
    assert_eq!(first["exclude"], expected["exclude"]);
    assert_eq!(first["bytes"], expected["bytes"]);
    let owners = all_rows(&mut s, "duplicate_owners", json!({}), "owners");
    let want = expected["owners"].as_array().unwrap();
    assert_eq!(owners.len(), want.len());
    assert!(owners.len() > 1);
    for (got, want) in owners.iter().zip(want) {
        for key in ["path", "anchored", "bytes", "copies", "instances"] {
            assert_eq!(got[key], want[key], "{key}: {got} {want}");
        }
        assert_eq!(got["top_instance"]["id"], want["top_instance"]);
        assert_eq!(got["sets_total"], want["sets"].as_array().unwrap().len());
        for (g, w) in got["sets"]
            .as_array()
            .unwrap()
            .iter()
            .zip(want["sets"].as_array().unwrap())
        {
            assert_eq!(
                (&g["set"], &g["copies"], &g["bytes"]),
                (&w["set"], &w["copies"], &w["bytes"])
            );
        }
    }
    // Its sets are duplicate_set's numbers.
    let set = owners[0]["sets"][0]["set"].clone();
    let held = s.call("duplicate_set", json!({"set": set, "limit": 1}));
    assert_eq!(held["set"]["type"], owners[0]["sets"][0]["type"]);
    // Other exclude patterns cut elsewhere; the bytes stay the headline's.
    let none = s.call("duplicate_owners", json!({"exclude": []}));
    assert_eq!(none["exclude"], json!([]));
    assert_eq!(none["bytes"], expected["bytes"]);
    assert_ne!(none["owners"][0]["path"], owners[0]["path"]);

    // What if Leaky.LEAK were gone: the report's figures and types.
    let cut = json!({"fields": ["Leaky.LEAK"]});
    let w = s.call("what_if", json!({"fields": ["Leaky.LEAK"], "limit": 2}));
    let want = &r["what_if"][0];
    assert_eq!(w["removed"]["fields"][0]["references"], want["references"]);
    assert_eq!(w["freed_objects"], want["freed_objects"]);
    assert_eq!(w["freed_bytes"], want["freed_bytes"]);
    assert!(w["cut"].as_str().unwrap().contains("ask with offset 2"));
    let types = all_rows(&mut s, "what_if", cut, "by_type");
    let want = want["by_type"].as_array().unwrap();
    assert_eq!(types.len(), want.len());
    assert!(types.len() > 2);
    for (g, w) in types.iter().zip(want) {
        assert_eq!(
            (&g["type"], &g["objects"], &g["bytes"]),
            (&w["type"], &w["objects"], &w["bytes"])
        );
        // The example is a freed object of the row's type.
        let e = s.call("object", json!({"id": g["example"]}));
        let t = e["object"]["type"].as_str().unwrap();
        assert!(
            w["type"] == t || w["type"] == format!("class {t}") || t == "java.lang.Class",
            "{t} {w}"
        );
    }
    // Cutting an object frees exactly what it dominates: its retained size.
    let top = &r["dominators"][0];
    let w = s.call("what_if", json!({"objects": [top["id"]]}));
    assert_eq!(w["freed_objects"], top["retained_objects"]);
    assert_eq!(w["freed_bytes"], top["retained_bytes"]);

    // Merged paths of the HashMap nodes, the maps skipped: the report's tree.
    let args = json!({"type_pattern": node, "skip": "java.util.HashMap"});
    let nodes = all_rows(&mut s, "merged_paths", args.clone(), "nodes");
    let want = r["merged_paths"]["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), want.len());
    assert!(nodes.len() > 2);
    for (k, (g, w)) in nodes.iter().zip(want).enumerate() {
        assert_eq!(g["node"], k);
        for key in [
            "parent",
            "depth",
            "kind",
            "name",
            "objects",
            "ending",
            "retained_bytes",
            "id",
        ] {
            assert_eq!(g[key], w[key], "node {k} {key}");
        }
    }
    assert!(nodes.iter().all(|n| n["name"] != "java.util.HashMap"));
    let page = s.call("merged_paths", args);
    assert_eq!(page["targets"], r["merged_paths"]["objects"]);
    assert_eq!(page["unreachable"], r["merged_paths"]["unreachable"]);
    // Without skip the maps are on the paths; by ids, one object's path.
    let all = all_rows(
        &mut s,
        "merged_paths",
        json!({"type_pattern": node}),
        "nodes",
    );
    assert!(all.iter().any(|n| n["name"] == "java.util.HashMap"));
    let one = s.call(
        "merged_paths",
        json!({"objects": [nodes.last().unwrap()["id"]]}),
    );
    assert_eq!(one["targets"], 1);
    assert_eq!(one["nodes"][0]["objects"], 1);

    // Hostile: the call's text comes back escaped and short; huge cuts refused.
    let m = s.refused("what_if", json!({"fields": ["\u{1b}[31mNo.Such.field"]}));
    assert!(!m.contains('\u{1b}') && m.contains("\\x1b[31m"), "{m}");
    let m = s.refused("merged_paths", json!({"type_pattern": "\u{1b}]0;No.Such*"}));
    assert!(
        !m.contains('\u{1b}') && m.contains("no object's type matches"),
        "{m}"
    );
    let m = s.refused("duplicate_owners", json!({"exclude": ["x".repeat(5000)]}));
    assert!(m.contains("longer than") && m.len() < 1000, "{m}");
    let m = s.refused("what_if", json!({"objects": vec!["fd5bf630"; 1001]}));
    assert!(m.contains("at most"), "{m}");
    s.close();
}
