//! Duplicate instances (docs/duplicates.md): the seed's examples and the tricky cases
//! as fixtures with exact answers, and property tests against an oracle that
//! applies the definitions literally (pairwise synchronized traversal,
//! reachability unions, BFS from the strong roots with the holder removed).

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::path::Path;

use heaptui_core::graph::duplicates::{
    detect_type, find_duplicates, DuplicateMode, DuplicateOptions, Duplicates,
};
use heaptui_core::graph::{DominatorTree, HeapGraph};
use heaptui_core::model::ObjectIdx;
use heaptui_core::model::{Format, Labels, Model, ValueKind, Values};
use heaptui_core::progress::Progress;
use heaptui_core::testing::parse_text;
use proptest::prelude::*;

pub(crate) fn analyse(
    text: &str,
    options: &DuplicateOptions,
) -> (HeapGraph, DominatorTree, Duplicates) {
    let dump = parse_text(Path::new("t.txt"), text.as_bytes()).expect("parses");
    analyse_model(dump, options)
}

fn analyse_model(
    dump: Model,
    options: &DuplicateOptions,
) -> (HeapGraph, DominatorTree, Duplicates) {
    let graph = HeapGraph::build(dump);
    let dom = DominatorTree::compute(&graph, &Progress::new()).unwrap();
    let dups = find_duplicates(&graph, &dom, options, &Progress::new()).unwrap();
    (graph, dom, dups)
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(name),
    )
    .unwrap()
}

/// A set as comparable data: (hex member ids, instance bytes, objects per
/// copy, additional bytes, trivial, held_by, holding_set).
pub(crate) type SetView = (Vec<String>, u64, u64, u64, bool, Vec<u32>, Option<u32>);

fn view(graph: &HeapGraph, dups: &Duplicates) -> Vec<SetView> {
    assert_eq!(dups.member_lists().len(), dups.sets.len(), "a list a set");
    dups.numbered()
        .map(|(i, s)| {
            for &m in dups.members(i) {
                assert_eq!(dups.set_of(m), Some(i), "set_of agrees with members");
            }
            (
                dups.members(i)
                    .iter()
                    .map(|&m| graph.dump.id_hex(ObjectIdx(m)))
                    .collect(),
                s.instance_bytes,
                s.objects_per_copy,
                s.additional_bytes,
                s.trivial(),
                dups.held_by(i).to_vec(),
                s.holding_set(),
            )
        })
        .collect()
}

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

pub(crate) fn all() -> DuplicateOptions {
    DuplicateOptions::default()
}

#[test]
fn seed_pairing_example_is_a_duplicate_with_its_parts() {
    let (g, _, d) = analyse(&fixture("dup_seed_pairing.txt"), &all());
    assert_eq!(
        view(&g, &d),
        vec![
            (
                ids(&["1", "2"]),
                0x20,
                3,
                0x20 + 0x18 + 0x10,
                false,
                vec![],
                None
            ),
            (ids(&["3", "5"]), 0x18, 1, 0x18, true, vec![0], Some(0)),
            (ids(&["4", "6"]), 0x10, 1, 0x10, true, vec![0], Some(0)),
        ]
    );
}

#[test]
fn seed_shared_child_pairs_with_itself() {
    let (g, _, d) = analyse(&fixture("dup_seed_shared.txt"), &all());
    assert_eq!(
        view(&g, &d),
        vec![
            // #4 is shared: not additional, nor part of a copy.
            (ids(&["1", "2"]), 0x20, 2, 0x20 + 0x18, false, vec![], None),
            (ids(&["3", "5"]), 0x18, 1, 0x18, true, vec![0], Some(0)),
        ]
    );
}

#[test]
fn seed_back_reference_is_not_a_duplicate() {
    let (_, _, d) = analyse(&fixture("dup_seed_backref.txt"), &all());
    assert!(d.sets.is_empty(), "{:?}", d.sets);
    assert!(d.possible.is_empty());
}

#[test]
fn seed_additional_bytes_are_the_merged_graphs_leftovers() {
    let (g, _, d) = analyse(&fixture("dup_seed_additional.txt"), &all());
    // #2, #3, #5, #6, #8 are the additional instances: the total counts
    // them once although the first set's copies hold the others' copies.
    assert_eq!(d.total_additional_bytes(), 2 * 0x20 + 2 * 0x18 + 0x10);
    assert_eq!(
        view(&g, &d),
        vec![
            (
                ids(&["1", "2", "3"]),
                0x20,
                3,
                2 * 0x20 + 2 * 0x18 + 0x10,
                false,
                vec![],
                None
            ),
            (
                ids(&["4", "5", "6"]),
                0x18,
                1,
                2 * 0x18,
                true,
                vec![0],
                Some(0)
            ),
            (ids(&["7", "8"]), 0x10, 1, 0x10, true, vec![0], Some(0)),
        ]
    );
}

#[test]
fn seed_held_duplicates() {
    let (g, _, d) = analyse(&fixture("dup_seed_held.txt"), &all());
    assert_eq!(
        view(&g, &d),
        vec![
            (ids(&["1", "2", "3"]), 0x20, 3, 0x80, false, vec![], None),
            (ids(&["4", "5", "6"]), 0x18, 1, 0x30, true, vec![0], Some(0)),
            // #8 is reachable from #9 without passing #1, #2 or #3.
            (ids(&["7", "8"]), 0x10, 1, 0x10, true, vec![], None),
        ]
    );
}

#[test]
fn held_collectively_by_two_members_of_the_holder() {
    // c1 is reachable only through b1 or b2 (neither dominates it), c3
    // through b3 or b4: {c1, c3} is held by {b1, b2, b3, b4} as a whole.
    let (g, _, d) = analyse(&fixture("dup_held_collective.txt"), &all());
    assert_eq!(
        view(&g, &d),
        vec![
            (
                ids(&["b1", "b2", "b3", "b4"]),
                0x18,
                // Four objects added by three copies (c1 and c3 are
                // each shared by two of them).
                1,
                3 * 0x18 + 0x10,
                false,
                vec![],
                None
            ),
            (ids(&["c1", "c3"]), 0x10, 1, 0x10, true, vec![0], Some(0)),
        ]
    );
}

