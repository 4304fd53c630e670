//! Per-selection queries. Each costs at most what it returns plus the part
//! of the graph it must look at; none runs per frame.

use std::collections::{HashMap, VecDeque};

use super::Glob;
use crate::graph::{DominatorTree, HeapGraph, NOT_REACHABLE, SUPER_ROOT};

use crate::model::{Model, ObjectIdx, TypeIdx, CLASS_ROW_PREFIX};
use crate::progress::{Cancelled, Progress};

/// A row `N × Type` of the grouped dominator tree (docs/analyses.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The row's type ([`Model::row_type`] of its members).
    pub type_index: TypeIdx,
    /// The objects of the row, largest retained first.
    pub members: Vec<u32>,
    /// Sum of the members' retained bytes.
    pub retained_bytes: u64,
    /// Sum of the members' retained objects (themselves included).
    pub retained_objects: u64,
}

/// The dominator-tree children of all `parents` (objects, or the
/// super-root), grouped by row type ([`Model::row_type`]), by retained
/// bytes descending; members
/// largest first.
pub fn group_children(dump: &Model, dom: &DominatorTree, parents: &[u32]) -> Vec<Group> {
    let mut groups = super::grouping::group_children_unsorted(dump, dom, parents);
    for g in &mut groups {
        g.members = super::grouping::largest_members(dom, &g.members, g.members.len());
    }
    groups
}

/// The domination path of an object: the object first, then its dominators
/// up to (not including) the super-root. Empty for an unreachable object.
pub fn domination_path(dom: &DominatorTree, object: ObjectIdx) -> Vec<ObjectIdx> {
    if !dom.is_reachable(object.raw()) {
        return Vec::new();
    }
    let mut path = vec![object];
    path.extend(dom.dominators_of(object.raw()).into_iter().map(ObjectIdx));
    path
}

/// Objects whose type name matches `pattern`, in index order.
pub fn objects_of_types(dump: &Model, pattern: &Glob) -> Vec<ObjectIdx> {
    let matching: Vec<bool> = dump.type_names.iter().map(|n| pattern.matches(n)).collect();
    dump.object_indices()
        .filter(|&o| matching[dump.type_of(o).index()])
        .collect()
}

/// One row of the immediate-dominators view (docs/analyses.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImmediateDominators {
    /// The dominators' type; `None` when the walk reached the super-root
    /// (the objects are held directly by GC roots).
    pub type_index: Option<TypeIdx>,
    /// Distinct dominator objects of this type.
    pub dominators: Vec<ObjectIdx>,
    /// Objects of the set this row's dominators dominate.
    pub dominated_objects: u64,
    /// Shallow bytes of those objects.
    pub dominated_shallow_bytes: u64,
    /// Sum of the distinct dominators' retained bytes.
    pub dominators_retained_bytes: u64,
}

/// Which row types `exclude` excludes: those whose name it matches, and a
/// Java class object's row (`class java.lang.System`) as its class
/// (`java.lang.System`) would be, so `java.*` walks past the JDK's classes
/// and stops at `class OrderService`.
pub(super) fn excluded_types(dump: &Model, exclude: Option<&Glob>) -> Vec<bool> {
    excluded_by_any(dump, exclude.map(std::slice::from_ref).unwrap_or_default())
}

/// [`excluded_types`] for several patterns: a row type is excluded when
/// any of them excludes it.
pub(crate) fn excluded_by_any(dump: &Model, patterns: &[Glob]) -> Vec<bool> {
    let matches = |n: &str| patterns.iter().any(|g| g.matches(n));
    let mut excluded: Vec<bool> = dump.type_names.iter().map(|n| matches(n)).collect();
    if patterns.is_empty() {
        return excluded;
    }
    for t in dump.row_types().class_rows() {
        let name = &dump.type_names[t.index()];
        let class = name.strip_prefix(CLASS_ROW_PREFIX).unwrap_or(name);
        excluded[t.index()] |= matches(class);
    }
    excluded
}

