//! The V8 importer on real snapshots: a small Node.js fixture with answers
//! counted independently, and (ignored, needs `HEAPTUI_REAL_HEAPS`) real
//! Chrome snapshots against their text conversions.

use heaptui_testkit::common;
use heaptui_testkit::native;

use std::path::Path;

use heaptui_core::model::Model;
use heaptui_core::model::ObjectIdx;
use heaptui_core::testing::import_v8_with_chunk;
use native::{compare_with_text, gunzip};

fn import_chunked(bytes: &[u8], chunk: usize) -> Model {
    import_v8_with_chunk(Path::new("t.heapsnapshot"), bytes, chunk)
        .unwrap_or_else(|e| panic!("import failed: {e}"))
}

/// A real Node.js 20 snapshot (`scripts/make_small_heapsnapshot.js`,
/// gzipped). The answers were counted from the JSON with Python's json
/// module by the rules of docs/formats.md, independently of this importer: 47,406
/// nodes (47,405 objects), 3,213,427 self bytes; 1,000 `Session` objects of
/// 48 bytes, one `Leaky`; 200 strings `dup-licate`, 100 of each `user-N`.
#[test]
fn a_real_node_snapshot_has_its_known_answers() {
    let bytes = gunzip(&common::fixture("node_leak.heapsnapshot.gz"));
    let m = import_chunked(&bytes, 1 << 16);
    assert_eq!(m.diagnostics.total(), 0, "{:?}", m.diagnostics);
    assert_eq!(m.objects(), 47_405);
    assert_eq!(m.total_bytes(), 3_213_427);
    let of_type = |name: &str| -> Vec<u32> {
        (0..m.objects() as u32)
            .filter(|&o| m.type_name(ObjectIdx(o)) == name)
            .collect()
    };
    let sessions = of_type("Session");
    assert_eq!(sessions.len(), 1000);
    // Functions are named as DevTools names them, a type per name and
    // place where the snapshot's `locations` give one (counted from the
    // JSON as above, following closure → shared → script_or_debug_info →
    // name): the classes' constructors, Leaky's method `add`, and four
    // other `add`s (Node's own, with no place recorded).
    assert_eq!(of_type("Leaky() make_small_heapsnapshot.js:20").len(), 1);
    assert_eq!(of_type("Session() make_small_heapsnapshot.js:13").len(), 1);
    assert_eq!(of_type("add() make_small_heapsnapshot.js:23").len(), 1);
    assert_eq!(of_type("add()").len(), 4);
    assert!(of_type("(closure)").is_empty());
    assert!(sessions.iter().all(|&o| m.sizes.get(o as usize) == 48));
    assert_eq!(of_type("Leaky").len(), 1);
    let values = m.values.as_ref().unwrap();
    let with_text = |t: &str| {
        (0..m.objects() as u32)
            .filter(|&o| values.text(ObjectIdx(o), 64).as_deref() == Some(t))
            .count()
    };
    assert_eq!(with_text("dup-licate"), 200);
    for n in 0..10 {
        assert_eq!(with_text(&format!("user-{n}")), 100);
    }
    // A session's heap fields are property edges (`id` is a small integer,
    // not a heap object: no edge).
    let labels = m.labels.as_ref().unwrap();
    let s = sessions[0];
    let start = m.refs.offset(s as usize) as usize;
    let names: Vec<String> = (0..m.refs.neighbors(s).len())
        .filter_map(|k| labels.get(start, start + k).map(|l| l.to_string()))
        .collect();
    for field in [".user", ".payload", ".__proto__"] {
        assert!(names.iter().any(|n| n == field), "{names:?}");
    }
}

