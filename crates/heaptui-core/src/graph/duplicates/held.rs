//! Held duplicates (docs/duplicates.md): set S is fully held by set H when no member
//! of S is reachable from a strong root without passing through a member of
//! H. Exact, and local in practice:
//!
//! - Candidates. If H holds S, every root path to a member s of S contains a
//!   member of H; so the holders of S are among the sets met on one root path
//!   to one member (taken greedily towards the DFS roots: each step goes to
//!   the retainer earliest in DFS preorder, which strictly decreases). That
//!   step is computed once per object (`up`), when a path first reaches the
//!   object: walking it per set would scan a hub's retainers (a V8 hidden
//!   class has millions) for every set whose path crosses the hub, and
//!   computing it for every object scans every retainer of the heap where
//!   the paths meet only a fraction of the objects.
//! - Check, per candidate H and member s: "s reachable avoiding H" (RA) by a
//!   backward search that jumps up the dominator tree. If d dominates u then
//!   RA(u) implies RA(d); and if no member of H lies in d's dominator subtree,
//!   RA(d) implies RA(u) too (every root path to u enters the subtree at d
//!   and stays inside after its last visit to d). So the search replaces u by
//!   its highest dominator whose subtree has no H member (an interval query
//!   on a dominator-tree preorder), stops as unreachable at a dominator in H
//!   (the common positive case: the array's list is in H), and otherwise
//!   continues from that node's retainers outside its own subtree (a simple
//!   root path never enters a node's subtree before the node).

use std::collections::HashSet;

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use rayon::prelude::*;

use super::bisim::IntBuild;
use super::DuplicateSet;
use crate::graph::{DominatorTree, HeapGraph, SUPER_ROOT};
use crate::progress::{Cancelled, Progress};

const NONE: u32 = u32::MAX;

struct Index<'a> {
    graph: &'a HeapGraph,
    dom: &'a DominatorTree,
    /// Set id of every member object, NONE otherwise.
    set_of: Vec<u32>,
    /// Dominator-tree preorder number (NONE if unreachable); the subtree of
    /// v is `tin[v] .. tin[v] + retained_objects[v]`.
    tin: Vec<u32>,
    /// Each object's position in the DFS preorder of the dominator
    /// computation (NONE if unreachable).
    dfs_pos: Vec<u32>,
    /// Each object's retainer earliest in that preorder, when earlier than
    /// the object itself, plus one; `u32::MAX` otherwise (a DFS root); 0
    /// until a path first needs it ([`Index::up`]).
    up: &'a [AtomicU32],
    strong: Vec<bool>,
    /// Per set, its members' `tin`, sorted.
    member_tins: Vec<Vec<u32>>,
}

impl Index<'_> {
    #[inline]
    fn in_subtree(&self, node: u32, of: u32) -> bool {
        let (t, r) = (self.tin[node as usize], self.tin[of as usize]);
        t >= r && t - r < self.dom.retained_objects[of as usize]
    }

    /// Whether set `h` has a member in the dominator subtree of `d`.
    #[inline]
    fn subtree_has(&self, h: u32, d: u32) -> bool {
        let tins = &self.member_tins[h as usize];
        let lo = self.tin[d as usize];
        let i = tins.partition_point(|&t| t < lo);
        i < tins.len() && tins[i] - lo < self.dom.retained_objects[d as usize]
    }

    /// Whether `v` (not in set `h`) is reachable from a strong root avoiding
    /// the members of `h`. `seen` may hold objects of earlier searches for
    /// the same `h` that answered no: none of those is reachable avoiding
    /// `h` either (each was expanded completely), so they are skipped.
    fn reachable_avoiding(
        &self,
        v: u32,
        h: u32,
        seen: &mut HashSet<u32, IntBuild>,
        stack: &mut Vec<u32>,
    ) -> bool {
        stack.clear();
        stack.push(v);
        while let Some(u) = stack.pop() {
            if !seen.insert(u) {
                continue;
            }
            let mut x = u;
            let held = loop {
                if self.strong[x as usize] {
                    return true;
                }
                let d = self.dom.idom[x as usize];
                if d == SUPER_ROOT {
                    break false;
                }
                if self.set_of[d as usize] == h {
                    break true;
                }
                if self.subtree_has(h, d) {
                    break false;
                }
                x = d;
            };
            if held || (x != u && !seen.insert(x)) {
                continue;
            }
            for &r in self.graph.retainers_raw(x) {
                if self.tin[r as usize] == NONE
                    || self.set_of[r as usize] == h
                    || self.in_subtree(r, x)
                    || seen.contains(&r)
                {
                    continue;
                }
                stack.push(r);
            }
        }
        false
    }

    /// `x`'s retainer earliest in the DFS preorder if earlier than `x`,
    /// else NONE; computed at the first call for `x` (threads that race on
    /// it compute and store the same value).
    fn up(&self, x: u32) -> u32 {
        let known = self.up[x as usize].load(Relaxed);
        if known != 0 {
            return if known == u32::MAX { NONE } else { known - 1 };
        }
        let mut best = NONE;
        let mut best_pos = self.dfs_pos[x as usize];
        for &r in self.graph.retainers_raw(x) {
            let p = self.dfs_pos[r as usize];
            if p < best_pos {
                best_pos = p;
                best = r;
            }
        }
        let stored = if best == NONE { u32::MAX } else { best + 1 };
        self.up[x as usize].store(stored, Relaxed);
        best
    }

    /// The sets on one root path to `s` (excluding `s`'s own set), each
    /// once, nearest to `s` first.
    fn path_candidates(&self, s: u32, own: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut met = HashSet::<u32, IntBuild>::default();
        let mut x = s;
        loop {
            let best = self.up(x);
            if best == NONE {
                break;
            }
            x = best;
            let set = self.set_of[x as usize];
            if set != NONE && set != own && met.insert(set) {
                out.push(set);
            }
        }
        out
    }

    /// The member whose greedy root path is walked: the one earliest in
    /// the DFS preorder. Every set met on that path has a member earlier
    /// still, which orders the sets for [`held_in_order`].
    fn first_member(&self, s: &DuplicateSet) -> u32 {
        s.members
            .iter()
            .copied()
            .min_by_key(|&m| self.dfs_pos[m as usize])
            .unwrap_or(NONE)
    }

    /// Whether set `h` holds `s`: no member of `s` is reachable avoiding `h`.
    fn holds(
        &self,
        s: &DuplicateSet,
        h: u32,
        seen: &mut HashSet<u32, IntBuild>,
        stack: &mut Vec<u32>,
    ) -> bool {
        seen.clear();
        if seen.capacity() > 1 << 16 {
            // Clearing costs the capacity: don't keep a huge one.
            *seen = HashSet::default();
        }
        s.members
            .iter()
            .all(|&m| !self.reachable_avoiding(m, h, seen, stack))
    }
}

