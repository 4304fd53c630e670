//! The `snapshot` header: the layout of the node and edge records as the
//! file declares it (`meta.node_fields`, `node_types`, `edge_fields`,
//! `edge_types`), never assumed. Parsed with serde_json: it is a few hundred
//! bytes.

use serde_json::Value;

use super::numbers::MAX_FIELDS;

/// What an edge type means for the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeClass {
    /// `weak`: not a reference.
    Weak,
    /// `shortcut`: a reference only when it leaves the synthetic root.
    Shortcut,
    /// `element`, `hidden`: `name_or_index` is an index.
    Index,
    /// `property`, `internal`, `context` and any other: a string index.
    Name,
}

/// What a node type means for the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeClass {
    /// `object`, `native`: the type name is the node's name.
    Named,
    /// `string`: the name is the string's text, its value.
    Text,
    /// `concatenated string`: its name is the placeholder `(concatenated
    /// string)`; its text is its `first` and `second` parts'
    /// (`ValueKind::Joined`).
    Joined,
    /// `sliced string`: a part of another string (its `parent`) whose
    /// offset and length the snapshot does not hold, and whose name is the
    /// placeholder `(sliced string)`. Its text is unknown, so no two are
    /// taken for copies (its value is `ValueKind::Unknown`).
    Sliced,
    /// `closure`: the type name is the function's name and `()`, as
    /// DevTools shows a function (`audit()`; `(anonymous)()` without a
    /// name), so that each function is a type of its own.
    Function,
    /// Anything else: the type name is `(<node type>)` (as for the
    /// strings).
    Plain,
}

#[derive(Debug, Clone)]
pub struct Meta {
    pub node_fields: Vec<String>,
    pub edge_fields: Vec<String>,
    /// Field positions in a node record.
    pub n_type: usize,
    pub n_name: usize,
    pub n_id: usize,
    pub n_size: usize,
    pub n_edges: usize,
    /// Field positions in an edge record.
    pub e_type: usize,
    pub e_name: usize,
    pub e_to: usize,
    pub node_types: Vec<String>,
    pub edge_types: Vec<String>,
    pub node_classes: Vec<NodeClass>,
    pub edge_classes: Vec<EdgeClass>,
    /// The header's own counts (checked against the arrays, never trusted).
    pub node_count: Option<u64>,
    pub edge_count: Option<u64>,
    pub extra_native_bytes: Option<u64>,
    /// The `locations` records' layout, where the header declares one with
    /// an `object_index` and a `line` field (else the array is not read).
    pub locations: Option<LocationFields>,
}

/// Field positions in a `locations` record (`snapshot.meta.location_fields`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocationFields {
    pub fields: usize,
    pub object: usize,
    pub line: usize,
}

/// The location fields, when declared and usable.
fn location_fields(meta: &Value) -> Option<LocationFields> {
    let fields = strings(meta.get("location_fields"), "location_fields").ok()?;
    if fields.is_empty() || fields.len() > MAX_FIELDS {
        return None;
    }
    Some(LocationFields {
        fields: fields.len(),
        object: fields.iter().position(|f| f == "object_index")?,
        line: fields.iter().position(|f| f == "line")?,
    })
}

fn strings(v: Option<&Value>, what: &str) -> Result<Vec<String>, String> {
    let list = v
        .and_then(Value::as_array)
        .ok_or_else(|| format!("snapshot.meta.{what} is missing or not an array"))?;
    list.iter()
        .map(|s| {
            s.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("snapshot.meta.{what} holds a non-string"))
        })
        .collect()
}

fn position(fields: &[String], name: &str, what: &str) -> Result<usize, String> {
    fields
        .iter()
        .position(|f| f == name)
        .ok_or_else(|| format!("snapshot.meta.{what} has no `{name}` field"))
}

/// The list of type names declared for field `at` (`node_types[at]`).
fn type_names(meta: &Value, key: &str, at: usize) -> Result<Vec<String>, String> {
    let list = meta.get(key).and_then(Value::as_array);
    strings(list.and_then(|l| l.get(at)), &format!("{key}[{at}]"))
}

