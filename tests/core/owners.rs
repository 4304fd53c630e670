//! Duplicate waste by owner (docs/duplicates.md, "Who holds the copies"),
//! against an oracle that recomputes everything from the graph itself: the
//! sets by the literal pairing definition (duplicates.rs's oracle), the
//! immediate dominators by definition (removing the dominator hides the
//! object from the strong roots), and the owners by walking those up past
//! excluded types.

use std::collections::{BTreeMap, HashSet};

use heaptui_core::analysis::Glob;
use heaptui_core::analysis::{duplicate_owners, owner_copies};
use heaptui_core::graph::HeapGraph;
use heaptui_core::model::ObjectIdx;
use heaptui_core::testing::owners_in_passes;
use proptest::prelude::*;

use super::duplicates::{all, analyse, copies_text, heap_text, Oracle};

/// An owner as comparable data: (path names, anchored) → (bytes, copies,
/// instances, per set (its first member's id) its copies, the id of the
/// owner object charged most).
type OwnerView =
    BTreeMap<(Vec<String>, bool), (u64, u64, u64, BTreeMap<String, u64>, Option<String>)>;

/// Immediate dominators by definition: the strict dominators of `b` are
/// the objects whose removal hides `b`; the immediate one is the one every
/// other strict dominator dominates. `None`: held by the roots directly.
fn idoms(g: &HeapGraph) -> Vec<Option<u32>> {
    let n = g.objects();
    let reachable = Oracle::bfs(g, &HashSet::new());
    let hides: Vec<Vec<bool>> = (0..n as u32)
        .map(|a| {
            let seen = Oracle::bfs(g, &HashSet::from([a]));
            (0..n)
                .map(|b| reachable[b] && b != a as usize && !seen[b])
                .collect()
        })
        .collect();
    (0..n)
        .map(|b| {
            let strict: Vec<u32> = (0..n as u32).filter(|&a| hides[a as usize][b]).collect();
            let closest: Vec<u32> = strict
                .iter()
                .copied()
                .filter(|&d| {
                    strict
                        .iter()
                        .all(|&a| a == d || hides[a as usize][d as usize])
                })
                .collect();
            assert!(closest.len() <= 1);
            closest.first().copied()
        })
        .collect()
}

fn oracle_owners(g: &HeapGraph, exclude: &[&str]) -> OwnerView {
    let dump = &g.dump;
    let idom = idoms(g);
    let name = |o: u32| dump.type_name(ObjectIdx(o)).to_string();
    let excluded = |o: u32| exclude.iter().any(|p| Glob::new(p).matches(&name(o)));
    let mut out = OwnerView::new();
    // Per owner, the bytes charged to each owner object.
    let mut anchors: BTreeMap<(Vec<String>, bool), BTreeMap<u32, u64>> = BTreeMap::new();
    // Text dumps hold no values: only sets of copies with references are
    // verified (docs/duplicates.md).
    for set in Oracle::new(g).sets().into_iter().filter(|s| !s.4) {
        let members: Vec<u32> = set
            .0
            .iter()
            .map(|hex| {
                dump.index_of(u64::from_str_radix(hex, 16).unwrap())
                    .unwrap()
                    .raw()
            })
            .collect();
        for &m in &members[1..] {
            let (path, anchored, anchor) = match idom[m as usize] {
                None => (Vec::new(), false, None),
                Some(d0) => {
                    let mut chain = vec![d0];
                    while excluded(*chain.last().unwrap()) {
                        match idom[*chain.last().unwrap() as usize] {
                            Some(up) => chain.push(up),
                            None => break,
                        }
                    }
                    let top = *chain.last().unwrap();
                    // Top down; a type met again goes back to where it was
                    // first met.
                    let mut path: Vec<String> = Vec::new();
                    for o in chain.iter().rev() {
                        let n = name(*o);
                        match path.iter().position(|p| *p == n) {
                            Some(i) => path.truncate(i + 1),
                            None => path.push(n),
                        }
                    }
                    (path, !excluded(top), Some(top))
                }
            };
            let key = (path, anchored);
            let e = out.entry(key.clone()).or_default();
            e.0 += set.1;
            e.1 += 1;
            *e.3.entry(set.0[0].clone()).or_default() += 1;
            if let Some(a) = anchor {
                *anchors.entry(key).or_default().entry(a).or_default() += set.1;
            }
        }
    }
    for (key, a) in anchors {
        let e = out.get_mut(&key).unwrap();
        e.2 = a.len() as u64;
        // The most bytes, the lowest index on a tie.
        let top = a.iter().max_by_key(|&(&o, &b)| (b, std::cmp::Reverse(o)));
        e.4 = top.map(|(&o, _)| dump.id_hex(ObjectIdx(o)));
    }
    out
}

