//! The V8 heap snapshot importer: a small writer of the format, round trips
//! of random heaps (graph, labels, values) through it at every chunk size,
//! each bad-input rule, truncation at every offset, and real snapshots.

use heaptui_testkit::common;

use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;

use heaptui_core::mem::spill::Spill;
use heaptui_core::model::ObjectIdx;
use heaptui_core::model::{Format, Label, Model, ValueKind};
use heaptui_core::testing::{import_v8_spilled, import_v8_with_chunk};

/// One node of a snapshot as the writer takes it.
#[derive(Debug, Clone)]
struct Node {
    kind: &'static str,
    name: String,
    id: u64,
    size: u64,
    edges: Vec<Edge>,
}

#[derive(Debug, Clone)]
struct Edge {
    kind: &'static str,
    /// A string for named edge types, a number for `element` and `hidden`.
    name: String,
    index: u64,
    to: usize,
}

const NODE_TYPES: [&str; 10] = [
    "hidden",
    "array",
    "string",
    "object",
    "code",
    "closure",
    "native",
    "concatenated string",
    "sliced string",
    "number",
];
const EDGE_TYPES: [&str; 7] = [
    "context", "element", "property", "internal", "hidden", "shortcut", "weak",
];

/// Writes `nodes` (node 0 is the synthetic root) as a snapshot. The field
/// order is rotated by `rotate` and an extra field is added, so nothing may
/// assume DevTools' usual layout.
fn write(nodes: &[Node], rotate: usize) -> Vec<u8> {
    let mut node_fields = vec![
        "type",
        "name",
        "id",
        "self_size",
        "edge_count",
        "detachedness",
    ];
    node_fields.rotate_left(rotate % 6);
    let mut edge_fields = vec!["type", "name_or_index", "to_node"];
    edge_fields.rotate_left(rotate % 3);
    let mut strings: Vec<String> = Vec::new();
    let mut string = |s: &str| match strings.iter().position(|x| x == s) {
        Some(i) => i,
        None => {
            strings.push(s.to_string());
            strings.len() - 1
        }
    };
    let nf = node_fields.len();
    let mut node_nums = Vec::new();
    let mut edge_nums = Vec::new();
    for n in nodes {
        let kind = NODE_TYPES.iter().position(|k| *k == n.kind).unwrap();
        let name = string(&n.name);
        for f in &node_fields {
            node_nums.push(match *f {
                "type" => kind as u64,
                "name" => name as u64,
                "id" => n.id,
                "self_size" => n.size,
                "edge_count" => n.edges.len() as u64,
                _ => 0,
            });
        }
        for e in &n.edges {
            let kind = EDGE_TYPES.iter().position(|k| *k == e.kind).unwrap();
            let name = match e.kind {
                "element" | "hidden" => e.index,
                _ => string(&e.name) as u64,
            };
            for f in &edge_fields {
                edge_nums.push(match *f {
                    "type" => kind as u64,
                    "name_or_index" => name,
                    _ => (e.to * nf) as u64,
                });
            }
        }
    }
    let types = |fields: &[&str], list: &[&str], other: &str| -> String {
        let v: Vec<serde_json::Value> = fields
            .iter()
            .map(|f| match *f {
                "type" => serde_json::json!(list),
                _ => serde_json::json!(other),
            })
            .collect();
        serde_json::to_string(&v).unwrap()
    };
    let join = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(",\n");
    format!(
        "{{\"snapshot\":{{\"meta\":{{\"node_fields\":{},\"node_types\":{},\"edge_fields\":{},\"edge_types\":{}}},\"node_count\":{},\"edge_count\":{}}},\n\"nodes\":[{}],\n\"edges\":[{}],\n\"trace_function_infos\":[],\"trace_tree\":[[1,[]]],\"samples\":[],\"locations\":[],\n\"strings\":{}}}\n",
        serde_json::to_string(&node_fields).unwrap(),
        types(&node_fields, &NODE_TYPES, "number"),
        serde_json::to_string(&edge_fields).unwrap(),
        types(&edge_fields, &EDGE_TYPES, "string_or_number"),
        nodes.len(),
        edge_nums.len() / 3,
        join(&node_nums),
        join(&edge_nums),
        serde_json::to_string(&strings).unwrap(),
    )
    .into_bytes()
}

fn import_chunked(bytes: &[u8], chunk: usize) -> Model {
    import_v8_with_chunk(Path::new("t.heapsnapshot"), bytes, chunk)
        .unwrap_or_else(|e| panic!("import failed: {e}"))
}

fn import_err(bytes: &[u8]) -> String {
    match import_v8_with_chunk(Path::new("t.heapsnapshot"), bytes, 7) {
        Ok(_) => panic!("imported"),
        Err(e) => e.to_string(),
    }
}

