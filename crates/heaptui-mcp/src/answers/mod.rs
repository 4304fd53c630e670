//! The tools' answers: plain functions from a loaded analysis and the
//! call's arguments to a JSON value (or a [`Refusal`]), the same figures
//! the report and the TUI show. Each answer names the ids, type names and
//! type paths that the next call can take. The server ([`crate::server`])
//! only routes calls here and bounds what comes back.
//!
//! Text from the dump (type names, strings, field values) reaches an answer
//! only as JSON string values, already escaped by the importers
//! (`heaptui_core::model::printable`); under `--redact` string
//! contents and field values are left out ([`redact_object`]).

pub mod compare;
pub mod cut;
pub mod duplicates;
pub mod object;
pub mod owners;
pub mod paths;
pub mod summary;
pub mod suspects;
pub mod tree;
pub mod types;

use serde_json::{json, Value};

use heaptui_core::analysis::Analysis;
use heaptui_core::model::{Model, ObjectIdx, TypeIdx};
use heaptui_core::text::count;

use crate::page::Refusal;

/// An object named in an answer: its id (the dump's own, lowercase hex as
/// the report prints it), its type, its sizes.
pub fn object_ref(a: &Analysis, o: ObjectIdx) -> Value {
    let dump = a.dump();
    let reachable = a.dom.is_reachable(o.raw());
    json!({
        "id": dump.id_hex(o),
        "type": dump.type_name(o),
        "shallow_bytes": dump.size_of(o),
        "retained_bytes": if reachable { a.dom.retained_bytes(o.index()) } else { 0 },
    })
}

/// The object an id names: hex digits as the answers print them, `0x`
/// allowed.
pub fn parse_id(dump: &Model, id: &str) -> Result<ObjectIdx, Refusal> {
    let digits = id.trim();
    let digits = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
        .unwrap_or(digits);
    let value = match digits.len() {
        1..=16 => u64::from_str_radix(digits, 16).ok(),
        _ => None,
    };
    let Some(value) = value else {
        return Err(Refusal::new(format!(
            "{} is not an object id: ids are hex strings as the answers give them (e.g. \"7f3a10\")",
            quoted(id)
        )));
    };
    dump.index_of(value).ok_or_else(|| {
        Refusal::new(format!(
            "no object with id {value:x} in the dump; take ids from other answers (dominators, instances, object)"
        ))
    })
}

/// A type by its exact name, as the answers print it.
pub fn parse_type(dump: &Model, name: &str) -> Result<TypeIdx, Refusal> {
    dump.type_names
        .iter()
        .position(|n| &**n == name)
        .map(TypeIdx::from_usize)
        .ok_or_else(|| {
            Refusal::new(format!(
                "no type named {} in the dump; take exact names from the types tool (its filter finds them)",
                quoted(name)
            ))
        })
}

/// The longest glob pattern a call may give, in characters.
pub const MAX_PATTERN: usize = 1000;

/// A glob pattern from a call: refused when longer than [`MAX_PATTERN`].
pub fn check_pattern(pattern: &str) -> Result<(), Refusal> {
    match pattern.chars().count() > MAX_PATTERN {
        true => Err(Refusal::new(format!(
            "the pattern {} is longer than {MAX_PATTERN} characters",
            quoted(pattern)
        ))),
        false => Ok(()),
    }
}

/// Text from a call, quoted for a message: escaped, at most 60 characters.
pub fn quoted(text: &str) -> String {
    let mut cut: String = text.chars().take(60).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    format!("\"{}\"", heaptui_core::model::printable(cut.as_bytes()))
}

/// "3 of 1,204 members" when `shown < total`, else `None`.
pub fn more(shown: usize, total: usize, what: &str, ask: &str) -> Option<String> {
    (shown < total).then(|| {
        format!(
            "{} of {} {what}; {ask}",
            count(shown as u64),
            count(total as u64)
        )
    })
}

/// Removes what `--redact` hides from an object as `object_value` writes
/// it: its text, its value, its fields' values, its elements.
pub fn redact_object(v: &mut Value) {
    let Value::Object(m) = v else { return };
    m.remove("text");
    m.remove("value");
    if let Some(Value::Object(e)) = m.get_mut("elements") {
        e.remove("first");
        e.remove("text");
    }
    for key in ["fields", "statics"] {
        if let Some(Value::Array(fields)) = m.get_mut(key) {
            for f in fields {
                if let Value::Object(f) = f {
                    f.remove("value");
                }
            }
        }
    }
    m.insert(
        "redacted".into(),
        "string contents and field values left out (--redact)".into(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use heaptui_core::graph::duplicates::DuplicateOptions;

    fn demo() -> Analysis {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/demo.dump.txt");
        let bytes = std::fs::read(path).unwrap();
        Analysis::from_bytes("demo.dump.txt", &bytes, &DuplicateOptions::default()).unwrap()
    }

    #[test]
    fn ids_are_read_as_the_answers_write_them() {
        let a = demo();
        let dump = a.dump();
        let o = ObjectIdx(3);
        let id = dump.id_hex(o);
        assert_eq!(parse_id(dump, &id), Ok(o));
        assert_eq!(parse_id(dump, &format!("0x{id}")), Ok(o));
        for bad in ["", "xyz", "-1", "0x", &"f".repeat(17), "1 2"] {
            assert!(parse_id(dump, bad).is_err(), "{bad:?}");
        }
        let absent = parse_id(dump, "ffffffffffffffff").unwrap_err();
        assert!(absent.0.contains("no object with id ffffffffffffffff"));
    }

    #[test]
    fn text_from_a_call_is_quoted_escaped_and_short() {
        let q = quoted(&format!("\x1b[31m{}", "a".repeat(100)));
        assert!(q.starts_with("\"\\x1b[31m"), "{q}");
        assert!(q.ends_with("…\""), "{q}");
        assert!(q.chars().count() < 80);
    }

    #[test]
    fn redaction_removes_values_and_keeps_shapes() {
        let mut v = serde_json::json!({
            "id": "1", "type": "char[]", "text": "secret", "value": "number 3",
            "elements": {"type": "char", "length": 6, "first": ["'s'"], "text": "secret"},
            "fields": [{"name": "hash", "type": "int", "value": "42"},
                       {"name": "next", "type": "ref", "object": null}],
        });
        redact_object(&mut v);
        let text = v.to_string();
        assert!(!text.contains("secret") && !text.contains("42") && !text.contains("'s'"));
        assert_eq!(v["elements"]["length"], 6);
        assert_eq!(v["fields"][0]["name"], "hash");
        assert!(v["fields"][1].get("object").is_some());
    }
}
