//! Roots grouped by kind and flags (the TUI's Roots pane and overview), and
//! the weakly-held part of the heap: unreachable objects a weak root still
//! points at, directly or through references.

use crate::graph::{DominatorTree, HeapGraph};
use crate::model::{ObjectIdx, RootPlaces, Strength};

/// Root records of one (kind, flags) pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootGroup {
    /// A [`crate::model::root_kind`] value.
    pub kind: u32,
    /// [`crate::model::root_flags`] bits.
    pub flags: u32,
    /// Indices into `Model::roots`, largest retained object first.
    pub roots: Vec<u32>,
    /// Distinct rooted objects.
    pub objects: u64,
    /// Sum of the retained bytes of the distinct rooted objects. Strongly
    /// rooted objects are children of the super-root, so these never overlap
    /// within a strong group.
    pub retained_bytes: u64,
    /// Where the dump names the threads roots lie in (HPROF), the group's
    /// records are ordered by thread: the runs of `roots` in one thread
    /// (none for roots outside threads).
    pub threads: Vec<ThreadRun>,
}

/// Records `start..start + len` of a group's `roots` lie in `thread` (an
/// index into `RootPlaces::threads`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadRun {
    /// The thread, an index into `RootPlaces::threads`.
    pub thread: u32,
    /// The run's first position in the group's `roots`.
    pub start: u32,
    /// How many records the run has.
    pub len: u32,
}

/// Root records grouped by (kind, flags), by retained bytes descending;
/// within a group by thread where the dump names threads.
/// O(roots log roots).
pub fn root_groups(graph: &HeapGraph, dom: &DominatorTree) -> Vec<RootGroup> {
    let roots = &graph.dump.roots;
    let places = &graph.dump.root_places;
    let thread = |i: u32| {
        places
            .of_root
            .get(i as usize)
            .map_or(RootPlaces::NONE, |p| p.0)
    };
    let mut order: Vec<u32> = (0..roots.len() as u32).collect();
    order.sort_by_key(|&i| {
        let r = &roots[i as usize];
        (
            r.kind,
            r.flags,
            thread(i),
            std::cmp::Reverse(dom.retained_bytes(r.object.index())),
            r.object,
            i,
        )
    });
    let mut groups: Vec<RootGroup> = Vec::new();
    for chunk in order.chunk_by(|&a, &b| {
        let (ra, rb) = (&roots[a as usize], &roots[b as usize]);
        (ra.kind, ra.flags) == (rb.kind, rb.flags)
    }) {
        let first = &roots[chunk[0] as usize];
        // Distinct objects (one object's records may lie in two threads).
        let mut distinct: Vec<ObjectIdx> =
            chunk.iter().map(|&i| roots[i as usize].object).collect();
        distinct.sort_unstable();
        distinct.dedup();
        let objects = distinct.len() as u64;
        let retained_bytes = distinct.iter().map(|o| dom.retained_bytes(o.index())).sum();
        let mut threads = Vec::new();
        if !places.of_root.is_empty() {
            let mut start = 0;
            for run in chunk.chunk_by(|&a, &b| thread(a) == thread(b)) {
                let t = thread(run[0]);
                if t != RootPlaces::NONE {
                    threads.push(ThreadRun {
                        thread: t,
                        start,
                        len: run.len() as u32,
                    });
                }
                start += run.len() as u32;
            }
        }
        groups.push(RootGroup {
            kind: first.kind,
            flags: first.flags,
            roots: chunk.to_vec(),
            objects,
            retained_bytes,
            threads,
        });
    }
    groups.sort_by(|a, b| {
        b.retained_bytes
            .cmp(&a.retained_bytes)
            .then((a.kind, a.flags).cmp(&(b.kind, b.flags)))
    });
    groups
}

/// Objects and bytes that no strong root reaches but a weak root does.
/// O(weakly held part).
pub fn weakly_held(graph: &HeapGraph, dom: &DominatorTree) -> (u64, u64) {
    let mut seen = vec![false; graph.objects()];
    let mut stack: Vec<ObjectIdx> = graph
        .dump
        .roots
        .iter()
        .filter(|r| !r.is_strong())
        .map(|r| r.object)
        .collect();
    let (mut objects, mut bytes) = (0u64, 0u64);
    while let Some(o) = stack.pop() {
        if seen[o.index()] || dom.is_reachable(o.raw()) {
            continue;
        }
        seen[o.index()] = true;
        objects += 1;
        bytes += graph.dump.size_of(o);
        stack.extend(graph.refs(o).iter());
    }
    (objects, bytes)
}

/// What the referents of Java reference objects hold that nothing strong
/// does (see `Summary::held_by_references`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeldByReferences {
    /// Whether referents retain (`--references all`): then they are
    /// strong references and hold nothing apart.
    pub strong: bool,
    /// Reference objects with a referent.
    pub referents: u64,
    /// Objects and bytes per [`Strength`] (in [`Strength::ALL`]'s order),
    /// each object under the strongest kind of reference through which it
    /// is reachable.
    pub by_strength: [(u64, u64); 4],
}