/// What the model must hold, computed from the writer's nodes by the rules
/// of docs/formats.md, written out as text for one comparison.
fn expected(nodes: &[Node]) -> String {
    let mut out = String::new();
    for (i, n) in nodes.iter().enumerate().skip(1) {
        let ty = match n.kind {
            "object" | "native" => n.name.clone(),
            // A function is a type of its own, named as DevTools shows it.
            "closure" if n.name.is_empty() => "(anonymous)()".to_string(),
            "closure" => format!("{}()", n.name),
            k => format!("({k})"),
        };
        // A string's name is its text; a sliced string's text is not in
        // the snapshot (its value is unknown); a concatenated string's
        // name is a placeholder (its text is its parts').
        let value = match n.kind {
            "string" => Some(n.name.clone()),
            "sliced string" => Some("unknown".to_string()),
            "concatenated string" => Some("joined".to_string()),
            // Values the snapshot does not hold: native objects' bytes,
            // big integers, heap numbers (whose name is `heap number`
            // unless numeric values were written: then it is the number).
            "native" | "bigint" => Some("unknown".to_string()),
            "number" if n.name.trim().parse::<f64>().is_ok() => Some(n.name.clone()),
            "number" => Some("unknown".to_string()),
            _ => None,
        };
        out += &format!("{i} {:x} {ty} {} {value:?}:", n.id, n.size);
        for e in n
            .edges
            .iter()
            .filter(|e| e.kind != "weak" && e.kind != "shortcut")
        {
            match e.kind {
                "element" | "hidden" => out += &format!(" [{}]→{:x}", e.index, nodes[e.to].id),
                _ => out += &format!(" .{}→{:x}", e.name, nodes[e.to].id),
            }
        }
        out += "\n";
    }
    let roots = nodes[0].edges.iter().filter(|e| e.kind != "weak");
    for e in roots {
        out += &format!("root {:x}\n", nodes[e.to].id);
    }
    out
}

/// The same text, read from the model.
fn observed(m: &Model) -> String {
    let labels = m.labels.as_ref().unwrap();
    let values = m.values.as_ref().unwrap();
    let mut out = String::new();
    for o in 0..m.objects() as u32 {
        let value = values.get(ObjectIdx(o)).map(|(b, k)| match k {
            ValueKind::Unknown | ValueKind::Joined => {
                assert!(b.is_empty());
                format!("{k:?}").to_lowercase()
            }
            _ => String::from_utf8(b.to_vec()).unwrap(),
        });
        out += &format!(
            "{} {:x} {} {} {value:?}:",
            o + 1,
            m.ids.get(o as usize),
            m.type_name(ObjectIdx(o)),
            m.sizes.get(o as usize)
        );
        let start = m.refs.offset(o as usize) as usize;
        for (k, t) in m.refs.neighbors(o).iter().enumerate() {
            match labels.get(start, start + k) {
                Some(Label::Index(i)) => out += &format!(" [{i}]→{:x}", m.ids.get(t as usize)),
                Some(Label::Name(n)) => out += &format!(" .{n}→{:x}", m.ids.get(t as usize)),
                None => out += &format!(" ?→{:x}", m.ids.get(t as usize)),
            }
        }
        out += "\n";
    }
    for r in &m.roots {
        assert_eq!((r.kind, r.flags), (0, 0));
        out += &format!("root {:x}\n", m.ids.get(r.object.index()));
    }
    out
}

fn edge(kind: &'static str, name: &str, to: usize) -> Edge {
    Edge {
        kind,
        name: name.into(),
        index: name.parse().unwrap_or(0),
        to,
    }
}

fn node(kind: &'static str, name: &str, id: u64, size: u64, edges: Vec<Edge>) -> Node {
    Node {
        kind,
        name: name.into(),
        id,
        size,
        edges,
    }
}

/// A hand-made heap: root → (GC roots) → window, a shortcut from the root,
/// a shortcut and a weak edge elsewhere (dropped), string values with
/// escapes, indexed and named labels.
fn small() -> Vec<Node> {
    vec![
        node(
            "hidden",
            "",
            1,
            0,
            vec![edge("element", "1", 1), edge("shortcut", "window", 2)],
        ),
        node("hidden", "(GC roots)", 3, 0, vec![edge("element", "1", 2)]),
        node(
            "object",
            "Window",
            5,
            32,
            vec![
                edge("property", "title", 3),
                edge("shortcut", "x", 4),
                edge("weak", "w", 4),
                edge("element", "0", 4),
                edge("internal", "map", 5),
            ],
        ),
        node("string", "a \"quoted\"\n\\ é 😀 \u{1}", 7, 24, vec![]),
        node("array", "", 9, 16, vec![edge("hidden", "3", 3)]),
        node(
            "concatenated string",
            "a \"quoted\"\n\\ é 😀 \u{1}",
            11,
            40,
            vec![],
        ),
    ]
}