/// The real snapshots in `$HEAPTUI_REAL_HEAPS/raw/*.heapsnapshot.gz` against
/// their text conversions `$HEAPTUI_REAL_HEAPS/<name>.dump.txt` (nothing
/// checked where it is not set).
#[test]
fn real_snapshots_agree_with_their_text_conversions() {
    let Some(dir) = common::real_heaps("real_snapshots_agree_with_their_text_conversions") else {
        return;
    };
    let mut checked = 0;
    for entry in std::fs::read_dir(dir.join("raw")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let Some(stem) = name.strip_suffix(".heapsnapshot.gz") else {
            continue;
        };
        let native = import_chunked(&gunzip(&path), 1 << 16);
        let text_path = dir.join(format!("{stem}.dump.txt"));
        let text =
            heaptui_core::import::import_bytes(&text_path, &std::fs::read(&text_path).unwrap())
                .unwrap();
        eprintln!(
            "{stem}: {} objects, {} bytes, {} roots, diagnostics {:?}",
            native.objects(),
            native.total_bytes(),
            native.roots.len(),
            native.diagnostics
        );
        let bad = compare_with_text(native, text);
        assert!(bad.is_empty(), "{stem}: {bad:#?}");
        checked += 1;
    }
    assert!(checked > 0);
}

/// A real Node.js 20 snapshot with known duplicates
/// (`scripts/make_duplicates_heapsnapshot.js`, gzipped): 2,000 `Point`s of
/// one constructor holding one label string are one set, a copy being the
/// object alone (its hidden class and prototype are its type, the string
/// is shared); 2,000 objects from `JSON.parse` of one text are one set;
/// 50,000 `Stamp`s holding different timestamps (heap numbers, whose
/// values the snapshot does not hold) are no set, nor are their numbers;
/// 500 built `"application/json"` strings are a set. All decided under
/// the default budget: nothing is left "possible".
#[test]
fn a_real_node_snapshot_has_the_duplicates_users_mean() {
    use heaptui_core::graph::duplicates::{find_duplicates, DuplicateOptions};
    use heaptui_core::graph::{DominatorTree, HeapGraph};
    use heaptui_core::progress::Progress;
    let bytes = gunzip(&common::fixture("node_duplicates.heapsnapshot.gz"));
    let g = HeapGraph::build(import_chunked(&bytes, 1 << 20));
    let dom = DominatorTree::compute(&g, &Progress::new()).unwrap();
    let options = DuplicateOptions {
        budget_per_type: Some(heaptui_core::graph::duplicates::DEFAULT_BUDGET_PER_TYPE),
        ..DuplicateOptions::default()
    };
    let d = find_duplicates(&g, &dom, &options, &Progress::new()).unwrap();
    assert!(d.possible.is_empty(), "{} possible", d.possible.len());
    let name = |i: u32| g.dump.type_name(ObjectIdx(d.members(i)[0])).to_string();
    // The sets of type `ty`, by number.
    let of = |ty: &str| -> Vec<u32> {
        (0..d.sets.len() as u32)
            .filter(|&i| name(i) == ty)
            .collect()
    };
    let points = of("Point");
    assert_eq!(points.len(), 1);
    assert_eq!(d.members(points[0]).len(), 2000);
    assert_eq!(d.sets[points[0] as usize].objects_per_copy, 1);
    assert_eq!(d.sets[points[0] as usize].additional_bytes, 1999 * 48);
    assert!(
        of("Object").iter().any(|&i| d.members(i).len() == 2000),
        "the JSON.parse'd objects"
    );
    assert!(of("Stamp").is_empty(), "different timestamps are no copies");
    assert!(of("(number)").is_empty(), "unknown numbers are no copies");
    let values = g.dump.values.as_ref().unwrap();
    assert!(d.member_lists().iter().any(|m| m.len() == 500
        && values.text(ObjectIdx(m[0]), 40).as_deref() == Some("application/json")));
}

/// A snapshot cut short says so in its first message, wherever the cut.
#[test]
fn a_cut_snapshot_says_so_first() {
    let bytes = gunzip(&common::fixture("node_leak.heapsnapshot.gz"));
    for cut in [bytes.len() / 3, bytes.len() / 2, bytes.len() - 100] {
        let m = import_v8_with_chunk(Path::new("cut.heapsnapshot"), &bytes[..cut], 1 << 16)
            .unwrap_or_else(|e| panic!("{cut}: {e}"));
        let d = &m.diagnostics;
        assert!(
            d.messages[0].starts_with("the file ended early"),
            "{cut}: {:?}",
            &d.messages[..3.min(d.messages.len())]
        );
    }
}