/// Fills `held_by` and `holding_set` of every set; `sets[i].id == i`, and
/// `set_of` is the set of every object (`u32::MAX` for none).
pub(crate) fn compute_held(
    graph: &HeapGraph,
    dom: &DominatorTree,
    sets: &mut [DuplicateSet],
    set_of: Vec<u32>,
    progress: &Progress,
) -> Result<(), Cancelled> {
    if sets.is_empty() {
        return Ok(());
    }
    let n = graph.objects();
    let span = tracing::debug_span!(target: "heaptui::profile", "held index").entered();
    let tin = dominator_preorder(dom);
    progress.check()?;
    let dfs_pos = dfs_positions(graph, dom);
    let mut up: Vec<u32> = crate::mem::zeroed(n);
    progress.check()?;
    let mut strong = vec![false; n];
    for &r in graph.strong_roots_raw() {
        strong[r as usize] = true;
    }
    let member_tins = sets
        .par_iter()
        .map(|s| {
            let mut t: Vec<u32> = s.members.iter().map(|&m| tin[m as usize]).collect();
            t.sort_unstable();
            t
        })
        .collect();
    let index = Index {
        graph,
        dom,
        set_of,
        tin,
        dfs_pos,
        up: crate::mem::as_atomic(&mut up),
        strong,
        member_tins,
    };
    span.exit();
    let held_by = tracing::debug_span!(target: "heaptui::profile", "held checks")
        .in_scope(|| held_by(&index, sets, progress));
    progress.check()?;
    // The holding set: a holder no other holder of S holds (held-by is
    // transitive and acyclic, so one exists); ties by the lowest id, which is
    // the largest additional bytes (ids follow that order).
    for (i, s) in sets.iter_mut().enumerate() {
        let holders = &held_by[i];
        s.holding_set = holders.iter().copied().find(|&h| {
            !holders
                .iter()
                .any(|g| held_by[h as usize].binary_search(g).is_ok())
        });
        s.held_by = held_by[i].clone();
    }
    Ok(())
}

/// Sets with more candidates than this are done by [`held_in_order`].
const MANY_CANDIDATES: usize = 32;

