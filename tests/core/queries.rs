//! The analysis queries (docs/analyses.md) on `fixtures/queries.txt`, whose
//! dominator tree is (sizes in hex):
//!
//! ```text
//! super-root ─ 1 Cache 10 ─ 2 Hashtable 20 ─ 3 Object[] 30 ┬ 4 String 8 ─ 7 Char[] 40
//!            │                                             ├ 5 String 8 ─ 8 Char[] 40
//!            │                                             └ 6 Node 10 ─ 9 Node 10 ─ a Node 10 ─ b Char[] 20
//!            ├ c String 8 ─ d Char[] 10
//!            └ e Char[] 8
//! ```
//! and property tests of precise retained sizes and retention paths against
//! brute force.

use heaptui_testkit::common;

use std::collections::VecDeque;

use proptest::prelude::*;

use heaptui_core::analysis::{
    domination_path, group_children, immediate_dominators, objects_of_types, precise_retained,
    shortest_retention_path, Analysis, Glob,
};
use heaptui_core::model::ObjectIdx;
use heaptui_core::progress::Progress;

use common::{analyse_bytes, analyse_fixture, ix, small_heap, Oracle, SmallHeap};

fn ids(a: &Analysis, objects: &[ObjectIdx]) -> Vec<String> {
    objects.iter().map(|&o| a.dump().id_hex(o)).collect()
}

fn objs(a: &Analysis, hex: &[&str]) -> Vec<ObjectIdx> {
    hex.iter().map(|h| ix(a.dump(), h)).collect()
}

/// `(N, type, retained bytes, retained objects)` per row.
fn rows(a: &Analysis, parents: &[ObjectIdx]) -> Vec<(usize, String, u64, u64)> {
    group_children(a.dump(), &a.dom, ObjectIdx::raw_slice(parents))
        .iter()
        .map(|g| {
            (
                g.members.len(),
                a.dump().type_names[g.type_index.index()].to_string(),
                g.retained_bytes,
                g.retained_objects,
            )
        })
        .collect()
}

fn row(n: usize, t: &str, bytes: u64, objects: u64) -> (usize, String, u64, u64) {
    (n, t.to_string(), bytes, objects)
}

#[test]
fn grouped_children_sum_their_members() {
    let a = analyse_fixture("queries.txt");
    let top = a.dom.super_root();
    // 1 retains everything under it: 0x10+0x20+0x30+2×(8+0x40)+3×0x10+0x20.
    assert_eq!(
        rows(&a, &[ObjectIdx(top)]),
        [
            row(1, "MyApp.Cache", 320, 11),
            row(1, "System.String", 24, 2),
            row(1, "System.Char[]", 8, 1),
        ]
    );
    let arr = objs(&a, &["3"]);
    // Two strings (8 + 0x40 each) beat one Node chain (3×0x10 + 0x20).
    assert_eq!(
        rows(&a, &arr),
        [row(2, "System.String", 144, 4), row(1, "MyApp.Node", 80, 4)]
    );
    let strings = group_children(a.dump(), &a.dom, ObjectIdx::raw_slice(&arr))[0]
        .members
        .clone();
    let strings = ObjectIdx::cast_slice(&strings);
    assert_eq!(ids(&a, strings), ["4", "5"], "equal retained: by index");
    // Expanding the `2 × System.String` row: the union of their children.
    assert_eq!(rows(&a, strings), [row(2, "System.Char[]", 128, 2)]);
    assert!(rows(&a, &objs(&a, &["e"])).is_empty());
}

#[test]
fn grouped_children_of_the_devtools_roots() {
    let a = analyse_fixture("devtools_six_nodes.txt");
    let top = a.dom.super_root();
    // Each node has its own type: three rows, C (10) > B (8) > A (2).
    assert_eq!(
        rows(&a, &[ObjectIdx(top)]),
        [row(1, "C", 10, 2), row(1, "B", 8, 2), row(1, "A", 2, 1)]
    );
}

#[test]
fn domination_path_runs_up_to_the_super_root() {
    let a = analyse_fixture("queries.txt");
    let b = ix(a.dump(), "b");
    assert_eq!(
        ids(&a, &domination_path(&a.dom, b)),
        ["b", "a", "9", "6", "3", "2", "1"]
    );
    assert_eq!(ids(&a, &domination_path(&a.dom, ix(a.dump(), "e"))), ["e"]);
    let g = analyse_fixture("garbage_dangling.txt");
    assert!(domination_path(&g.dom, ix(g.dump(), "4")).is_empty());
}