#[test]
fn aliasing_is_not_a_duplicate_of_two_copies() {
    let (g, _, d) = analyse(&fixture("dup_aliasing.txt"), &all());
    assert_eq!(
        view(&g, &d),
        vec![(ids(&["b0", "b1", "b2"]), 0x10, 1, 0x20, true, vec![], None)]
    );
}

#[test]
fn self_loop_two_cycle_and_three_cycle() {
    let (g, _, d) = analyse(&fixture("dup_cycles.txt"), &all());
    assert_eq!(
        view(&g, &d),
        vec![
            // Each member reaches the others: a copy adds nothing.
            (ids(&["20", "21"]), 0x10, 0, 0, false, vec![], None),
            (ids(&["30", "31", "32"]), 0x10, 0, 0, false, vec![], None),
        ]
    );
}

#[test]
fn duplicates_across_app_domains_match_by_type_name() {
    let (g, _, d) = analyse(&fixture("dup_appdomains.txt"), &all());
    assert_eq!(
        view(&g, &d),
        vec![
            (ids(&["100", "200"]), 0x20, 2, 0x38, false, vec![], None),
            (ids(&["101", "201"]), 0x18, 1, 0x18, true, vec![0], Some(0)),
        ]
    );
}

#[test]
fn unreachable_objects_take_no_part() {
    let (g, _, d) = analyse(&fixture("dup_unreachable.txt"), &all());
    assert_eq!(
        view(&g, &d),
        vec![
            (ids(&["80", "81"]), 0x18, 2, 0x20, false, vec![], None),
            (ids(&["83", "84"]), 0x8, 1, 0x8, true, vec![0], Some(0)),
        ]
    );
}

#[test]
fn modes_none_and_trivial() {
    let text = fixture("dup_seed_additional.txt");
    let none = DuplicateOptions {
        mode: DuplicateMode::None,
        budget_per_type: None,
    };
    let (_, _, d) = analyse(&text, &none);
    assert!(d.sets.is_empty() && d.possible.is_empty());
    let trivial = DuplicateOptions {
        mode: DuplicateMode::Trivial,
        budget_per_type: None,
    };
    let (g, dom, d) = analyse(&text, &trivial);
    assert_eq!(d.sets.len(), 2);
    assert!(d.sets.iter().all(|s| s.trivial()));
    assert_eq!(d.possible.len(), 1);
    assert_eq!(d.possible[0].instances.len(), 3);
    // Finishing the possible type gives the full answer.
    let t = d.possible[0].type_index;
    let done = detect_type(&g, &dom, &d, t, &Progress::new()).unwrap();
    let (_, _, full) = analyse(&text, &all());
    assert_eq!(view(&g, &done), view(&g, &full));
    assert!(done.possible.is_empty());
}

#[test]
fn detect_type_in_mode_none_detects_only_that_type() {
    let text = fixture("dup_seed_held.txt");
    let none = DuplicateOptions {
        mode: DuplicateMode::None,
        budget_per_type: None,
    };
    let (g, dom, d) = analyse(&text, &none);
    let list = (0..g.dump.type_names.len() as u32)
        .find(|&t| g.dump.type_names[t as usize].as_ref() == "Example.List")
        .unwrap();
    let done = detect_type(&g, &dom, &d, list, &Progress::new()).unwrap();
    assert_eq!(
        view(&g, &done),
        vec![(ids(&["1", "2", "3"]), 0x20, 3, 0x80, false, vec![], None)]
    );
    assert_eq!(done.finished_types, vec![list]);
}

#[test]
fn budget_leaves_possible_duplicates_that_detect_type_finishes() {
    let text = fixture("dup_seed_held.txt");
    let tight = DuplicateOptions {
        mode: DuplicateMode::All,
        budget_per_type: Some(1),
    };
    let (g, dom, d) = analyse(&text, &tight);
    assert_eq!(d.possible.len(), 1);
    assert_eq!(
        g.dump.type_names[d.possible[0].type_index as usize].as_ref(),
        "Example.List"
    );
    let done = detect_type(&g, &dom, &d, d.possible[0].type_index, &Progress::new()).unwrap();
    let (_, _, full) = analyse(&text, &all());
    assert_eq!(view(&g, &done), view(&g, &full));
}

