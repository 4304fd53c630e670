//! Comparing snapshots (docs/analyses.md): seed 002's compacting GC (every
//! surviving id moves, three objects are collected), heaps compared with
//! themselves under another numbering, copies of a structure added, the
//! grouped dominator rows against a brute-force oracle, and a series where
//! one cache grows in every snapshot and another grows once then shrinks.

use heaptui_testkit::common;

use std::collections::{BTreeMap, BTreeSet};

use heaptui_core::analysis::Analysis;
use heaptui_core::analysis::{compare, Comparison, SnapshotSummary};
use heaptui_core::graph::duplicates::DuplicateOptions;
use proptest::prelude::*;

use common::{fixture_bytes, small_heap, Oracle, SmallHeap};
use heaptui_testkit::rng::SplitMix64;

fn analyse(name: &str, text: &[u8]) -> Analysis {
    Analysis::from_bytes(name, text, &DuplicateOptions::default()).unwrap()
}

fn summary(name: &str, text: &[u8]) -> SnapshotSummary {
    SnapshotSummary::of(&analyse(name, text))
}

fn compare_texts(texts: &[(&str, &[u8])]) -> Comparison {
    let s: Vec<SnapshotSummary> = texts.iter().map(|(n, t)| summary(n, t)).collect();
    compare(&s)
}

/// Every merged path with its figures per snapshot: (count, bytes, objects).
type Rows = BTreeMap<Vec<String>, Vec<(u64, u64, u64)>>;

fn all_rows(c: &Comparison) -> Rows {
    (1..c.paths.len() as u32)
        .map(|r| {
            let names = c.path_names(r).iter().map(|s| s.to_string()).collect();
            let figures = c
                .paths
                .figures_of(r)
                .iter()
                .map(|f| (f.count as u64, f.retained_bytes, f.retained_objects as u64))
                .collect();
            (names, figures)
        })
        .collect()
}

fn changed_rows(c: &Comparison) -> Rows {
    let all = all_rows(c);
    c.changed_paths()
        .into_iter()
        .map(|r| {
            let names: Vec<String> = c.path_names(r).iter().map(|s| s.to_string()).collect();
            let f = all[&names].clone();
            (names, f)
        })
        .collect()
}

/// Types whose figures differ between snapshots, with their counts.
fn changed_types(c: &Comparison) -> BTreeMap<String, Vec<u64>> {
    c.types
        .iter()
        .filter(|t| {
            t.count.windows(2).any(|w| w[0] != w[1])
                || t.shallow_bytes.windows(2).any(|w| w[0] != w[1])
                || t.min_retained_bytes.windows(2).any(|w| w[0] != w[1])
        })
        .map(|t| {
            (
                c.type_names[t.type_id as usize].to_string(),
                t.count.clone(),
            )
        })
        .collect()
}

