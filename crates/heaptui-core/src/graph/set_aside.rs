//! The dominator tree's `idom` and preorder numbers set aside while a
//! stage does not read them, and made again, exactly, when it ends.
//!
//! The duplicates' candidates and verification are the whole report's
//! highest point on every format measured, and they read nothing of the
//! tree but which objects are reachable. `idom` and `preorder_number` are
//! 6 bytes an object there (bit-packed, `crate::mem::nodes`: 2.9–3 each on
//! heaps of 6–10 M objects; 4 each before), and both follow from what
//! stays:
//!
//! * `at_preorder` lists the reachable objects in the tree's preorder, and
//!   `retained_objects` is each one's subtree size, so the subtree of the
//!   object at position `k` is the positions `k .. k + retained_objects`;
//! * an object's number is its position in `at_preorder`;
//! * its idom is the nearest object before it in the preorder whose range
//!   still holds its position (the super-root where none does). So a
//!   node's children are the object right after it and each next one
//!   right past the previous one's range, up to the end of its own range:
//!   each node writes its children's idom, in parallel over the preorder,
//!   each object written once, and the super-root's children come from
//!   one run from position 0. No array but the two it makes;
//! * an unreachable object retains nothing (`retained_objects` 0) and keeps
//!   `NOT_REACHABLE` and `NOT_NUMBERED`.
//!
//! While they are aside, [`DominatorTree::is_reachable`] and
//! [`DominatorTree::super_root`] answer from `retained_objects`; anything
//! else that reads them would find them empty. So only a caller that holds
//! the tree alone (the report's pipeline, once no view shares it) sets them
//! aside, and only for the span of one closure, which is handed a
//! [`ParentsAside`]: the reads that still hold, and no way to the rest
//! (see [`DominatorTree::with_parents_aside`]). Arrays mapped from a file (a
//! cache, a spill) are left as they are: their pages are the kernel's to
//! drop, and making them again in memory would break the budget.

use super::dominators::{at_preorder_of, DominatorTree, NOT_NUMBERED, NOT_REACHABLE, SUPER_ROOT};
use rayon::prelude::*;

use crate::mem::{Nodes, Packed};

/// Positions of the preorder per parallel job.
const BLOCK: usize = 1 << 14;

/// How many positions ahead of the one it places the pass asks the CPU for
/// the entries it will write and read (the objects come in preorder, at
/// random in object order).
const AHEAD: usize = 16;

/// The reads of a [`DominatorTree`] that hold while its idom and
/// preorder numbers are set aside: reachability, the super-root, the
/// retained sizes and the preorder. What
/// [`DominatorTree::with_parents_aside`] hands its closure, and what the
/// duplicates' candidates and verification read (made of a whole tree by
/// [`DominatorTree::parents_aside`] where it is shared).
#[derive(Clone, Copy)]
pub struct ParentsAside<'a> {
    tree: &'a DominatorTree,
}

impl ParentsAside<'_> {
    /// [`DominatorTree::is_reachable`].
    pub fn is_reachable(&self, object: u32) -> bool {
        self.tree.is_reachable(object)
    }

    /// [`DominatorTree::super_root`].
    pub fn super_root(&self) -> u32 {
        self.tree.super_root()
    }

    /// [`DominatorTree::retained_bytes`].
    pub fn retained_bytes(&self, object: usize) -> u64 {
        self.tree.retained_bytes(object)
    }

    /// [`DominatorTree::retained_objects`].
    pub fn retained_objects(&self, object: usize) -> u32 {
        self.tree.retained_objects(object)
    }

    /// [`DominatorTree::at_preorder`].
    pub fn at_preorder(&self) -> &Nodes {
        &self.tree.at_preorder
    }

    /// The lengths of `idom` and `preorder_number` as held (0 while they
    /// are set aside): for the tests that check they are.
    #[cfg(feature = "testing")]
    pub(crate) fn parents_held(&self) -> (usize, usize) {
        (self.tree.idom.len(), self.tree.preorder_number.len())
    }
}