#[test]
fn report_json_duplicates_array_is_the_spec_contract() {
    let out = heaptui_testkit::common::heaptui()
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"))
        .args(["report", "dup_seed_held.txt", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["duplicates"],
        serde_json::json!([
            {"set": 0, "type": "Example.List", "instances": 3, "instance_bytes": 32,
             "objects_per_copy": 3, "additional_bytes": 128, "trivial": false,
             "unverified": false, "held_by": [], "holding_set": null, "members": ["1", "2", "3"]},
            {"set": 1, "type": "Example.Array", "instances": 3, "instance_bytes": 24,
             "objects_per_copy": 1, "additional_bytes": 48, "trivial": true,
             "unverified": true, "held_by": [0], "holding_set": 0, "members": ["4", "5", "6"]},
            {"set": 2, "type": "Example.Leaf", "instances": 2, "instance_bytes": 16,
             "objects_per_copy": 1, "additional_bytes": 16, "trivial": true,
             "unverified": true, "held_by": [], "holding_set": null, "members": ["7", "8"]}
        ])
    );
    // The trivial mode through the binary, with members from two sections.
    let out = heaptui_testkit::common::heaptui()
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"))
        .args([
            "report",
            "dup_appdomains.txt",
            "--json",
            "--duplicates",
            "trivial",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["duplicates"].as_array().unwrap().len(), 1);
    assert_eq!(
        v["duplicates"][0]["members"],
        serde_json::json!(["101", "201"])
    );
}

#[test]
fn members_are_sorted_by_object_id_not_file_order() {
    let text = "t 1 Leaf\no ff 1 8\no 10 1 8\no 80 1 8\nr ff 1 0\nr 10 1 0\nr 80 1 0\n";
    let (g, _, d) = analyse(text, &all());
    assert_eq!(view(&g, &d)[0].0, ids(&["10", "80", "ff"]));
}

// ---------------------------------------------------------------------------
// The oracle: the definitions of docs/duplicates.md, applied literally.

pub(crate) struct Oracle<'a> {
    g: &'a HeapGraph,
    reachable: Vec<bool>,
}

impl<'a> Oracle<'a> {
    pub(crate) fn new(g: &'a HeapGraph) -> Self {
        let reachable = Self::bfs(g, &HashSet::new());
        Oracle { g, reachable }
    }

    /// Objects reachable from the strong roots without entering `removed`.
    pub(crate) fn bfs(g: &HeapGraph, removed: &HashSet<u32>) -> Vec<bool> {
        let mut seen = vec![false; g.objects()];
        let mut queue: VecDeque<u32> = VecDeque::new();
        for r in &g.dump.roots {
            if r.is_strong() && !removed.contains(&r.object.raw()) && !seen[r.object.index()] {
                seen[r.object.index()] = true;
                queue.push_back(r.object.raw());
            }
        }
        while let Some(x) = queue.pop_front() {
            for c in g.refs(ObjectIdx(x)) {
                if !removed.contains(&c.raw()) && !seen[c.index()] {
                    seen[c.index()] = true;
                    queue.push_back(c.raw());
                }
            }
        }
        seen
    }

    /// Whether the reference at `edge`, to `target`, is a type descriptor
    /// (docs/duplicates.md): HPROF's `<class>`, V8's `__proto__`, and V8's
    /// `map` where it points at a hidden class.
    fn is_descriptor(&self, start: usize, edge: usize, target: ObjectIdx) -> bool {
        let d = &self.g.dump;
        let Some(heaptui_core::model::Label::Name(name)) =
            d.labels.as_ref().and_then(|l| l.get(start, edge))
        else {
            return false;
        };
        match d.format {
            Format::Hprof => name == "<class>",
            Format::Heapsnapshot => {
                name == "__proto__"
                    || (name == "map"
                        && matches!(d.type_name(target), "(object shape)" | "(hidden)"))
            }
            _ => false,
        }
    }

    /// The references of `o` as (position, target, is a descriptor).
    fn refs_of(&self, o: u32) -> Vec<(usize, ObjectIdx, bool)> {
        let d = &self.g.dump;
        let start = d.refs.offset(o as usize) as usize;
        self.g
            .refs(ObjectIdx(o))
            .iter()
            .enumerate()
            .map(|(i, t)| (start + i, t, self.is_descriptor(start, start + i, t)))
            .collect()
    }

    /// The references walked (descriptors are not).
    fn walked(&self, o: u32) -> Vec<u32> {
        self.refs_of(o)
            .into_iter()
            .filter(|r| !r.2)
            .map(|r| r.1.raw())
            .collect()
    }

    /// Type, size, reference count, and where the dump has them the value
    /// (bytes and kind; an unknown value is the object itself) and the
    /// labels of the references (docs/duplicates.md); the type descriptors, as
    /// themselves; the references counted and labelled are the walked ones.
    #[allow(clippy::type_complexity)]
    fn label(
        &self,
        o: u32,
    ) -> (
        &str,
        u64,
        usize,
        Option<(&[u8], ValueKind)>,
        Option<u32>,
        Vec<String>,
        Vec<u32>,
    ) {
        let d = &self.g.dump;
        let refs = self.refs_of(o);
        let start = d.refs.offset(o as usize) as usize;
        let labels = match &d.labels {
            Some(l) => refs
                .iter()
                .filter(|r| !r.2)
                .map(|r| format!("{:?}", l.get(start, r.0)))
                .collect(),
            None => Vec::new(),
        };
        let value = d.values.as_ref().and_then(|v| v.get(ObjectIdx(o)));
        let unknown = matches!(value, Some((_, ValueKind::Unknown))).then_some(o);
        (
            d.type_name(ObjectIdx(o)),
            d.sizes.get(o as usize),
            refs.iter().filter(|r| !r.2).count(),
            value,
            unknown,
            labels,
            refs.iter().filter(|r| r.2).map(|r| r.1.raw()).collect(),
        )
    }

    /// Pair a with b, then the i-th walked references of every pair;
    /// one-to-one in both directions with equal labels at every pair.
    fn duplicates(&self, a: u32, b: u32) -> bool {
        let mut fwd: HashMap<u32, u32> = HashMap::new();
        let mut bwd: HashMap<u32, u32> = HashMap::new();
        let mut queue = VecDeque::from([(a, b)]);
        while let Some((x, y)) = queue.pop_front() {
            match (fwd.get(&x), bwd.get(&y)) {
                (Some(&fy), _) if fy != y => return false,
                (_, Some(&bx)) if bx != x => return false,
                (Some(_), Some(_)) => continue,
                _ => {}
            }
            if self.label(x) != self.label(y) {
                return false;
            }
            fwd.insert(x, y);
            bwd.insert(y, x);
            for (cx, cy) in self.walked(x).into_iter().zip(self.walked(y)) {
                queue.push_back((cx, cy));
            }
        }
        true
    }

    fn reach(&self, from: &[u32]) -> BTreeSet<u32> {
        let mut seen: BTreeSet<u32> = from.iter().copied().collect();
        let mut stack: Vec<u32> = from.to_vec();
        while let Some(x) = stack.pop() {
            for c in self.walked(x) {
                if seen.insert(c) {
                    stack.push(c);
                }
            }
        }
        seen
    }

    fn bytes(&self, set: &BTreeSet<u32>) -> u64 {
        set.iter().map(|&o| self.g.dump.sizes.get(o as usize)).sum()
    }

    pub(crate) fn sets(&self) -> Vec<SetView> {
        let dump = &self.g.dump;
        let objects: Vec<u32> = (0..self.g.objects() as u32)
            .filter(|&o| self.reachable[o as usize])
            .collect();
        // Every pair, both ways; then check it is an equivalence.
        let mut classes: Vec<Vec<u32>> = Vec::new();
        for &o in &objects {
            let partners: Vec<u32> = objects
                .iter()
                .copied()
                .filter(|&p| p != o && self.duplicates(o, p))
                .collect();
            for &p in &partners {
                assert!(self.duplicates(p, o), "symmetric");
            }
            if let Some(c) = classes.iter_mut().find(|c| partners.contains(&c[0])) {
                c.push(o);
            } else if !partners.is_empty() {
                classes.push(vec![o]);
            }
        }
        for c in &classes {
            for &x in c {
                for &y in c {
                    assert!(x == y || self.duplicates(x, y), "transitive");
                }
            }
        }
        let mut sets: Vec<(Vec<u32>, u64, u64)> = classes
            .into_iter()
            .map(|mut c| {
                c.sort_by_key(|&m| dump.ids.get(m as usize));
                let all = self.reach(&c);
                let one = self.reach(&c[..1]);
                let additional = self.bytes(&all) - self.bytes(&one);
                for &m in &c {
                    assert_eq!(self.bytes(&self.reach(&[m])), self.bytes(&one));
                }
                // Objects per copy: what the other members add, per member.
                let copies = c.len() as u64 - 1;
                let objects = (all.len() - one.len()) as u64;
                let per_copy = (objects + copies / 2) / copies;
                (c, additional, per_copy)
            })
            .collect();
        sets.sort_by(|a, b| {
            b.1.cmp(&a.1).then(
                dump.ids
                    .get(a.0[0] as usize)
                    .cmp(&dump.ids.get(b.0[0] as usize)),
            )
        });
        // held[s] = every h whose members' removal hides all members of s.
        let held: Vec<Vec<u32>> = sets
            .iter()
            .enumerate()
            .map(|(s, (members, _, _))| {
                (0..sets.len() as u32)
                    .filter(|&h| h as usize != s)
                    .filter(|&h| {
                        let removed: HashSet<u32> = sets[h as usize].0.iter().copied().collect();
                        let seen = Self::bfs(self.g, &removed);
                        members.iter().all(|&m| !seen[m as usize])
                    })
                    .collect()
            })
            .collect();
        sets.iter()
            .enumerate()
            .map(|(s, (members, additional, per_copy))| {
                let holders = &held[s];
                // Not held by another holder; ties: most additional bytes,
                // then lowest id.
                let holding = holders
                    .iter()
                    .copied()
                    .filter(|&h| !holders.iter().any(|g| held[h as usize].contains(g)))
                    .min_by(|&a, &b| sets[b as usize].1.cmp(&sets[a as usize].1).then(a.cmp(&b)));
                // Direct holders: those holding no other holder.
                let direct = holders
                    .iter()
                    .copied()
                    .filter(|&h| {
                        !holders
                            .iter()
                            .any(|&g| g != h && held[g as usize].contains(&h))
                    })
                    .collect();
                let m0 = members[0];
                (
                    members.iter().map(|&m| dump.id_hex(ObjectIdx(m))).collect(),
                    dump.sizes.get(m0 as usize),
                    *per_copy,
                    *additional,
                    self.walked(m0).is_empty(),
                    direct,
                    holding,
                )
            })
            .collect()
    }
}

#[test]
fn oracle_agrees_with_fixtures_on_the_seed_cases() {
    for name in [
        "dup_seed_pairing.txt",
        "dup_seed_shared.txt",
        "dup_seed_backref.txt",
        "dup_seed_additional.txt",
        "dup_seed_held.txt",
        "dup_aliasing.txt",
        "dup_cycles.txt",
        "dup_appdomains.txt",
        "dup_unreachable.txt",
        "dup_held_collective.txt",
    ] {
        let (g, _, d) = analyse(&fixture(name), &all());
        assert_eq!(view(&g, &d), Oracle::new(&g).sets(), "{name}");
    }
}

/// A random heap as dump text: few types and sizes so that duplicates are
/// common; sharing, cycles, self-loops and back-references arise from
/// random targets; strong and weak roots; the rest is garbage.
/// One case in five has up to 40 objects and no reference at all (a
/// super-root with many leaf children, where every set is trivial).
pub(crate) fn heap_text() -> impl Strategy<Value = String> {
    prop_oneof![4 => (2usize..14, Just(4usize)), 1 => (1usize..40, Just(0usize))].prop_flat_map(
        |(n, max_refs)| {
            let object = (
                0u8..3,
                prop_oneof![Just(8u8), Just(8), Just(16)],
                prop::collection::vec(0..n, 0..max_refs.max(1)),
            );
            (
                prop::collection::vec(object, n),
                prop::collection::vec((0..n, any::<bool>()), 1..4),
                any::<bool>(),
            )
                .prop_map(|(objects, roots, two_domains)| {
                    let mut s = String::new();
                    let half = objects.len() / 2;
                    for (i, (t, size, refs)) in objects.iter().enumerate() {
                        if i == 0 || (two_domains && i == half) {
                            if i > 0 {
                                s.push_str("c D0\n");
                            }
                            // The second section maps ids to names differently.
                            s.push_str(&format!("a 1 D{i}\n"));
                            let shift = if i == 0 { 0 } else { 1 };
                            for k in 0..3u8 {
                                s.push_str(&format!("t {:x} T{}\n", (k + shift) % 3, k));
                            }
                        }
                        let shift = if two_domains && i >= half { 1 } else { 0 };
                        s.push_str(&format!(
                            "o {:x} {:x} {:x}",
                            0x100 + i,
                            (t + shift) % 3,
                            size
                        ));
                        for r in refs {
                            s.push_str(&format!(" {:x}", 0x100 + r));
                        }
                        s.push('\n');
                    }
                    for (o, weak) in roots {
                        s.push_str(&format!(
                            "r {:x} 1 {}\n",
                            0x100 + o,
                            if weak { 2 } else { 0 }
                        ));
                    }
                    s
                })
        },
    )
}

/// Where a reference of a template node points.
#[derive(Debug, Clone)]
enum Target {
    /// Node j of the same copy.
    Own(usize),
    /// Node j of copy c (a cross-copy or back reference).
    Copy(usize, usize),
    /// A shared pool object.
    Pool(usize),
}

/// Several copies of one random template graph, a pool of shared objects
/// (which may refer back into copies) and stray objects referring into
/// copies: duplicate sets nested in each other, held sets and sets held
/// only collectively (a member reachable from two members of the holder).
/// Forty types of three copies each, every copy reaching one shared ring:
/// many blocks verified at once, each walk crossing the ring.
fn many_types_text() -> String {
    let mut s = String::from("t 40 Node\n");
    for k in 0..40 {
        s += &format!("t {k} T{k}\n");
        for c in 0..3 {
            let top = 0x10000 + k * 0x100 + c * 0x10;
            s += &format!("o {top:x} {k} 10 {:x}\n", top + 1);
            s += &format!("o {:x} 40 8 {:x}\n", top + 1, top + 2);
            s += &format!("o {:x} 40 8 100\n", top + 2);
            s += &format!("r {top:x} 3 0\n");
        }
    }
    for i in 0..10 {
        s += &format!("o {:x} 40 8 {:x}\n", 0x100 + i, 0x100 + (i + 1) % 10);
    }
    s
}

/// With more threads than big walks may run at once (two), walks past the
/// hub threshold may have to give their scratch back and wait their turn
/// (when they meet: the scheduling decides): the sets are the same.
#[test]
fn waiting_big_walks_change_nothing() {
    let text = many_types_text();
    for threshold in [1, 2, 3, 8] {
        heaptui_core::testing::set_hub_threshold(threshold);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(8)
            .build()
            .unwrap();
        let (g, _, d) = pool.install(|| analyse(&text, &all()));
        let sets = Oracle::new(&g).sets();
        assert!(sets.len() >= 40, "{} sets", sets.len());
        assert_eq!(view(&g, &d), sets, "threshold {threshold}");
    }
}

/// Where the per-type budget cuts does not depend on the thread count: a
/// marking walk costs the same whether it entered a hub another type's
/// walk made first or walked the shared ring itself (before, a walk was
/// charged the objects it walked, so a type cut at 8 threads and more on
/// the 10.1 M text heap and not at 1 to 4).
#[test]
fn budget_cuts_the_same_at_any_thread_count() {
    let text = many_types_text();
    let run = |threads: usize, budget: u64| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let options = DuplicateOptions {
            mode: DuplicateMode::All,
            budget_per_type: Some(budget),
        };
        let (g, _, d) = pool.install(|| analyse(&text, &options));
        let possible: Vec<(u32, Vec<u32>)> = d
            .possible
            .iter()
            .map(|p| (p.type_index, p.instances.to_vec()))
            .collect();
        (view(&g, &d), possible)
    };
    let mut cut = 0;
    for threshold in [1, 2, 3, 8] {
        heaptui_core::testing::set_hub_threshold(threshold);
        for budget in [4, 8, 12, 16, 20, 30] {
            let one = run(1, budget);
            cut += !one.1.is_empty() as usize;
            for _ in 0..3 {
                assert_eq!(run(8, budget), one, "threshold {threshold} budget {budget}");
            }
        }
    }
    assert!(cut > 0, "no budget cut anything");
}