/// Per set, the sets that hold it (sorted): those on every path to one of
/// its members whose removal leaves no member reachable. Empty for a set
/// with a strongly rooted member, and for all once cancelled.
///
/// Each candidate of a set with few is checked on its own, in parallel.
/// The sets with many are those nested deep in other sets (a duplicated
/// linked list: each node's set is held by every set above it), where
/// checking every candidate apart costs the square of the depth per set;
/// they are done in order by [`held_in_order`], which takes a confirmed
/// holder's own holders as holders without checking them.
fn held_by(index: &Index, sets: &[DuplicateSet], progress: &Progress) -> Vec<Vec<u32>> {
    let first: Vec<Option<Vec<u32>>> = sets
        .par_iter()
        .map_init(
            || (HashSet::<u32, IntBuild>::default(), Vec::new()),
            |(seen, stack), s| {
                if progress.is_cancelled() {
                    return Some(Vec::new());
                }
                // A strongly rooted member is reachable whatever is removed.
                if s.members.iter().any(|&m| index.strong[m as usize]) {
                    return Some(Vec::new());
                }
                let candidates = index.path_candidates(index.first_member(s), s.id);
                if candidates.len() > MANY_CANDIDATES {
                    return None;
                }
                let mut held: Vec<u32> = candidates
                    .into_iter()
                    .filter(|&h| index.holds(s, h, seen, stack))
                    .collect();
                held.sort_unstable();
                Some(held)
            },
        )
        .collect();
    let deep: Vec<usize> = (0..sets.len()).filter(|&i| first[i].is_none()).collect();
    let mut held: Vec<Vec<u32>> = first.into_iter().map(Option::unwrap_or_default).collect();
    held_in_order(index, sets, deep, &mut held, progress);
    held
}

/// The holders of the sets `deep`, in the order of their first members'
/// DFS positions. A candidate of a set has a member earlier in that order
/// than the set's first member (the greedy path only goes back), so its
/// holders are known when the set comes: when a candidate holds the set,
/// so does every holder of the candidate (holding is transitive), and
/// those are among the later candidates (they lie on every root path).
fn held_in_order(
    index: &Index,
    sets: &[DuplicateSet],
    mut deep: Vec<usize>,
    held: &mut [Vec<u32>],
    progress: &Progress,
) {
    deep.sort_unstable_by_key(|&i| index.dfs_pos[index.first_member(&sets[i]) as usize]);
    let (mut seen, mut stack) = (HashSet::<u32, IntBuild>::default(), Vec::new());
    let mut known = HashSet::<u32, IntBuild>::default();
    for i in deep {
        if progress.is_cancelled() {
            return;
        }
        let s = &sets[i];
        known.clear();
        let mut out = Vec::new();
        for h in index.path_candidates(index.first_member(s), s.id) {
            if known.contains(&h) {
                out.push(h);
            } else if index.holds(s, h, &mut seen, &mut stack) {
                out.push(h);
                known.extend(held[h as usize].iter().copied());
            }
        }
        out.sort_unstable();
        held[i] = out;
    }
}

/// Each object's position in the DFS preorder of the dominator computation
/// (NONE if unreachable).
fn dfs_positions(graph: &HeapGraph, dom: &DominatorTree) -> Vec<u32> {
    let n = graph.objects();
    let mut dfs_pos = crate::mem::filled(n, NONE);
    {
        let out = crate::mem::as_atomic(&mut dfs_pos);
        dom.preorder
            .par_iter()
            .enumerate()
            .for_each(|(i, &o)| out[o as usize].store(i as u32, Relaxed));
    }
    dfs_pos
}

/// Preorder numbers of the dominator tree (iterative; NONE if unreachable).
/// A subtree's numbers are a range of known size (its retained objects), so
/// the tree is cut into subtrees of at most a few thousandths of the heap,
/// numbered in parallel; the nodes above them are numbered while cutting.
fn dominator_preorder(dom: &DominatorTree) -> Vec<u32> {
    let size = |v: u32| dom.retained_objects[v as usize];
    let mut tin = crate::mem::filled(dom.idom.len(), NONE);
    let cut = (dom.idom.len() / 512).max(1 << 12) as u32;
    let mut pending: Vec<(u32, u32)> = Vec::new();
    let mut next = 0u32;
    for &top in dom.children_of(dom.super_root()) {
        pending.push((top, next));
        next += size(top);
    }
    let mut parts = Vec::new();
    while let Some((v, start)) = pending.pop() {
        if size(v) <= cut {
            parts.push((v, start));
            continue;
        }
        tin[v as usize] = start;
        let mut next = start + 1;
        for &c in dom.children_of(v) {
            pending.push((c, next));
            next += size(c);
        }
    }
    let out = crate::mem::as_atomic(&mut tin);
    parts
        .par_iter()
        .for_each_init(Vec::new, |stack, &(top, start)| {
            let mut next = start;
            stack.clear();
            stack.push(top);
            while let Some(v) = stack.pop() {
                // Each part writes only its own objects' slots.
                out[v as usize].store(next, Relaxed);
                next += 1;
                stack.extend(dom.children_of(v).iter().rev());
            }
        });
    tin
}

#[cfg(test)]
mod tests {
    use std::fmt::Write;
    use std::path::Path;

    use super::{dominator_preorder, NONE};
    use crate::graph::{DominatorTree, HeapGraph, SUPER_ROOT};
    use crate::progress::Progress;

