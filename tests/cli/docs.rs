//! docs/json.md shows the `report --json` contract by example. This test
//! runs the real binary with every optional part switched on and checks
//! that its output has exactly the example's keys, recursively, with values
//! of the same JSON kinds: the page cannot drift from the program.

use std::path::Path;

use serde_json::Value;

fn example() -> Value {
    let page = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/json.md"))
        .unwrap();
    let start = page.find("```json\n").expect("a json block") + "```json\n".len();
    let end = start + page[start..].find("```").unwrap();
    serde_json::from_str(&page[start..end]).expect("the example is valid JSON")
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Differences between the documented and the actual shape at `at`.
fn compare(doc: &Value, real: &Value, at: &str, out: &mut Vec<String>) {
    match (doc, real) {
        (Value::Object(d), Value::Object(r)) => {
            for k in d.keys().filter(|k| !r.contains_key(*k)) {
                out.push(format!("{at}.{k}: documented, not in the output"));
            }
            for k in r.keys().filter(|k| !d.contains_key(*k)) {
                out.push(format!("{at}.{k}: in the output, not documented"));
            }
            for (k, dv) in d {
                if let Some(rv) = r.get(k) {
                    compare(dv, rv, &format!("{at}.{k}"), out);
                }
            }
        }
        (Value::Array(d), Value::Array(r)) => {
            if let (Some(d0), Some(r0)) = (d.first(), r.first()) {
                compare(d0, r0, &format!("{at}[0]"), out);
            }
        }
        // Nullable fields (`idom`, `holding_set`, a suspect's `id`) are
        // documented with one of their kinds.
        (Value::Null, _) | (_, Value::Null) => {}
        (d, r) if kind(d) != kind(r) => {
            out.push(format!("{at}: documented as {}, is {}", kind(d), kind(r)))
        }
        _ => {}
    }
}

#[test]
fn the_documented_json_is_what_report_prints() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let out = heaptui_testkit::common::heaptui()
        .arg("report")
        .arg(fixtures.join("demo-series.3.txt"))
        .arg("--baseline")
        .arg(fixtures.join("demo-series.1.txt"))
        .args(["--json", "--objects", "--duplicate-budget", "1"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let real: Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in [
        "comparison",
        "objects",
        "possible_duplicates",
        "suspects",
        "format",
    ] {
        assert!(real.get(key).is_some(), "the run must show `{key}`");
    }
    let mut diffs = Vec::new();
    compare(&example(), &real, "", &mut diffs);
    assert!(
        diffs.is_empty(),
        "docs/json.md and the output differ:\n{}",
        diffs.join("\n")
    );
}
