//! Leak suspects (docs/analyses.md): a holder retaining 60 % of the heap through a
//! chain down to a big array (the accumulation point), a type whose many
//! small instances together retain 30 %, and the growth suspects of a
//! comparison.

use heaptui_testkit::common;

use heaptui_core::analysis::Analysis;
use heaptui_core::analysis::{
    accumulation_point, growth_suspects, leak_suspects, suspects, SuspectKind,
};
use heaptui_core::analysis::{compare, SnapshotSummary};
use heaptui_core::model::{ObjectIdx, TypeIdx};

use common::{analyse_fixture, ix};

fn types(a: &Analysis, objects: &[ObjectIdx]) -> Vec<String> {
    objects
        .iter()
        .map(|&o| a.dump().type_name(o).to_string())
        .collect()
}

#[test]
fn a_holder_with_60_percent_and_a_type_with_30_percent() {
    let a = analyse_fixture("suspects.txt");
    let d = a.dump();
    // Reachable: 600 under the holder, 30 sessions × 10, 40 + 30 + 30 of
    // singletons = 1000 bytes; the 0x1388-byte session and the 0x1000-byte
    // item are garbage (one only weakly held) and count nowhere.
    assert_eq!(a.dom.reachable_bytes, 1000);
    let s = leak_suspects(&a);
    assert_eq!(s.len(), 2, "{s:#?}");

    let holder = &s[0];
    assert_eq!(holder.kind, SuspectKind::Object);
    assert_eq!(holder.object, Some(ix(d, "100")));
    assert_eq!(holder.retained_bytes, 600);
    // 100 (600) → 101 (590) → 102 (580) → 103 (570): each ≥ 70 % of its
    // parent; the array's largest item holds 55 of 570, so it stops there.
    assert_eq!(holder.accumulation_point, ix(d, "103").raw());
    assert_eq!(
        types(&a, &holder.point_path(&a.dom)),
        ["App.Holder", "App.Chain", "App.Chain", "App.Item[]"]
    );
    assert_eq!(holder.top_types, vec![(d.type_of(ix(d, "104")), 550)]);
    let path: Vec<ObjectIdx> = ["100", "101", "102", "103"]
        .iter()
        .map(|h| ix(d, h))
        .collect();
    assert_eq!(holder.retention_path, path);

    let sessions = &s[1];
    assert_eq!(sessions.kind, SuspectKind::Type);
    assert_eq!(&*d.type_names[sessions.type_index.index()], "App.Session");
    assert_eq!((sessions.instances, sessions.retained_bytes), (30, 300));
    assert_eq!(sessions.object, None);
    // All sessions are equal; the first in the dominator tree's order is
    // the one with the lowest index, and it has no children.
    assert_eq!(sessions.accumulation_point, ix(d, "200").raw());
    assert!(sessions.top_types.is_empty());
    assert_eq!(sessions.retention_path, vec![ix(d, "200")]);
}

#[test]
fn no_suspect_below_ten_percent() {
    // Lengauer–Tarjan's graph: R retains everything (one object suspect);
    // the accumulation point descends while one child keeps 70 %.
    let a = analyse_fixture("lengauer_tarjan.txt");
    let s = leak_suspects(&a);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].object, Some(ix(a.dump(), "100")));
    assert_eq!(
        s[0].accumulation_point,
        accumulation_point(&a.dom, (ix(a.dump(), "100")).raw())
    );
    // DevTools' six nodes (retained A 2, B 8, … of 20): every top-level
    // dominator at 10 % or more, A included at exactly 10 %.
    let a = analyse_fixture("devtools_six_nodes.txt");
    let d = a.dump();
    let ids: Vec<String> = leak_suspects(&a)
        .iter()
        .filter_map(|s| s.object.map(|o| d.id_hex(o)))
        .collect();
    let all: Vec<String> = a
        .dom
        .children_sorted(a.dom.super_root())
        .iter()
        .filter(|&&o| a.dom.retained_bytes(o as usize) * 10 >= a.dom.reachable_bytes)
        .map(|&o| d.id_hex(ObjectIdx(o)))
        .collect();
    assert_eq!(ids, all);
}

#[test]
fn the_cache_that_grows_every_time_is_a_growth_suspect() {
    let snapshots: Vec<Analysis> = ["caches.1.txt", "caches.2.txt", "caches.3.txt"]
        .iter()
        .map(|f| analyse_fixture(f))
        .collect();
    let summaries: Vec<SnapshotSummary> = snapshots.iter().map(SnapshotSummary::of).collect();
    let c = compare(&summaries);
    let newest = snapshots.last().unwrap();
    let g = growth_suspects(newest, &c);
    assert_eq!(g.len(), 1, "{g:#?}");
    let s = &g[0];
    assert_eq!(s.kind, SuspectKind::Growth);
    let growth = s.growth.as_ref().unwrap();
    // From the App (grows steadily, one instance) down RecentOrders and
    // the array (each carries all but 8 bytes of the growth) to the row
    // whose count rises: the orders.
    assert_eq!(
        c.path_names(growth.path),
        ["App.Main", "App.RecentOrders", "App.Order[]", "App.Order"]
    );
    assert_eq!(growth.retained_bytes, [0x80, 0x100, 0x180]);
    assert_eq!(growth.count, [2, 4, 6]);
    assert_eq!((s.instances, s.retained_bytes), (6, 0x180));
    // The memory piles up in the array that holds the orders.
    let d = newest.dump();
    assert_eq!(d.type_name(ObjectIdx(s.accumulation_point)), "App.Order[]");
    let order = d
        .type_names
        .iter()
        .position(|n| &**n == "App.Order")
        .unwrap();
    assert_eq!(s.top_types, vec![(TypeIdx::from_usize(order), 0x180)]);
    assert_eq!(
        types(newest, &s.retention_path),
        ["App.Main", "App.RecentOrders", "App.Order[]"]
    );
    // And in a report's list first, as in the Leaks pane: growth first.
    let all = suspects(newest, Some(&c));
    assert_eq!(all.first(), Some(s));
    assert!(all[1..].iter().all(|x| x.kind != SuspectKind::Growth));
}

#[test]
fn a_comparison_with_no_steady_growth_has_no_growth_suspect() {
    let a = analyse_fixture("seed002_before.txt");
    let b = analyse_fixture("seed002_after.txt");
    let c = compare(&[SnapshotSummary::of(&a), SnapshotSummary::of(&b)]);
    assert!(growth_suspects(&b, &c).is_empty());
    // Reversed, the collected garbage does not count either: no row grows.
    let c = compare(&[SnapshotSummary::of(&b), SnapshotSummary::of(&a)]);
    assert!(growth_suspects(&a, &c).is_empty());
}