#[test]
fn a_small_snapshot_maps_by_the_rules() {
    let nodes = small();
    let m = import_chunked(&write(&nodes, 0), 1 << 20);
    assert_eq!(m.format, Format::Heapsnapshot);
    assert_eq!(observed(&m), expected(&nodes));
    assert_eq!(m.objects(), 5);
    assert_eq!(m.total_bytes(), 112);
    // (GC roots) and, through the root's shortcut, Window.
    assert_eq!(m.roots.len(), 2);
    assert_eq!(m.diagnostics.total(), 0, "{:?}", m.diagnostics);
    let details: Vec<&str> = m.details.iter().map(|(k, _)| k.as_str()).collect();
    assert!(details.contains(&"node fields"), "{details:?}");
    assert_eq!(m.index_of(5), Some(ObjectIdx(1)));
}

#[test]
fn field_order_and_chunk_size_change_nothing() {
    let nodes = small();
    let want = expected(&nodes);
    for rotate in 0..6 {
        let bytes = write(&nodes, rotate);
        for chunk in [1, 2, 3, 5, 8, 13, 64, 1 << 20] {
            assert_eq!(
                observed(&import_chunked(&bytes, chunk)),
                want,
                "rotate {rotate} chunk {chunk}"
            );
        }
    }
}

fn random_heap() -> impl Strategy<Value = Vec<Node>> {
    let names = prop::sample::select(vec!["a", "b", "Foo", "x y", "\"q\"", "é", "\\", "1"]);
    (2usize..24).prop_flat_map(move |n| {
        let edge = (
            prop::sample::select(EDGE_TYPES.to_vec()),
            names.clone(),
            0u64..1000,
            0..n,
        )
            .prop_map(|(kind, name, index, to)| Edge {
                kind,
                name: name.into(),
                index,
                to,
            });
        let node = (
            prop::sample::select(NODE_TYPES.to_vec()),
            names.clone(),
            0u64..1 << 40,
            prop::collection::vec(edge, 0..5),
        );
        (
            prop::collection::vec(node, n),
            prop::collection::vec(0u64..1 << 50, n),
        )
            .prop_map(|(nodes, ids)| {
                nodes
                    .into_iter()
                    .zip(ids)
                    .map(|((kind, name, size, edges), id)| Node {
                        kind,
                        name: name.into(),
                        id,
                        size,
                        // The root points at no other root edge than node 0.
                        edges: edges.into_iter().filter(|e| e.to != 0).collect(),
                    })
                    .collect()
            })
    })
}

#[test]
fn sliced_strings_are_never_copies_of_one_another() {
    // Two sliced strings of one parent (their offsets, and so their texts,
    // are not in the snapshot) and two strings with equal text, each held
    // by an array of its own.
    let mut nodes = vec![
        node("hidden", "", 1, 0, vec![edge("element", "1", 1)]),
        node(
            "hidden",
            "(GC roots)",
            3,
            0,
            (2..8).map(|t| edge("element", &t.to_string(), t)).collect(),
        ),
    ];
    let parent = 8;
    for (id, name) in [(5, "(sliced string)"), (7, "(sliced string)")] {
        nodes.push(node(
            "sliced string",
            name,
            id,
            20,
            vec![edge("internal", "parent", parent)],
        ));
    }
    nodes.push(node("string", "the same text", 9, 24, vec![]));
    nodes.push(node("string", "the same text", 11, 24, vec![]));
    nodes.push(node(
        "concatenated string",
        "(concatenated string)",
        13,
        32,
        vec![edge("internal", "first", 4), edge("internal", "second", 5)],
    ));
    nodes.push(node(
        "concatenated string",
        "(concatenated string)",
        15,
        32,
        vec![edge("internal", "first", 4), edge("internal", "second", 5)],
    ));
    nodes.push(node("string", &"x".repeat(100), 17, 120, vec![]));
    // A concatenation with a sliced part, and one of itself (a hostile
    // dump's cycle).
    let (at, cycle) = (nodes.len(), nodes.len() + 1);
    nodes.push(node(
        "concatenated string",
        "(concatenated string)",
        19,
        32,
        vec![edge("internal", "first", 4), edge("internal", "second", 2)],
    ));
    nodes.push(node(
        "concatenated string",
        "(concatenated string)",
        21,
        32,
        vec![
            edge("internal", "first", cycle),
            edge("internal", "second", cycle),
        ],
    ));
    let m = import_chunked(&write(&nodes, 0), 1 << 20);
    let preview = |node: usize, max| m.text_preview(ObjectIdx(node as u32 - 1), max);
    // No placeholder is shown as text; a concatenation shows its parts'.
    assert_eq!(preview(2, 40), None);
    assert_eq!(preview(4, 40).as_deref(), Some("the same text"));
    assert_eq!(
        preview(6, 40).as_deref(),
        Some("the same textthe same text")
    );
    assert_eq!(
        preview(6, 26).as_deref(),
        Some("the same textthe same text")
    );
    assert_eq!(
        preview(6, 25).as_deref(),
        Some("the same textthe same tex…")
    );
    assert_eq!(preview(6, 13).as_deref(), Some("the same text…"));
    assert_eq!(preview(at, 40).as_deref(), Some("the same text…"));
    assert_eq!(preview(cycle, 40).as_deref(), Some("…"));
    let (_, sets) = common::duplicate_sets_by_id(m);
    // The concatenations of the same two parts are copies; the strings
    // with equal text are; the sliced strings are not.
    assert_eq!(
        sets,
        vec![
            ("(concatenated string)".to_string(), vec![13, 15]),
            ("(string)".to_string(), vec![9, 11]),
        ]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn random_heaps_round_trip(nodes in random_heap(), rotate in 0usize..6, chunk in 1usize..64) {
        let m = import_chunked(&write(&nodes, rotate), chunk);
        prop_assert_eq!(observed(&m), expected(&nodes));
        prop_assert_eq!(m.diagnostics.dangling_references + m.diagnostics.skipped_lines, 0);
    }
}

/// `small()` written with its arrays edited by `edit`.
fn edited(edit: impl Fn(&str) -> String) -> Vec<u8> {
    let text = String::from_utf8(write(&small(), 0)).unwrap();
    edit(&text).into_bytes()
}

/// The text of array `key` in `text` (between its brackets).
fn array_of<'a>(text: &'a str, key: &str) -> &'a str {
    let start = text.find(&format!("\"{key}\":[")).unwrap() + key.len() + 4;
    let end = start + text[start..].find(']').unwrap();
    &text[start..end]
}