#[test]
fn type_stats_min_retained_counts_only_top_most_instances() {
    let a = analyse_fixture("queries.txt");
    let got: Vec<(String, u64, u64, u64)> = a
        .types
        .iter()
        .map(|t| {
            (
                a.dump().type_names[t.type_index.index()].to_string(),
                t.count,
                t.shallow_bytes,
                t.min_retained_bytes,
            )
        })
        .collect();
    let t = |n: &str, c, s, m| (n.to_string(), c, s, m);
    assert_eq!(
        got,
        [
            // 7, 8, b, d, e: none dominates another.
            t("System.Char[]", 5, 0x40 + 0x40 + 0x20 + 0x10 + 8, 184),
            // Node 6 dominates 9 dominates a: only 6 counts (80, not 80+64+48).
            t("MyApp.Node", 3, 48, 80),
            t("System.Object[]", 1, 48, 272),
            t("System.Collections.Hashtable", 1, 32, 304),
            // 4, 5 (72 each) and c (24).
            t("System.String", 3, 24, 168),
            t("MyApp.Cache", 1, 16, 320),
        ]
    );
}

#[test]
fn type_stats_ignore_unreachable_instances_for_retained() {
    let a = analyse_fixture("garbage_dangling.txt");
    let leaf = a
        .types
        .iter()
        .find(|t| &*a.dump().type_names[t.type_index.index()] == "App.Leaf")
        .unwrap();
    // 2 and 3 reachable (8 each), 5 unreachable (4).
    assert_eq!(
        (leaf.count, leaf.shallow_bytes, leaf.reachable_count),
        (3, 20, 2)
    );
    assert_eq!(leaf.min_retained_bytes, 16);
}

#[test]
fn precise_retained_of_hand_checked_sets() {
    let p = |a: &Analysis, set: &[&str]| {
        let r = precise_retained(&a.graph, &a.dom, &objs(a, set), &Progress::new()).unwrap();
        (r.bytes, r.objects)
    };
    let q = analyse_fixture("queries.txt");
    assert_eq!(p(&q, &["4", "5"]), (144, 4));
    assert_eq!(p(&q, &["7", "8", "b", "d", "e"]), (184, 5));
    assert_eq!(p(&q, &["6", "9", "a"]), (80, 4));
    assert_eq!(p(&q, &[]), (0, 0));
    // A and B retain 2 and 8 alone, but together also C and E: all 20.
    let d = analyse_fixture("devtools_six_nodes.txt");
    assert_eq!(p(&d, &["a"]), (2, 1));
    assert_eq!(p(&d, &["a", "b"]), (20, 5));
    // An unreachable member frees nothing.
    let g = analyse_fixture("garbage_dangling.txt");
    assert_eq!(p(&g, &["4"]), (0, 0));
}

/// `(dominator type, dominators, objects, shallow bytes, dominators' retained)`.
type IdomRow = (Option<String>, Vec<String>, u64, u64, u64);

fn idom_rows(a: &Analysis, pattern: &str, skip: Option<&str>) -> Vec<IdomRow> {
    let set = objects_of_types(a.dump(), &Glob::new(pattern));
    let skip = skip.map(Glob::new);
    immediate_dominators(a.dump(), &a.dom, &set, skip.as_ref())
        .into_iter()
        .map(|r| {
            (
                r.type_index
                    .map(|t| a.dump().type_names[t.index()].to_string()),
                ids(a, &r.dominators),
                r.dominated_objects,
                r.dominated_shallow_bytes,
                r.dominators_retained_bytes,
            )
        })
        .collect()
}

#[test]
fn immediate_dominators_without_exclude() {
    let a = analyse_fixture("queries.txt");
    let s = |x: &str| Some(x.to_string());
    let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        idom_rows(&a, "System.Char[]", None),
        [
            // 7 ← 4, 8 ← 5, d ← c: three strings (72 + 72 + 24 retained).
            (
                s("System.String"),
                v(&["4", "5", "c"]),
                3,
                0x40 + 0x40 + 0x10,
                168
            ),
            (s("MyApp.Node"), v(&["a"]), 1, 0x20, 48),
            // e is held by a GC root directly.
            (None, v(&[]), 1, 8, 0),
        ]
    );
}

#[test]
fn immediate_dominators_skipping_system_types() {
    let a = analyse_fixture("queries.txt");
    let s = |x: &str| Some(x.to_string());
    let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        idom_rows(&a, "System.Char[]", Some("System.*")),
        [
            // 7 and 8: past String, Object[] and Hashtable to the Cache.
            (s("MyApp.Cache"), v(&["1"]), 2, 0x80, 320),
            (s("MyApp.Node"), v(&["a"]), 1, 0x20, 48),
            // d: its String is skipped and nothing is above it.
            (None, v(&[]), 2, 0x10 + 8, 0),
        ]
    );
}

