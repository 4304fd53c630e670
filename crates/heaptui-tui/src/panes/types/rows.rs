//! The Types list's rows and order: the columns and their sort, the
//! deltas of a comparison and the types gone from the newest snapshot,
//! and the immediate-dominators view of one type.

use std::sync::Arc;

use super::super::table::Sort;
use super::super::ListState;
use crate::compared::{rises, Compared};
use crate::fmt::{bytes_width, count_width, Col};
use heaptui_core::analysis::{ImmediateDominators, TypeStats};
use heaptui_core::model::TypeIdx;

/// The immediate-dominators view of one type (the Types pane's split).
#[derive(Debug, Clone)]
pub struct ImmView {
    /// The type whose instances' dominators are shown.
    pub(crate) type_index: TypeIdx,
    /// The exclude pattern it ran with.
    pub(crate) exclude: String,
    /// The rows, by dominated shallow bytes descending.
    pub(crate) rows: Vec<ImmediateDominators>,
    /// The selected row and the scroll.
    pub(crate) list: ListState,
    /// Widths of the number columns' values (see [`ImmView::new`]).
    pub(crate) widths: [usize; 3],
}

impl ImmView {
    /// The view of a result; its columns are measured here, once.
    pub fn new(type_index: TypeIdx, exclude: String, rows: Vec<ImmediateDominators>) -> ImmView {
        let max = |f: fn(&ImmediateDominators) -> u64| rows.iter().map(f).max().unwrap_or(0);
        let widths = [
            count_width(max(|r| r.dominated_objects)),
            bytes_width(max(|r| r.dominated_shallow_bytes)),
            bytes_width(max(|r| r.dominators_retained_bytes)),
        ];
        ImmView {
            type_index,
            exclude,
            rows,
            list: ListState::default(),
            widths,
        }
    }

    pub(super) fn columns(&self) -> [Col; 4] {
        [
            Col::name("Dominator type"),
            Col::num("Objects", self.widths[0]),
            Col::num("Dominated", self.widths[1]),
            Col::num("Dom. retain", self.widths[2]),
        ]
    }
}

/// Type, Count, Shallow, Min ret. (the sortable columns), Precise.
pub(super) const NAME: usize = 0;
pub(super) const COUNT: usize = 1;
pub(super) const SHALLOW: usize = 2;
pub(super) const MIN_RETAINED: usize = 3;
/// With a comparison: shallow bytes newest − oldest, after Precise.
pub(super) const DELTA: usize = 5;

/// Types start sorted by minimum retained bytes, largest first.
pub const TYPES_SORT: Sort = Sort {
    column: MIN_RETAINED,
    descending: true,
};

/// Positions in `types` in the order of `sort`; ties keep the order of
/// `types` (shallow bytes). With a comparison, the gone types follow as
/// positions `types.len() + j` (no instances now: their figures are 0, their
/// Δ negative), and `steady_only` keeps the types that grow steadily.
/// O(types log types), once per sort.
pub fn type_order(
    sort: Sort,
    types: &[TypeStats],
    names: &[Box<str>],
    delta: Option<&TypesDelta>,
) -> Vec<u32> {
    let n = types.len();
    let gone = delta.map_or(&[][..], |d| &d.gone[..]);
    let mut order: Vec<u32> = (0..(n + gone.len()) as u32).collect();
    if let Some(d) = delta.filter(|d| d.steady_only) {
        order.retain(|&p| {
            types
                .get(p as usize)
                .is_some_and(|t| d.steady[t.type_index.index()])
        });
    }
    let t = |p: u32| types.get(p as usize);
    let g = |p: u32| &gone[p as usize - n];
    let figure = |p: u32, f: fn(&TypeStats) -> u64| t(p).map_or(0, f);
    match (sort.column, delta) {
        (NAME, _) => sort.order(&mut order, |p| match t(p) {
            Some(t) => &*names[t.type_index.index()],
            None => &*g(p).name,
        }),
        (COUNT, _) => sort.order(&mut order, |p| figure(p, |t| t.count)),
        (SHALLOW, _) => sort.order(&mut order, |p| figure(p, |t| t.shallow_bytes)),
        (DELTA, Some(d)) => sort.order(&mut order, |p| match t(p) {
            Some(t) => d.delta[t.type_index.index()],
            None => g(p).delta,
        }),
        _ => sort.order(&mut order, |p| figure(p, |t| t.min_retained_bytes)),
    }
    order
}

/// A type of the baselines that the newest snapshot lacks: a row of its
/// own, dimmed and marked `(gone)`, with its negative Δ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoneType {
    /// The type's name.
    pub name: Box<str>,
    /// Shallow bytes newest (0) − oldest.
    pub delta: i128,
    /// Its instances and shallow bytes in the last snapshot that had any.
    pub last_count: u64,
    /// Their shallow bytes.
    pub last_shallow: u64,
    /// That snapshot's position, oldest 0.
    pub last_seen: usize,
}

/// What a comparison adds to the Types pane, computed once on its arrival
/// (O(types)).
#[derive(Debug, Clone, Default)]
pub struct TypesDelta {
    /// Per type index of the opened snapshot: shallow bytes newest − oldest.
    pub delta: Vec<i128>,
    /// Per type index: shallow bytes rise at every step.
    pub steady: Vec<bool>,
    /// The types gone from the newest snapshot, most shrunk first.
    pub gone: Vec<GoneType>,
    /// Their names, for the filter thread.
    pub gone_names: Arc<Vec<Box<str>>>,
    /// Snapshots compared (the newest included).
    pub snapshots: usize,
    /// The `t` key: only the types that grow steadily.
    pub steady_only: bool,
}

impl TypesDelta {
    /// The Types rows of a comparison whose newest snapshot has `types`
    /// type names.
    pub fn new(c: &Compared, types: usize) -> TypesDelta {
        let row = |t: u32| c.type_row(t).map(|r| &c.cmp.types[r]);
        let delta = (0..types as u32)
            .map(|t| row(t).map_or(0, |r| r.shallow_growth()))
            .collect();
        let steady = (0..types as u32)
            .map(|t| row(t).is_some_and(|r| rises(&r.shallow_bytes)))
            .collect();
        let mut gone: Vec<GoneType> = c
            .cmp
            .types
            .iter()
            .filter(|t| t.count.last() == Some(&0))
            .filter_map(|t| {
                let last_seen = t.count.iter().rposition(|&n| n > 0)?;
                Some(GoneType {
                    name: c.type_name(t.type_id).into(),
                    delta: t.shallow_growth(),
                    last_count: t.count[last_seen],
                    last_shallow: t.shallow_bytes[last_seen],
                    last_seen,
                })
            })
            .collect();
        gone.sort_by(|a, b| a.delta.cmp(&b.delta).then_with(|| a.name.cmp(&b.name)));
        let gone_names = Arc::new(gone.iter().map(|g| g.name.clone()).collect());
        TypesDelta {
            delta,
            steady,
            gone,
            gone_names,
            snapshots: c.snapshots(),
            steady_only: false,
        }
    }
}

/// What a list row of the Types pane shows: a type of the opened snapshot
/// (its type index) or a type gone from it (index into the gone types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeRow {
    /// A type of the opened snapshot.
    Type(TypeIdx),
    /// A gone type (index into the pane's gone types).
    Gone(u32),
}