fn replace_array(text: &str, key: &str, numbers: &[u64]) -> String {
    let old = array_of(text, key);
    let new: Vec<String> = numbers.iter().map(u64::to_string).collect();
    text.replacen(old, &new.join(","), 1)
}

fn numbers(text: &str, key: &str) -> Vec<u64> {
    array_of(text, key)
        .split(',')
        .map(|s| s.trim().parse().unwrap())
        .collect()
}

#[test]
fn edges_to_bad_nodes_are_dangling_and_counted() {
    // Edge fields: type, name_or_index, to_node. Edge 0 (root → GC roots)
    // gets to_node 7 (not a multiple of 6), edge 2 one past the last node,
    // edge 3 the synthetic root itself.
    let bytes = edited(|t| {
        let mut e = numbers(t, "edges");
        e[2] = 7;
        e[8] = 6 * 6;
        e[11] = 0;
        replace_array(t, "edges", &e)
    });
    let m = import(&bytes);
    assert_eq!(m.diagnostics.dangling_references, 3);
    let msgs = m.diagnostics.messages.join("\n");
    assert!(
        msgs.contains("edge 0 of node 0: to_node 7 is not a multiple of 6 node fields"),
        "{msgs}"
    );
    assert!(
        msgs.contains("edge 2 of node 1: to_node 36 is past the last node"),
        "{msgs}"
    );
    assert!(
        msgs.contains("edge 3 of node 2: points at the synthetic root"),
        "{msgs}"
    );
    // Only the root's shortcut to Window is left as a root.
    assert_eq!(m.roots.len(), 1);
}

/// The snapshot's five top-level parts as the writer orders them: the
/// header, nodes, edges, the other arrays, strings.
fn parts(text: &str) -> Vec<&str> {
    let at = |key: &str| text.find(&format!("\"{key}\":")).unwrap();
    let cuts = [
        at("snapshot"),
        at("nodes"),
        at("edges"),
        at("trace_function_infos"),
        at("strings"),
        text.rfind('}').unwrap(),
    ];
    (0..5)
        .map(|i| text[cuts[i]..cuts[i + 1]].trim_end().trim_end_matches(','))
        .collect()
}

fn object_of(parts: &[&str]) -> String {
    format!("{{{}}}", parts.join(",\n"))
}

/// The snapshot's top-level parts in another order (JSON objects are
/// unordered; V8 writes the header, nodes, edges, …, strings).
fn reordered(text: &str, order: [usize; 5]) -> String {
    let parts = parts(text);
    object_of(&order.map(|i| parts[i]))
}

#[test]
fn a_repeated_key_counts_as_its_last_value() {
    // Two field orders of one heap: their numbers differ, their strings not.
    let a = String::from_utf8(write(&small(), 0)).unwrap();
    let b = String::from_utf8(write(&small(), 1)).unwrap();
    let (a, b) = (parts(&a), parts(&b));
    let want = observed(&import(object_of(&b).as_bytes()));
    // Everything twice: the second header, nodes and edges count.
    let twice = object_of(&[a[0], a[1], a[2], b[0], b[1], b[2], b[3], b[4]]);
    assert_eq!(observed(&import(twice.as_bytes())), want);
    // A second header after the arrays: they are read with it, though the
    // first does not fit them.
    let late = object_of(&[a[0], b[1], b[2], b[3], b[4], b[0]]);
    assert_eq!(observed(&import(late.as_bytes())), want);
    // The edges before another nodes array are read with the later one.
    let nodes_again = object_of(&[b[0], a[1], b[2], b[1], b[3], b[4]]);
    assert_eq!(observed(&import(nodes_again.as_bytes())), want);
}

