//! What a cut would free (docs/analyses.md): hand-checked cuts, a property
//! test against a brute-force reachability count on random graphs, `Type.field`
//! cuts on the HPROF and V8 fixtures, and the real dumps against brute force
//! and the dominator tree.

use heaptui_testkit::common;

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use proptest::prelude::*;

use heaptui_core::analysis::Analysis;
use heaptui_core::analysis::{field_cut, what_if, Cut, FieldCutError, WhatIf};
use heaptui_core::graph::duplicates::{DuplicateMode, DuplicateOptions};
use heaptui_core::import::ImportOptions;
use heaptui_core::model::ObjectIdx;
use heaptui_core::progress::Progress;

use common::{analyse_bytes, analyse_fixture, ix, small_heap, SmallHeap};

fn run(a: &Analysis, cut: &Cut) -> WhatIf {
    what_if(&a.graph, &a.dom, cut, &Progress::new()).unwrap()
}

/// The position of `from`'s reference to `to` (its first).
fn edge(a: &Analysis, from: &str, to: &str) -> u64 {
    let (f, t) = (ix(a.dump(), from), ix(a.dump(), to));
    let k = a.dump().refs_of(f).iter().position(|x| x == t).unwrap();
    a.dump().refs.offset(f.index()) + k as u64
}

fn edges(a: &Analysis, pairs: &[(&str, &str)]) -> Cut {
    Cut {
        objects: Vec::new(),
        edges: pairs.iter().map(|(f, t)| edge(a, f, t)).collect(),
    }
}

fn freed_ids(a: &Analysis, w: &WhatIf) -> Vec<String> {
    w.freed.iter().map(|&o| a.dump().id_hex(o)).collect()
}

#[test]
fn hand_checked_cuts() {
    // Roots A, B; A→B, A→C, B→C, B→D, C→E; sizes A 2 … E 6.
    let d = analyse_fixture("devtools_six_nodes.txt");
    // C is still held by B.
    assert_eq!(run(&d, &edges(&d, &[("a", "c")])).objects, 0);
    // Neither A nor B holds C any more: C and E go.
    let both = run(&d, &edges(&d, &[("a", "c"), ("b", "c")]));
    assert_eq!((both.objects, both.bytes), (2, 10));
    assert_eq!(freed_ids(&d, &both), ["c", "e"]);
    let names: Vec<_> = both.by_type.iter().map(|t| (t.objects, t.bytes)).collect();
    assert_eq!(names.iter().map(|p| p.1).sum::<u64>(), 10);
    // B is a root: dropping A's reference frees nothing.
    assert_eq!(run(&d, &edges(&d, &[("a", "b")])), WhatIf::default());
    assert_eq!(run(&d, &edges(&d, &[("b", "d")])).bytes, 5);
    // Objects and references together: without B and A→C, C, D, E go too.
    let mixed = Cut {
        objects: vec![ix(d.dump(), "b")],
        edges: vec![edge(&d, "a", "c")],
    };
    assert_eq!(freed_ids(&d, &run(&d, &mixed)), ["b", "c", "d", "e"]);
    // Out-of-range positions and objects are ignored.
    let wild = Cut {
        objects: vec![ObjectIdx(u32::MAX - 5)],
        edges: vec![u64::MAX, d.dump().refs.edges() as u64],
    };
    assert_eq!(run(&d, &wild), WhatIf::default());
    // An unreachable object's references free nothing.
    let g = analyse_fixture("garbage_dangling.txt");
    let garbage = ix(g.dump(), "4");
    assert!(!g.dom.is_reachable(garbage.raw()));
    let all = Cut {
        objects: vec![garbage],
        edges: (0..g.dump().refs.edges() as u64)
            .filter(|&e| heaptui_core::analysis::source_of(&g.graph, e) == Some(garbage))
            .collect(),
    };
    assert_eq!(run(&g, &all), WhatIf::default());
}

