//! The .NET gcdump importer: a small writer of PerfView's FastSerialization
//! `GCHeapDump`, round trips of random graphs through it, each bad-input
//! rule, truncation at every offset, PerfView's own test dump (answers from
//! PerfView's baseline XML of it), and the real dump against its text form.

use heaptui_testkit::common;
use heaptui_testkit::native;

use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;

use heaptui_core::import::import_bytes;
use heaptui_core::mem::spill::Spill;
use heaptui_core::model::ObjectIdx;
use heaptui_core::model::{Format, Model};
use heaptui_core::testing::import_gcdump_spilled;
use heaptui_testkit::gcdump::Writer;

/// One node as the writer takes it: type index, size, children (node
/// indices); `None` for a node created but never defined.
type Node = Option<(u32, i32, Vec<u32>)>;

#[derive(Debug, Clone)]
struct Graph {
    /// Type names and sizes (type 0 is PerfView's `UNDEFINED`, size 0).
    types: Vec<(String, i32)>,
    nodes: Vec<Node>,
    root: u32,
    multipliers: (f32, f32),
}

/// The file, through the library's writer.
fn writer(g: &Graph) -> Writer {
    let mut w = Writer::new(g.types.clone());
    for n in &g.nodes {
        match n {
            Some((t, size, children)) => w.node(*t, *size, children.iter().copied()),
            None => w.undefined(),
        }
    }
    w
}

fn write(g: &Graph) -> Vec<u8> {
    writer(g).finish(g.root, g.multipliers)
}

fn import(bytes: &[u8]) -> Model {
    import_bytes(Path::new("t.gcdump"), bytes).unwrap_or_else(|e| panic!("import failed: {e}"))
}

fn import_err(bytes: &[u8]) -> String {
    match import_bytes(Path::new("t.gcdump"), bytes) {
        Ok(_) => panic!("imported"),
        Err(e) => e.to_string(),
    }
}

/// The model the rules of docs/formats.md give, as text.
fn expected(g: &Graph) -> String {
    let mut out = String::new();
    for (i, n) in g.nodes.iter().enumerate() {
        if i as u32 == g.root {
            continue;
        }
        let (t, size, children) = n.clone().unwrap_or((0, 0, Vec::new()));
        let kids: Vec<String> = children.iter().map(|c| format!("{c:x}")).collect();
        out += &format!(
            "{i:x} {} {size} [{}]\n",
            g.types[t as usize].0,
            kids.join(" ")
        );
    }
    for c in &g.nodes[g.root as usize].as_ref().unwrap().2 {
        out += &format!("root {c:x}\n");
    }
    out
}

fn observed(m: &Model) -> String {
    let mut out = String::new();
    for o in 0..m.objects() as u32 {
        let kids: Vec<String> = m
            .refs
            .neighbors(o)
            .iter()
            .map(|t| m.id_hex(ObjectIdx(t)))
            .collect();
        out += &format!(
            "{} {} {} [{}]\n",
            m.id_hex(ObjectIdx(o)),
            m.type_name(ObjectIdx(o)),
            m.sizes.get(o as usize),
            kids.join(" ")
        );
    }
    for r in &m.roots {
        assert_eq!((r.kind, r.flags), (0, 0));
        out += &format!("root {}\n", m.id_hex(r.object));
    }
    out
}

fn types() -> Vec<(String, i32)> {
    [
        "UNDEFINED",
        "System.String",
        "Dictionary<K, V> é€",
        "[.NET Roots]",
        "System.String",
    ]
    .iter()
    .zip([0, 24, 64, 0, 24])
    .map(|(n, s)| (n.to_string(), s))
    .collect()
}

/// Root node 2 ([.NET Roots]) → 0, 4; 0 → 1, 1, 3; 1 → 0 (a cycle); 3 is
/// never defined; 4 has a size of its own and a second `System.String`
/// type entry (one type in the model).
fn small() -> Graph {
    Graph {
        types: types(),
        nodes: vec![
            Some((2, 64, vec![1, 1, 3])),
            Some((1, 24, vec![0])),
            Some((3, 0, vec![0, 4])),
            None,
            Some((4, 1000, vec![])),
        ],
        root: 2,
        multipliers: (1.0, 1.0),
    }
}

