//! The heap graph and the algorithms over it: CSR adjacency (forward and
//! retainers), strong roots, the dominator tree and retained sizes, and
//! duplicate instances. Pure data and rayon; no UI.

pub(crate) mod children;
pub(crate) mod dominators;
pub mod duplicates;
mod set_aside;
pub use set_aside::ParentsAside;

pub use crate::model::{Csr, Offsets, PackedRows, Row};
pub use children::{Children, Rank, ROOTS_KEPT};
pub use dominators::{
    compute as compute_dominators, DominatorTree, NOT_NUMBERED, NOT_REACHABLE, SUPER_ROOT,
};

use crate::mem::BitRow;
use crate::model::{Model, ObjectIdx, Root};

/// A dump with the indexes every analysis needs.
#[derive(Debug)]
pub struct HeapGraph {
    /// The dump the graph indexes.
    pub dump: Model,
    /// For every object, the objects that reference it (ascending), packed:
    /// read through [`HeapGraph::retainers_of`] or
    /// [`HeapGraph::retainers_raw`].
    pub retainers: PackedRows,
    /// Distinct objects with at least one strong root record, in the order of
    /// their first root record: the super-root's edges.
    pub strong_roots: Vec<ObjectIdx>,
    /// Indices into `dump.roots`, sorted by object, for per-object lookup.
    roots_by_object: Vec<u32>,
}

impl HeapGraph {
    /// Indexes `dump`: its reverse references and its strong roots.
    pub fn build(dump: Model) -> HeapGraph {
        crate::work::add((dump.objects() + dump.refs.targets.len() + dump.roots.len()) as u64);
        let retainers = PackedRows::transposed(&dump.refs, dump.spill.as_deref());
        let strong_roots = strong_roots(&dump);
        HeapGraph::from_parts(dump, retainers, strong_roots)
    }

    /// A graph from its parts (the reopen cache), the per-object root index
    /// rebuilt.
    pub fn from_parts(
        dump: Model,
        retainers: PackedRows,
        strong_roots: Vec<ObjectIdx>,
    ) -> HeapGraph {
        let mut roots_by_object: Vec<u32> = (0..dump.roots.len() as u32).collect();
        roots_by_object.sort_by_key(|&i| (dump.roots[i as usize].object, i));
        // Made here, with the graph, rather than at a first key press.
        dump.row_types();
        HeapGraph {
            dump,
            retainers,
            strong_roots,
            roots_by_object,
        }
    }

    /// How many objects the dump has.
    pub fn objects(&self) -> usize {
        self.dump.objects()
    }

    /// The objects `object` refers to, in field order.
    #[inline]
    pub fn refs(&self, object: ObjectIdx) -> BitRow<'_, ObjectIdx> {
        self.dump.refs_of(object)
    }

    /// The objects that refer to `object`, ascending (an object that
    /// refers to it twice, twice), decoded as they are read: in time
    /// proportional to their number.
    #[inline]
    pub fn retainers_of(&self, object: ObjectIdx) -> impl Iterator<Item = ObjectIdx> + Clone + '_ {
        self.retainers.row(object.raw()).map(ObjectIdx)
    }

    /// [`HeapGraph::refs`] over raw indices, for the algorithms that work
    /// on raw arrays (duplicate detection).
    #[inline]
    pub fn refs_raw(&self, object: u32) -> BitRow<'_> {
        self.dump.refs.neighbors(object)
    }

    /// [`HeapGraph::retainers_of`] over raw indices.
    #[inline]
    pub fn retainers_raw(&self, object: u32) -> Row<'_> {
        self.retainers.row(object)
    }

    /// The strong roots as raw indices (the dominator tree's super-root's
    /// edges).
    pub fn strong_roots_raw(&self) -> &[u32] {
        ObjectIdx::raw_slice(&self.strong_roots)
    }

    /// The root records of an object, in file order.
    pub fn roots_of(&self, object: ObjectIdx) -> impl Iterator<Item = &Root> + '_ {
        self.root_indices_of(object)
            .map(move |i| &self.dump.roots[i])
    }

    /// The indices (into `Model::roots`) of `object`'s root records.
    pub fn root_indices_of(&self, object: ObjectIdx) -> impl Iterator<Item = usize> + '_ {
        let roots = &self.dump.roots;
        let start = self
            .roots_by_object
            .partition_point(|&i| roots[i as usize].object < object);
        self.roots_by_object[start..]
            .iter()
            .map(|&i| i as usize)
            .take_while(move |&i| roots[i].object == object)
    }
}

/// Distinct objects with at least one strong root record, in the order of
/// their first root record.
fn strong_roots(dump: &Model) -> Vec<ObjectIdx> {
    let mut seen = vec![false; dump.objects()];
    let mut strong_roots = Vec::new();
    for r in &dump.roots {
        if r.is_strong() && !seen[r.object.index()] {
            seen[r.object.index()] = true;
            strong_roots.push(r.object);
        }
    }
    strong_roots
}
