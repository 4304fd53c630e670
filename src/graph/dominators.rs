//! Dominator tree from the super-root (an edge to every strongly rooted
//! object) by Semi-NCA (Georgiadis–Tarjan, as in LLVM), iterative throughout
//! so a chain of millions of objects cannot overflow the stack. Then retained
//! bytes and objects by one pass in reverse DFS preorder, and the tree's
//! children lists sorted by retained bytes.

use rayon::prelude::*;

use super::{Csr, HeapGraph};
use crate::progress::{Cancelled, Progress, Stage};

/// `idom` of an object whose immediate dominator is the super-root.
pub const SUPER_ROOT: u32 = u32::MAX - 1;
/// `idom` of an object no strong root reaches.
pub const NOT_REACHABLE: u32 = u32::MAX;

const UNSEEN: u32 = u32::MAX;

#[derive(Debug, Clone, Default)]
pub struct DominatorTree {
    /// Per object: its immediate dominator, [`SUPER_ROOT`] or [`NOT_REACHABLE`].
    pub idom: Vec<u32>,
    /// Per object: shallow bytes of its dominator subtree (0 if unreachable).
    pub retained_bytes: Vec<u64>,
    /// Per object: objects in its dominator subtree (0 if unreachable).
    pub retained_objects: Vec<u32>,
    /// Children in the dominator tree, by retained bytes descending then
    /// index; node `objects` (the last) is the super-root.
    pub children: Csr,
    /// Reachable objects in DFS preorder from the super-root (parents of the
    /// DFS tree first, so every dominator precedes what it dominates).
    pub preorder: Vec<u32>,
    pub reachable_objects: u64,
    pub reachable_bytes: u64,
}

impl DominatorTree {
    pub fn compute(graph: &HeapGraph, progress: &Progress) -> Result<DominatorTree, Cancelled> {
        compute(
            graph.objects(),
            &graph.dump.refs,
            &graph.retainers,
            &graph.strong_roots,
            &graph.dump.sizes,
            progress,
        )
    }

    pub fn is_reachable(&self, object: u32) -> bool {
        self.idom[object as usize] != NOT_REACHABLE
    }

    /// The super-root's index in [`DominatorTree::children`].
    pub fn super_root(&self) -> u32 {
        self.idom.len() as u32
    }

    /// Children of `node` (an object, or [`DominatorTree::super_root`]).
    pub fn children_of(&self, node: u32) -> &[u32] {
        self.children.neighbors(node)
    }

    /// The object's chain of dominators, nearest first, ending below the
    /// super-root; empty for unreachable objects and the super-root's children.
    pub fn dominators_of(&self, object: u32) -> Vec<u32> {
        let mut path = Vec::new();
        let mut d = self.idom[object as usize];
        while d != SUPER_ROOT && d != NOT_REACHABLE {
            path.push(d);
            d = self.idom[d as usize];
        }
        path
    }

    /// Whether `a` dominates `b` (every object dominates itself).
    pub fn dominates(&self, a: u32, b: u32) -> bool {
        let mut x = b;
        loop {
            if x == a {
                return true;
            }
            match self.idom[x as usize] {
                SUPER_ROOT | NOT_REACHABLE => return false,
                d => x = d,
            }
        }
    }
}