#[test]
fn a_cancelled_cut_stops() {
    // Roots 1 and 2 both hold a chain of 70,000 objects: taking 1 out walks
    // the whole chain from 2 (past the first poll, at 65,536 objects).
    let mut text = String::from("a 1 x.exe\nt 0 T\no 1 0 8 10\no 2 0 8 10\n");
    for i in 0..70_000u64 {
        text.push_str(&format!("o {:x} 0 8 {:x}\n", 0x10 + i, 0x11 + i));
    }
    text.push_str("r 1 1 0\nr 2 1 0\nc x.exe\n");
    let a = analyse_bytes(text.as_bytes());
    let cut = Cut {
        objects: vec![ix(a.dump(), "1")],
        edges: Vec::new(),
    };
    let p = Progress::new();
    p.cancel();
    assert!(what_if(&a.graph, &a.dom, &cut, &p).is_err());
    assert_eq!(run(&a, &cut).bytes, 8);
}

/// Nodes reachable from the strong roots of `h` entering none of `objects`
/// and following none of `edges` (`(node, field position)`).
fn brute_reach(h: &SmallHeap, objects: &[usize], edges: &HashSet<(usize, usize)>) -> Vec<bool> {
    let mut seen = vec![false; h.n()];
    for &o in objects {
        seen[o] = true;
    }
    let mut queue = std::collections::VecDeque::new();
    for r in h.strong_roots() {
        if !seen[r] {
            seen[r] = true;
            queue.push_back(r);
        }
    }
    let mut reached = vec![false; h.n()];
    while let Some(v) = queue.pop_front() {
        reached[v] = true;
        for (k, &w) in h.edges[v].iter().enumerate() {
            if !edges.contains(&(v, k)) && !seen[w] {
                seen[w] = true;
                queue.push_back(w);
            }
        }
    }
    reached
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn a_cut_frees_what_brute_force_reachability_loses(
        h in small_heap(14),
        object_picks in proptest::collection::vec(0usize..14, 0..3),
        edge_picks in proptest::collection::vec((0usize..14, 0usize..4), 0..6),
    ) {
        let a = analyse_bytes(h.to_dump_text().as_bytes());
        let node = |i: usize| ix(a.dump(), &format!("{:x}", SmallHeap::id(i)));
        // The importer keeps each object's references in field order.
        for i in 0..h.n() {
            let want: Vec<ObjectIdx> = h.edges[i].iter().map(|&j| node(j)).collect();
            prop_assert_eq!(a.dump().refs_of(node(i)), &want[..]);
        }
        let objects: Vec<usize> = object_picks.into_iter().filter(|&p| p < h.n()).collect();
        let cut_edges: HashSet<(usize, usize)> = edge_picks
            .into_iter()
            .filter(|&(i, k)| i < h.n() && k < h.edges[i].len())
            .collect();
        let cut = Cut {
            objects: objects.iter().map(|&i| node(i)).collect(),
            edges: cut_edges
                .iter()
                .map(|&(i, k)| a.dump().refs.offset(node(i).index()) + k as u64)
                .collect(),
        };
        let got = run(&a, &cut);
        let before = brute_reach(&h, &[], &HashSet::new());
        let after = brute_reach(&h, &objects, &cut_edges);
        let freed: Vec<usize> = (0..h.n()).filter(|&i| before[i] && !after[i]).collect();
        let mut want_ids: Vec<ObjectIdx> = freed.iter().map(|&i| node(i)).collect();
        want_ids.sort_unstable();
        prop_assert_eq!(&got.freed, &want_ids);
        prop_assert_eq!(got.objects, freed.len() as u64);
        prop_assert_eq!(got.bytes, freed.iter().map(|&i| h.sizes[i]).sum::<u64>());
        let mut by_type: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for &i in &freed {
            let e = by_type.entry(format!("T{}", i % 3)).or_default();
            e.0 += 1;
            e.1 += h.sizes[i];
        }
        let got_types: BTreeMap<String, (u64, u64)> = got
            .by_type
            .iter()
            .map(|t| (a.dump().type_names[t.type_index.index()].to_string(), (t.objects, t.bytes)))
            .collect();
        prop_assert_eq!(got_types, by_type);
        prop_assert!(got.by_type.windows(2).all(|w| w[0].bytes >= w[1].bytes));
    }
}

