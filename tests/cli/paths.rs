//! `report --paths TYPE_PATTERN` (docs/json.md's `merged_paths`): the
//! merged paths to the roots in text and JSON, `--skip` with it, and exit
//! code 2 when no object's type matches.

use heaptui_testkit::common;

use serde_json::Value;

use common::{report_in_fixtures as report, report_ok as ok};

#[test]
fn the_leaked_strings_are_held_by_the_leaky_class() {
    // Leaky's static map holds 1,000 strings (fixtures/Leaky.java).
    let args = [
        "leaky.hprof.gz",
        "--duplicates",
        "none",
        "--top",
        "0",
        "--paths",
    ];
    let text = String::from_utf8(ok(
        &[&args[..], &["java.lang.String", "--skip", "java.*"]].concat()
    ))
    .unwrap();
    let section = &text[text.find("Merged paths to the roots of").unwrap()..];
    let leaky = section
        .lines()
        .find(|l| l.trim_end().ends_with(')') && l.contains(" class Leaky "))
        .unwrap_or_else(|| panic!("{section}"));
    let objects: u64 = leaky
        .split_whitespace()
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap();
    assert!(objects >= 1000, "{leaky}");
    assert!(!section.contains("java.util.HashMap"), "skipped: {section}");

    let json: Value =
        serde_json::from_slice(&ok(&[&args[..], &["java.lang.String", "--json"]].concat()))
            .unwrap();
    let m = &json["merged_paths"];
    assert_eq!(m["pattern"], "java.lang.String");
    assert_eq!(m["skip"], Value::Null);
    let nodes = m["nodes"].as_array().unwrap();
    assert_eq!(nodes[0]["kind"], "all");
    let reachable = m["objects"].as_u64().unwrap() - m["unreachable"].as_u64().unwrap();
    assert_eq!(nodes[0]["objects"].as_u64(), Some(reachable));
    // Parents come first; a node's objects are its children's and its own.
    for (i, n) in nodes.iter().enumerate().skip(1) {
        let parent = n["parent"].as_u64().unwrap() as usize;
        assert!(parent < i);
        assert_eq!(
            n["depth"].as_u64(),
            Some(nodes[parent]["depth"].as_u64().unwrap() + 1)
        );
    }
    for (i, n) in nodes.iter().enumerate() {
        let children: u64 = nodes
            .iter()
            .filter(|c| c["parent"].as_u64() == Some(i as u64))
            .map(|c| c["objects"].as_u64().unwrap())
            .sum();
        assert_eq!(
            n["objects"].as_u64(),
            Some(children + n["ending"].as_u64().unwrap())
        );
    }
    let path: Vec<&str> = {
        let mut at = nodes
            .iter()
            .position(|n| n["name"] == "class Leaky")
            .expect("class Leaky on a path");
        let mut names = Vec::new();
        while let Some(p) = nodes[at]["parent"].as_u64() {
            names.push(nodes[at]["name"].as_str().unwrap());
            at = p as usize;
        }
        names
    };
    // The application class loader (a JNI global) holds the class.
    assert_eq!(
        path,
        [
            "class Leaky",
            "jdk.internal.loader.ClassLoaders$AppClassLoader",
            "roots: GC handle"
        ]
    );
}

#[test]
fn a_pattern_that_matches_no_type_exits_2() {
    let out = report(&["demo.dump.txt", "--paths", "No.Such.Type"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--paths: no object's type matches `No.Such.Type`"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn skip_needs_paths_or_immediate_dominators() {
    let out = report(&["demo.dump.txt", "--skip", "System.*"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn with_baselines_each_node_has_its_count_per_snapshot_and_the_growth_is_named() {
    // The series' request log gains 40 entries (each with a string) per
    // snapshot; nothing else that holds strings changes.
    let args = [
        "demo-series.3.txt",
        "--baseline",
        "demo-series.1.txt",
        "--baseline",
        "demo-series.2.txt",
        "--duplicates",
        "none",
        "--top",
        "0",
        "--paths",
        "System.String",
    ];
    let text = String::from_utf8(ok(&args)).unwrap();
    assert!(
        text.contains(
            "Grew most since the oldest snapshot: +80 objects through roots: static variable / MyApp.Diagnostics.RequestLog / MyApp.Diagnostics.RequestLogEntry[] / MyApp.Diagnostics.RequestLogEntry / System.String"
        ),
        "{text}"
    );
    let json: Value = serde_json::from_slice(&ok(&[&args[..], &["--json"]].concat())).unwrap();
    let nodes = json["merged_paths"]["nodes"].as_array().unwrap();
    let counts = |n: &Value| -> Vec<u64> {
        n["objects_by_snapshot"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    for n in nodes {
        let c = counts(n);
        assert_eq!(c.len(), 3);
        assert_eq!(c[2], n["objects"].as_u64().unwrap(), "the newest last");
    }
    let log = nodes
        .iter()
        .find(|n| n["name"] == "MyApp.Diagnostics.RequestLog")
        .expect("the request log holds strings");
    let c = counts(log);
    assert!(c[0] < c[1] && c[1] < c[2], "{c:?}");
    assert_eq!(c[2] - c[0], 80);
    // Without baselines the key is not there.
    let one: Value = serde_json::from_slice(&ok(&[
        "demo-series.3.txt",
        "--json",
        "--paths",
        "System.String",
    ]))
    .unwrap();
    assert!(one["merged_paths"]["nodes"][0]
        .get("objects_by_snapshot")
        .is_none());
}
