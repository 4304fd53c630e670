//! Type statistics (docs/analyses.md): per type name, instances, shallow bytes and
//! the minimum retained bytes of the set of all its instances.

use rayon::prelude::*;

use crate::graph::{DominatorTree, HeapGraph};
use crate::model::{Model, TypeIdx, TypeWord};

/// Figures of one type (docs/analyses.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeStats {
    /// Index into `Model::type_names`.
    pub type_index: TypeIdx,
    /// All instances in the dump, reachable or not.
    pub count: u64,
    /// Shallow bytes of all its instances.
    pub shallow_bytes: u64,
    /// Instances the strong roots reach.
    pub reachable_count: u64,
    /// Sum of the retained bytes of the reachable instances that no other
    /// instance of the type dominates: a lower bound of what freeing every
    /// instance would release.
    pub min_retained_bytes: u64,
}

/// Statistics of every type that has instances, by shallow bytes descending
/// (then name). One pass over the objects and one over the dominator tree.
pub fn type_stats(graph: &HeapGraph, dom: &DominatorTree) -> Vec<TypeStats> {
    let dump = &graph.dump;
    let t = dump.type_names.len();
    let mut stats: Vec<TypeStats> = (0..t as u32)
        .map(|i| TypeStats {
            type_index: TypeIdx(i),
            count: 0,
            shallow_bytes: 0,
            reachable_count: 0,
            min_retained_bytes: 0,
        })
        .collect();
    for (s, (count, shallow, reachable)) in stats.iter_mut().zip(per_type(dump, dom)) {
        s.count = count;
        s.shallow_bytes = shallow;
        s.reachable_count = reachable;
    }
    for (s, m) in stats.iter_mut().zip(min_retained(dump, dom)) {
        s.min_retained_bytes = m;
    }
    stats.retain(|s| s.count > 0);
    stats.sort_by(|a, b| {
        b.shallow_bytes.cmp(&a.shallow_bytes).then_with(|| {
            dump.type_names[a.type_index.index()].cmp(&dump.type_names[b.type_index.index()])
        })
    });
    stats
}

/// Per type (count, shallow bytes, reachable count), summed over a few
/// blocks of objects per thread in parallel; the scratch is one row per
/// type per block.
fn per_type(dump: &Model, dom: &DominatorTree) -> Vec<(u64, u64, u64)> {
    let block = (1 << 16).max(dump.types.len().div_ceil(4 * rayon::current_num_threads()));
    crate::model::with_types!(&dump.types, |types| per_type_of(types, block, dump, dom))
}

/// [`per_type`] over the types in their width.
fn per_type_of<W: TypeWord>(
    types: &[W],
    block: usize,
    dump: &Model,
    dom: &DominatorTree,
) -> Vec<(u64, u64, u64)> {
    let t = dump.type_names.len();
    types
        .par_chunks(block)
        .enumerate()
        .fold(
            || vec![(0u64, 0u64, 0u64); t],
            |mut acc, (b, types)| {
                // A block's pages of spilled arrays are few; the blocks'
                // together are not (see `mem::pace`).
                crate::mem::pace();
                let from = b * block;
                let sizes = (from..from + types.len()).map(|o| dump.sizes.get(o));
                let idom = dom.idom.range(from..from + types.len());
                for ((&ty, size), d) in types.iter().zip(sizes).zip(idom) {
                    let a = &mut acc[ty.index()];
                    a.0 += 1;
                    a.1 += size;
                    a.2 += (d != crate::graph::NOT_REACHABLE) as u64;
                }
                acc
            },
        )
        .reduce(
            || vec![(0u64, 0u64, 0u64); t],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    x.0 += y.0;
                    x.1 += y.1;
                    x.2 += y.2;
                }
                a
            },
        )
}

/// Per type, the retained bytes of its top-most instances. Over the
/// dominator tree in its preorder (`DominatorTree::at_preorder`, read in
/// order), counting per type how many instances are on the current path:
/// an instance with none above it is a top-most one and contributes its
/// retained bytes. The super-root's subtrees are independent (it has no
/// type), so they run in parallel.
fn min_retained(dump: &Model, dom: &DominatorTree) -> Vec<u64> {
    let t = dump.type_names.len();
    let tops: Vec<u32> = dom.children(dom.super_root()).collect();
    tops.par_iter()
        .fold(
            || (vec![0u32; t], vec![0u64; t], Vec::new()),
            |(mut on_path, mut sums, mut stack), &top| {
                crate::model::with_types!(&dump.types, |types| {
                    top_most_retained(types, dom, top, &mut on_path, &mut sums, &mut stack)
                });
                (on_path, sums, stack)
            },
        )
        .map(|(_, sums, _)| sums)
        .reduce(
            || vec![0u64; t],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    *x += y;
                }
                a
            },
        )
}

/// Adds to `sums[type]` the retained bytes of every instance in `top`'s
/// dominator subtree that has no dominator of its own type within it: the
/// subtree's objects in preorder, with a stack of the open nodes (each
/// with the end of its range of numbers). `on_path` is all zeros on entry
/// and on return.
fn top_most_retained<W: TypeWord>(
    types: &[W],
    dom: &DominatorTree,
    top: u32,
    on_path: &mut [u32],
    sums: &mut [u64],
    stack: &mut Vec<(u32, u64)>,
) {
    let first = dom.preorder_number.get(top as usize) as usize;
    let end = first + dom.retained_objects(top as usize) as usize;
    for (k, node) in (first as u64..).zip(dom.at_preorder.range(first..end)) {
        if k.is_multiple_of(1 << 12) {
            // Random reads of spilled arrays (see `mem::pace`).
            crate::mem::pace();
        }
        // The node 8 positions on, within the subtree.
        if k as usize + 8 < end {
            let ahead = dom.at_preorder.get(k as usize + 8);
            crate::mem::prefetch(&types[ahead as usize]);
            dom.prefetch_retained_objects(ahead as usize);
        }
        while stack.last().is_some_and(|&(_, e)| e <= k) {
            let (left, _) = stack.pop().unwrap_or_default();
            on_path[types[left as usize].index()] -= 1;
        }
        let ty = types[node as usize].index();
        if on_path[ty] == 0 {
            sums[ty] += dom.retained_bytes(node as usize);
        }
        let size = dom.retained_objects(node as usize);
        if size > 1 {
            // Not a leaf: open until the end of its range.
            on_path[ty] += 1;
            stack.push((node, k + u64::from(size)));
        }
    }
    while let Some((left, _)) = stack.pop() {
        on_path[types[left as usize].index()] -= 1;
    }
}