impl HeldByReferences {
    /// Objects held only through references, of every kind.
    pub fn objects(&self) -> u64 {
        self.by_strength.iter().map(|s| s.0).sum()
    }

    /// Their shallow bytes, of every kind.
    pub fn bytes(&self) -> u64 {
        self.by_strength.iter().map(|s| s.1).sum()
    }
}

/// The objects no strong root reaches through strong references but a
/// referent does, by the strongest kind of reference they are reachable
/// through, as the garbage collector classifies them: softly reachable
/// objects are those reached over strong references and soft referents,
/// weakly reachable ones need a weak referent too, then finalizer, then
/// phantom. `None` for dumps without referents. O(the part held, plus the
/// referents once per kind).
pub fn held_by_references(graph: &HeapGraph, dom: &DominatorTree) -> Option<HeldByReferences> {
    let referents = graph.dump.referents.as_ref()?;
    let mut out = HeldByReferences {
        strong: referents.strong,
        referents: referents.len() as u64,
        by_strength: [(0, 0); 4],
    };
    // What the referents reach, one bit an object (a pass that most
    // heaps end at once must not cost a byte per object).
    let n = graph.objects();
    let mut seen = vec![0u64; n.div_ceil(64)];
    let is_set = |seen: &[u64], o: ObjectIdx| seen[o.index() / 64] >> (o.index() % 64) & 1 != 0;
    let set = |seen: &mut [u64], o: ObjectIdx| seen[o.index() / 64] |= 1 << (o.index() % 64);
    let reached = |seen: &[u64], o: ObjectIdx| is_set(seen, o) || dom.is_reachable(o.raw());
    let mut stack: Vec<ObjectIdx> = Vec::new();
    for (level, &strength) in Strength::ALL.iter().enumerate() {
        for r in referents.list() {
            if r.strength <= strength && reached(&seen, r.reference) && !reached(&seen, r.referent)
            {
                set(&mut seen, r.referent);
                stack.push(r.referent);
            }
        }
        let (objects, bytes) = &mut out.by_strength[level];
        while let Some(o) = stack.pop() {
            *objects += 1;
            *bytes += graph.dump.size_of(o);
            let via_referent = referents
                .of(o)
                .filter(|r| r.strength <= strength)
                .map(|r| r.referent);
            for t in graph.refs(o).iter().chain(via_referent) {
                if !reached(&seen, t) {
                    set(&mut seen, t);
                    stack.push(t);
                }
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::Progress;

    #[test]
    fn groups_and_weakly_held() {
        let text = "t 1 A\n\
                    o 1 1 10 2\no 2 1 20\no 3 1 5 4\no 4 1 7\no 5 1 100\n\
                    r 1 1 0\nr 1 1 0\nr 5 4 0 1\nr 3 3 2\n";
        let dump =
            crate::import::netcf_text::parse_bytes(std::path::Path::new("t"), text.as_bytes())
                .unwrap();
        let graph = HeapGraph::build(dump);
        let dom = DominatorTree::compute(&graph, &Progress::new()).unwrap();
        let g = root_groups(&graph, &dom);
        assert_eq!(g.len(), 3);
        assert_eq!(
            (g[0].kind, g[0].retained_bytes, g[0].objects),
            (4, 0x100, 1)
        );
        assert_eq!((g[1].kind, g[1].roots.len(), g[1].objects), (1, 2, 1));
        assert_eq!(
            g[1].retained_bytes,
            0x10 + 0x20,
            "one object rooted twice counts once"
        );
        assert_eq!((g[2].kind, g[2].flags, g[2].retained_bytes), (3, 2, 0));
        assert_eq!(weakly_held(&graph, &dom), (2, 12));
    }
}

/// Per type index: its reachable instance with the largest retained bytes
/// (ties: lowest index), `u32::MAX` when none is reachable. One pass.
pub fn largest_instances(graph: &HeapGraph, dom: &DominatorTree) -> Vec<u32> {
    let dump = &graph.dump;
    let mut best = vec![u32::MAX; dump.type_names.len()];
    for (o, t) in dump.types.iter().enumerate() {
        if o.is_multiple_of(1 << 16) {
            // A pass over spilled arrays (see `mem::pace`).
            crate::mem::pace();
        }
        if !dom.is_reachable(o as u32) {
            continue;
        }
        let b = &mut best[t.index()];
        if *b == u32::MAX || dom.retained_bytes(o) > dom.retained_bytes(*b as usize) {
            *b = o as u32;
        }
    }
    best
}

#[cfg(test)]
mod largest_tests {
    use super::*;
    use crate::progress::Progress;

    #[test]
    fn largest_reachable_instance_per_type() {
        let text = "t 1 A\nt 2 B\nt 3 C\no 1 1 10 2\no 2 1 20\no 3 1 30\no 4 2 5\no 5 3 1\nr 1 1 0\nr 3 1 0\nr 4 1 0\n";
        let dump =
            crate::import::netcf_text::parse_bytes(std::path::Path::new("t"), text.as_bytes())
                .unwrap();
        let graph = HeapGraph::build(dump);
        let dom = DominatorTree::compute(&graph, &Progress::new()).unwrap();
        let l = largest_instances(&graph, &dom);
        let d = &graph.dump;
        let ty = |id: u64| d.type_of(d.index_of(id).unwrap()).index();
        assert_eq!(
            l[ty(1)],
            d.index_of(1).unwrap().raw(),
            "0x10+0x20 retained beats 0x30"
        );
        assert_eq!(l[ty(4)], d.index_of(4).unwrap().raw());
        assert_eq!(l[ty(5)], u32::MAX, "unreachable only");
    }
}

#[cfg(test)]
mod held_tests {
    use super::*;
    use crate::model::{Csr, Model, Referent, Referents, Root};
    use crate::progress::Progress;
    use proptest::prelude::*;

    /// A heap of `n` objects (object `o` of size `o + 1`), its strong
    /// edges, roots, and referents (reference, referent, strength).
    fn heap(
        n: usize,
        edges: &[(usize, usize)],
        roots: &[usize],
        referents: &[(usize, usize, u8)],
    ) -> HeapGraph {
        let mut adj = vec![Vec::new(); n];
        for &(a, b) in edges {
            adj[a % n].push((b % n) as u32);
        }
        let degrees: Vec<u32> = adj.iter().map(|a| a.len() as u32).collect();
        let list = referents
            .iter()
            .map(|&(a, b, s)| Referent {
                reference: ObjectIdx((a % n) as u32),
                referent: ObjectIdx((b % n) as u32),
                strength: Strength::from_u8(s % 4).unwrap(),
            })
            .collect();
        let dump = Model {
            ids: (1..=n as u64).collect::<Vec<_>>().into(),
            types: vec![crate::model::TypeIdx(0); n].into(),
            type_names: vec!["T".into()],
            sizes: (1..=n as u64).collect::<Vec<_>>().into(),
            refs: Csr::from_degrees(&degrees, adj.concat()),
            roots: roots
                .iter()
                .map(|&r| Root::plain(ObjectIdx((r % n) as u32)))
                .collect(),
            referents: Some(Referents::new(list, false)),
            ..Default::default()
        };
        HeapGraph::build(dump)
    }

    /// What reaches each object, by brute force: the first kind `k` such
    /// that it is reachable over strong edges and the referents of kinds
    /// up to `k` (`None`: strongly reachable or not at all).
    fn brute(g: &HeapGraph) -> [(u64, u64); 4] {
        let n = g.objects();
        let referents = g.dump.referents.as_ref().unwrap();
        let reach = |level: Option<usize>| {
            let mut seen = vec![false; n];
            let mut stack: Vec<ObjectIdx> = g.strong_roots.clone();
            while let Some(o) = stack.pop() {
                if std::mem::replace(&mut seen[o.index()], true) {
                    continue;
                }
                stack.extend(g.refs(o));
                for r in referents.list() {
                    if r.reference == o && level.is_some_and(|l| r.strength as usize <= l) {
                        stack.push(r.referent);
                    }
                }
            }
            seen
        };
        let mut before = reach(None);
        let mut out = [(0, 0); 4];
        for (level, slot) in out.iter_mut().enumerate() {
            let now = reach(Some(level));
            for o in 0..n {
                if now[o] && !before[o] {
                    slot.0 += 1;
                    slot.1 += g.dump.sizes.get(o);
                }
            }
            before = now;
        }
        out
    }

    #[test]
    fn the_strongest_kind_counts() {
        // 0 root → 1 (weak ref) ⇢ 3 → 4; 0 → 2 (soft ref) ⇢ 3; 0 → 5 (phantom) ⇢ 6.
        let g = heap(
            7,
            &[(0, 1), (0, 2), (0, 5), (3, 4)],
            &[0],
            &[(1, 3, 1), (2, 3, 0), (5, 6, 3)],
        );
        let dom = DominatorTree::compute(&g, &Progress::new()).unwrap();
        let h = held_by_references(&g, &dom).unwrap();
        assert_eq!(h.by_strength, [(2, 4 + 5), (0, 0), (0, 0), (1, 7)]);
        assert_eq!((h.objects(), h.bytes(), h.referents), (3, 16, 3));
    }

    proptest! {
        #[test]
        fn held_by_references_agrees_with_brute_force(
            n in 1usize..40,
            edges in proptest::collection::vec((0usize..40, 0usize..40), 0..60),
            roots in proptest::collection::vec(0usize..40, 0..4),
            referents in proptest::collection::vec((0usize..40, 0usize..40, 0u8..4), 0..20),
        ) {
            let g = heap(n, &edges, &roots, &referents);
            let dom = DominatorTree::compute(&g, &Progress::new()).unwrap();
            let h = held_by_references(&g, &dom).unwrap();
            prop_assert_eq!(h.by_strength, brute(&g));
        }
    }
}