/// Copies of one linked list, deep enough for the held sets' ordered pass
/// (more than 32 sets above a node's): some nodes with a leaf, skip links
/// (the same in every copy), extra roots on some nodes (a set below one is
/// held only from there down), and links from one copy's node into
/// another's (holders that do not nest in a line).
fn nested_lists_text() -> impl Strategy<Value = String> {
    (2usize..4, 30usize..70).prop_flat_map(|(copies, len)| {
        (
            prop::collection::vec(any::<bool>(), len),
            prop::collection::vec((0..len, 1usize..4), 0..4),
            prop::collection::vec((0..copies, 0..len), 0..3),
            prop::collection::vec((0..copies, 0..len, 0..copies, 0..len), 0..3),
        )
            .prop_map(move |(leafy, skips, roots, links)| {
                let node = |c: usize, d: usize| 0x10000 + c * 0x1000 + d;
                let mut s = String::from("t 0 Node\nt 1 Leaf\n");
                for c in 0..copies {
                    for (d, &leaf) in leafy.iter().enumerate() {
                        s += &format!("o {:x} 0 10", node(c, d));
                        if d + 1 < len {
                            s += &format!(" {:x}", node(c, d + 1));
                        }
                        for &(from, k) in &skips {
                            if from == d && d + k < len {
                                s += &format!(" {:x}", node(c, d + k));
                            }
                        }
                        for &(c1, d1, c2, d2) in &links {
                            if (c1, d1) == (c, d) {
                                s += &format!(" {:x}", node(c2, d2));
                            }
                        }
                        if leaf {
                            s += &format!(
                                " {:x}\no {:x} 1 8",
                                0x80000 + node(c, d),
                                0x80000 + node(c, d)
                            );
                        }
                        s.push('\n');
                    }
                    s += &format!("r {:x} 1 0\n", node(c, 0));
                }
                for (c, d) in roots {
                    s += &format!("r {:x} 1 0\n", node(c, d));
                }
                s
            })
    })
}