impl DominatorTree {
    /// The reads of [`ParentsAside`] on the whole tree (where it is
    /// shared and nothing is set aside).
    pub fn parents_aside(&self) -> ParentsAside<'_> {
        ParentsAside { tree: self }
    }

    /// Runs `f` on the tree with `idom` and `preorder_number` freed (6
    /// bytes an object), then makes them again from `at_preorder` and the
    /// retained objects, exactly as they were, whatever `f` returns (the
    /// numbers first, each made as `u32`s and packed before the next, so
    /// that 4 bytes an object is the most this adds). Where
    /// they are mapped from a file, or empty, `f` runs on the tree as it
    /// is. `f` is handed a [`ParentsAside`], which reads only what still
    /// holds.
    pub(crate) fn with_parents_aside<R>(&mut self, f: impl FnOnce(ParentsAside<'_>) -> R) -> R {
        if self.idom.is_mapped() || self.preorder_number.is_mapped() || self.idom.is_empty() {
            return f(self.parents_aside());
        }
        self.idom = Nodes::default();
        self.preorder_number = Nodes::default();
        crate::mem::checkpoint("dominator tree: idom and preorder numbers set aside");
        let r = f(self.parents_aside());
        let n = self.retained_objects.len();
        self.preorder_number = numbers(&self.at_preorder, n);
        self.idom = parents(&self.at_preorder, &self.retained_objects);
        crate::mem::checkpoint("dominator tree: idom and preorder numbers made again");
        r
    }

    /// Runs `f` on the tree with `at_preorder` freed (3 bytes an object),
    /// then makes it again from the preorder numbers (a parallel scatter)
    /// whatever `f` returns. Where it is mapped from a file, or empty, `f`
    /// runs on the tree as it is. `f` may ask anything but the preorder
    /// and the children.
    pub(crate) fn with_preorder_aside<R>(&mut self, f: impl FnOnce(&DominatorTree) -> R) -> R {
        if self.at_preorder.is_mapped()
            || self.preorder_number.is_mapped()
            || self.at_preorder.is_empty()
        {
            return f(self);
        }
        self.at_preorder = Nodes::default();
        crate::mem::checkpoint("dominator tree: the preorder set aside");
        let r = f(self);
        let reachable = self.reachable_objects as usize;
        self.at_preorder = at_preorder_of(&self.preorder_number, reachable, None);
        crate::mem::checkpoint("dominator tree: the preorder made again");
        r
    }
}

/// Each of the `n` objects' preorder number, the preorder's inverse
/// ([`crate::mem::invert_into`]), written packed; unreachable objects keep
/// `NOT_NUMBERED`.
fn numbers(at: &Nodes, n: usize) -> Nodes {
    let _span = tracing::debug_span!(target: "heaptui::profile", "numbers made again").entered();
    // Every entry of `at` is an object: none is `NOT_NUMBERED`.
    Nodes::scattered(n, at.len() as u32, NOT_NUMBERED, None, |slots| {
        crate::mem::invert_into(at, NOT_NUMBERED, slots)
    })
}

/// Each object's idom, from the preorder and the subtree sizes (see the
/// module doc): unreachable objects (retaining nothing) keep
/// `NOT_REACHABLE`. The super-root's children are read off in one
/// sequential run from position 0, and every other object is written by
/// its parent, in parallel over the preorder.
fn parents(at: &Nodes, objects: &Packed) -> Nodes {
    let _span = tracing::debug_span!(target: "heaptui::profile", "idom made again").entered();
    let n = objects.len();
    let m = at.len();
    // The range of the object at position k ends at k + size(k); at least
    // one position, so that every walk below moves on.
    let size = |k: usize| (objects.get(at.get(k) as usize) as usize).max(1);
    Nodes::scattered(n, n as u32, NOT_REACHABLE, None, |parents| {
        let mut k = 0;
        while k < m {
            parents.set(at.get(k) as usize, SUPER_ROOT);
            k += size(k);
        }
        (0..m.div_ceil(BLOCK)).into_par_iter().for_each(|b| {
            let from = b * BLOCK;
            for (k, x) in (from..).zip(at.range(from..(from + BLOCK).min(m))) {
                // The object AHEAD places on: its idom is mostly written
                // just before (most nodes are their first child's
                // previous position).
                if let Some(y) = at.get_checked(k + AHEAD) {
                    parents.prefetch(y as usize);
                    objects.prefetch(y as usize);
                }
                let end = (k + size(k)).min(m);
                let mut child = k + 1;
                while child < end {
                    parents.set(at.get(child) as usize, x);
                    child += size(child);
                }
            }
        });
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain as deep as the heap: every step up is taken once, and the
    /// idoms are the chain's.
    #[test]
    fn a_deep_chain_comes_back() {
        let n = 100_000u32;
        let mut at = Vec::new();
        let mut objects = Vec::new();
        for k in 0..n {
            at.push(k);
            objects.push(u64::from(n - k));
        }
        let (at, objects) = (Nodes::from(at), Packed::from(objects));
        let (idom, number) = (parents(&at, &objects), numbers(&at, objects.len()));
        assert_eq!(idom.get(0), SUPER_ROOT);
        assert!((1..n as usize).all(|k| idom.get(k) == k as u32 - 1));
        assert!((0..n as usize).all(|k| number.get(k) == k as u32));
    }
}
