//! The dominator tree read back from a cache checked in two passes, so
//! that every later walk over it ends, sees each reachable object once
//! and meets retained sizes a fresh analysis would have computed: one
//! parallel pass in object order (an object is numbered exactly where it
//! is reachable; an unreachable one retains nothing), then one sequential
//! pass in preorder (`at_preorder`) with a stack of the ranges still open
//! (the current object's ancestors). The second reads each reachable
//! object's entries once, in the order of the preorder, where a check per
//! node (its children read off the numbering, each child's idom and sizes)
//! read them at random, several times.

use rayon::prelude::*;

use super::codec::CHUNK;
use super::layout::{corrupt, Corrupt};
use crate::graph::{DominatorTree, NOT_NUMBERED, NOT_REACHABLE, SUPER_ROOT};
use crate::model::Sizes;

/// Checks `dom` as read back (its reachable objects and bytes unset) and
/// sets its reachable objects and bytes.
pub(super) fn check(dom: &mut DominatorTree, sizes: &Sizes) -> Result<(), Corrupt> {
    dom.reachable_objects = check_unreachable(dom)?;
    crate::mem::checkpoint("cache: the unreachable objects");
    dom.reachable_bytes = check_preorder(dom, sizes)?;
    crate::mem::checkpoint("cache: the tree and its retained sizes");
    Ok(())
}

/// An object is numbered exactly where it is reachable (its idom not
/// `NOT_REACHABLE`), and an unreachable one retains nothing: one parallel
/// pass in object order. Returns how many are reachable.
fn check_unreachable(dom: &DominatorTree) -> Result<u64, Corrupt> {
    let (idom, number) = (&dom.idom, &dom.preorder_number);
    let (bytes, objects) = (&dom.retained_bytes, &dom.retained_objects);
    let reachable: Option<u64> = (0..idom.len())
        .into_par_iter()
        .with_min_len(1 << 16)
        .map(|o| match (idom.get(o), number.get(o)) {
            (NOT_REACHABLE, NOT_NUMBERED) => {
                (objects.get(o) == 0 && bytes.get(o) == 0).then_some(0)
            }
            (NOT_REACHABLE, _) | (_, NOT_NUMBERED) => None,
            _ => Some(1),
        })
        .sum();
    match reachable {
        Some(m) => Ok(m),
        None => corrupt("the dominator tree: an unreachable object numbered, or retaining"),
    }
}

/// How many objects ahead of the one it checks the preorder pass asks
/// the CPU for the entries it will read.
const AHEAD: usize = 16;

/// A node of the preorder pass whose range is still open: where its range
/// ends, and the retained bytes its children have yet to account for.
struct Open {
    node: u32,
    end: u32,
    left: u64,
}

