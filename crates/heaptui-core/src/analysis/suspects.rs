//! Leak suspects (docs/analyses.md), as Eclipse MAT's Leak Suspects report: from
//! one snapshot's dominator tree, every top-level dominator retaining at
//! least 10 % of the reachable bytes (kind `Object`) and every type whose
//! other top-level instances together retain at least 10 % (kind `Type`;
//! instances already reported as objects are not counted twice, as MAT
//! does). With a comparison, the rows that grow steadily are
//! suspects too (kind `Growth`).
//!
//! For each suspect: its accumulation point (descend into the largest
//! dominated child while that child retains at least 70 % of its parent),
//! the biggest types retained below that point, and the shortest retention
//! path from a root to the point.

use rayon::prelude::*;

use super::compare::Comparison;
use super::compare_paths::{FastMap, MergedRows, NO_OBJECT};
use super::{domination_path, shortest_retention_path, Analysis};
use crate::graph::DominatorTree;
use crate::model::{Model, ObjectIdx, TypeIdx};

/// Share of the reachable bytes that makes a suspect: 10 %.
const SUSPECT_PERCENT: u64 = 10;
/// A child continues the descent while it retains 70 % of its parent.
const ACCUMULATION_PERCENT: u64 = 70;
/// Types listed below an accumulation point.
pub const TOP_TYPES: usize = 10;
/// Growth suspects listed at most.
const MAX_GROWTH: usize = 10;

/// Why something is a leak suspect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuspectKind {
    /// One top-level dominator retains at least 10 % of the reachable bytes.
    Object,
    /// A type's top-level instances together retain at least 10 % of the reachable bytes.
    Type,
    /// A row of a comparison grows steadily from snapshot to snapshot.
    Growth,
}

impl SuspectKind {
    /// The name in `report --json`.
    pub fn key(self) -> &'static str {
        match self {
            SuspectKind::Object => "object",
            SuspectKind::Type => "type",
            SuspectKind::Growth => "growth",
        }
    }
}

/// A steadily growing row of a comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Growth {
    /// The row in [`Comparison::paths`].
    pub path: u32,
    /// The row's retained bytes per snapshot, oldest first.
    pub retained_bytes: Vec<u64>,
    /// The row's instances per snapshot, oldest first.
    pub count: Vec<u64>,
}

/// One leak suspect; objects and types are of the analysed snapshot (the
/// newest one of a comparison).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suspect {
    /// Why it is a suspect.
    pub kind: SuspectKind,
    /// The suspect's type (of the object, the instances or the growing row).
    pub type_index: TypeIdx,
    /// The suspect object (kind `Object` only).
    pub object: Option<ObjectIdx>,
    /// Objects the suspect stands for: 1, the type's top-level instances,
    /// or the growing row's members in the newest snapshot.
    pub instances: u64,
    /// Of the object, of the type's top-level instances together, or of
    /// the growing row in the newest snapshot.
    pub retained_bytes: u64,
    /// Where the memory piles up.
    pub accumulation_point: u32,
    /// `(type index, retained bytes)` below the accumulation point, largest
    /// first: per type, the instances with no dominator of their type
    /// between them and the point.
    pub top_types: Vec<(TypeIdx, u64)>,
    /// A shortest reference path from a root to the accumulation point,
    /// the rooted object first.
    pub retention_path: Vec<ObjectIdx>,
    /// The growing row's figures (kind `Growth` only).
    pub growth: Option<Growth>,
}

impl Suspect {
    /// The accumulation point's domination path, top-level dominator first.
    pub fn point_path(&self, dom: &DominatorTree) -> Vec<ObjectIdx> {
        let mut p = domination_path(dom, ObjectIdx(self.accumulation_point));
        p.reverse();
        p
    }
}

/// The accumulation point below `object`.
pub fn accumulation_point(dom: &DominatorTree, mut object: u32) -> u32 {
    loop {
        // The largest child (the lowest index among equals).
        let Some(child) = dom.largest_child(object) else {
            return object;
        };
        let (c, p) = (
            dom.retained_bytes(child as usize) as u128,
            dom.retained_bytes(object as usize) as u128,
        );
        if c * 100 < p * ACCUMULATION_PERCENT as u128 {
            return object;
        }
        object = child;
    }
}