#[test]
fn the_parts_in_any_order_read_the_same() {
    // With faults in both arrays, so the messages' order is compared too:
    // an unknown type, names no string has (one also over 2^32), a huge
    // size, a bad edge type and a dangling edge.
    let bytes = edited(|t| {
        let mut n = numbers(t, "nodes");
        n[2 * 6] = 99;
        n[2 * 6 + 1] = 9999;
        n[3 * 6 + 1] = 1 << 40;
        n[3 * 6 + 3] = 1 << 50;
        n[4 * 6 + 1] = 7777;
        let mut e = numbers(t, "edges");
        e[3 * 3] = 42;
        e[8] = 6 * 6;
        replace_array(&replace_array(t, "nodes", &n), "edges", &e)
    });
    let text = String::from_utf8(bytes).unwrap();
    let base = import(text.as_bytes());
    assert!(
        base.diagnostics.messages.len() >= 6,
        "{:?}",
        base.diagnostics
    );
    for order in [
        [0, 1, 2, 3, 4],
        [1, 2, 3, 4, 0], // the header last
        [0, 2, 1, 3, 4], // the edges before the nodes
        [4, 0, 1, 2, 3], // the strings first
        [2, 4, 3, 1, 0],
    ] {
        let moved = reordered(&text, order);
        for chunk in [1, 3, 7, 1 << 20] {
            let m = import_chunked(moved.as_bytes(), chunk);
            assert_eq!(observed(&m), observed(&base), "{order:?} chunk {chunk}");
            assert_eq!(
                m.diagnostics.messages, base.diagnostics.messages,
                "{order:?} chunk {chunk}"
            );
            assert_eq!(m.diagnostics.total(), base.diagnostics.total());
        }
    }
    // Messages follow the nodes, then the edges, whatever the order.
    let msgs = base.diagnostics.messages.join("\n");
    let node2 = msgs.find("node 2: node type 99").unwrap();
    let name2 = msgs.find("node 2: name 9999").unwrap();
    let size3 = msgs.find("node 3: self_size").unwrap();
    let name4 = msgs.find("node 4: name 7777").unwrap();
    let edge = msgs.find("edge 3 of node 2").unwrap();
    assert!(
        node2 < name2 && name2 < size3 && size3 < name4 && name4 < edge,
        "{msgs}"
    );
}

fn import(bytes: &[u8]) -> Model {
    import_chunked(bytes, 7)
}

#[test]
fn unknown_node_types_names_and_edge_types_are_counted() {
    // Node fields: type, name, id, self_size, edge_count, detachedness.
    let bytes = edited(|t| {
        let mut n = numbers(t, "nodes");
        n[2 * 6] = 99; // Window's type
        n[4 * 6 + 1] = 9999; // the array's name (not used: an array is `(array)`)
        let mut e = numbers(t, "edges");
        e[3 * 3] = 42; // Window's `title` edge
        replace_array(&replace_array(t, "nodes", &n), "edges", &e)
    });
    let m = import(&bytes);
    assert_eq!(m.diagnostics.undefined_types, 2, "{:?}", m.diagnostics);
    assert_eq!(m.diagnostics.skipped_lines, 1);
    assert_eq!(m.type_name(ObjectIdx(1)), "(unknown node type)");
    assert_eq!(m.type_name(ObjectIdx(3)), "(array)");
    let msgs = m.diagnostics.messages.join("\n");
    assert!(
        msgs.contains("node 2: node type 99 is not in snapshot.meta"),
        "{msgs}"
    );
    assert!(
        msgs.contains("node 4: name 9999 is not in the strings array"),
        "{msgs}"
    );
    assert!(
        msgs.contains("edge 3 of node 2: edge type 42 is not in snapshot.meta"),
        "{msgs}"
    );
    assert_eq!(
        m.refs.neighbors(1).len(),
        2,
        "title dropped, element and map kept"
    );
}

/// A snapshot may declare more node types than the 255 kept: the ones
/// past them are unknown types, counted (259 used to panic on an index).
#[test]
fn more_node_types_than_kept_are_unknown_types() {
    let bytes = edited(|t| {
        let extra: String = (NODE_TYPES.len()..259)
            .map(|k| format!(",\"t{k}\""))
            .collect();
        // The node types' list closes at the first `]` after it opens.
        let at = t.find("\"node_types\":[[").unwrap() + "\"node_types\":[[".len();
        let end = at + t[at..].find(']').unwrap();
        let t = format!("{}{extra}{}", &t[..end], &t[end..]);
        let mut n = numbers(&t, "nodes");
        n[2 * 6] = 254; // Window: the last type kept
        n[4 * 6] = 258; // the array: the last declared
        n[5 * 6] = 255; // the concatenated string: the first past
        replace_array(&t, "nodes", &n)
    });
    let m = import(&bytes);
    assert_eq!(m.type_name(ObjectIdx(1)), "(t254)");
    assert_eq!(m.type_name(ObjectIdx(3)), "(unknown node type)");
    assert_eq!(m.type_name(ObjectIdx(4)), "(unknown node type)");
    assert_eq!(m.diagnostics.undefined_types, 2, "{:?}", m.diagnostics);
    let msgs = m.diagnostics.messages.join("\n");
    assert!(
        msgs.contains("node 4: node type 258 is past the first 255 node types"),
        "{msgs}"
    );
}