pub(crate) fn copies_text() -> impl Strategy<Value = String> {
    let target = |m: usize, copies: usize, pool: usize| {
        prop_oneof![
            4 => (0..m).prop_map(Target::Own),
            1 => (0..copies, 0..m).prop_map(|(c, j)| Target::Copy(c, j)),
            2 => (0..pool).prop_map(Target::Pool),
        ]
    };
    (1usize..5, 2usize..5, 1usize..3).prop_flat_map(move |(m, copies, pool)| {
        let node = (0u8..2, prop::collection::vec(target(m, copies, pool), 0..3));
        let pool_node = prop::collection::vec(target(m, copies, pool), 0..2);
        (
            prop::collection::vec(node, m),
            prop::collection::vec(pool_node, pool),
            // Per copy: which template nodes it actually uses the pool for
            // (a copy that differs is a near-duplicate).
            prop::collection::vec(any::<bool>(), copies),
            prop::collection::vec((0..copies, 0..m), 0..3),
            prop::collection::vec((0..copies, any::<bool>()), 1..4),
        )
            .prop_map(move |(template, pool_nodes, differs, strays, roots)| {
                let id = |c: usize, j: usize| 0x1000 + c * 0x100 + j;
                let pool_id = |j: usize| 0x10 + j;
                let resolve = |c: usize, t: &Target| match *t {
                    Target::Own(j) => id(c, j),
                    Target::Copy(c2, j) => id(c2, j),
                    Target::Pool(j) => pool_id(j),
                };
                let mut s = String::from("t 0 T0\nt 1 T1\nt 2 Stray\nt 3 Pool\n");
                for (c, &differs) in differs.iter().enumerate() {
                    for (j, (t, refs)) in template.iter().enumerate() {
                        let size = if differs && j == m - 1 { 0x18 } else { 0x10 };
                        s.push_str(&format!("o {:x} {} {:x}", id(c, j), t, size));
                        for r in refs {
                            s.push_str(&format!(" {:x}", resolve(c, r)));
                        }
                        s.push('\n');
                    }
                }
                for (j, refs) in pool_nodes.iter().enumerate() {
                    s.push_str(&format!("o {:x} 3 8", pool_id(j)));
                    for r in refs {
                        s.push_str(&format!(" {:x}", resolve(0, r)));
                    }
                    s.push('\n');
                }
                for (k, &(c, j)) in strays.iter().enumerate() {
                    s.push_str(&format!("o {:x} 2 8 {:x}\n", 0x900 + k, id(c, j)));
                    s.push_str(&format!("r {:x} 1 0\n", 0x900 + k));
                }
                for (c, first) in roots {
                    // Roots on a copy's first node, or on its last.
                    let j = if first { 0 } else { m - 1 };
                    s.push_str(&format!("r {:x} 3 0\n", id(c, j)));
                }
                s
            })
    })
}