#[test]
fn a_small_dump_maps_by_the_rules() {
    let g = small();
    let m = import(&write(&g));
    assert_eq!(m.format, Format::Gcdump);
    assert_eq!(observed(&m), expected(&g));
    assert_eq!(m.objects(), 4);
    assert_eq!(m.total_bytes(), 64 + 24 + 1000);
    assert_eq!(
        m.type_names
            .iter()
            .filter(|n| &***n == "System.String")
            .count(),
        1
    );
    assert_eq!(
        m.type_name(ObjectIdx(2)),
        "UNDEFINED",
        "node 3 was never defined"
    );
    assert_eq!(m.diagnostics.total(), 0, "{:?}", m.diagnostics);
    let detail = |k: &str| m.details.iter().find(|d| d.0 == k).map(|d| d.1.clone());
    assert_eq!(detail("sampled").as_deref(), Some("no"));
    assert_eq!(detail("64-bit").as_deref(), Some("yes"));
}

#[test]
fn sampled_dumps_show_their_multipliers() {
    let mut g = small();
    g.multipliers = (10.5, 2.0);
    let m = import(&write(&g));
    let detail = |k: &str| m.details.iter().find(|d| d.0 == k).map(|d| d.1.clone());
    assert_eq!(detail("sampled").as_deref(), Some("yes"));
    assert_eq!(detail("count multiplier").as_deref(), Some("10.5"));
    assert_eq!(detail("size multiplier").as_deref(), Some("2"));
    // Sizes are shown as stored.
    assert_eq!(m.total_bytes(), 64 + 24 + 1000);
}