pub fn parse(header: &[u8]) -> Result<Meta, String> {
    let v: Value = serde_json::from_slice(header)
        .map_err(|e| format!("the `snapshot` header is not valid JSON: {e}"))?;
    let meta = v.get("meta").ok_or("the `snapshot` header has no `meta`")?;
    let node_fields = strings(meta.get("node_fields"), "node_fields")?;
    let edge_fields = strings(meta.get("edge_fields"), "edge_fields")?;
    for (fields, what) in [(&node_fields, "node_fields"), (&edge_fields, "edge_fields")] {
        if fields.is_empty() || fields.len() > MAX_FIELDS {
            return Err(format!(
                "snapshot.meta.{what} declares {} fields (1 to {MAX_FIELDS} expected)",
                fields.len()
            ));
        }
    }
    let n_type = position(&node_fields, "type", "node_fields")?;
    let e_type = position(&edge_fields, "type", "edge_fields")?;
    let node_types = type_names(meta, "node_types", n_type)?;
    let edge_types = type_names(meta, "edge_types", e_type)?;
    let node_classes = node_types
        .iter()
        .map(|t| match t.as_str() {
            "object" | "native" => NodeClass::Named,
            "closure" => NodeClass::Function,
            "string" => NodeClass::Text,
            "concatenated string" => NodeClass::Joined,
            "sliced string" => NodeClass::Sliced,
            _ => NodeClass::Plain,
        })
        .collect();
    let edge_classes = edge_types
        .iter()
        .map(|t| match t.as_str() {
            "weak" => EdgeClass::Weak,
            "shortcut" => EdgeClass::Shortcut,
            "element" | "hidden" => EdgeClass::Index,
            _ => EdgeClass::Name,
        })
        .collect();
    let count = |k: &str| v.get(k).and_then(Value::as_u64);
    Ok(Meta {
        n_type,
        n_name: position(&node_fields, "name", "node_fields")?,
        n_id: position(&node_fields, "id", "node_fields")?,
        n_size: position(&node_fields, "self_size", "node_fields")?,
        n_edges: position(&node_fields, "edge_count", "node_fields")?,
        e_type,
        e_name: position(&edge_fields, "name_or_index", "edge_fields")?,
        e_to: position(&edge_fields, "to_node", "edge_fields")?,
        node_fields,
        edge_fields,
        node_types,
        edge_types,
        node_classes,
        edge_classes,
        node_count: count("node_count"),
        edge_count: count("edge_count"),
        extra_native_bytes: count("extra_native_bytes"),
        locations: location_fields(meta),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"meta":{"node_fields":["name","type","id","self_size","edge_count"],
        "node_types":["string",["hidden","object","string"],"number","number","number"],
        "edge_fields":["to_node","type","name_or_index"],
        "edge_types":["node",["weak","element","property"],"string_or_number"]},
        "node_count":3,"edge_count":2}"#;

    #[test]
    fn field_positions_come_from_the_file() {
        let m = parse(HEADER.as_bytes()).unwrap();
        assert_eq!(
            (m.n_type, m.n_name, m.n_id, m.n_size, m.n_edges),
            (1, 0, 2, 3, 4)
        );
        assert_eq!((m.e_type, m.e_name, m.e_to), (1, 2, 0));
        assert_eq!(
            m.node_classes,
            [NodeClass::Plain, NodeClass::Named, NodeClass::Text]
        );
        assert_eq!(
            m.edge_classes,
            [EdgeClass::Weak, EdgeClass::Index, EdgeClass::Name]
        );
        assert_eq!(m.node_count, Some(3));
    }

    #[test]
    fn missing_fields_are_named() {
        let bad = HEADER.replace("\"self_size\"", "\"size\"");
        assert_eq!(
            parse(bad.as_bytes()).unwrap_err(),
            "snapshot.meta.node_fields has no `self_size` field"
        );
        assert!(parse(b"{\"meta\":{}}").unwrap_err().contains("node_fields"));
        assert!(parse(b"{").unwrap_err().contains("not valid JSON"));
    }
}