/// Values and labels for a parsed heap, drawn from small alphabets so that
/// equal values are common: per object a value choice, per reference a
/// label choice.
#[derive(Debug, Clone)]
struct Extras {
    values: Vec<u8>,
    labels: Vec<u8>,
    with_labels: bool,
}

fn extras() -> impl Strategy<Value = Extras> {
    (
        prop::collection::vec(0u8..5, 64),
        prop::collection::vec(0u8..3, 256),
        any::<bool>(),
    )
        .prop_map(|(values, labels, with_labels)| Extras {
            values,
            labels,
            with_labels,
        })
}

/// Attaches values (none, two byte strings, the same bytes as another
/// kind) and, if chosen, labels (two names, an index, none) to a model.
fn with_extras(mut dump: Model, e: &Extras) -> Model {
    let choices: [(&[u8], ValueKind); 5] = [
        (b"", ValueKind::None),
        (b"ab", ValueKind::Bytes),
        (b"ab", ValueKind::Latin1),
        (b"abc", ValueKind::Bytes),
        (b"", ValueKind::Bytes),
    ];
    let v = Values::from_parts(
        (0..dump.objects()).map(|o| choices[e.values[o % e.values.len()] as usize]),
    );
    dump.values = Some(v);
    if e.with_labels {
        let of_ref: Vec<u32> = (0..dump.refs.edges())
            .map(|i| match e.labels[i % e.labels.len()] {
                0 => 0,
                1 => Labels::index(i as u64 % 2),
                _ => Labels::NONE,
            })
            .collect();
        dump.labels = Some(Labels::new(vec!["next".into()], of_ref));
    }
    dump
}

#[test]
fn equal_shapes_with_different_values_are_not_duplicates() {
    // Two strings with one array each: equal values pair, different don't.
    let text = "t 1 S\nt 2 C\no 10 1 8 20\no 11 1 8 21\no 12 1 8 22\n\
                o 20 2 8\no 21 2 8\no 22 2 8\nr 10 1 0\nr 11 1 0\nr 12 1 0\n";
    let dump = parse_text(Path::new("t.txt"), text.as_bytes()).unwrap();
    let e = Extras {
        values: vec![0, 0, 0, 1, 1, 3],
        labels: vec![0],
        with_labels: true,
    };
    let (g, _, d) = analyse_model(with_extras(dump, &e), &all());
    assert!(d.has_values());
    let v = view(&g, &d);
    assert_eq!(v.len(), 2, "{v:?}");
    assert_eq!(v[0].0, ids(&["10", "11"]));
    assert_eq!(v[1].0, ids(&["20", "21"]));
    assert_eq!(v, Oracle::new(&g).sets());
    let (_, _, plain) = analyse(text, &all());
    assert!(!plain.has_values());
    assert_eq!(plain.members(0).len(), 3, "without values all three pair");
}

/// One ordinary object of [`typed_heap`]: type (0 or 1), size choice,
/// references to ordinary objects (each with a label choice), which of two
/// descriptors of each kind it has and where they sit among its
/// references (4 and 5: first or last, sixteen times over; 6: each after
/// one of its references in turn, as a V8 array's map and prototype sit),
/// and its value choice.
type TypedObject = (u8, bool, Vec<(usize, u8)>, (usize, usize, usize), u8);

/// A heap shaped as HPROF's or V8's are: ordinary objects refer to their
/// type descriptors (a class object; a hidden class and a prototype), and
/// the descriptors lead to a global object that refers back to every
/// ordinary object (statics, the global object's properties). Random
/// references among ordinary objects, some labelled `map` as a user's
/// property would be; values from a few choices, unknown ones among them.
fn typed_heap() -> impl Strategy<Value = (bool, Vec<TypedObject>, Vec<usize>)> {
    (2usize..12).prop_flat_map(|n| {
        let object = (
            0u8..2,
            any::<bool>(),
            prop::collection::vec((0..n, 0u8..3), 0..3),
            (0usize..2, 0usize..2, 0usize..7),
            0u8..4,
        );
        (
            any::<bool>(),
            prop::collection::vec(object, n),
            prop::collection::vec(0..n, 0..3),
        )
    })
}