#[test]
fn edge_counts_that_disagree_with_the_edges_array_are_counted() {
    // Window declares one edge fewer: edges belong to nodes in order, so
    // Window loses its last edge (`map`) to the array, whose own `hidden`
    // edge is then beyond every node's count: one extra edge.
    let fewer = edited(|t| {
        let mut n = numbers(t, "nodes");
        n[2 * 6 + 4] -= 1;
        replace_array(t, "nodes", &n)
    });
    let m = import(&fewer);
    assert_eq!(m.diagnostics.skipped_lines, 1, "{:?}", m.diagnostics);
    let msgs = m.diagnostics.messages.join("\n");
    assert!(
        msgs.contains(
            "the edges array holds 9 edges, the nodes declare 8: the 1 extra are ignored"
        ),
        "{msgs}"
    );
    assert_eq!(m.refs.neighbors(1).len(), 2, "title and [0]");
    assert_eq!(m.refs.neighbors(3).len(), 1, "the array got Window's `map`");
    // More declared than present: the missing ones are counted.
    let more = edited(|t| {
        let mut n = numbers(t, "nodes");
        n[4 * 6 + 4] += 3;
        replace_array(t, "nodes", &n)
    });
    let m = import(&more);
    let msgs = m.diagnostics.messages.join("\n");
    assert!(
        msgs.contains("the nodes declare 12 edges, the edges array holds 9: 3 missing"),
        "{msgs}"
    );
    assert_eq!(m.diagnostics.skipped_lines, 3);
    // A header whose counts lie is counted too (the arrays win).
    let lying = edited(|t| t.replacen("\"edge_count\":9", "\"edge_count\":5", 1));
    let m = import(&lying);
    let msgs = m.diagnostics.messages.join("\n");
    assert!(
        msgs.contains("snapshot.edge_count says 5 edges, the edges array holds 9"),
        "{msgs}"
    );
    assert_eq!(observed(&m), expected(&small()));
}