/// The `n` types retaining the most below `point` (its dominator subtree
/// without it): per type, the retained bytes of its instances that no
/// other instance of the type dominates within the subtree. O(subtree):
/// the subtree in preorder ([`DominatorTree::at_preorder`], read in
/// order). The rows are as the walk over the children by retained bytes
/// lists them (`walk_sorted`), which decides the order of rows of equal
/// bytes and name and repeats a type whose first top-most instances retain
/// nothing; where either case arises, that walk gives the rows.
pub fn top_types_below(
    dump: &Model,
    dom: &DominatorTree,
    point: u32,
    n: usize,
) -> Vec<(TypeIdx, u64)> {
    let t = dump.type_names.len();
    let mut on_path = vec![0u32; t];
    let mut sums = vec![0u64; t];
    let mut touched = vec![false; t];
    let mut empty = false;
    let first = dom.preorder_number.get(point as usize) as usize + 1;
    let end = first - 1 + dom.retained_objects(point as usize) as usize;
    // The open nodes below `point`, each with the end of its range.
    let mut stack: Vec<(usize, u64)> = Vec::new();
    for (k, c) in (first as u64..).zip(dom.at_preorder.range(first..end)) {
        while stack.last().is_some_and(|&(_, e)| e <= k) {
            let (ty, _) = stack.pop().unwrap_or_default();
            on_path[ty] -= 1;
        }
        let ty = dump.types.get(c as usize).index();
        if on_path[ty] == 0 {
            let bytes = dom.retained_bytes(c as usize);
            empty |= bytes == 0;
            touched[ty] = true;
            sums[ty] += bytes;
        }
        on_path[ty] += 1;
        stack.push((ty, k + u64::from(dom.retained_objects(c as usize))));
    }
    let mut rows: Vec<(TypeIdx, u64)> = (0..t)
        .filter(|&ty| touched[ty])
        .map(|ty| (TypeIdx::from_usize(ty), sums[ty]))
        .collect();
    rows.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| dump.name_of_type(a.0).cmp(dump.name_of_type(b.0)))
    });
    let tie = rows
        .windows(2)
        .any(|w| w[0].1 == w[1].1 && dump.name_of_type(w[0].0) == dump.name_of_type(w[1].0));
    if empty || tie {
        rows = walk_sorted(dump, dom, point);
    }
    rows.truncate(n);
    rows
}

/// [`top_types_below`]'s rows by a walk over the children by retained
/// bytes (`DominatorTree::children_sorted`): each type in the order its
/// first top-most instance is met (again after top-most instances that
/// retain nothing), then sorted stably by bytes and name.
fn walk_sorted(dump: &Model, dom: &DominatorTree, point: u32) -> Vec<(TypeIdx, u64)> {
    let t = dump.type_names.len();
    let mut on_path = vec![0u32; t];
    let mut sums = vec![0u64; t];
    let mut touched: Vec<u32> = Vec::new();
    // The pending children of the open nodes, each node's sorted, in
    // reverse; per open node (itself, where its children begin).
    let mut pending: Vec<u32> = dom.children_sorted(point);
    pending.reverse();
    let mut open: Vec<(u32, usize)> = vec![(point, 0)];
    while let Some(&(node, from)) = open.last() {
        if pending.len() == from {
            open.pop();
            if node != point {
                on_path[dump.types.get(node as usize).index()] -= 1;
            }
            continue;
        }
        let c = pending.pop().unwrap_or_default();
        let ty = dump.types.get(c as usize).index();
        if on_path[ty] == 0 {
            if sums[ty] == 0 {
                touched.push(ty as u32);
            }
            sums[ty] += dom.retained_bytes(c as usize);
        }
        on_path[ty] += 1;
        open.push((c, pending.len()));
        let at = pending.len();
        pending.extend(dom.children_sorted(c));
        pending[at..].reverse();
    }
    let mut rows: Vec<(TypeIdx, u64)> = touched
        .iter()
        .map(|&ty| (TypeIdx(ty), sums[ty as usize]))
        .collect();
    rows.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| dump.name_of_type(a.0).cmp(dump.name_of_type(b.0)))
    });
    rows
}