/// The model of a [`typed_heap`]: V8's (hidden classes, prototypes) or
/// HPROF's (classes).
fn typed_model(v8: bool, objects: &[TypedObject], roots: &[usize]) -> Model {
    const GLOBAL: u64 = 0x10;
    let shape = |k: usize| 0x20 + k as u64;
    let proto = |k: usize| 0x30 + k as u64;
    let ordinary = |i: usize| 0x100 + i as u64;
    let mut text = String::from("t 0 Point\nt 1 Obj\nt 2 (object shape)\nt 3 global\nt 4 Class\n");
    // Labels per (object id, position): 0 `next`, 1 `map`, 2 `__proto__`,
    // 3 `<class>`, 4 an index.
    let mut labels: HashMap<(u64, usize), u32> = HashMap::new();
    text += &format!("o {GLOBAL:x} 3 8");
    for i in 0..objects.len() {
        labels.insert((GLOBAL, i), 4);
        text += &format!(" {:x}", ordinary(i));
    }
    text += &format!("\nr {GLOBAL:x} 4 0\n");
    for k in 0..2 {
        if v8 {
            text += &format!("o {:x} 2 28 {GLOBAL:x}\n", shape(k));
            text += &format!("o {:x} 1 10 {GLOBAL:x}\n", proto(k));
            labels.insert((shape(k), 0), 0);
            labels.insert((proto(k), 0), 0);
        } else {
            // A class object: its statics lead to the global object.
            text += &format!("o {:x} 4 28 {GLOBAL:x}\n", shape(k));
            labels.insert((shape(k), 0), 0);
        }
    }
    for (i, (t, big, refs, (s, p, at), _)) in objects.iter().enumerate() {
        let id = ordinary(i);
        let mut out: Vec<(u64, u32)> = refs
            .iter()
            .map(|&(r, l)| (ordinary(r), [0, 1, 4][l as usize]))
            .collect();
        let mut descriptors = if v8 {
            vec![(proto(*p), 2), (shape(*s), 1)]
        } else {
            vec![(shape(*s), 3)]
        };
        if *at == 6 {
            // Interleaved: a reference, a descriptor, a reference, …
            let mut mixed = Vec::new();
            let mut refs = out.drain(..);
            for d in descriptors.drain(..) {
                mixed.extend(refs.next());
                mixed.push(d);
            }
            mixed.extend(refs);
            out = mixed;
        }
        // Positions 4 and 5: the descriptors repeated 16 times, leading or
        // trailing (more than the duplicates' view keeps apart per object).
        let repeat = if (4..6).contains(at) { 16 } else { 1 };
        let at = match at {
            4 => 0,
            5 => out.len(),
            _ => (*at).min(out.len()),
        };
        for d in descriptors.drain(..).rev() {
            for _ in 0..repeat {
                out.insert(at, d);
            }
        }
        text += &format!("o {id:x} {t} {}", if *big { 16 } else { 8 });
        for (pos, (r, l)) in out.iter().enumerate() {
            text += &format!(" {r:x}");
            labels.insert((id, pos), *l);
        }
        text += "\n";
    }
    for &r in roots {
        text += &format!("r {:x} 1 0\n", ordinary(r));
    }
    let mut dump = parse_text(Path::new("t.txt"), text.as_bytes()).unwrap();
    dump.format = if v8 {
        Format::Heapsnapshot
    } else {
        Format::Hprof
    };
    let mut of_ref = Vec::new();
    for o in 0..dump.objects() {
        let id = dump.ids.get(o);
        for pos in 0..dump.refs.degree(o as u32) {
            of_ref.push(match labels[&(id, pos)] {
                4 => Labels::index(pos as u64),
                l => l,
            });
        }
    }
    dump.labels = Some(Labels::new(
        vec![
            "next".into(),
            "map".into(),
            "__proto__".into(),
            "<class>".into(),
        ],
        of_ref,
    ));
    let choices: [(&[u8], ValueKind); 4] = [
        (b"", ValueKind::None),
        (b"ab", ValueKind::Bytes),
        (b"", ValueKind::Unknown),
        (b"ab", ValueKind::Bytes),
    ];
    let value_of: HashMap<u64, u8> = objects
        .iter()
        .enumerate()
        .map(|(i, o)| (ordinary(i), o.4))
        .collect();
    dump.values = Some(Values::from_parts((0..dump.objects()).map(|o| {
        value_of
            .get(&dump.ids.get(o))
            .map_or(choices[0], |&v| choices[v as usize])
    })));
    dump
}