fn random_graph() -> impl Strategy<Value = Graph> {
    (2usize..40).prop_flat_map(|n| {
        let node = prop::option::weighted(
            0.9,
            (
                1u32..5,
                0i32..100_000,
                prop::collection::vec(0..n as u32, 0..6),
            ),
        );
        (prop::collection::vec(node, n), 0..n as u32).prop_map(move |(mut nodes, root)| {
            // The root is defined, and no child is the root.
            let root_node = nodes[root as usize].take().unwrap_or((3, 0, vec![]));
            nodes[root as usize] = Some(root_node);
            for (t, _, children) in nodes.iter_mut().flatten() {
                children.retain(|&c| c != root);
                let _ = t;
            }
            Graph {
                types: types(),
                nodes,
                root,
                multipliers: (1.0, 1.0),
            }
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn random_graphs_round_trip(g in random_graph()) {
        let m = import(&write(&g));
        prop_assert_eq!(observed(&m), expected(&g));
        prop_assert_eq!(m.diagnostics.total(), 0);
    }
}

/// Byte offset of the node blob in `write(&small())`, and of its table.
fn offsets(bytes: &[u8]) -> (usize, usize) {
    let w = writer(&small());
    let (blob, table) = w.parts();
    let blob_at = bytes.windows(blob.len()).position(|w| w == blob).unwrap();
    (blob_at, blob_at - 4 - 4 * table.len())
}

#[test]
fn bad_children_types_and_records_are_counted() {
    let mut bytes = write(&small());
    let (blob_at, table_at) = offsets(&bytes);
    // Node 1's record: type 1 (stored 2), one child at delta -1. Make the
    // child node 1 + 60 (past the end) and node 4's type 9 (not in the
    // table); point node 3 past the blob.
    let l1 = u32::from_le_bytes(bytes[table_at + 4..table_at + 8].try_into().unwrap()) as usize;
    assert_eq!(&bytes[blob_at + l1..blob_at + l1 + 3], &[2, 1, 0x7f]);
    bytes[blob_at + l1 + 2] = 60;
    let l4 = u32::from_le_bytes(bytes[table_at + 16..table_at + 20].try_into().unwrap()) as usize;
    bytes[blob_at + l4] = 9 << 1 | 1;
    bytes[table_at + 12..table_at + 16].copy_from_slice(&5000u32.to_le_bytes());
    let m = import(&bytes);
    let d = &m.diagnostics;
    assert_eq!(
        (d.dangling_references, d.undefined_types, d.skipped_lines),
        (1, 1, 1),
        "{d:?}"
    );
    let msgs = d.messages.join("\n");
    assert!(
        msgs.contains("node 1: child 61 is not an object node"),
        "{msgs}"
    );
    assert!(
        msgs.contains("node 4: type 9 is not in the type table"),
        "{msgs}"
    );
    assert!(
        msgs.contains("node 3: its record at blob byte 5000 is cut or corrupt"),
        "{msgs}"
    );
    assert_eq!(m.type_name(ObjectIdx(3)), "(unknown type)");
    assert_eq!(m.refs.neighbors(1), &[] as &[u32]);
}

/// The blob's last record claims more children than the bytes after it
/// hold: those there are read, and the record is reported cut.
#[test]
fn a_count_past_the_blobs_end_reads_what_is_there() {
    let g = Graph {
        types: types(),
        nodes: vec![Some((3, 0, vec![1])), Some((1, 24, vec![1]))],
        root: 0,
        multipliers: (1.0, 1.0),
    };
    let w = writer(&g);
    let (blob, table) = w.parts();
    let (blob, l1) = (blob.to_vec(), table[1] as usize);
    let mut bytes = w.finish(g.root, g.multipliers);
    let blob_at = bytes.windows(blob.len()).position(|w| w == blob).unwrap();
    // Node 1's record: type 1 (stored 2), one child at delta 0.
    assert_eq!(&blob[l1..], &[2, 1, 0]);
    bytes[blob_at + l1 + 1] = 9;
    let m = import(&bytes);
    assert_eq!(m.refs.neighbors(0), &[0]);
    let msgs = m.diagnostics.messages.join("\n");
    assert!(
        msgs.contains(&format!(
            "node 1: its children are cut at blob byte {}",
            blob.len()
        )),
        "{msgs}"
    );
}

/// `n` nodes of two children each; every third of the first 20,000 has a
/// third child past the last node (dangling), which the import drops.
fn with_dangling_children(n: u32) -> Graph {
    let child = |i: u32, k: u32| (i * k % n).max(1);
    let mut nodes: Vec<Node> = vec![Some((3, 0, vec![1, 2]))];
    for i in 1..n {
        let mut children = vec![child(i, 7), child(i, 13)];
        if i % 3 == 0 && i < 20_000 {
            children.insert(1, n + i); // past the last node: dangling
        }
        nodes.push(Some((1, 24, children)));
    }
    Graph {
        types: types(),
        nodes,
        root: 0,
        multipliers: (1.0, 1.0),
    }
}

/// Nodes are decoded in parallel blocks of 16 Ki nodes, each into its own
/// place in one array of references; children dropped (dangling) in one
/// block leave a gap the later blocks are moved into.
#[test]
fn dropped_children_in_early_blocks_leave_later_ones_intact() {
    let n = 50_000u32;
    let child = |i: u32, k: u32| (i * k % n).max(1);
    let m = import(&write(&with_dangling_children(n)));
    assert_eq!(
        m.diagnostics.dangling_references,
        (1..20_000).filter(|i| i % 3 == 0).count() as u64
    );
    for i in 1..n {
        let want: Vec<u32> = [child(i, 7) - 1, child(i, 13) - 1].to_vec();
        assert_eq!(m.refs.neighbors(i - 1), &want[..], "node {i}");
    }
    let roots: Vec<u32> = m.roots.iter().map(|r| r.object.0).collect();
    assert_eq!(roots, [0, 1]);
}

/// Records that share bytes (a damaged node table) may claim more children
/// than the file has bytes: those past one per byte are dropped and
/// counted, so memory stays proportional to the file; the rest is read.
#[test]
fn records_sharing_bytes_keep_at_most_one_child_per_byte() {
    let nodes = 400u32;
    let mut g = Graph {
        types: types(),
        nodes: (0..nodes).map(|_| Some((1, 24, vec![]))).collect(),
        root: 0,
        multipliers: (1.0, 1.0),
    };
    g.nodes[0] = Some((3, 0, vec![1]));
    // Node 1's record holds 300 children (deltas 1..=300: one byte each
    // up to 63, two after).
    g.nodes[1] = Some((2, 64, (2..302).collect()));
    let w = writer(&g);
    let (blob, table) = w.parts();
    let (l1, blob, table_len) = (table[1], blob.to_vec(), table.len());
    let mut bytes = w.finish(g.root, g.multipliers);
    let blob_at = bytes.windows(blob.len()).position(|w| w == blob).unwrap();
    let table_at = blob_at - 4 - 4 * table_len;
    // Every node from 2 on points at node 1's record: 399 × 300 children
    // claimed in a file of a few kilobytes.
    for i in 2..nodes as usize {
        bytes[table_at + 4 * i..table_at + 4 * i + 4].copy_from_slice(&l1.to_le_bytes());
    }
    let m = import(&bytes);
    let refs = m.refs.targets.len();
    assert!(
        refs <= bytes.len(),
        "{refs} references from {} bytes",
        bytes.len()
    );
    assert!(refs > bytes.len() / 2, "{refs}");
    assert_eq!(m.refs.neighbors(0).len(), 300, "node 1 keeps its children");
    let msgs = m.diagnostics.messages.join("\n");
    assert!(
        msgs.contains("children past one per byte of the file are dropped"),
        "{msgs}"
    );
    assert!(m.diagnostics.skipped_lines > 0);
}

#[test]
fn unusable_streams_are_one_line_errors() {
    let good = write(&small());
    let mut bad_sig = good.clone();
    bad_sig[5] = b'X';
    // Not told as a gcdump at all: one line, from the text importer.
    assert!(import_err(&bad_sig).starts_with("t.gcdump: not a heap dump heaptui reads"));
    let mut not_dump = good.clone();
    let at = not_dump
        .windows(10)
        .position(|w| w == b"GCHeapDump")
        .unwrap();
    not_dump[at..at + 10].copy_from_slice(b"GCHeapDumx");
    assert_eq!(
        import_err(&not_dump),
        "t.gcdump: not a readable .NET gcdump: the stream holds a `GCHeapDumx`, not a GCHeapDump"
    );
    let mut g = small();
    g.root = 9;
    g.nodes.truncate(2);
    g.nodes.push(Some((3, 0, vec![])));
    let e = import_err(&write(&g));
    assert_eq!(e, "t.gcdump: the root index 9 names no node");
    let e = import_err(&good[..200]);
    assert!(
        e.starts_with("t.gcdump: not a readable .NET gcdump: the file ends inside"),
        "{e}"
    );
}

#[test]
fn truncation_at_every_offset_never_panics() {
    let full = write(&small());
    for len in 0..full.len() {
        match import_bytes(Path::new("t"), &full[..len]) {
            Ok(m) => assert!(m.objects() <= 4),
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
}

/// PerfView's own test dump (src/PerfView.Tests/GraphSerialization/inputs/
/// test1.gcdump, MIT). The answers are PerfView's, from its baseline XML of
/// the same file (test1_baseline.gcdump.xml): `<MemoryGraph NumNodes="6482"
/// NumTypes="1994" TotalSize="1009270">`, `<RootIndex>0</RootIndex>`, the
/// root `[JS Roots]` with children 1 and 3175, node 1 a `(Type  JSGlobal)` of
/// 256 bytes with 502 children, node 3 of 28 bytes with children `504 489
/// 505 506 507 508 509 510 511 512 497 513`.
#[test]
fn perfview_test_dump_matches_perfviews_reading() {
    let m = import(&common::fixture_bytes("perfview_test1.gcdump"));
    assert_eq!(m.objects(), 6481);
    assert_eq!(m.total_bytes(), 1_009_270);
    let roots: Vec<u64> = m
        .roots
        .iter()
        .map(|r| m.ids.get(r.object.index()))
        .collect();
    assert_eq!(roots, [1, 3175]);
    let o1 = m.index_of(1).unwrap();
    assert_eq!(m.type_name(o1), "(Type  JSGlobal)");
    assert_eq!((m.size_of(o1), m.refs_of(o1).len()), (256, 502));
    let o3 = m.index_of(3).unwrap();
    let kids: Vec<u64> = m
        .refs
        .neighbors(o3.raw())
        .iter()
        .map(|t| m.ids.get(t as usize))
        .collect();
    assert_eq!(
        kids,
        [504, 489, 505, 506, 507, 508, 509, 510, 511, 512, 497, 513]
    );
    assert_eq!(m.size_of(o3), 28);
    assert_eq!(m.diagnostics.total(), 0, "{:?}", m.diagnostics);
}

/// Every node of PerfView's baseline XML (path in HEAPTUI_PERFVIEW_XML):
/// type name, size and children, and the root's children as the roots.
#[test]
#[ignore = "needs PerfView's test1_baseline.gcdump.xml: set HEAPTUI_PERFVIEW_XML"]
fn perfview_baseline_xml_agrees_node_by_node() {
    let xml = std::fs::read_to_string(std::env::var("HEAPTUI_PERFVIEW_XML").unwrap()).unwrap();
    let m = import(&common::fixture_bytes("perfview_test1.gcdump"));
    let attr = |tag: &str, name: &str| -> String {
        let start = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        let end = start + tag[start..].find('"').unwrap();
        tag[start..end]
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&")
    };
    let mut checked = 0;
    for part in xml.split("<Node Index=").skip(1) {
        let tag_end = part.find('>').unwrap();
        let tag = format!(" Index={}", &part[..tag_end]);
        let body = match part[..tag_end].ends_with('/') {
            true => "",
            false => &part[tag_end + 1..part.find("</Node>").unwrap()],
        };
        let kids: Vec<u64> = body
            .split_whitespace()
            .map(|k| k.parse().unwrap())
            .collect();
        let index: u64 = attr(&tag, "Index").parse().unwrap();
        if index == 0 {
            let roots: Vec<u64> = m
                .roots
                .iter()
                .map(|r| m.ids.get(r.object.index()))
                .collect();
            assert_eq!(roots, kids);
            continue;
        }
        let o = m.index_of(index).unwrap();
        assert_eq!(m.type_name(o), attr(&tag, "Type"), "node {index}");
        assert_eq!(m.size_of(o).to_string(), attr(&tag, "Size"), "node {index}");
        let got: Vec<u64> = m
            .refs
            .neighbors(o.raw())
            .iter()
            .map(|t| m.ids.get(t as usize))
            .collect();
        assert_eq!(got, kids, "node {index}");
        checked += 1;
    }
    assert_eq!(checked, m.objects());
}

/// `$HEAPTUI_REAL_HEAPS/raw/perfview_test1.gcdump.gz` against its text
/// conversion `perfview_test1.dump.txt`: same objects, sizes, references,
/// roots, immediate dominators and retained sizes.
/// Nothing is checked where `HEAPTUI_REAL_HEAPS` is not set.
#[test]
fn real_dump_agrees_with_its_text_conversion() {
    let Some(dir) = common::real_heaps("real_dump_agrees_with_its_text_conversion") else {
        return;
    };
    let native = import(&native::gunzip(&dir.join("raw/perfview_test1.gcdump.gz")));
    let text_path = dir.join("perfview_test1.dump.txt");
    let text = import_bytes(&text_path, &std::fs::read(&text_path).unwrap()).unwrap();
    let bad = native::compare_with_text(native, text);
    assert!(bad.is_empty(), "{bad:#?}");
}

fn import_spilled(bytes: &[u8], spill: Arc<Spill>) -> Model {
    import_gcdump_spilled(Path::new("t.gcdump"), bytes, spill)
        .unwrap_or_else(|e| panic!("import failed: {e}"))
}

/// Imports `bytes` spilled and in memory, checks they read the same and
/// that the spilled one's references are on disk; returns the spilled one.
fn spilled_as_in_memory(bytes: &[u8]) -> Model {
    let dir = tempfile::tempdir().unwrap();
    let spill = Arc::new(Spill::open(dir.path(), 0).unwrap());
    let m = import_spilled(bytes, spill.clone());
    let memory = import(bytes);
    assert_eq!(observed(&m), observed(&memory));
    assert_eq!(
        format!("{:?}", m.diagnostics),
        format!("{:?}", memory.diagnostics)
    );
    assert_eq!(m.details, memory.details);
    assert_eq!(m.records, memory.records);
    assert!(spill.failure().is_none(), "{:?}", spill.failure());
    // Fewer than 64 references are copied into a vector when packed (the
    // two words of padding would not fit their own words).
    assert!(
        m.refs.targets.is_mapped() || m.refs.targets.len() < 64,
        "{} references, not on disk",
        m.refs.targets.len()
    );
    assert!(m.spill.is_some(), "the model hands the spill on");
    m
}

#[test]
fn a_spilled_import_reads_as_in_memory() {
    let g = small();
    assert_eq!(observed(&spilled_as_in_memory(&write(&g))), expected(&g));
    for name in ["perfview_test1.gcdump", "fuzz_gcdump_slow_unit.gcdump"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name);
        spilled_as_in_memory(&std::fs::read(path).unwrap());
    }
}

/// A single reference is held in a vector, not on disk, and reads the
/// same (the case proptest found: its padding needs more words than it).
#[test]
fn a_spilled_import_of_one_reference_reads_as_in_memory() {
    let g = Graph {
        types: types(),
        nodes: vec![Some((1, 0, vec![0])), Some((3, 0, vec![]))],
        root: 1,
        multipliers: (1.0, 1.0),
    };
    let m = spilled_as_in_memory(&write(&g));
    assert_eq!(observed(&m), expected(&g));
    assert_eq!(m.refs.targets.len(), 1);
    assert!(!m.refs.targets.is_mapped());
}

/// Blocks that dropped children move the later ones back: in spill files
/// as in memory.
#[test]
fn a_spilled_import_closes_the_gaps_of_dropped_children() {
    let m = spilled_as_in_memory(&write(&with_dangling_children(40_000)));
    assert!(m.diagnostics.dangling_references > 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn random_graphs_spilled_read_as_in_memory(g in random_graph()) {
        let m = spilled_as_in_memory(&write(&g));
        prop_assert_eq!(observed(&m), expected(&g));
    }
}