/// Fills in the accumulation point, the top types and the retention path
/// of a suspect that starts at `start`.
fn describe(a: &Analysis, mut s: Suspect, start: u32) -> Suspect {
    let point = accumulation_point(&a.dom, start);
    s.accumulation_point = point;
    s.top_types = top_types_below(a.dump(), &a.dom, point, TOP_TYPES);
    s.retention_path =
        shortest_retention_path(&a.graph, &a.dom, ObjectIdx(point)).unwrap_or_default();
    s
}

fn bare(kind: SuspectKind, type_index: TypeIdx, instances: u64, retained_bytes: u64) -> Suspect {
    Suspect {
        kind,
        type_index,
        object: None,
        instances,
        retained_bytes,
        accumulation_point: NO_OBJECT,
        top_types: Vec::new(),
        retention_path: Vec::new(),
        growth: None,
    }
}

/// The object and type suspects of one snapshot, by retained bytes
/// descending (objects before types on ties).
pub fn leak_suspects(a: &Analysis) -> Vec<Suspect> {
    let dump = a.dump();
    let dom = &a.dom;
    let reachable = dom.reachable_bytes as u128;
    let big =
        |bytes: u64| reachable > 0 && bytes as u128 * 100 >= reachable * SUSPECT_PERCENT as u128;
    let mut found: Vec<(Suspect, u32)> = Vec::new();
    // Per type: top-level instances that are not object suspects.
    let mut per_type: Vec<(u64, u64, u32)> = vec![(0, 0, NO_OBJECT); dump.type_names.len()];
    for o in dom.children(dom.super_root()) {
        let bytes = dom.retained_bytes(o as usize);
        let ty = dump.row_type(ObjectIdx(o));
        if big(bytes) {
            let mut s = bare(SuspectKind::Object, ty, 1, bytes);
            s.object = Some(ObjectIdx(o));
            found.push((s, o));
            continue;
        }
        let e = &mut per_type[ty.index()];
        e.0 += 1;
        e.1 += bytes;
        // The largest (the lowest index among equals).
        if e.2 == NO_OBJECT || dom.rank(o) < dom.rank(e.2) {
            e.2 = o;
        }
    }
    // The object suspects largest first, as the children by retained bytes.
    found.sort_unstable_by_key(|&(_, o)| dom.rank(o));
    for (ty, &(n, bytes, largest)) in per_type.iter().enumerate() {
        if n > 0 && big(bytes) {
            found.push((
                bare(SuspectKind::Type, TypeIdx::from_usize(ty), n, bytes),
                largest,
            ));
        }
    }
    let mut out: Vec<Suspect> = found
        .into_par_iter()
        .map(|(s, start)| describe(a, s, start))
        .collect();
    out.sort_by(|x, y| {
        y.retained_bytes
            .cmp(&x.retained_bytes)
            .then((x.kind == SuspectKind::Type).cmp(&(y.kind == SuspectKind::Type)))
            .then(x.type_index.cmp(&y.type_index))
    });
    out
}

/// The growth suspects of a comparison whose newest snapshot is `a`.
///
/// Every ancestor of a growing row grows too, so not every steadily growing
/// row is reported: from each top-most steadily growing row (its parent
/// does not grow steadily), descend into the child row that grows most
/// while it grows steadily and carries at least 70 % of the growth, and
/// stop at a row whose instance count rises (that is where objects
/// multiply). The accumulation point then starts from the largest member
/// of the row's parent (the collection holding the new instances) when the
/// count rose, else from the row's largest member.
pub fn growth_suspects(a: &Analysis, cmp: &Comparison) -> Vec<Suspect> {
    let p = &cmp.paths;
    let n = p.len();
    if cmp.snapshots() < 2 || n == 0 {
        return Vec::new();
    }
    let steady: Vec<bool> = (0..n as u32)
        .into_par_iter()
        .map(|r| r != 0 && p.grows_steadily(r))
        .collect();
    // Steadily growing children per steadily growing row.
    let mut children: FastMap<u32, Vec<u32>> = FastMap::default();
    let mut starts = Vec::new();
    for r in 1..n as u32 {
        if !steady[r as usize] {
            continue;
        }
        let parent = p.parent[r as usize];
        if steady[parent as usize] {
            children.entry(parent).or_default().push(r);
        } else {
            starts.push(r);
        }
    }
    let mut rows: Vec<u32> = starts
        .into_iter()
        .map(|r| descend(p, r, |r| children.get(&r).cloned().unwrap_or_default()))
        .collect();
    rows.sort_by_key(|&r| (std::cmp::Reverse(p.growth(r)), r));
    rows.dedup();
    rows.truncate(MAX_GROWTH);
    rows.into_par_iter()
        .filter_map(|r| growth_suspect(a, cmp, r, count_rose(p, r)))
        .collect()
}