/// The type descriptor rule on a V8 heap: objects with one hidden class
/// and prototype whose other references are equal are copies, though the
/// hidden class leads back to every one of them; other hidden classes or
/// prototypes make them differ; a property called `map` is walked.
#[test]
fn type_descriptors_are_part_of_the_type() {
    let point = |s, p| (0u8, false, vec![], (s, p, 0), 0u8);
    // Three points of one shape and prototype, one of another shape, one of
    // another prototype, and two with unknown values.
    let mut objects = vec![
        point(0, 0),
        point(0, 0),
        point(0, 0),
        point(1, 0),
        point(0, 1),
    ];
    objects.push((0, false, vec![], (0, 0, 0), 2));
    objects.push((0, false, vec![], (0, 0, 0), 2));
    // (The two hidden classes, and the two prototypes, are copies of each
    // other: only the sets of ordinary objects are looked at.)
    let ordinary =
        |v: Vec<SetView>| -> Vec<SetView> { v.into_iter().filter(|s| s.0[0].len() == 3).collect() };
    let (g, _, d) = analyse_model(typed_model(true, &objects, &[]), &all());
    let v = view(&g, &d);
    assert_eq!(v, Oracle::new(&g).sets());
    let v = ordinary(v);
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].0, ids(&["100", "101", "102"]));
    // A copy is the object alone: its descriptors are not part of it.
    assert_eq!((v[0].2, v[0].3), (1, 2 * 8));
    assert!(v[0].4, "no reference is walked: a leaf");
    // The same objects, each with a property `map` to a point of its own:
    // walked, so the points it leads to are part of the copies.
    let mut objects = vec![point(0, 0); 6];
    for (i, o) in objects.iter_mut().enumerate().take(3) {
        o.2 = vec![(i + 3, 1)];
    }
    let (g, _, d) = analyse_model(typed_model(true, &objects, &[]), &all());
    let v = view(&g, &d);
    assert_eq!(v, Oracle::new(&g).sets());
    let v = ordinary(v);
    assert_eq!(v[0].0, ids(&["100", "101", "102"]));
    assert_eq!((v[0].2, v[0].4), (2, false));
    // HPROF: instances of one class object are copies; of two, not.
    let objects = vec![point(0, 0), point(0, 0), point(1, 0)];
    let (g, _, d) = analyse_model(typed_model(false, &objects, &[]), &all());
    let v = view(&g, &d);
    assert_eq!(v, Oracle::new(&g).sets());
    let v = ordinary(v);
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].0, ids(&["100", "101"]));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn values_and_labels_agree_with_the_literal_definitions(text in heap_text(), e in extras()) {
        let dump = parse_text(Path::new("t.txt"), text.as_bytes()).unwrap();
        let (g, _, d) = analyse_model(with_extras(dump, &e), &all());
        prop_assert_eq!(view(&g, &d), Oracle::new(&g).sets(), "{} {:?}", text, e);
        let dump = parse_text(Path::new("t.txt"), text.as_bytes()).unwrap();
        let (g, _, d) = analyse_model(with_extras(dump, &e), &DuplicateOptions {
            mode: DuplicateMode::Trivial,
            budget_per_type: None,
        });
        let trivial: Vec<SetView> = Oracle::new(&g).sets().into_iter().filter(|s| s.4).collect();
        let got: Vec<Vec<String>> = view(&g, &d).into_iter().map(|s| s.0).collect();
        let want: Vec<Vec<String>> = trivial.into_iter().map(|s| s.0).collect();
        let mut got_sorted = got.clone();
        got_sorted.sort();
        let mut want_sorted = want.clone();
        want_sorted.sort();
        prop_assert_eq!(got_sorted, want_sorted, "trivial mode: {} {:?}", text, e);
    }

    #[test]
    fn values_and_labels_on_copies(text in copies_text(), e in extras()) {
        let dump = parse_text(Path::new("t.txt"), text.as_bytes()).unwrap();
        let (g, _, d) = analyse_model(with_extras(dump, &e), &all());
        prop_assert_eq!(view(&g, &d), Oracle::new(&g).sets(), "{} {:?}", text, e);
    }

    #[test]
    fn agrees_with_the_literal_definitions(text in heap_text()) {
        let (g, _, d) = analyse(&text, &all());
        let sets = Oracle::new(&g).sets();
        prop_assert_eq!(view(&g, &d), sets.clone(), "{}", text);
        // The total: every member but one of each of the oracle's classes.
        let extra: u64 = sets.iter().map(|s| (s.0.len() as u64 - 1) * s.1).sum();
        prop_assert_eq!(d.total_additional_bytes(), extra, "{}", text);
        prop_assert!(extra <= g.dump.sizes.iter().sum::<u64>());
    }

    #[test]
    fn hubs_change_nothing(text in copies_text(), threshold in 1usize..6) {
        // Process-wide, but no result depends on it, so the other tests
        // running meanwhile stay valid (and exercise hubs too).
        heaptui_core::testing::set_hub_threshold(threshold);
        let (g, _, d) = analyse(&text, &all());
        prop_assert_eq!(view(&g, &d), Oracle::new(&g).sets(), "{}", text);
    }

    #[test]
    fn agrees_with_the_literal_definitions_on_typed_heaps((v8, objects, roots) in typed_heap()) {
        let (g, _, d) = analyse_model(typed_model(v8, &objects, &roots), &all());
        prop_assert_eq!(view(&g, &d), Oracle::new(&g).sets(), "{:?}", objects);
        let (g, _, d) = analyse_model(typed_model(v8, &objects, &roots), &DuplicateOptions {
            mode: DuplicateMode::Trivial,
            budget_per_type: None,
        });
        let mut got: Vec<Vec<String>> = view(&g, &d).into_iter().map(|s| s.0).collect();
        let mut want: Vec<Vec<String>> =
            Oracle::new(&g).sets().into_iter().filter(|s| s.4).map(|s| s.0).collect();
        got.sort();
        want.sort();
        prop_assert_eq!(got, want, "trivial mode: {:?}", objects);
    }

    #[test]
    fn held_sets_in_order_change_nothing(text in copies_text(), many in 0usize..3) {
        // Process-wide, as the hub threshold: every value gives the same sets.
        heaptui_core::testing::set_many_candidates(many);
        let (g, _, d) = analyse(&text, &all());
        prop_assert_eq!(view(&g, &d), Oracle::new(&g).sets(), "{}", text);
    }

    #[test]
    fn agrees_with_the_literal_definitions_on_copies(text in copies_text()) {
        let (g, _, d) = analyse(&text, &all());
        prop_assert_eq!(view(&g, &d), Oracle::new(&g).sets(), "{}", text);
    }

    #[test]
    fn budget_then_detect_type_gives_the_full_answer(text in heap_text(), budget in 1u64..40) {
        let (g, dom, mut d) = analyse(&text, &DuplicateOptions {
            mode: DuplicateMode::All,
            budget_per_type: Some(budget),
        });
        let (_, _, full) = analyse(&text, &all());
        // What was decided within the budget is final.
        for s in d.member_lists().iter() {
            prop_assert!(full.member_lists().iter().any(|f| f == s));
        }
        while let Some(p) = d.possible.first() {
            d = detect_type(&g, &dom, &d, p.type_index, &Progress::new()).unwrap();
        }
        prop_assert_eq!(view(&g, &d), view(&g, &full));
    }
}

proptest! {
    // The oracle checks every pair of sets by a search: fewer, larger cases.
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn held_sets_of_nested_lists_agree_with_the_definition(text in nested_lists_text()) {
        let (g, _, d) = analyse(&text, &all());
        prop_assert_eq!(view(&g, &d), Oracle::new(&g).sets(), "{}", text);
    }
}