fn check(text: &str, exclude: &[&str]) -> Result<(), TestCaseError> {
    let (g, dom, dups) = analyse(text, &all());
    let globs: Vec<Glob> = exclude.iter().map(|p| Glob::new(p)).collect();
    let owners = duplicate_owners(&g.dump, &dom, &dups, &globs);
    // Owner objects counted an owner a pass, or two copies' worth, are
    // counted the same.
    for per_pass in [1, 2] {
        let passes = owners_in_passes(&g.dump, &dom, &dups, &globs, per_pass);
        prop_assert_eq!(&passes, &owners, "{} copies a pass", per_pass);
    }
    let mut got = OwnerView::new();
    for o in &owners.owners {
        let path: Vec<String> = o
            .path
            .iter()
            .map(|t| g.dump.type_names[t.index()].to_string())
            .collect();
        let sets = o
            .sets
            .iter()
            .map(|s| {
                let first = dups.members(s.set)[0];
                (g.dump.id_hex(ObjectIdx(first)), u64::from(s.copies))
            })
            .collect();
        let top = o.top_instance.map(|t| g.dump.id_hex(t));
        let prev = got.insert(
            (path, o.anchored),
            (o.bytes, o.copies, o.instances, sets, top),
        );
        prop_assert!(prev.is_none(), "one owner per path");
        prop_assert!(o.sets.iter().map(|s| s.bytes(&dups)).sum::<u64>() == o.bytes);
    }
    // Each owner's copies (what its what-if cuts) are its count, and no
    // copy is charged to two owners.
    let mut charged = HashSet::new();
    let set_of: BTreeMap<u32, u32> = (0..dups.sets.len() as u32)
        .flat_map(|i| dups.members(i).iter().map(move |&m| (m, i)))
        .collect();
    for o in &owners.owners {
        let copies = owner_copies(&g.dump, &dom, &dups, &globs, o);
        prop_assert_eq!(copies.len() as u64, o.copies);
        let mut per_set: BTreeMap<u32, u64> = BTreeMap::new();
        for c in copies {
            prop_assert!(charged.insert(c), "one owner per copy");
            *per_set.entry(set_of[&c.0]).or_default() += 1;
        }
        let want: BTreeMap<u32, u64> = o
            .sets
            .iter()
            .map(|s| (s.set, u64::from(s.copies)))
            .collect();
        prop_assert_eq!(per_set, want);
    }
    prop_assert_eq!(owners.bytes, dups.all_totals().bytes, "the headline");
    for w in owners.owners.windows(2) {
        prop_assert!(w[0].bytes >= w[1].bytes, "by bytes");
    }
    prop_assert_eq!(got, oracle_owners(&g, exclude));
    Ok(())
}

const EXCLUDES: [&[&str]; 5] = [&[], &["T0"], &["T1"], &["T*"], &["T0", "Pool", "Stray"]];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn owners_agree_with_the_definition(text in heap_text(), e in 0..EXCLUDES.len()) {
        check(&text, EXCLUDES[e])?;
    }

    #[test]
    fn owners_agree_with_the_definition_on_copies(text in copies_text(), e in 0..EXCLUDES.len()) {
        check(&text, EXCLUDES[e])?;
    }
}