#[test]
fn meta_that_lies_about_field_counts_never_panics() {
    // Five node fields declared, six numbers written per node: every record
    // is misread. Whatever comes out is counted, never a panic.
    for (from, to) in [
        (",\"detachedness\"]", "]"),
        ("\"to_node\"]", "\"to_node\",\"x\"]"),
        ("\"detachedness\"]", "\"detachedness\",\"x\",\"y\"]"),
    ] {
        let bytes = edited(|t| t.replacen(from, to, 1));
        match import_v8_with_chunk(Path::new("t"), &bytes, 5) {
            Ok(m) => assert!(m.diagnostics.total() > 0, "{from}: {:?}", m.diagnostics),
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
}

#[test]
fn malformed_numbers_and_missing_parts_are_one_line_errors() {
    let bad = edited(|t| t.replacen("\"nodes\":[", "\"nodes\":[x,", 1));
    let e = import_err(&bad);
    assert!(
        e.starts_with("t.heapsnapshot: nodes array: expected a non-negative integer at byte "),
        "{e}"
    );
    let e = import_err(&edited(|t| t.replacen("\"nodes\"", "\"nodez\"", 1)));
    assert_eq!(
        e,
        "t.heapsnapshot: no `nodes` array found; not a V8 heap snapshot"
    );
    let e = import_err(&edited(|t| t.replacen("\"node_fields\"", "\"fields\"", 1)));
    assert_eq!(
        e,
        "t.heapsnapshot: snapshot.meta.node_fields is missing or not an array"
    );
    let e = import_err(b"{\"snapshot\":{\"meta\":");
    assert!(e.contains("no `snapshot` header found"), "{e}");
    let root_only = replace_array(
        &String::from_utf8(write(&small(), 0)).unwrap(),
        "nodes",
        &[0, 0, 1, 0, 0, 0],
    );
    let e = import_err(root_only.as_bytes());
    assert!(e.contains("no objects"), "{e}");
}

#[test]
fn a_cut_file_keeps_what_it_holds() {
    let full = write(&small(), 0);
    let text = String::from_utf8(full.clone()).unwrap();
    // Cut inside the edges array, just after Window's `title` edge.
    let cut = text.find("\"edges\":[").unwrap() + 9;
    let after_four_edges = text[cut..].match_indices(',').nth(11).unwrap().0;
    let m = import(&full[..cut + after_four_edges + 1]);
    assert_eq!(m.objects(), 5);
    assert_eq!(m.refs.neighbors(1).len(), 1, "only `title` was read");
    let msgs = m.diagnostics.messages.join("\n");
    assert!(
        msgs.contains("no `strings` array: names are unknown"),
        "{msgs}"
    );
    assert!(
        msgs.contains("the nodes declare 9 edges, the edges array holds 4: 5 missing"),
        "{msgs}"
    );
    assert_eq!(m.type_name(ObjectIdx(1)), "(unknown name)");
}

#[test]
fn truncation_at_every_offset_never_panics() {
    let full = write(&small(), 3);
    for len in 0..full.len() {
        for chunk in [1, 4, 1 << 20] {
            if let Ok(m) = import_v8_with_chunk(Path::new("t"), &full[..len], chunk) {
                assert!(m.objects() <= 5);
                assert!(
                    m.diagnostics.total() > 0 || len + 2 >= full.len(),
                    "cut at {len}"
                );
            }
        }
    }
}

/// A number's value (a snapshot with numeric values links it to a string
/// by an internal `value` edge) and an oddball's (its string and `typeof`
/// by position) are what the inspector shows.
#[test]
fn numbers_and_booleans_show_their_values() {
    use heaptui_core::model::ObjectFields;
    let nodes = vec![
        node("hidden", "", 1, 0, vec![edge("element", "1", 1)]),
        node("hidden", "(GC roots)", 3, 0, vec![edge("element", "1", 2)]),
        node(
            "object",
            "Object",
            5,
            32,
            vec![edge("property", "pi", 3), edge("property", "flag", 5)],
        ),
        node(
            "number",
            "heap number",
            7,
            16,
            vec![edge("internal", "value", 4)],
        ),
        node("string", "3.14159", 9, 24, vec![]),
        node(
            "hidden",
            "system / Oddball",
            11,
            48,
            vec![edge("element", "0", 6), edge("element", "1", 7)],
        ),
        node("string", "true", 13, 16, vec![]),
        node("string", "boolean", 15, 16, vec![]),
    ];
    let m = import_chunked(&write(&nodes, 0), 1 << 20);
    let at = |id: u64| m.index_of(id).unwrap();
    assert_eq!(
        m.fields(at(7)),
        Some(ObjectFields::Value("number 3.14159".into()))
    );
    assert_eq!(
        m.fields(at(11)),
        Some(ObjectFields::Value("boolean true".into()))
    );
    assert_eq!(m.fields(at(5)), None, "an object has no value of its own");
}

/// Three closures of one function: two defined at one place, one at
/// another file's; a fourth has no location, a fifth's script has no name.
fn located_closures() -> Vec<Node> {
    let shared = |to| vec![edge("internal", "shared", to)];
    vec![
        node("hidden", "", 1, 0, vec![edge("element", "1", 1)]),
        node(
            "array",
            "",
            3,
            16,
            (2..=6)
                .map(|i| edge("element", &i.to_string(), i))
                .collect(),
        ),
        node("closure", "audit", 5, 32, shared(7)),
        node("closure", "audit", 7, 32, shared(7)),
        node("closure", "audit", 9, 32, shared(8)),
        node("closure", "audit", 11, 32, shared(7)),
        node("closure", "", 13, 32, shared(7)),
        node(
            "code",
            "audit",
            15,
            8,
            vec![edge("internal", "script_or_debug_info", 9)],
        ),
        node("code", "audit", 17, 8, vec![edge("internal", "script", 10)]),
        // A Script's node is named by its path; its `name` string wins.
        node(
            "code",
            "system / Script",
            19,
            8,
            vec![edge("internal", "name", 11)],
        ),
        node("code", "file:///srv/lib/audit.js", 21, 8, vec![]),
        node("string", "/srv/app/server.js", 23, 24, vec![]),
    ]
}

/// `nodes` written with `location_fields` and the `locations` records
/// `(node, line)` (script id and column are not read).
fn with_locations(nodes: &[Node], records: &[(usize, u64)]) -> Vec<u8> {
    let text = String::from_utf8(write(nodes, 0)).unwrap();
    let nf = 6;
    let nums: Vec<String> = records
        .iter()
        .map(|&(n, line)| format!("{},{},{line},{}", n * nf, n + 100, line % 7))
        .collect();
    text.replacen(
        "{\"meta\":{",
        "{\"meta\":{\"location_fields\":[\"object_index\",\"script_id\",\"line\",\"column\"],",
        1,
    )
    .replacen(
        "\"locations\":[]",
        &format!("\"locations\":[{}]", nums.join(",\n")),
        1,
    )
    .into_bytes()
}

#[test]
fn closures_are_named_by_function_and_where_it_was_defined() {
    let nodes = located_closures();
    // Node 3 twice (the first counts), a record past the nodes, one of a
    // non-closure, one of the root: ignored.
    let records = [
        (2, 41),
        (3, 41),
        (3, 7),
        (4, 0),
        (6, 5),
        (99, 1),
        (7, 1),
        (0, 1),
    ];
    let bytes = with_locations(&nodes, &records);
    for chunk in [1, 7, 1 << 20] {
        let m = import_chunked(&bytes, chunk);
        let types: Vec<&str> = (1..=5).map(|o| m.type_name(ObjectIdx(o))).collect();
        assert_eq!(
            types,
            [
                "audit() server.js:42",
                "audit() server.js:42",
                "audit() audit.js:1",
                "audit()",
                "(anonymous)() server.js:6",
            ],
            "chunk {chunk}"
        );
        assert_eq!(m.types.get(1), m.types.get(2));
        assert_eq!(m.diagnostics.total(), 0, "{:?}", m.diagnostics);
        // No type without objects: "audit()" is the unlocated one's.
        let mut used: Vec<u32> = m.types.iter().map(|t| t.raw()).collect();
        used.sort();
        used.dedup();
        assert_eq!(used.len(), m.type_names.len());
    }
    // Without `location_fields` the array is not read.
    let text = String::from_utf8(bytes).unwrap();
    let m = import(
        text.replacen("\"location_fields\"", "\"other_fields\"", 1)
            .as_bytes(),
    );
    assert_eq!(m.type_name(ObjectIdx(1)), "audit()");
    // A malformed array is one message; closures keep their names.
    let bad = text.replacen("\"locations\":[12", "\"locations\":[x12", 1);
    let m = import(bad.as_bytes());
    assert_eq!(m.type_name(ObjectIdx(1)), "audit()");
    assert_eq!(m.diagnostics.total(), 1, "{:?}", m.diagnostics);
}

/// A spill in a fresh directory (kept alive with it).
fn spill_dir() -> (tempfile::TempDir, Arc<Spill>) {
    let dir = tempfile::tempdir().unwrap();
    let spill = Arc::new(Spill::open(dir.path(), 0).unwrap());
    (dir, spill)
}

fn import_spilled(bytes: &[u8], chunk: usize, spill: Arc<Spill>) -> Model {
    import_v8_spilled(Path::new("t.heapsnapshot"), bytes, chunk, spill)
        .unwrap_or_else(|e| panic!("import failed: {e}"))
}

/// Everything the two imports of one snapshot must share.
fn same_model(spilled: &Model, memory: &Model) {
    assert_eq!(observed(spilled), observed(memory));
    assert_eq!(
        format!("{:?}", spilled.diagnostics),
        format!("{:?}", memory.diagnostics)
    );
    assert_eq!(spilled.details, memory.details);
    assert_eq!(spilled.type_names, memory.type_names);
    assert_eq!(spilled.records, memory.records);
}

#[test]
fn a_spilled_import_reads_as_in_memory() {
    let nodes = small();
    for rotate in [0, 3] {
        let bytes = write(&nodes, rotate);
        for chunk in [1, 5, 64, 1 << 20] {
            let (_dir, spill) = spill_dir();
            let m = import_spilled(&bytes, chunk, spill.clone());
            same_model(&m, &import_chunked(&bytes, chunk));
            assert_eq!(observed(&m), expected(&nodes));
            assert!(m.refs.targets.is_mapped(), "the references are on disk");
            assert!(spill.failure().is_none() && spill.written() > 0);
            assert!(m.spill.is_some(), "the model hands the spill on");
        }
    }
}

#[test]
fn real_snapshots_spilled_read_as_in_memory() {
    use std::io::Read;
    for name in [
        "node_leak.heapsnapshot.gz",
        "node_duplicates.heapsnapshot.gz",
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name);
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap())
            .read_to_end(&mut bytes)
            .unwrap();
        for chunk in [4096, 1 << 22] {
            let (_dir, spill) = spill_dir();
            let m = import_spilled(&bytes, chunk, spill.clone());
            same_model(&m, &import_chunked(&bytes, chunk));
            assert!(m.refs.targets.is_mapped(), "{name}");
            assert!(spill.failure().is_none(), "{name}: {:?}", spill.failure());
        }
    }
}

