//! Merged paths to the roots (docs/analyses.md) against a brute-force
//! merge written apart: a plain breadth-first search over the random
//! graph itself (strong roots in the order of their first strong record,
//! references in field order, the first to reach an object its parent),
//! each target's path spelled as names, every prefix of it counted, and
//! the retained bytes of a prefix's targets as the objects that would no
//! longer be reachable were any one of them gone (by definition, not from
//! the dominator tree).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use heaptui_testkit::common;

use proptest::prelude::*;

use heaptui_core::analysis::{merged_paths, MergedPaths, Step};
use heaptui_core::analysis::{Analysis, Glob};
use heaptui_core::model::{root_kind, ObjectIdx};
use heaptui_core::progress::Progress;

use common::{analyse_bytes, ix, small_heap, Oracle, SmallHeap};

/// Root kinds given to the root records in turn.
const KINDS: [u32; 3] = [1, 3, 4];

/// The heap's text with its root records' kinds varied ([`KINDS`]).
fn dump_text(h: &SmallHeap) -> String {
    let text = h.to_dump_text();
    let mut k = 0;
    let mut out = String::new();
    for line in text.lines() {
        match line.strip_prefix("r ") {
            Some(rest) => {
                let f: Vec<&str> = rest.split(' ').collect();
                out.push_str(&format!("r {} {} {}\n", f[0], KINDS[k % 3], f[2]));
                k += 1;
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// What the brute force computes per path (names from the top down):
/// (targets through it, their retained bytes, its first object).
type Tree = BTreeMap<Vec<String>, (u64, u64, usize)>;

fn brute(h: &SmallHeap, targets: &BTreeSet<usize>, skip: Option<usize>) -> Tree {
    let n = h.n();
    // The first strong record's kind per object, in record order.
    let mut kind: Vec<Option<u32>> = vec![None; n];
    let mut starts = Vec::new();
    for (k, &(r, weak)) in h.roots.iter().enumerate() {
        if !weak && kind[r].is_none() {
            kind[r] = Some(KINDS[k % 3]);
            starts.push(r);
        }
    }
    let mut parent: Vec<Option<Option<usize>>> = vec![None; n];
    let mut order = Vec::new();
    let mut queue = VecDeque::new();
    for &r in &starts {
        parent[r] = Some(None);
        queue.push_back(r);
    }
    while let Some(v) = queue.pop_front() {
        order.push(v);
        for &w in &h.edges[v] {
            if parent[w].is_none() {
                parent[w] = Some(Some(v));
                queue.push_back(w);
            }
        }
    }
    // Each reached object's path of names; objects of the skipped type
    // (not targets) add no name.
    let name = |v: usize| format!("T{}", v % 3);
    let path_of = |v: usize| -> Vec<String> {
        let mut chain = vec![v];
        while let Some(Some(p)) = parent[*chain.last().unwrap()] {
            chain.push(p);
        }
        chain.reverse();
        let mut names = vec![format!(
            "roots: {}",
            root_kind::name(kind[chain[0]].unwrap())
        )];
        for &o in &chain {
            if Some(o % 3) != skip || targets.contains(&o) {
                names.push(name(o));
            }
        }
        names
    };
    let reachable = h.reachable_without(&[]);
    let mut through: BTreeMap<Vec<String>, BTreeSet<usize>> = BTreeMap::new();
    for &t in targets.iter().filter(|&&t| reachable[t]) {
        let p = path_of(t);
        for len in 0..=p.len() {
            through.entry(p[..len].to_vec()).or_default().insert(t);
        }
    }
    // The first object on a target's path, in search order, whose path
    // is a node's (none for the top and the root kinds).
    let mut on_path = vec![false; n];
    for &t in targets.iter().filter(|&&t| reachable[t]) {
        let mut x = Some(t);
        while let Some(v) = x {
            on_path[v] = true;
            x = parent[v].flatten();
        }
    }
    let mut first: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    for &v in order.iter().filter(|&&v| on_path[v]) {
        let p = path_of(v);
        if p.len() > 1 {
            first.entry(p).or_insert(v);
        }
    }
    let reachable = &reachable;
    through
        .into_iter()
        .map(|(path, set)| {
            let freed: BTreeSet<usize> = set
                .iter()
                .flat_map(|&t| {
                    let without = h.reachable_without(&[t]);
                    (0..n).filter(move |&i| reachable[i] && !without[i])
                })
                .collect();
            let bytes = freed.iter().map(|&i| h.sizes[i]).sum();
            let rep = first.get(&path).copied().unwrap_or(usize::MAX);
            (path, (set.len() as u64, bytes, rep))
        })
        .collect()
}

/// The computed tree in the brute force's terms; checks the children's
/// order on the way.
fn spelled(a: &Analysis, m: &MergedPaths, node_of: &dyn Fn(ObjectIdx) -> usize) -> Tree {
    let mut out = Tree::new();
    for (i, node) in m.nodes.iter().enumerate() {
        let path: Vec<String> = m
            .path_of(i as u32)
            .into_iter()
            .map(|s| s.name(a.dump()))
            .collect();
        let rep = match node.step {
            Step::Type(_) => node_of(node.object.expect("a type node has an object")),
            Step::All | Step::Root(_) => {
                assert_eq!(node.object, None);
                usize::MAX
            }
        };
        out.insert(path, (node.count, node.retained_bytes, rep));
        let keys: Vec<(u64, u64)> = node
            .children
            .iter()
            .map(|&c| {
                (
                    m.nodes[c as usize].count,
                    m.nodes[c as usize].retained_bytes,
                )
            })
            .collect();
        assert!(
            keys.windows(2).all(|w| w[0] >= w[1]),
            "children most targets first: {keys:?}"
        );
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn merged_paths_agree_with_a_brute_force_merge(
        h in small_heap(14),
        picks in proptest::collection::vec(0usize..14, 0..8),
        skip in proptest::option::of(0usize..3),
    ) {
        let a = analyse_bytes(dump_text(&h).as_bytes());
        let targets: BTreeSet<usize> = picks.into_iter().filter(|&p| p < h.n()).collect();
        let object = |i: usize| ix(a.dump(), &format!("{:x}", SmallHeap::id(i)));
        let node_of = |o: ObjectIdx| {
            (0..h.n()).find(|&i| object(i) == o).expect("an object of the heap")
        };
        let mut set: Vec<ObjectIdx> = targets.iter().map(|&i| object(i)).collect();
        set.extend(set.clone()); // repeats count once
        let exclude: Vec<Glob> = skip.iter().map(|s| Glob::new(&format!("T{s}"))).collect();
        let m = merged_paths(&a.graph, &a.dom, &set, &exclude, &Progress::new()).unwrap();
        let want = brute(&h, &targets, skip);
        let got = spelled(&a, &m, &node_of);
        if want.is_empty() {
            // No target is reachable: the tree is the top alone.
            prop_assert_eq!(m.nodes.len(), 1);
            prop_assert_eq!(m.reachable(), 0);
        } else {
            prop_assert_eq!(got, want);
        }
        let oracle = Oracle::new(&h);
        let reachable = targets.iter().filter(|&&t| oracle.reachable[t]).count() as u64;
        prop_assert_eq!(m.targets, targets.len() as u64);
        prop_assert_eq!(m.unreachable, targets.len() as u64 - reachable);
    }
}

#[test]
fn weak_references_and_weak_roots_are_not_paths() {
    // 1 is rooted strongly; 2 only by a weak root; 4 is reached from 1
    // and, closer, from 2. Its path goes through 1.
    let text = "t 1 A\nt 2 B\n\
                o 1 1 10 3\no 2 1 10 4\no 3 2 10 4\no 4 2 5\n\
                r 1 4 0\nr 2 1 2\n";
    let a = analyse_bytes(text.as_bytes());
    let four = ix(a.dump(), "4");
    let m = merged_paths(&a.graph, &a.dom, &[four], &[], &Progress::new()).unwrap();
    let names: Vec<String> = m
        .path_of(m.nodes.len() as u32 - 1)
        .into_iter()
        .map(|s| s.name(a.dump()))
        .collect();
    assert_eq!(names, ["roots: static variable", "A", "B", "B"]);
    assert_eq!((m.reachable(), m.nodes[0].retained_bytes), (1, 5));
}

#[test]
fn a_path_is_the_same_path_in_another_dump_whatever_its_types_numbers() {
    use heaptui_core::analysis::{path_ids, PathFigures};
    // One heap, its types defined in two orders (so their indices differ)
    // and one more leaf in the second dump.
    let first = "t 1 Cache\nt 2 Entry\nt 3 Leaf\n\
                 o 1 1 10 2\no 2 2 10 3 4\no 3 3 5\no 4 3 5\nr 1 4 0\n";
    let second = "t 3 Leaf\nt 2 Entry\nt 1 Cache\n\
                  o 1 1 10 2\no 2 2 10 3 4 5\no 3 3 5\no 4 3 5\no 5 3 5\nr 1 4 0\n";
    let paths = |text: &str| {
        let a = analyse_bytes(text.as_bytes());
        let leaves = heaptui_core::analysis::objects_of_types(a.dump(), &Glob::new("Leaf"));
        let m = merged_paths(&a.graph, &a.dom, &leaves, &[], &Progress::new()).unwrap();
        let ids = path_ids(&m, a.dump());
        let leaf = ids[m.nodes.len() - 1];
        (PathFigures::of(&m, a.dump()), leaf, ids.len())
    };
    let (old, old_leaf, n) = paths(first);
    let (new, new_leaf, m) = paths(second);
    assert_eq!((n, m), (5, 5), "all, root kind, Cache, Entry, Leaf");
    assert_eq!(old_leaf, new_leaf);
    assert_eq!((old.objects(old_leaf), new.objects(new_leaf)), (2, 3));
    let mut a: Vec<u64> = old.by_path.keys().copied().collect();
    let mut b: Vec<u64> = new.by_path.keys().copied().collect();
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b);
    assert_eq!(new.objects(12345), 0, "a path not there counts 0");
}