/// The dump analysed without duplicate detection (no part of a cut, and
/// slow in a debug build on the real dumps).
fn analyse_file(path: &Path) -> Analysis {
    let options = DuplicateOptions {
        mode: DuplicateMode::None,
        ..DuplicateOptions::default()
    };
    Analysis::run(path, ImportOptions::default(), &options, &Progress::new())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn type_count(a: &Analysis, w: &WhatIf, name: &str) -> u64 {
    w.by_type
        .iter()
        .find(|t| &*a.dump().type_names[t.type_index.index()] == name)
        .map_or(0, |t| t.objects)
}

#[test]
fn a_static_field_of_the_hprof_fixture() {
    let a = analyse_file(&common::fixture("leaky.hprof.gz"));
    let (_, field, cut) = field_cut(a.dump(), "Leaky.LEAK").unwrap();
    assert_eq!((field.as_str(), cut.edges.len()), ("LEAK", 1));
    let w = run(&a, &cut);
    // LEAK is the only reference to its HashMap: the map and its 1,000
    // entries, their keys above the Integer cache, values and their bytes.
    assert_eq!(type_count(&a, &w, "java.util.HashMap"), 1);
    assert_eq!(type_count(&a, &w, "java.util.HashMap$Node"), 1000);
    assert_eq!(type_count(&a, &w, "java.lang.String"), 1000);
    let map = a.dump().refs.targets.get(cut.edges[0] as usize);
    assert_eq!(w.bytes, a.dom.retained_bytes(map as usize));
    // An instance field: every HashMap's table.
    let (_, _, tables) = field_cut(a.dump(), "java.util.HashMap.table").unwrap();
    assert!(tables.edges.len() > 1);
    assert!(type_count(&a, &run(&a, &tables), "java.util.HashMap$Node[]") >= 1);
}

#[test]
fn field_cut_errors_say_what_is_wrong() {
    let a = analyse_file(&common::fixture("leaky.hprof.gz"));
    assert_eq!(
        field_cut(a.dump(), "NoSuch.field").unwrap_err(),
        FieldCutError::NoType("NoSuch".into())
    );
    match field_cut(a.dump(), "Leaky.nothing").unwrap_err() {
        FieldCutError::NoField { known, .. } => assert!(known.contains(&"DUPS".to_string())),
        e => panic!("{e:?}"),
    }
    let text = analyse_fixture("queries.txt");
    assert_eq!(
        field_cut(text.dump(), "MyApp.Node.next").unwrap_err(),
        FieldCutError::NoFieldNames
    );
}

#[test]
fn a_property_of_the_v8_fixture() {
    let a = analyse_file(&common::fixture("node_leak.heapsnapshot.gz"));
    let (_, _, cut) = field_cut(a.dump(), "Leaky.sessions").unwrap();
    assert_eq!(cut.edges.len(), 1);
    let w = run(&a, &cut);
    assert_eq!(type_count(&a, &w, "Session"), 1000);
    assert_eq!(type_count(&a, &w, "Map"), 1);
}

/// Reachability over `graph.refs` by plain arrays and a hash set of the
/// dropped references: objects freed and their bytes.
fn brute_freed(a: &Analysis, cut: &Cut) -> (u64, u64) {
    let dump = a.dump();
    let dropped: HashSet<u64> = cut.edges.iter().copied().collect();
    let reach = |skip: &[ObjectIdx], dropped: &HashSet<u64>| {
        let mut seen = vec![false; dump.objects()];
        for &o in skip {
            seen[o.index()] = true;
        }
        let mut stack: Vec<ObjectIdx> = Vec::new();
        for &r in &a.graph.strong_roots {
            if !seen[r.index()] {
                seen[r.index()] = true;
                stack.push(r);
            }
        }
        let mut reached = vec![false; dump.objects()];
        while let Some(v) = stack.pop() {
            reached[v.index()] = true;
            let start = dump.refs.offset(v.index());
            for (k, w) in dump.refs_of(v).iter().enumerate() {
                if !dropped.contains(&(start + k as u64)) && !seen[w.index()] {
                    seen[w.index()] = true;
                    stack.push(w);
                }
            }
        }
        reached
    };
    let before = reach(&[], &HashSet::new());
    let after = reach(&cut.objects, &dropped);
    let freed = dump
        .object_indices()
        .filter(|o| before[o.index()] && !after[o.index()]);
    freed.fold((0, 0), |(n, b), o| (n + 1, b + dump.size_of(o)))
}

/// Every native dump in `$HEAPTUI_REAL_HEAPS/raw`: a cut object frees its
/// retained size; dropping every reference into an object no root holds
/// frees exactly its retained size too; single references, the references
/// into an object and (where the format names fields) the most common field
/// of a type free what brute-force reachability loses.
#[test]
fn real_dumps_agree_with_brute_force_and_the_dominator_tree() {
    let Some(dir) = common::real_heaps("real_dumps_agree_with_brute_force") else {
        return;
    };
    let mut checked = 0;
    for entry in std::fs::read_dir(dir.join("raw")).unwrap() {
        let path = entry.unwrap().path();
        let a = analyse_file(&path);
        check_real(&a, &path);
        checked += 1;
    }
    assert!(checked > 0);
}

fn check_real(a: &Analysis, path: &Path) {
    let dump = a.dump();
    let name = path.display();
    let pre: Vec<u32> = (0..dump.objects() as u32)
        .filter(|&o| a.dom.is_reachable(o))
        .collect();
    let step = (pre.len() / 12).max(1);
    let mut brute_checked = 0;
    for &o in pre.iter().step_by(step) {
        let obj = ObjectIdx(o);
        let alone = Cut {
            objects: vec![obj],
            edges: Vec::new(),
        };
        let w = run(a, &alone);
        let retained = (
            a.dom.retained_objects(o as usize) as u64,
            a.dom.retained_bytes(o as usize),
        );
        assert_eq!((w.objects, w.bytes), retained, "{name}: object {o}");
        let into: Vec<u64> = a
            .graph
            .retainers_of(obj)
            .flat_map(|r| {
                let start = dump.refs.offset(r.index());
                let row = dump.refs_of(r);
                (0..row.len())
                    .filter(move |&k| row.get(k) == obj)
                    .map(move |k| start + k as u64)
            })
            .collect();
        let incoming = Cut {
            objects: Vec::new(),
            edges: into,
        };
        let w = run(a, &incoming);
        if !a.graph.strong_roots.contains(&obj) {
            assert_eq!((w.objects, w.bytes), retained, "{name}: into {o}");
        }
        assert_eq!(
            (w.objects, w.bytes),
            brute_freed(a, &incoming),
            "{name}: into {o}"
        );
        // The object's first reference alone.
        if let Some(start) = (!dump.refs_of(obj).is_empty()).then(|| dump.refs.offset(o as usize)) {
            let one = Cut {
                objects: Vec::new(),
                edges: vec![start],
            };
            assert_eq!(
                (run(a, &one).objects, run(a, &one).bytes),
                brute_freed(a, &one),
                "{name}: first reference of {o}"
            );
            brute_checked += 1;
        }
    }
    assert!(brute_checked > 0, "{name}");
    if let Some(spec) = common_field(a) {
        let (_, _, cut) = field_cut(dump, &spec).unwrap();
        let w = run(a, &cut);
        assert_eq!((w.objects, w.bytes), brute_freed(a, &cut), "{name}: {spec}");
        eprintln!(
            "{name}: without {spec}: {} objects, {} bytes",
            w.objects, w.bytes
        );
    }
}

/// `Type.field` for the named reference most instances of one type have.
fn common_field(a: &Analysis) -> Option<String> {
    let dump = a.dump();
    let labels = dump.labels.as_ref()?;
    let mut counts: BTreeMap<(u32, &str), u64> = BTreeMap::new();
    for o in dump.object_indices() {
        let start = dump.refs.offset(o.index()) as usize;
        for k in 0..dump.refs_of(o).len() {
            // Not the formats' own pseudo-fields (`<class>`, `(map)`).
            match labels.get(start, start + k) {
                Some(heaptui_core::model::Label::Name(n)) if !n.starts_with(['<', '(']) => {
                    *counts.entry((dump.type_of(o).raw(), n)).or_default() += 1;
                }
                _ => {}
            }
        }
    }
    let ((t, field), _) = counts
        .into_iter()
        .max_by_key(|&(k, c)| (c, std::cmp::Reverse(k)))?;
    let ty = &dump.type_names[t as usize];
    // Only where the split finds this type (no longer type name is a
    // prefix of the spec).
    Some(format!("{ty}.{field}"))
        .filter(|s| field_cut(dump, s).is_ok_and(|(found, ..)| found == **ty))
}
