//! Grouped dominator-tree children for interactive use. Same groups and
//! order as [`super::group_children`], but members stay in discovery order
//! (the tree's DFS order):
//! sorting hundreds of thousands of members by retained size costs a cache
//! miss per comparison, and a UI only ever shows a page of them, which
//! [`largest_members`] selects in linear time.

use super::Group;
use crate::graph::{DominatorTree, Rank};
use crate::model::{Model, ObjectIdx};

/// The dominator-tree children of `parents`, grouped by row type
/// ([`Model::row_type`]: a Java class object by its class), groups by
/// retained bytes descending (then type name, then as the groups are first
/// met over the parents in turn, each one's children by retained bytes).
/// Members unsorted: in the order of the parents, each one's children in
/// the tree's DFS order ([`DominatorTree::children`]).
pub fn group_children_unsorted(dump: &Model, dom: &DominatorTree, parents: &[u32]) -> Vec<Group> {
    let mut slot: Vec<u32> = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    // Per group: (parent's position, its best member's rank), the lowest.
    let mut first: Vec<(usize, Rank)> = Vec::new();
    let rows = dump.row_types();
    for (at, &p) in parents.iter().enumerate() {
        for c in dom.children(p) {
            let ty = rows.of(ObjectIdx(c), dump.types.get(c as usize));
            if slot.len() <= ty.index() {
                slot.resize(dump.type_names.len().max(ty.index() + 1), u32::MAX);
            }
            let rank = (at, dom.rank(c));
            if slot[ty.index()] == u32::MAX {
                slot[ty.index()] = groups.len() as u32;
                groups.push(Group {
                    type_index: ty,
                    members: Vec::new(),
                    retained_bytes: 0,
                    retained_objects: 0,
                });
                first.push(rank);
            }
            let i = slot[ty.index()] as usize;
            first[i] = first[i].min(rank);
            let g = &mut groups[i];
            g.members.push(c);
            g.retained_bytes += dom.retained_bytes(c as usize);
            g.retained_objects += dom.retained_objects(c as usize) as u64;
        }
    }
    let mut keyed: Vec<((usize, Rank), Group)> = first.into_iter().zip(groups).collect();
    keyed.sort_by(|(fa, a), (fb, b)| {
        b.retained_bytes
            .cmp(&a.retained_bytes)
            .then_with(|| {
                dump.type_names[a.type_index.index()].cmp(&dump.type_names[b.type_index.index()])
            })
            .then(fa.cmp(fb))
    });
    keyed.into_iter().map(|(_, g)| g).collect()
}

/// The `n` members with the largest retained bytes, largest first (ties:
/// lower index first). O(members + n log n).
pub fn largest_members(dom: &DominatorTree, members: &[u32], n: usize) -> Vec<u32> {
    let mut keyed: Vec<(std::cmp::Reverse<u64>, u32)> = members
        .iter()
        .map(|&m| (std::cmp::Reverse(dom.retained_bytes(m as usize)), m))
        .collect();
    let n = n.min(keyed.len());
    if n == 0 {
        return Vec::new();
    }
    if n < keyed.len() {
        keyed.select_nth_unstable(n - 1);
        keyed.truncate(n);
    }
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, m)| m).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::group_children;
    use crate::graph::HeapGraph;
    use crate::progress::Progress;

    fn heap() -> (HeapGraph, DominatorTree) {
        let text = "t 1 Root\nt 2 A\nt 3 B\n\
                    o 1 1 1 10 11 12 13\no 2 1 1 14 15\n\
                    o 10 2 4\no 11 2 40\no 12 3 8\no 13 2 16\no 14 2 2\no 15 3 64\n\
                    r 1 1 0\nr 2 1 0\n";
        let dump =
            crate::import::netcf_text::parse_bytes(std::path::Path::new("t"), text.as_bytes())
                .unwrap();
        let graph = HeapGraph::build(dump);
        let dom = DominatorTree::compute(&graph, &Progress::new()).unwrap();
        (graph, dom)
    }

    #[test]
    fn same_groups_as_the_sorted_query() {
        let (g, dom) = heap();
        let d = &g.dump;
        let parents = [d.index_of(1).unwrap().raw(), d.index_of(2).unwrap().raw()];
        let sorted = group_children(d, &dom, &parents);
        let unsorted = group_children_unsorted(d, &dom, &parents);
        assert_eq!(sorted.len(), unsorted.len());
        for (s, u) in sorted.iter().zip(&unsorted) {
            assert_eq!(
                (s.type_index, s.retained_bytes, s.retained_objects),
                (u.type_index, u.retained_bytes, u.retained_objects)
            );
            let mut a = s.members.clone();
            let mut b = u.members.clone();
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b);
            assert_eq!(
                largest_members(&dom, &u.members, usize::MAX),
                s.members,
                "largest first"
            );
        }
    }

    #[test]
    fn largest_members_selects_a_page() {
        let (g, dom) = heap();
        let d = &g.dump;
        let all: Vec<u32> = [0x10u64, 0x11, 0x13, 0x14]
            .iter()
            .map(|&i| d.index_of(i).unwrap().raw())
            .collect();
        let top = largest_members(&dom, &all, 2);
        assert_eq!(
            top,
            vec![
                d.index_of(0x11).unwrap().raw(),
                d.index_of(0x13).unwrap().raw()
            ]
        );
        assert!(largest_members(&dom, &all, 0).is_empty());
    }
}