/// Whether a row's instance count is higher in the newest snapshot than in
/// the oldest.
fn count_rose(p: &MergedRows, r: u32) -> bool {
    let f = p.figures_of(r);
    f[f.len() - 1].count > f[0].count
}

/// From row `r` down the steadily growing rows (`children(r)`: those of
/// `r`'s children that grow steadily) to where the growth accumulates:
/// into the child that grows most while it carries at least
/// [`ACCUMULATION_PERCENT`] of the growth, stopping at a row whose
/// instance count rises (where objects multiply).
fn descend(p: &MergedRows, mut r: u32, children: impl Fn(u32) -> Vec<u32>) -> u32 {
    while !count_rose(p, r) {
        let Some(c) = children(r)
            .into_iter()
            .max_by_key(|&c| (p.growth(c), std::cmp::Reverse(c)))
        else {
            break;
        };
        if p.growth(c) * 100 < p.growth(r) * ACCUMULATION_PERCENT as i128 {
            break;
        }
        r = c;
    }
    r
}

/// Where the growth of row `r` accumulates, as the Leaks pane shows it:
/// the row the growth suspects descend to from `r` (`r` itself when no
/// steadily growing child carries most of its growth). Linear in the rows.
pub fn accumulation_row(p: &MergedRows, r: u32) -> u32 {
    let mut children: FastMap<u32, Vec<u32>> = FastMap::default();
    for c in 1..p.len() as u32 {
        if p.grows_steadily(c) {
            children.entry(p.parent[c as usize]).or_default().push(c);
        }
    }
    descend(p, r, |r| children.get(&r).cloned().unwrap_or_default())
}

fn growth_suspect(a: &Analysis, cmp: &Comparison, row: u32, count_rose: bool) -> Option<Suspect> {
    let p = &cmp.paths;
    let member = p.newest_largest[row as usize];
    if member == NO_OBJECT {
        return None;
    }
    let parent = p.parent[row as usize];
    let holder = p.newest_largest[parent as usize];
    let start = if count_rose && parent != 0 && holder != NO_OBJECT {
        holder
    } else {
        member
    };
    let f = p.figures_of(row);
    let newest = f[f.len() - 1];
    let mut s = bare(
        SuspectKind::Growth,
        a.dump().row_type(ObjectIdx(member)),
        newest.count as u64,
        newest.retained_bytes,
    );
    s.growth = Some(Growth {
        path: row,
        retained_bytes: f.iter().map(|x| x.retained_bytes).collect(),
        count: f.iter().map(|x| x.count as u64).collect(),
    });
    Some(describe(a, s, start))
}

/// Every suspect of a report, as the Leaks pane orders them: the growth
/// suspects (the leak candidates), by growth, then the snapshot's own,
/// largest first.
pub fn suspects(a: &Analysis, cmp: Option<&Comparison>) -> Vec<Suspect> {
    let mut s = match cmp {
        Some(c) => tracing::debug_span!(target: "heaptui::profile", "growth suspects")
            .in_scope(|| growth_suspects(a, c)),
        None => Vec::new(),
    };
    s.extend(
        tracing::debug_span!(target: "heaptui::profile", "leak suspects")
            .in_scope(|| leak_suspects(a)),
    );
    s
}
