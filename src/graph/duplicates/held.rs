//! Held duplicates (SPEC §2.4): set S is fully held by set H when no member
//! of S is reachable from a strong root without passing through a member of
//! H. Exact, and local in practice:
//!
//! - Candidates. If H holds S, every root path to a member s of S contains a
//!   member of H; so the holders of S are among the sets met on one root path
//!   to one member (taken greedily towards the DFS roots: each step goes to
//!   the retainer earliest in DFS preorder, which strictly decreases).
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
    /// Position in the DFS preorder of the dominator computation.
    dfs_pos: Vec<u32>,
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
    /// the members of `h`.
    fn reachable_avoiding(&self, v: u32, h: u32, seen: &mut HashSet<u32, IntBuild>) -> bool {
        seen.clear();
        let mut stack = vec![v];
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
            for &r in self.graph.retainers_of(x) {
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

    /// The sets on one root path to `s` (excluding `s`'s own set).
    fn path_candidates(&self, s: u32, own: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut x = s;
        loop {
            let here = self.dfs_pos[x as usize];
            let mut best = NONE;
            let mut best_pos = here;
            for &r in self.graph.retainers_of(x) {
                let p = self.dfs_pos[r as usize];
                if p < best_pos {
                    best_pos = p;
                    best = r;
                }
            }
            if best == NONE {
                break;
            }
            x = best;
            let set = self.set_of[x as usize];
            if set != NONE && set != own {
                out.push(set);
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Fills `held_by` and `holding_set` of every set; `sets[i].id == i`.
pub(crate) fn compute_held(
    graph: &HeapGraph,
    dom: &DominatorTree,
    sets: &mut [DuplicateSet],
    progress: &Progress,
) -> Result<(), Cancelled> {
    if sets.is_empty() {
        return Ok(());
    }
    let n = graph.objects();
    let t = std::time::Instant::now();
    let trace = std::env::var_os("HEAPTUI_TRACE").is_some();
    let mut set_of = vec![NONE; n];
    for s in sets.iter() {
        for &m in &s.members {
            set_of[m as usize] = s.id;
        }
    }
    let tin = dominator_preorder(dom);
    progress.check()?;
    let mut dfs_pos = vec![NONE; n];
    for (i, &o) in dom.preorder.iter().enumerate() {
        dfs_pos[o as usize] = i as u32;
    }
    let mut strong = vec![false; n];
    for &r in &graph.strong_roots {
        strong[r as usize] = true;
    }
    let member_tins = sets
        .iter()
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
        strong,
        member_tins,
    };
    if trace {
        eprintln!("held: index {} ms", t.elapsed().as_millis());
    }
    let held_by: Vec<Vec<u32>> = sets
        .par_iter()
        .map_init(HashSet::<u32, IntBuild>::default, |seen, s| {
            if progress.is_cancelled() {
                return Vec::new();
            }
            // A strongly rooted member is reachable whatever is removed.
            if s.members.iter().any(|&m| index.strong[m as usize]) {
                return Vec::new();
            }
            index
                .path_candidates(s.members[0], s.id)
                .into_iter()
                .filter(|&h| {
                    s.members
                        .iter()
                        .all(|&m| !index.reachable_avoiding(m, h, seen))
                })
                .collect()
        })
        .collect();
    progress.check()?;
    if trace {
        eprintln!("held: checks {} ms", t.elapsed().as_millis());
    }
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

/// Preorder numbers of the dominator tree (iterative; NONE if unreachable).
/// The super-root's subtrees get consecutive ranges of known sizes (their
/// retained objects), so they are numbered in parallel.
fn dominator_preorder(dom: &DominatorTree) -> Vec<u32> {
    let mut tin = vec![NONE; dom.idom.len()];
    let tops = dom.children_of(dom.super_root());
    let mut starts = Vec::with_capacity(tops.len());
    let mut next = 0u32;
    for &t in tops {
        starts.push(next);
        next += dom.retained_objects[t as usize];
    }
    let out = crate::mem::as_atomic(&mut tin);
    tops.par_iter()
        .zip(starts)
        .for_each_init(Vec::new, |stack, (&top, start)| {
            let mut next = start;
            stack.clear();
            stack.push(top);
            while let Some(v) = stack.pop() {
                // Each subtree writes only its own objects' slots.
                out[v as usize].store(next, std::sync::atomic::Ordering::Relaxed);
                next += 1;
                stack.extend(dom.children_of(v).iter().rev());
            }
        });
    tin
}