/// The algorithm on plain arrays (also used by tests and benchmarks).
pub fn compute(
    n: usize,
    refs: &Csr,
    retainers: &Csr,
    strong_roots: &[u32],
    sizes: &[u64],
    progress: &Progress,
) -> Result<DominatorTree, Cancelled> {
    progress.start(Stage::Dominators, 4);
    assert!(n < SUPER_ROOT as usize, "too many objects for u32 indices");

    let mut laps = crate::progress::Laps::new("dominators");
    // 1. Iterative DFS from the super-root: preorder numbers (0 = super-root).
    let mut pre = vec![UNSEEN; n];
    let mut vertex: Vec<u32> = Vec::with_capacity(n + 1);
    let mut parent: Vec<u32> = Vec::with_capacity(n + 1);
    vertex.push(SUPER_ROOT);
    parent.push(0);
    {
        let mut stack: Vec<(u32, u64)> = Vec::new();
        for &r in strong_roots {
            if pre[r as usize] != UNSEEN {
                continue;
            }
            pre[r as usize] = vertex.len() as u32;
            vertex.push(r);
            parent.push(0);
            stack.push((r, refs.offsets[r as usize]));
            while let Some(top) = stack.last_mut() {
                let (v, next) = *top;
                if next == refs.offsets[v as usize + 1] {
                    stack.pop();
                    continue;
                }
                top.1 += 1;
                let w = refs.targets[next as usize];
                if pre[w as usize] == UNSEEN {
                    pre[w as usize] = vertex.len() as u32;
                    vertex.push(w);
                    parent.push(pre[v as usize]);
                    stack.push((w, refs.offsets[w as usize]));
                    // Its successors are visited next: start their misses
                    // together rather than one after another.
                    for &x in refs.neighbors(w).iter().take(8) {
                        crate::mem::prefetch(&pre[x as usize]);
                    }
                }
            }
        }
    }
    let m = vertex.len();
    laps.lap("dfs");
    progress.set_done(1);
    progress.check()?;

    // 2. Semidominators in reverse preorder with path compression (Semi-NCA
    // only needs the minimum semidominator on a path, not the vertex that
    // has it). `link[k]` = (compressed ancestor, best semi on the path).
    let is_root: Vec<bool> = {
        let mut r = vec![false; m];
        for &s in strong_roots {
            r[pre[s as usize] as usize] = true;
        }
        r
    };
    let mut semi: Vec<u32> = (0..m as u32).collect();
    let mut link: Vec<(u32, u32)> = crate::mem::with_capacity(m);
    link.extend((0..m as u32).map(|k| (parent[k as usize], k)));
    let mut path: Vec<u32> = Vec::new();
    for w in (1..m).rev() {
        if w.is_multiple_of(1 << 20) {
            progress.check()?;
        }
        // A software pipeline over the coming vertices: their retainer
        // lists, the lists' preorder numbers, then their links, each fetched
        // a few iterations before use.
        if w > 24 {
            crate::mem::prefetch(&retainers.offsets[vertex[w - 24] as usize]);
        }
        if w > 16 {
            // `prefetch_targets` reads with `get`: a graph without a single
            // reference has an empty targets array.
            retainers.prefetch_targets(vertex[w - 16]);
        }
        if w > 8 {
            for &v in retainers.neighbors(vertex[w - 8]).iter().take(4) {
                crate::mem::prefetch(&pre[v as usize]);
            }
        }
        if w > 4 {
            for &v in retainers.neighbors(vertex[w - 4]).iter().take(4) {
                let pv = pre[v as usize];
                if pv != UNSEEN {
                    crate::mem::prefetch(&link[pv as usize]);
                }
            }
        }
        let mut s = parent[w];
        let last_linked = w as u32 + 1;
        if is_root[w] {
            s = 0; // the super-root is a predecessor
        }
        for &v in retainers.neighbors(vertex[w]) {
            let pv = pre[v as usize];
            if pv == UNSEEN {
                continue; // unreachable retainers do not count
            }
            let best = eval(pv, last_linked, &mut link, &mut path);
            if best < s {
                s = best;
            }
        }
        semi[w] = s;
        link[w].1 = s;
    }
    drop(link);
    drop(path);
    drop(is_root);
    drop(pre);
    progress.set_done(2);
    progress.check()?;
    laps.lap("semi");

    // 3. NCA: idom is the nearest ancestor of the DFS parent not below semi.
    let mut idom_pre: Vec<u32> = crate::mem::filled(m, 0u32);
    for w in 1..m {
        let mut d = parent[w];
        while d > semi[w] {
            d = idom_pre[d as usize];
        }
        idom_pre[w] = d;
    }
    drop(semi);
    drop(parent);

    // 4. Retained sizes bottom-up in reverse preorder.
    let mut ret_bytes: Vec<u64> = Vec::with_capacity(m);
    ret_bytes.push(0);
    ret_bytes.extend(vertex[1..].iter().map(|&v| sizes[v as usize]));
    let mut ret_objects: Vec<u32> = vec![1; m];
    ret_objects[0] = 0;
    for w in (1..m).rev() {
        let d = idom_pre[w] as usize;
        ret_bytes[d] += ret_bytes[w];
        ret_objects[d] += ret_objects[w];
    }
    progress.set_done(3);
    laps.lap("nca, retained");

    let mut idom = vec![NOT_REACHABLE; n];
    let mut retained_bytes = vec![0u64; n];
    let mut retained_objects = vec![0u32; n];
    for w in 1..m {
        let v = vertex[w] as usize;
        let d = idom_pre[w];
        idom[v] = if d == 0 {
            SUPER_ROOT
        } else {
            vertex[d as usize]
        };
        retained_bytes[v] = ret_bytes[w];
        retained_objects[v] = ret_objects[w];
    }
    let reachable_bytes = ret_bytes[0];
    drop(ret_bytes);
    drop(ret_objects);
    drop(idom_pre);

    // 5. Children lists, largest first.
    // The tree as "each object → its idom" (the super-root has none), then
    // reversed by the parallel counting sort.
    let mut children = {
        let mut offsets: Vec<u64> = crate::mem::with_capacity(n + 2);
        let mut targets: Vec<u32> = crate::mem::with_capacity(m - 1);
        offsets.push(0);
        for &d in &idom {
            match d {
                NOT_REACHABLE => {}
                SUPER_ROOT => targets.push(n as u32),
                d => targets.push(d),
            }
            offsets.push(targets.len() as u64);
        }
        offsets.push(targets.len() as u64);
        Csr { offsets, targets }.transpose()
    };
    {
        let offsets = &children.offsets;
        let mut rest: &mut [u32] = &mut children.targets;
        let mut slices: Vec<&mut [u32]> = Vec::with_capacity(n + 1);
        for i in 0..=n {
            let len = (offsets[i + 1] - offsets[i]) as usize;
            let (head, tail) = rest.split_at_mut(len);
            if len > 1 {
                slices.push(head);
            }
            rest = tail;
        }
        slices.par_iter_mut().for_each(|s| {
            s.sort_unstable_by(|&a, &b| {
                retained_bytes[b as usize]
                    .cmp(&retained_bytes[a as usize])
                    .then(a.cmp(&b))
            })
        });
    }
    vertex.remove(0);
    laps.lap("children");
    progress.set_done(4);
    Ok(DominatorTree {
        idom,
        retained_bytes,
        retained_objects,
        children,
        reachable_objects: (m - 1) as u64,
        reachable_bytes,
        preorder: vertex,
    })
}

/// The minimum semidominator on the compressed forest path from `v` up to
/// (not including) the first unlinked ancestor; compresses the path. An
/// unlinked `v` is its own semidominator.
#[inline]
fn eval(v: u32, last_linked: u32, link: &mut [(u32, u32)], path: &mut Vec<u32>) -> u32 {
    if v < last_linked {
        return v;
    }
    let (anc, best) = link[v as usize];
    if anc < last_linked {
        return best;
    }
    path.clear();
    let mut x = v;
    while link[x as usize].0 >= last_linked {
        path.push(x);
        x = link[x as usize].0;
    }
    // x's ancestor is unlinked; fold the minimum downwards.
    let mut p = x;
    while let Some(y) = path.pop() {
        let (p_anc, p_best) = link[p as usize];
        let entry = &mut link[y as usize];
        entry.0 = p_anc;
        if p_best < entry.1 {
            entry.1 = p_best;
        }
        p = y;
    }
    link[v as usize].1
}