/// Nested sets: a cache holding two equal lists of equal items. Every
/// extra copy (the second list, its array, the items) is charged once, to
/// the row of its own immediate dominator under the cache: the list to
/// `App.Cache`, its array to `App.Cache / ArrayList`, the items to
/// `App.Cache / ArrayList / Object[]`.
#[test]
fn nested_sets_are_charged_once_each() {
    let text =
        "t 1 App.Cache\nt 2 System.Collections.ArrayList\nt 3 System.Object[]\nt 4 App.Item\n\
                o 1 1 10 2 3\n\
                o 2 2 20 4\no 3 2 20 5\n\
                o 4 3 30 6 7\no 5 3 30 8 9\n\
                o 6 4 8 a\no 7 4 8 b\no 8 4 8 c\no 9 4 8 d\n\
                o a 4 4\no b 4 4\no c 4 4\no d 4 4\n\
                r 1 1 0\n";
    let (g, dom, dups) = analyse(text, &all());
    let owners = duplicate_owners(&g.dump, &dom, &dups, &[Glob::new("System.*")]);
    let rows: Vec<(String, u64, u64)> = owners
        .owners
        .iter()
        .map(|o| {
            assert!(o.anchored);
            assert_eq!(o.instances, 1);
            assert_eq!(o.top_instance, g.dump.index_of(1));
            (
                heaptui_core::analysis::Owners::path_text(&g.dump, o),
                o.bytes,
                o.copies,
            )
        })
        .collect();
    // The leaves are lone objects, unverified without values: left out.
    assert_eq!(
        rows,
        vec![
            // Sizes are hex in the text format: 0x30, 0x20, 3 × 8.
            (
                "App.Cache / System.Collections.ArrayList".to_string(),
                0x30,
                1
            ),
            ("App.Cache".to_string(), 0x20, 1),
            (
                "App.Cache / System.Collections.ArrayList / System.Object[]".to_string(),
                24,
                3
            ),
        ]
    );
    assert_eq!(owners.bytes, dups.all_totals().bytes);
}

/// A long chain of excluded dominators, each holding one copy, walked from
/// the bottom up (the deepest copy first): every walk stops at the first
/// dominator an earlier walk met, so the walks resolve each dominator once
/// (linear in the chain, not quadratic), and all copies go to the chain's
/// one owner.
#[test]
fn a_long_chain_is_walked_once() {
    let k = 3000u32;
    let mut text = String::from("t 1 App.Root\nt 2 System.Node\nt 3 App.Item\nt 4 App.Leaf\n");
    text.push_str(&format!("o 1 1 10 {:x}\n", 0x10000));
    // The copies first, deepest first, so that they are walked in that order.
    for i in (0..k).rev() {
        text.push_str(&format!("o {:x} 3 8 2\n", 0x40000 + (k - 1 - i)));
    }
    for i in 0..k {
        let node = 0x10000 + i;
        let copy = 0x40000 + (k - 1 - i);
        match i + 1 < k {
            true => text.push_str(&format!("o {node:x} 2 18 {:x} {copy:x}\n", node + 1)),
            false => text.push_str(&format!("o {node:x} 2 18 {copy:x}\n")),
        }
    }
    text.push_str("o 2 4 4\nr 1 1 0\nr 2 1 0\n");
    let (g, dom, dups) = analyse(&text, &all());
    let globs = [Glob::new("System.*")];
    let owners = duplicate_owners(&g.dump, &dom, &dups, &globs);
    assert_eq!(owners.owners.len(), 1);
    let o = &owners.owners[0];
    assert_eq!(
        heaptui_core::analysis::Owners::path_text(&g.dump, o),
        "App.Root / System.Node"
    );
    assert_eq!(
        (o.copies, o.bytes, o.instances),
        (k as u64 - 1, 8 * (k as u64 - 1), 1)
    );
    assert_eq!(o.top_instance, g.dump.index_of(1));
    assert_eq!(
        owner_copies(&g.dump, &dom, &dups, &globs, o).len() as u64,
        o.copies
    );
    let steps = heaptui_core::testing::owner_walk_steps(&g.dump, &dom, &dups, &globs);
    // What the walks resolve, linear in the chain. The first walk (from
    // the second deepest copy's node; the deepest copy is the set's first
    // member, not an extra copy) resolves the chain's nodes and the root
    // above them, at most `k + 1` dominators, and memoises the joins on
    // its way back. A later walk stops at its start, a memoised join,
    // unless the start lies within `near` steps of the stop (the root):
    // joins there are not memoised. One copy hangs from each node, so
    // `near` walks start there, and each resolves at most `near` nodes
    // and the stop, `near_walk` dominators. (Here k + 14 exactly: the
    // near walks resolve 5 + 4 + 3 + 2.) Unmemoised walks would resolve
    // about k * k / 2.
    let near = heaptui_core::testing::OWNER_WALK_NEAR_STOP as u64;
    let near_walk = near + 1;
    assert!(
        steps <= k as u64 + 1 + near * near_walk,
        "{steps} dominators resolved for {k}"
    );
    assert!(steps >= k as u64 - 1, "the walks met the chain: {steps}");
}