/// One sequential pass over the preorder (`at_preorder`) with a stack of
/// the open ranges (the current object's ancestors): each entry is an
/// object (in range, numbered with its position: the preorder is the
/// numbers' inverse), its idom the innermost open range's object (the
/// super-root where none is open), its range of numbers (its number and
/// its retained objects, at least one) within that one's, and each closed
/// range's retained bytes its own plus its children's, without overflow.
/// With [`check_unreachable`] (the reachable objects are `m`, the
/// preorder's length), the idoms then form a tree whose subtrees are
/// exactly the ranges, so every walk over [`DominatorTree::children`]
/// ends and sees each reachable object once. Returns the reachable
/// objects' shallow bytes (the super-root's retained bytes).
fn check_preorder(dom: &DominatorTree, sizes: &Sizes) -> Result<u64, Corrupt> {
    let (idom, number, at) = (&dom.idom, &dom.preorder_number, &dom.at_preorder);
    let (bytes, objects) = (&dom.retained_bytes, &dom.retained_objects);
    let m = at.len();
    if m as u64 != dom.reachable_objects {
        return corrupt("the preorder is not the preorder numbers' inverse");
    }
    // The entries of the object AHEAD places on, asked for now: the
    // objects come in preorder, at random in object order.
    let fetch = |y: usize| {
        if y < idom.len() {
            number.prefetch(y);
            idom.prefetch(y);
            objects.prefetch(y);
            bytes.prefetch(y);
            sizes.prefetch(y);
        }
    };
    let mut open: Vec<Open> = Vec::new();
    let mut total = Some(0u64);
    // Closes the innermost open range: its children accounted for all its
    // retained bytes, which then count against its parent's.
    let close = |open: &mut Vec<Open>, total: &mut Option<u64>| -> bool {
        let Some(e) = open.pop() else { return false };
        let b = bytes.get(e.node as usize);
        match open.last_mut() {
            Some(p) => match p.left.checked_sub(b) {
                Some(left) => p.left = left,
                None => return false,
            },
            None => *total = total.and_then(|t| t.checked_add(b)),
        }
        e.left == 0
    };
    for chunk in 0..m.div_ceil(CHUNK) {
        let from = chunk * CHUNK;
        for (i, o) in at.range(from..(from + CHUNK).min(m)).enumerate() {
            let k = from + i;
            if let Some(y) = at.get_checked(k + AHEAD) {
                fetch(y as usize);
            }
            let k = k as u32;
            while open.last().is_some_and(|e| e.end <= k) {
                if !close(&mut open, &mut total) {
                    return corrupt("retained sizes do not add up over the dominator tree");
                }
            }
            let x = o as usize;
            if x >= idom.len() || number.get(x) != k {
                return corrupt("the preorder is not the preorder numbers' inverse");
            }
            let (parent, limit) = open
                .last()
                .map_or((SUPER_ROOT, m as u64), |e| (e.node, e.end.into()));
            let size = objects.get(x);
            let end = u64::from(k) + size;
            if idom.get(x) != parent || size == 0 || end > limit {
                return corrupt("the dominator tree is not a tree");
            }
            let Some(left) = bytes.get(x).checked_sub(sizes.get(x)) else {
                return corrupt("retained sizes do not add up over the dominator tree");
            };
            open.push(Open {
                node: o,
                end: end as u32,
                left,
            });
        }
        crate::mem::spill::release_all();
    }
    while !open.is_empty() {
        if !close(&mut open, &mut total) {
            return corrupt("retained sizes do not add up over the dominator tree");
        }
    }
    match total {
        Some(t) => Ok(t),
        None => corrupt("retained sizes do not add up over the dominator tree"),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::analysis::Analysis;
    use crate::graph::duplicates::DuplicateOptions;
    use crate::mem::Nodes;

    /// The check before this pass (cache version 7 as first written): the
    /// numbers a bijection onto `0..m` and `at_preorder` their inverse,
    /// each object's range within its idom's, then each node's children as
    /// read off the numbering with that node as idom, adding up its
    /// retained sizes and numbering `m` in all. Returns the reachable
    /// objects and bytes where it accepts.
    fn per_node(dom: &DominatorTree, sizes: &Sizes) -> Option<(u64, u64)> {
        let (idom, number, at) = (
            dom.idom.to_vec(),
            dom.preorder_number.to_vec(),
            dom.at_preorder.to_vec(),
        );
        let (bytes, objects) = (&dom.retained_bytes, &dom.retained_objects);
        let n = idom.len();
        let m = number.iter().filter(|&&t| t != NOT_NUMBERED).count();
        let mut taken = vec![false; m];
        for &t in number.iter().filter(|&&t| t != NOT_NUMBERED) {
            if t as usize >= m || std::mem::replace(&mut taken[t as usize], true) {
                return None;
            }
        }
        let inverse = at.len() == m
            && at
                .iter()
                .enumerate()
                .all(|(k, &o)| (o as usize) < n && number[o as usize] as usize == k);
        let end = |o: usize| number[o] as u64 + objects.get(o);
        let tree = (0..n).all(|o| match idom[o] {
            NOT_REACHABLE => number[o] == NOT_NUMBERED,
            _ if number[o] == NOT_NUMBERED || objects.get(o) == 0 => false,
            SUPER_ROOT => end(o) <= m as u64,
            d => (d as usize) < n && number[d as usize] < number[o] && end(o) <= end(d as usize),
        });
        if !inverse || !tree {
            return None;
        }
        let mut dom = dom.clone();
        dom.reachable_objects = m as u64;
        let mut count = 0;
        for p in 0..=n {
            let expect = if p == n { SUPER_ROOT } else { p as u32 };
            if p < n && idom[p] == NOT_REACHABLE {
                if bytes.get(p) != 0 || objects.get(p) != 0 {
                    return None;
                }
                continue;
            }
            let (mut b, mut o) = (if p == n { 0 } else { sizes.get(p) }, 0u64);
            for c in dom.children(p as u32) {
                if idom[c as usize] != expect {
                    return None;
                }
                b = b.checked_add(bytes.get(c as usize))?;
                o += objects.get(c as usize);
                count += 1;
            }
            let listed = if p == n { m as u64 } else { objects.get(p) - 1 };
            if o != listed || (p < n && b != bytes.get(p)) {
                return None;
            }
        }
        let reachable_bytes = (0..n)
            .filter(|&o| number[o] != NOT_NUMBERED)
            .map(|o| sizes.get(o))
            .sum();
        (count == m).then_some((m as u64, reachable_bytes))
    }

    fn checked(dom: &DominatorTree, sizes: &Sizes) -> Option<(u64, u64)> {
        let mut dom = dom.clone();
        check(&mut dom, sizes).ok()?;
        Some((dom.reachable_objects, dom.reachable_bytes))
    }

    /// A heap of `n` objects, `refs` their references (indices taken
    /// modulo `n`), `roots` its roots, sizes 1 to 4 (ties and equal sums).
    fn heap(n: usize, refs: &[(usize, usize)], roots: &[usize]) -> Analysis {
        let mut text = String::from("t 1 A\n");
        for o in 0..n {
            text += &format!("o {} 1 {}", o + 1, 1 + o % 4);
            for &(_, to) in refs.iter().filter(|&&(from, _)| from % n == o) {
                text += &format!(" {}", to % n + 1);
            }
            text += "\n";
        }
        for &r in roots {
            text += &format!("r {} 1 0\n", r % n + 1);
        }
        Analysis::from_bytes("t.txt", text.as_bytes(), &DuplicateOptions::default()).unwrap()
    }

    /// `nodes` with value `i` replaced by `x`.
    fn with(nodes: &Nodes, i: usize, x: u32) -> Nodes {
        let mut v = nodes.to_vec();
        v[i] = x;
        v.into()
    }

    /// One forgery of the tree's arrays: which array, which entry, and a
    /// value (`what` picks how the value is made from `v`).
    fn forge(dom: &mut DominatorTree, (array, at, what, v): (u8, usize, u8, usize)) {
        let n = dom.idom.len();
        let pick = |len: usize| at % len.max(1);
        let value = |old: u32| -> u32 {
            match what % 5 {
                0 => (v % (n + 2)) as u32,
                1 => old.wrapping_add(1),
                2 => old.wrapping_sub(1),
                3 => SUPER_ROOT,
                _ => u32::MAX,
            }
        };
        match array % 6 {
            0 => {
                let i = pick(n);
                let x = value(dom.idom.get(i));
                dom.idom = with(&dom.idom, i, x);
            }
            1 => {
                let i = pick(n);
                let x = value(dom.preorder_number.get(i));
                dom.preorder_number = with(&dom.preorder_number, i, x);
            }
            2 if !dom.at_preorder.is_empty() => {
                let i = pick(dom.at_preorder.len());
                let x = value(dom.at_preorder.get(i));
                dom.at_preorder = with(&dom.at_preorder, i, x);
            }
            2 => dom.at_preorder = vec![0].into(),
            3 => {
                let i = pick(n);
                let mut o = dom.retained_objects.to_vec();
                o[i] = value(o[i] as u32).into();
                dom.retained_objects = o.into();
            }
            4 => {
                let mut b = dom.retained_bytes.to_vec();
                let i = pick(n);
                b[i] = match what % 4 {
                    0 => v as u64,
                    1 => b[i].wrapping_add(1),
                    2 => b[i].wrapping_sub(1),
                    _ => u64::MAX - b[i],
                };
                dom.retained_bytes = b.into();
            }
            _ => {
                // Two objects' entries swapped, in every array at once
                // or in one.
                let (i, j) = (pick(n), v % n.max(1));
                if what % 2 == 0 {
                    let mut o = dom.retained_objects.to_vec();
                    o.swap(i, j);
                    dom.retained_objects = o.into();
                } else {
                    dom.idom.edit(|v| v.swap(i, j));
                }
            }
        }
    }

    proptest! {
        /// The preorder pass accepts exactly the trees the per-node check
        /// accepted, forged or not, with the same reachable objects and
        /// bytes; every unforged tree is accepted.
        #[test]
        fn the_preorder_pass_accepts_what_the_per_node_check_did(
            n in 1usize..24,
            refs in proptest::collection::vec((0usize..64, 0usize..64), 0..60),
            roots in proptest::collection::vec(0usize..64, 1..4),
            lies in proptest::collection::vec((0u8..6, 0usize..64, 0u8..5, 0usize..64), 0..3),
        ) {
            let a = heap(n, &refs, &roots);
            let sizes = &a.graph.dump.sizes;
            let mut dom = (*a.dom).clone();
            prop_assert_eq!(
                checked(&dom, sizes),
                Some((a.dom.reachable_objects, a.dom.reachable_bytes))
            );
            for lie in lies {
                forge(&mut dom, lie);
            }
            prop_assert_eq!(checked(&dom, sizes), per_node(&dom, sizes));
        }
    }
}