/// For each reachable object of `set`, walks up its domination path past
/// dominators whose type matches `exclude` and groups by the first one that
/// does not match. Rows by dominated shallow bytes descending.
pub fn immediate_dominators(
    dump: &Model,
    dom: &DominatorTree,
    set: &[ObjectIdx],
    exclude: Option<&Glob>,
) -> Vec<ImmediateDominators> {
    let excluded = excluded_types(dump, exclude);
    let mut rows: HashMap<Option<TypeIdx>, ImmediateDominators> = HashMap::new();
    for &o in set {
        if !dom.is_reachable(o.raw()) {
            continue;
        }
        let mut d = dom.idom.get(o.index());
        while d != SUPER_ROOT && excluded[dump.row_type(ObjectIdx(d)).index()] {
            d = dom.idom.get(d as usize);
        }
        let (key, dominator) = if d == SUPER_ROOT {
            (None, None)
        } else {
            (Some(dump.row_type(ObjectIdx(d))), Some(ObjectIdx(d)))
        };
        let row = rows.entry(key).or_insert_with(|| ImmediateDominators {
            type_index: key,
            dominators: Vec::new(),
            dominated_objects: 0,
            dominated_shallow_bytes: 0,
            dominators_retained_bytes: 0,
        });
        row.dominated_objects += 1;
        row.dominated_shallow_bytes += dump.size_of(o);
        if let Some(d) = dominator {
            row.dominators.push(d);
        }
    }
    let mut rows: Vec<ImmediateDominators> = rows.into_values().collect();
    for r in &mut rows {
        r.dominators.sort_unstable();
        r.dominators.dedup();
        // Dominators of one type may dominate each other, so this sum can
        // count bytes more than once and exceed the heap: saturate.
        r.dominators_retained_bytes = r.dominators.iter().fold(0u64, |acc, &d| {
            acc.saturating_add(dom.retained_bytes(d.index()))
        });
    }
    rows.sort_by(|a, b| {
        b.dominated_shallow_bytes
            .cmp(&a.dominated_shallow_bytes)
            .then(b.dominated_objects.cmp(&a.dominated_objects))
            .then(a.type_index.cmp(&b.type_index))
    });
    rows
}

/// What a GC would free if every object of `set` were gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PreciseRetained {
    /// Bytes that would be freed.
    pub bytes: u64,
    /// Objects that would be freed, the set's own included.
    pub objects: u64,
}

/// Precise retained size of an object set (docs/analyses.md): what a
/// reachability pass from the strong roots that does not enter the set no
/// longer reaches, the set's own reachable members included; the walk of
/// [`what_if`](super::what_if::what_if) with the set as the cut.
pub fn precise_retained(
    graph: &HeapGraph,
    dom: &DominatorTree,
    set: &[ObjectIdx],
    progress: &Progress,
) -> Result<PreciseRetained, Cancelled> {
    let cut = super::what_if::Cut {
        objects: set.to_vec(),
        edges: Vec::new(),
    };
    let freed = super::what_if::what_if(graph, dom, &cut, progress)?;
    Ok(PreciseRetained {
        bytes: freed.bytes,
        objects: freed.objects,
    })
}

/// A shortest reference path from a root to `object`: the rooted object
/// first, `object` last. Strong roots are preferred; for an object only weak
/// roots reach, the path starts at a weak root. `None` when no root reaches it.
pub fn shortest_retention_path(
    graph: &HeapGraph,
    dom: &DominatorTree,
    object: ObjectIdx,
) -> Option<Vec<ObjectIdx>> {
    let strong = dom.is_reachable(object.raw());
    let is_target = |o: ObjectIdx| {
        graph
            .roots_of(o)
            .any(|r| if strong { r.is_strong() } else { true })
    };
    // Breadth-first backwards over retainers; within the reachable part when
    // the object is strongly reachable (other retainers cannot lead to a
    // strong root).
    const END: ObjectIdx = ObjectIdx(u32::MAX);
    let mut next: HashMap<ObjectIdx, ObjectIdx> = HashMap::new();
    let mut queue = VecDeque::new();
    next.insert(object, END);
    queue.push_back(object);
    while let Some(v) = queue.pop_front() {
        if is_target(v) {
            let mut path = vec![v];
            let mut x = v;
            while let Some(&n) = next.get(&x) {
                if n == END {
                    break;
                }
                path.push(n);
                x = n;
            }
            return Some(path);
        }
        for r in graph.retainers_of(v) {
            if strong && dom.idom.get(r.index()) == NOT_REACHABLE {
                continue;
            }
            if let std::collections::hash_map::Entry::Vacant(e) = next.entry(r) {
                e.insert(v);
                queue.push_back(r);
            }
        }
    }
    None
}
