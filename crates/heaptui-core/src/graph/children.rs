//! A node's children in the dominator tree, read off the tree's preorder
//! numbering rather than from children lists (4 bytes an object rather than
//! 8): the subtree of `v` is numbered `preorder_number[v] ..
//! preorder_number[v] + retained_objects[v]`, so its first child is the
//! object numbered `preorder_number[v] + 1` and each next one is numbered
//! just past the previous one's subtree, up to the end of `v`'s range (the
//! super-root's range: all the numbers, `0 .. reachable_objects`). That yields the children
//! in the order of the DFS from the super-root, at one read of
//! [`DominatorTree::at_preorder`] and one of the retained objects each.
//!
//! Where the order shows (the dominators views, the reports' top
//! dominators, the leak suspects' descent), the children are ranked by
//! retained bytes descending then object index: all of them
//! ([`DominatorTree::children_sorted`]), or only the first `k`
//! ([`DominatorTree::largest_children`], a selection then a sort of `k`).

use std::cmp::Reverse;

use super::{DominatorTree, NOT_NUMBERED};

/// How many of the super-root's largest children
/// [`DominatorTree::largest_roots`] keeps.
pub const ROOTS_KEPT: usize = 100;

/// A child's rank: by retained bytes descending, then object index.
pub type Rank = (Reverse<u64>, u32);

/// The children of one node in DFS order ([`DominatorTree::children`]).
#[derive(Debug, Clone)]
pub struct Children<'t> {
    dom: &'t DominatorTree,
    next: u64,
    end: u64,
}

impl Iterator for Children<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.next >= self.end {
            return None;
        }
        let c = self.dom.at_preorder.get(self.next as usize);
        // At least one: a checked tree (fresh, or a cache's) has no empty
        // subtree, and a step of one keeps a forged one from looping.
        self.next += u64::from(self.dom.retained_objects(c as usize).max(1));
        Some(c)
    }
}

impl std::iter::FusedIterator for Children<'_> {}

impl DominatorTree {
    /// The numbers `node`'s children take: from the first child's to the
    /// end of `node`'s range (empty for an unreachable object).
    fn child_range(&self, node: u32) -> (u64, u64) {
        if node == self.super_root() {
            return (0, self.at_preorder.len() as u64);
        }
        match self.preorder_number.get(node as usize) {
            NOT_NUMBERED => (0, 0),
            k => {
                let k = u64::from(k);
                (k + 1, k + u64::from(self.retained_objects(node as usize)))
            }
        }
    }

    /// The children of `node` (an object, or [`DominatorTree::super_root`])
    /// in the order of the DFS from the super-root: for the super-root the
    /// DFS's roots in the order it took them.
    pub fn children(&self, node: u32) -> Children<'_> {
        let (next, end) = self.child_range(node);
        Children {
            dom: self,
            next,
            end,
        }
    }

    /// Whether `node` has a child: O(1).
    pub fn has_children(&self, node: u32) -> bool {
        let (next, end) = self.child_range(node);
        next < end
    }

    /// How many of the super-root's largest children
    /// [`DominatorTree::largest_roots`] keeps.
    pub const ROOTS_KEPT: usize = 100;

    /// A child's rank ([`Rank`]): sorting by it gives the children by
    /// retained bytes descending, then object index.
    pub fn rank(&self, child: u32) -> Rank {
        (Reverse(self.retained_bytes(child as usize)), child)
    }

    /// The children of `node` by retained bytes descending, then index:
    /// O(c log c) for `c` children.
    pub fn children_sorted(&self, node: u32) -> Vec<u32> {
        let mut ranked = Vec::new();
        self.children_sorted_into(node, &mut ranked);
        ranked.into_iter().map(|(_, c)| c).collect()
    }

    /// [`DominatorTree::children_sorted`] into `ranked` (cleared first),
    /// each child with its rank: for walks that sort many nodes' children
    /// in one buffer.
    pub fn children_sorted_into(&self, node: u32, ranked: &mut Vec<Rank>) {
        ranked.clear();
        ranked.extend(self.children(node).map(|c| self.rank(c)));
        ranked.sort_unstable();
    }

    /// The `k` largest children of `node` as
    /// [`DominatorTree::children_sorted`] would begin: a selection over the
    /// `c` children, then a sort of `k` (O(c + k log k)).
    pub fn largest_children(&self, node: u32, k: usize) -> Vec<u32> {
        self.largest_of(self.children(node), k)
    }

    /// The `k` largest of `objects` by retained bytes descending, then
    /// index, in that order: a selection, then a sort of `k`.
    pub fn largest_of(&self, objects: impl IntoIterator<Item = u32>, k: usize) -> Vec<u32> {
        if k == 0 {
            return Vec::new();
        }
        let mut ranked: Vec<Rank> = objects.into_iter().map(|c| self.rank(c)).collect();
        if k < ranked.len() {
            ranked.select_nth_unstable(k - 1);
            ranked.truncate(k);
        }
        ranked.sort_unstable();
        ranked.into_iter().map(|(_, c)| c).collect()
    }

    /// The child of `node` that [`DominatorTree::children_sorted`] puts
    /// first: the largest retained bytes, the lowest index among equals.
    pub fn largest_child(&self, node: u32) -> Option<u32> {
        self.children(node).min_by_key(|&c| self.rank(c))
    }

    /// The super-root's [`ROOTS_KEPT`] largest children (all where it has
    /// fewer) by retained bytes descending, then index: selected at the
    /// first call (O(its children)), then kept, so that a view may list
    /// them every frame.
    pub fn largest_roots(&self) -> &[u32] {
        self.largest_roots
            .get_or_init(|| self.largest_children(self.super_root(), ROOTS_KEPT))
    }
}