fn path(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn seed_002_compaction_moves_every_id_and_only_the_collected_types_shrink() {
    let before = fixture_bytes("seed002_before.txt");
    let after = fixture_bytes("seed002_after.txt");
    // The seed's table: every survivor has a new id; 09, 13, 19 are gone.
    let (a, b) = (analyse("before", &before), analyse("after", &after));
    for (old, new) in [
        (0x08, 0x07),
        (0x10, 0x08),
        (0x12, 0x10),
        (0x15, 0x11),
        (0x16, 0x12),
        (0x17, 0x13),
        (0x18, 0x14),
    ] {
        let (o, n) = (
            a.dump().index_of(old).unwrap(),
            b.dump().index_of(new).unwrap(),
        );
        assert_eq!(
            a.dump().type_name(o),
            b.dump().type_name(n),
            "{old:x}→{new:x}"
        );
        assert_eq!(
            a.dom.retained_bytes(o.index()),
            b.dom.retained_bytes(n.index())
        );
    }
    for gone in [0x09, 0x13, 0x19] {
        assert!(
            !a.dom.is_reachable(a.dump().index_of(gone).unwrap().raw()),
            "garbage before the GC"
        );
    }
    let c = compare(&[SnapshotSummary::of(&a), SnapshotSummary::of(&b)]);
    // 09 StringBuilder, 13 Char[] and 19 String were collected.
    let expected: BTreeMap<String, Vec<u64>> = [
        ("System.Char[]", vec![1, 0]),
        ("System.String", vec![2, 1]),
        ("System.Text.StringBuilder", vec![1, 0]),
    ]
    .into_iter()
    .map(|(n, v)| (n.to_string(), v))
    .collect();
    assert_eq!(changed_types(&c), expected);
    for t in &c.types {
        assert!(t.shallow_growth() <= 0, "nothing grows");
    }
    assert!(
        c.changed_paths().is_empty(),
        "the live heap is the same heap"
    );
    assert!(c
        .duplicates
        .iter()
        .all(|d| d.instances[0] == d.instances[1]));
    assert!(c.roots.iter().all(|r| r.figures[0] == r.figures[1]));
    // The rows are there, unchanged: Main / Cache / Item[] / Item / String.
    let rows = all_rows(&c);
    assert_eq!(
        rows[&path(&["App.Main", "App.Cache", "App.Item[]", "App.Item"])],
        vec![(3, 0x30 + 0x1c, 4); 2]
    );
}

/// Dump text of `h` with every object at id `ids[i]`, the object records
/// in `order`, and `extra` records appended.
fn text_with_ids(h: &SmallHeap, ids: &[u64], order: &[usize], extra: &str) -> String {
    let mut s = String::from("a 1 random.exe\nt 0 T0\nt 1 T1\nt 2 T2\nt 7 Leak\nt 8 LeakPart\n");
    for &i in order {
        s.push_str(&format!("o {:x} {} {:x}", ids[i], i % 3, h.sizes[i]));
        for &j in &h.edges[i] {
            s.push_str(&format!(" {:x}", ids[j]));
        }
        s.push('\n');
    }
    for &(r, weak) in &h.roots {
        s.push_str(&format!("r {:x} 1 {}\n", ids[r], if weak { 2 } else { 0 }));
    }
    s.push_str(extra);
    s.push_str("c random.exe\n");
    s
}

/// The heap's own numbering, and another one (moved ids, another record
/// order) drawn from `seed`.
/// Object ids by node, and the order of the object records.
type Numbering = (Vec<u64>, Vec<usize>);

fn numberings(n: usize, seed: u64) -> (Numbering, Numbering) {
    let plain = ((0..n).map(|i| 0x100 + i as u64).collect(), (0..n).collect());
    let moved_to = SplitMix64(seed).permutation(n);
    let ids = moved_to.iter().map(|&m| 0x7000 + 8 * m as u64).collect();
    (plain, (ids, SplitMix64(seed ^ 0xabcdef).permutation(n)))
}

/// `copies` copies of a 2-object structure (`Leak` 0x10 → `LeakPart`
/// 0x30), each `Leak` a strong root, at ids from `base`.
fn leak_copies(copies: usize, base: u64) -> String {
    let mut s = String::new();
    for c in 0..copies as u64 {
        let (leak, part) = (base + 2 * c, base + 2 * c + 1);
        s.push_str(&format!(
            "o {leak:x} 7 10 {part:x}\no {part:x} 8 30\nr {leak:x} 1 0\n"
        ));
    }
    s
}

/// The grouped dominator rows by definition: an object's row is the types
/// of its dominators from the top down, then its own.
fn brute_force_rows(h: &SmallHeap) -> BTreeMap<Vec<String>, (u64, u64, u64)> {
    let oracle = Oracle::new(h);
    let mut rows: BTreeMap<Vec<String>, (u64, u64, u64)> = BTreeMap::new();
    for b in 0..h.n() {
        if !oracle.reachable[b] {
            continue;
        }
        let mut chain = vec![format!("T{}", b % 3)];
        let mut x = b;
        while let Some(d) = oracle.idom(x) {
            chain.push(format!("T{}", d % 3));
            x = d;
        }
        chain.reverse();
        let e = rows.entry(chain).or_default();
        e.0 += 1;
        e.1 += oracle.retained_bytes(h, b);
        e.2 += oracle.retained_objects(b);
    }
    rows
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_heap_compared_with_itself_renumbered_shows_no_difference(h in small_heap(24), seed in any::<u64>()) {
        let ((ids_a, order_a), (ids_b, order_b)) = numberings(h.n(), seed);
        let a = text_with_ids(&h, &ids_a, &order_a, "");
        let b = text_with_ids(&h, &ids_b, &order_b, "");
        let c = compare_texts(&[("a", a.as_bytes()), ("b", b.as_bytes())]);
        prop_assert!(c.changed_paths().is_empty());
        prop_assert!(changed_types(&c).is_empty());
        for d in &c.duplicates {
            prop_assert_eq!(&d.instances[0], &d.instances[1]);
            prop_assert_eq!(&d.additional_bytes[0], &d.additional_bytes[1]);
        }
        for r in &c.roots {
            prop_assert_eq!(r.figures[0], r.figures[1]);
        }
        prop_assert_eq!(c.largest_growth(), None);
    }

    #[test]
    fn k_copies_of_a_structure_grow_exactly_its_rows_by_k(h in small_heap(20), seed in any::<u64>(), k in 1usize..6) {
        let ((ids_a, order_a), (ids_b, order_b)) = numberings(h.n(), seed);
        let a = text_with_ids(&h, &ids_a, &order_a, &leak_copies(1, 0x10_0000));
        let b = text_with_ids(&h, &ids_b, &order_b, &leak_copies(1 + k, 0x20_0000));
        let c = compare_texts(&[("a", a.as_bytes()), ("b", b.as_bytes())]);
        let k = k as u64;
        let expected: Rows = [
            (path(&["Leak"]), vec![(1, 0x40, 2), (1 + k, 0x40 * (1 + k), 2 * (1 + k))]),
            (path(&["Leak", "LeakPart"]), vec![(1, 0x30, 1), (1 + k, 0x30 * (1 + k), 1 + k)]),
        ]
        .into_iter()
        .collect();
        prop_assert_eq!(changed_rows(&c), expected);
        for r in c.changed_paths() {
            prop_assert!(c.paths.grows_steadily(r));
        }
        let types: BTreeSet<String> = changed_types(&c).into_keys().collect();
        prop_assert_eq!(types, ["Leak", "LeakPart"].iter().map(|s| s.to_string()).collect::<BTreeSet<_>>());
        prop_assert_eq!(c.largest_growth().map(|g| g.1), Some(0x40 * k));
    }

    #[test]
    fn paths_agree_with_a_brute_force_grouping(a in small_heap(12), b in small_heap(12), seed in any::<u64>()) {
        let ((ids_a, order_a), _) = numberings(a.n(), seed);
        let (_, (ids_b, order_b)) = numberings(b.n(), seed);
        let ta = text_with_ids(&a, &ids_a, &order_a, "");
        let tb = text_with_ids(&b, &ids_b, &order_b, "");
        let c = compare_texts(&[("a", ta.as_bytes()), ("b", tb.as_bytes())]);
        let (ra, rb) = (brute_force_rows(&a), brute_force_rows(&b));
        let keys: BTreeSet<&Vec<String>> = ra.keys().chain(rb.keys()).collect();
        let expected: Rows = keys
            .into_iter()
            .map(|k| {
                let f = |r: &BTreeMap<Vec<String>, (u64, u64, u64)>| r.get(k).copied().unwrap_or_default();
                (k.clone(), vec![f(&ra), f(&rb)])
            })
            .collect();
        prop_assert_eq!(all_rows(&c), expected.clone());
        let changed: Rows = expected.into_iter().filter(|(_, f)| f[0] != f[1]).collect();
        prop_assert_eq!(changed_rows(&c), changed);
        // Sorted by growth, and `grows_steadily` is "rises" for two snapshots.
        let order = c.changed_paths();
        for w in order.windows(2) {
            prop_assert!(c.paths.growth(w[0]) >= c.paths.growth(w[1]));
        }
        for r in order {
            let f = c.paths.figures_of(r);
            prop_assert_eq!(c.paths.grows_steadily(r), f[1].retained_bytes > f[0].retained_bytes);
        }
    }
}

#[test]
fn one_cache_grows_in_every_snapshot_the_other_once() {
    let files = ["caches.1.txt", "caches.2.txt", "caches.3.txt"];
    let texts: Vec<Vec<u8>> = files.iter().map(|f| fixture_bytes(f)).collect();
    let named: Vec<(&str, &[u8])> = files
        .iter()
        .copied()
        .zip(texts.iter().map(|t| &t[..]))
        .collect();
    let c = compare_texts(&named);
    let steady: BTreeSet<Vec<String>> = (1..c.paths.len() as u32)
        .filter(|&r| c.paths.grows_steadily(r))
        .map(|r| c.path_names(r).iter().map(|s| s.to_string()).collect())
        .collect();
    // RecentOrders holds 2, 4, 6 orders of 0x40; Thumbnails 2, 5, 3 of 8:
    // the App grows by 0x98 then 0x70, RecentOrders' rows at every step.
    let expected: BTreeSet<Vec<String>> = [
        path(&["App.Main"]),
        path(&["App.Main", "App.RecentOrders"]),
        path(&["App.Main", "App.RecentOrders", "App.Order[]"]),
        path(&["App.Main", "App.RecentOrders", "App.Order[]", "App.Order"]),
    ]
    .into_iter()
    .collect();
    assert_eq!(steady, expected);
    let rows = changed_rows(&c);
    assert_eq!(
        rows[&path(&[
            "App.Main",
            "App.Thumbnails",
            "App.Thumbnail[]",
            "App.Thumbnail"
        ])],
        vec![(2, 16, 2), (5, 40, 5), (3, 24, 3)],
        "grows once, then shrinks"
    );
    assert_eq!(
        rows[&path(&["App.Main", "App.RecentOrders", "App.Order[]", "App.Order"])],
        vec![(2, 0x80, 2), (4, 0x100, 4), (6, 0x180, 6)]
    );
    assert_eq!(
        rows.len(),
        7,
        "Config and its string do not change: {rows:#?}"
    );
    // The App grew most: 0x30 + 0x80 + 0x20 + 2·0x40 + 3·8 … newest − oldest.
    assert_eq!(c.largest_growth().map(|g| g.1), Some(0x100 + 8));
}

#[test]
fn a_generated_series_leaks_the_request_log_only() {
    use heaptui_testkit::gen::{generate_snapshot_bytes, GenOptions, Snapshot};
    let options = GenOptions {
        objects: 3_000,
        seed: 5,
    };
    let texts: Vec<Vec<u8>> = (0..3)
        .map(|index| generate_snapshot_bytes(&options, &Snapshot { index, step: 30 }))
        .collect();
    let named: Vec<(&str, &[u8])> = ["s1", "s2", "s3"]
        .into_iter()
        .zip(texts.iter().map(|t| &t[..]))
        .collect();
    let c = compare_texts(&named);
    for r in c.changed_paths() {
        let names = c.path_names(r);
        let root = names[0];
        assert!(
            root == "MyApp.Diagnostics.RequestLog" || root == "MyApp.Imaging.ThumbnailPool",
            "only the leaking structures change: {names:?}"
        );
        assert_eq!(
            c.paths.grows_steadily(r),
            root == "MyApp.Diagnostics.RequestLog",
            "{names:?}"
        );
    }
    let entries = c
        .changed_paths()
        .into_iter()
        .find(|&r| c.path_names(r).last() == Some(&"MyApp.Diagnostics.RequestLogEntry"))
        .expect("the log's entries row");
    let counts: Vec<u32> = c
        .paths
        .figures_of(entries)
        .iter()
        .map(|f| f.count)
        .collect();
    assert_eq!(counts, [30, 60, 90]);
}

#[test]
fn the_bundled_demo_series_is_what_the_generator_writes() {
    use heaptui_testkit::gen::{generate_snapshot_bytes, GenOptions, Snapshot};
    // fixtures/README.md: gendump --objects 3000 --seed 7 --snapshots 3 --grow 40
    let options = GenOptions {
        objects: 3_000,
        seed: 7,
    };
    for index in 0..3 {
        let name = format!("demo-series.{}.txt", index + 1);
        assert!(
            generate_snapshot_bytes(&options, &Snapshot { index, step: 40 })
                == fixture_bytes(&name),
            "{name} is stale: regenerate it (fixtures/README.md)"
        );
    }
}

/// A snapshot read as if it came from V8 (stable node ids); the V8
/// importer is another piece of work, so the format is set by hand.
fn v8_summary(name: &str, text: &str) -> SnapshotSummary {
    let mut model =
        heaptui_core::import::import_bytes(std::path::Path::new(name), text.as_bytes()).unwrap();
    model.format = heaptui_core::model::Format::Heapsnapshot;
    let a = Analysis::from_dump(
        model,
        &DuplicateOptions::default(),
        &heaptui_core::progress::Progress::new(),
    )
    .unwrap();
    SnapshotSummary::of(&a)
}

#[test]
fn new_and_deleted_only_with_stable_ids() {
    let old = "t 1 A\nt 2 B\no 1 1 8\no 2 1 8\no 3 2 8\nr 1 1 0\nr 2 1 0\nr 3 1 0\n";
    let new =
        "t 1 B\nt 2 A\no 2 2 8\no 3 1 8\no 4 1 8\no 5 2 8\nr 2 1 0\nr 3 1 0\nr 4 1 0\nr 5 1 0\n";
    let c = compare(&[v8_summary("old", old), v8_summary("new", new)]);
    assert!(c.has_stable_ids());
    let nd: BTreeMap<String, Option<(u64, u64)>> = c
        .types
        .iter()
        .map(|t| (c.type_names[t.type_id as usize].to_string(), t.new_deleted))
        .collect();
    // A: 1 deleted, 5 new; B: 4 new (ids 2 and 3 survive).
    assert_eq!(nd["A"], Some((1, 1)));
    assert_eq!(nd["B"], Some((1, 0)));
    let mut json = Vec::new();
    heaptui_core::report::write_comparison(&mut json, &c, 0).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let a = v["types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "A")
        .unwrap();
    assert_eq!(
        (a["new"].as_u64(), a["deleted"].as_u64()),
        (Some(1), Some(1))
    );
    // The same dumps as RPM text: ids are not identities, no such keys.
    let c = compare_texts(&[("old", old.as_bytes()), ("new", new.as_bytes())]);
    assert!(!c.has_stable_ids());
    let mut json = Vec::new();
    heaptui_core::report::write_comparison(&mut json, &c, 0).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    for t in v["types"].as_array().unwrap() {
        assert!(t.get("new").is_none() && t.get("deleted").is_none(), "{t}");
    }
}