#[test]
fn retention_paths_on_fixtures() {
    let a = analyse_fixture("queries.txt");
    let path = |a: &Analysis, id: &str| {
        shortest_retention_path(&a.graph, &a.dom, ix(a.dump(), id)).map(|p| ids(a, &p))
    };
    assert_eq!(path(&a, "b").unwrap(), ["1", "2", "3", "6", "9", "a", "b"]);
    // Lengauer–Tarjan: L (10c) is 3 references from R (via A or B, then D).
    let lt = analyse_fixture("lengauer_tarjan.txt");
    let p = path(&lt, "10c").unwrap();
    assert_eq!(p.len(), 4);
    assert_eq!(
        (p[0].as_str(), p[2].as_str(), p[3].as_str()),
        ("100", "104", "10c")
    );
    // Weakly held objects: the path starts at the weak root.
    let w = analyse_fixture("weak_roots.txt");
    assert_eq!(path(&w, "4").unwrap(), ["2", "4"]);
    assert_eq!(path(&w, "3").unwrap(), ["3"]);
    // Garbage no root reaches has no path.
    let g = analyse_fixture("garbage_dangling.txt");
    assert_eq!(path(&g, "4"), None);
}

/// BFS distances (in edges) from `sources`.
fn distances(h: &SmallHeap, sources: &[usize]) -> Vec<Option<usize>> {
    let mut dist = vec![None; h.n()];
    let mut queue = VecDeque::new();
    for &s in sources {
        if dist[s].is_none() {
            dist[s] = Some(0);
            queue.push_back(s);
        }
    }
    while let Some(v) = queue.pop_front() {
        for &w in &h.edges[v] {
            if dist[w].is_none() {
                dist[w] = Some(dist[v].unwrap() + 1);
                queue.push_back(w);
            }
        }
    }
    dist
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn precise_retained_agrees_with_brute_force(
        h in small_heap(14),
        picks in proptest::collection::vec(0usize..14, 0..5),
    ) {
        let a = analyse_bytes(h.to_dump_text().as_bytes());
        let set: Vec<usize> = picks.into_iter().filter(|&p| p < h.n()).collect();
        let node = |i: usize| ix(a.dump(), &format!("{:x}", SmallHeap::id(i)));
        let objects: Vec<ObjectIdx> = set.iter().map(|&i| node(i)).collect();
        let got = precise_retained(&a.graph, &a.dom, &objects, &Progress::new()).unwrap();
        let before = h.reachable_without(&[]);
        let after = h.reachable_without(&set);
        let freed: Vec<usize> = (0..h.n()).filter(|&i| before[i] && !after[i]).collect();
        prop_assert_eq!(got.objects, freed.len() as u64);
        prop_assert_eq!(got.bytes, freed.iter().map(|&i| h.sizes[i]).sum::<u64>());
    }

    #[test]
    fn min_retained_is_a_lower_bound_of_precise(h in small_heap(14)) {
        let a = analyse_bytes(h.to_dump_text().as_bytes());
        for t in a.types.iter() {
            let set: Vec<ObjectIdx> = a
                .dump()
                .object_indices()
                .filter(|&o| a.dump().type_of(o) == t.type_index)
                .collect();
            let p = precise_retained(&a.graph, &a.dom, &set, &Progress::new()).unwrap();
            prop_assert!(t.min_retained_bytes <= p.bytes);
        }
    }

    #[test]
    fn min_retained_and_groups_agree_with_brute_force(h in small_heap(14)) {
        let a = analyse_bytes(h.to_dump_text().as_bytes());
        let oracle = Oracle::new(&h);
        let type_of = |i: usize| format!("T{}", i % 3);
        // Min retained: instances no other instance of the type dominates.
        for t in a.types.iter() {
            let name = &*a.dump().type_names[t.type_index.index()];
            let inst: Vec<usize> = (0..h.n()).filter(|&i| type_of(i) == name).collect();
            let want: u64 = inst
                .iter()
                .filter(|&&i| oracle.reachable[i])
                .filter(|&&i| !inst.iter().any(|&j| j != i && oracle.dominates(j, i)))
                .map(|&i| oracle.retained_bytes(&h, i))
                .sum();
            prop_assert_eq!(t.min_retained_bytes, want, "type {}", name);
        }
        // Grouped super-root children: per type, the count and retained sums
        // of the reachable nodes with no strict dominator.
        let rows = group_children(a.dump(), &a.dom, &[a.dom.super_root()]);
        for ty in ["T0", "T1", "T2"] {
            let members: Vec<usize> = (0..h.n())
                .filter(|&i| type_of(i) == ty && oracle.reachable[i] && oracle.idom(i).is_none())
                .collect();
            let row = rows
                .iter()
                .find(|r| &*a.dump().type_names[r.type_index.index()] == ty);
            match row {
                None => prop_assert!(members.is_empty()),
                Some(r) => {
                    prop_assert_eq!(r.members.len(), members.len());
                    let bytes: u64 = members.iter().map(|&i| oracle.retained_bytes(&h, i)).sum();
                    let objects: u64 = members.iter().map(|&i| oracle.retained_objects(i)).sum();
                    prop_assert_eq!(r.retained_bytes, bytes);
                    prop_assert_eq!(r.retained_objects, objects);
                }
            }
        }
        prop_assert!(rows.windows(2).all(|w| w[0].retained_bytes >= w[1].retained_bytes));
    }

    #[test]
    fn domination_paths_and_immediate_dominators_agree_with_brute_force(
        h in small_heap(14),
        skip_t1 in any::<bool>(),
    ) {
        let a = analyse_bytes(h.to_dump_text().as_bytes());
        let oracle = Oracle::new(&h);
        let node = |i: usize| ix(a.dump(), &format!("{:x}", SmallHeap::id(i)));
        // Domination path: the node, then its oracle idoms upwards.
        for b in 0..h.n() {
            let mut want = Vec::new();
            if oracle.reachable[b] {
                let mut x = Some(b);
                while let Some(v) = x {
                    want.push(node(v));
                    x = oracle.idom(v);
                }
            }
            prop_assert_eq!(domination_path(&a.dom, node(b)), want);
        }
        // Immediate dominators of all T0 objects, optionally walking past T1.
        let set: Vec<ObjectIdx> = (0..h.n()).filter(|i| i % 3 == 0).map(node).collect();
        let skip = skip_t1.then(|| Glob::new("T1"));
        let rows = immediate_dominators(a.dump(), &a.dom, &set, skip.as_ref());
        // Oracle: key = type of the first non-skipped strict dominator.
        let mut want: std::collections::BTreeMap<Option<usize>, (std::collections::BTreeSet<usize>, u64, u64)> =
            Default::default();
        for b in (0..h.n()).filter(|i| i % 3 == 0 && oracle.reachable[*i]) {
            let mut d = oracle.idom(b);
            while let Some(x) = d {
                if skip_t1 && x % 3 == 1 {
                    d = oracle.idom(x);
                } else {
                    break;
                }
            }
            let e = want.entry(d.map(|x| x % 3)).or_default();
            if let Some(x) = d {
                e.0.insert(x);
            }
            e.1 += 1;
            e.2 += h.sizes[b];
        }
        prop_assert_eq!(rows.len(), want.len());
        for r in &rows {
            let key = r.type_index.map(|t| {
                a.dump().type_names[t.index()][1..].parse::<usize>().unwrap()
            });
            let (doms, objects, bytes) = &want[&key];
            let mut got: Vec<ObjectIdx> = r.dominators.clone();
            got.sort_unstable();
            let mut exp: Vec<ObjectIdx> = doms.iter().map(|&x| node(x)).collect();
            exp.sort_unstable();
            prop_assert_eq!(got, exp);
            prop_assert_eq!(r.dominated_objects, *objects);
            prop_assert_eq!(r.dominated_shallow_bytes, *bytes);
            let retained: u64 = doms.iter().map(|&x| oracle.retained_bytes(&h, x)).sum();
            prop_assert_eq!(r.dominators_retained_bytes, retained);
        }
    }

    #[test]
    fn retention_paths_are_shortest_and_start_at_a_root(h in small_heap(14)) {
        let a = analyse_bytes(h.to_dump_text().as_bytes());
        let strong = distances(&h, &h.strong_roots());
        let all_roots: Vec<usize> = h.roots.iter().map(|r| r.0).collect();
        let any = distances(&h, &all_roots);
        let node = |i: usize| ix(a.dump(), &format!("{:x}", SmallHeap::id(i)));
        let back = |o: u32| (a.dump().ids.get(o as usize) - 0x100) as usize;
        for b in 0..h.n() {
            let path = shortest_retention_path(&a.graph, &a.dom, node(b));
            // Strongly reachable: from a strong root; else from any root.
            let (want, strong_only) = match strong[b] {
                Some(d) => (Some(d), true),
                None => (any[b], false),
            };
            match (want, path) {
                (None, None) => {}
                (Some(d), Some(p)) => {
                    prop_assert_eq!(p.len(), d + 1, "node {}", b);
                    prop_assert_eq!(*p.last().unwrap(), node(b));
                    let first = back(p[0].raw());
                    prop_assert!(h.roots.iter().any(|r| r.0 == first && (!strong_only || !r.1)));
                    for w in p.windows(2) {
                        prop_assert!(h.edges[back(w[0].raw())].contains(&back(w[1].raw())));
                    }
                }
                (want, got) => prop_assert!(false, "node {}: want {:?}, got {:?}", b, want, got),
            }
        }
    }
}