#[test]
fn a_header_that_declares_too_few_or_no_nodes_spills_all_the_same() {
    let text = String::from_utf8(write(&small(), 0)).unwrap();
    let count = format!("\"node_count\":{}", small().len());
    assert!(text.contains(&count));
    for claim in ["\"node_count\":1", "\"node_count\":0", "\"node_counts\":0"] {
        let bytes = text.replacen(&count, claim, 1).into_bytes();
        let (_dir, spill) = spill_dir();
        let m = import_spilled(&bytes, 3, spill);
        same_model(&m, &import_chunked(&bytes, 3));
        assert_eq!(observed(&m), expected(&small()), "{claim}");
    }
}

#[test]
fn a_spill_that_cannot_make_its_files_leaves_the_import_in_memory() {
    let bytes = write(&small(), 0);
    let (dir, spill) = spill_dir();
    // The directory goes after the spill opened: no file can be made.
    drop(dir);
    let m = import_spilled(&bytes, 5, spill.clone());
    same_model(&m, &import_chunked(&bytes, 5));
    assert!(!m.refs.targets.is_mapped());
    let why = spill.failure().expect("the failure is recorded");
    assert!(why.starts_with("cannot make a spill file: "), "{why}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn random_heaps_spilled_read_as_in_memory(nodes in random_heap(), chunk in 1usize..64) {
        let bytes = write(&nodes, 0);
        let (_dir, spill) = spill_dir();
        let m = import_spilled(&bytes, chunk, spill);
        prop_assert_eq!(observed(&m), expected(&nodes));
        prop_assert_eq!(observed(&m), observed(&import_chunked(&bytes, chunk)));
    }
}