    /// Two copies of a linked list, one more root into the first copy at
    /// `bypass`: the set of the nodes at depth d is held by the sets above
    /// it, but from `bypass` on only by those at or below `bypass` (the
    /// extra root reaches the first copy's tail past them). Deep enough for
    /// the ordered pass (more than `MANY_CANDIDATES` sets above).
    #[test]
    fn a_duplicated_list_nests_each_set_in_those_above_it() {
        let (len, bypass) = (120u32, 70u32);
        let mut text = String::from("t 1 Node\n");
        for (base, copy) in [(0x1000u32, 0), (0x2000, 1)] {
            for d in 0..len {
                write!(text, "o {:x} 1 10", base + d).unwrap();
                if d + 1 < len {
                    write!(text, " {:x}", base + d + 1).unwrap();
                }
                text.push('\n');
            }
            writeln!(text, "r {base:x} 1 0").unwrap();
            if copy == 0 {
                writeln!(text, "r {:x} 1 0", base + bypass).unwrap();
            }
        }
        let dump =
            crate::import::netcf_text::parse_bytes(Path::new("t.txt"), text.as_bytes()).unwrap();
        let graph = HeapGraph::build(dump);
        let progress = Progress::new();
        let dom = DominatorTree::compute(&graph, &progress).unwrap();
        let options = crate::graph::duplicates::DuplicateOptions::default();
        let dups =
            crate::graph::duplicates::find_duplicates(&graph, &dom, &options, &progress).unwrap();
        // Each set's depth, from its first copy's id.
        let depth = |set: u32| {
            let s = &dups.sets[set as usize];
            let ids: Vec<u64> = s
                .members
                .iter()
                .map(|&m| graph.dump.ids.get(m as usize))
                .collect();
            let first = *ids.iter().min().unwrap();
            assert_eq!(
                ids,
                vec![first, first + 0x1000],
                "a set is one depth's two nodes"
            );
            (first - 0x1000) as u32
        };
        let mut seen = 0;
        for s in &dups.sets {
            let d = depth(s.id);
            let mut above: Vec<u32> = s.held_by.iter().map(|&h| depth(h)).collect();
            above.sort_unstable();
            let from = if d >= bypass { bypass } else { 0 };
            assert_eq!(above, (from..d).collect::<Vec<_>>(), "depth {d}");
            let outer = s.holding_set.map(depth);
            assert_eq!(outer, (d > from).then_some(from), "depth {d}");
            seen += 1;
        }
        // The head pairs may form no set of their own (the bypass root
        // makes the copies differ in nothing); every deeper depth does.
        assert!(seen >= len as usize - 1, "{seen} sets");
    }

    /// Subtrees large enough to be cut (chains, wide fans, a shared tail):
    /// the numbering must still be a preorder of the dominator tree.
    #[test]
    fn dominator_preorder_nests_every_subtree() {
        let mut text = String::from("t 1 Node\n");
        let n = 40_000u32;
        let mut x = 12345u64;
        for i in 1..=n {
            // Chains of 14,000 (i -> i+1), roots at their starts.
            write!(text, "o {i:x} 1 10").unwrap();
            if i < n && i % 14_000 != 0 {
                write!(text, " {:x}", i + 1).unwrap();
            }
            // Skips a little ahead within the segment: idoms above the parent.
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let ahead = i + 2 + (x >> 33) as u32 % 4;
            if i % 3 != 0 && ahead <= n && (i - 1) / 14_000 == (ahead - 1) / 14_000 {
                write!(text, " {ahead:x}").unwrap();
            }
            text.push('\n');
        }
        for r in [1u32, 14_001, 28_001] {
            writeln!(text, "r {r:x} 1 0").unwrap();
        }
        let dump =
            crate::import::netcf_text::parse_bytes(Path::new("t.txt"), text.as_bytes()).unwrap();
        let graph = HeapGraph::build(dump);
        let dom = DominatorTree::compute(&graph, &Progress::new()).unwrap();
        let tin = dominator_preorder(&dom);
        let reachable = dom.reachable_objects as usize;
        let mut seen = vec![false; reachable];
        for v in 0..n {
            let t = tin[v as usize];
            let p = dom.idom[v as usize];
            if !dom.is_reachable(v) {
                assert_eq!(t, NONE);
                continue;
            }
            assert!(
                !std::mem::replace(&mut seen[t as usize], true),
                "number {t} twice"
            );
            if p != SUPER_ROOT {
                let (tp, sp) = (tin[p as usize], dom.retained_objects[p as usize]);
                assert!(tp < t && t - tp < sp, "{v} outside its dominator {p}");
            }
        }
        assert!(seen.iter().all(|&s| s));
        assert!(dom.retained_objects.iter().any(|&r| r > 4096 * 2));
    }
}
