//! The list's rows, columns and order: sets by the chosen column, gone
//! sets of a comparison, per-set deltas, and the widths of the columns.

use std::sync::Arc;

use super::super::table::Sort;
use crate::compared::{rises, Compared};
use crate::fmt::{bytes_width, count_width, Col};
use crate::theme::Theme;
use heaptui_core::analysis::kind_ranks;
use heaptui_core::graph::duplicates::{DuplicateSet, Duplicates};

pub use crate::filtering::DupRow;

/// The rows of the list: every entry of the display order (the sets, and
/// with a comparison the gone sets) then every possible-duplicates type
/// (no filter: nothing to store), or the filter thread's selection (sets
/// in set order, gone sets, then possible duplicates) put in display order.
#[derive(Debug, Clone)]
pub enum DupRows {
    /// `sets`: the entries of the display order (sets and gone sets).
    All {
        /// Entries of the display order (sets and gone sets).
        sets: usize,
        /// Possible-duplicates types.
        possible: usize,
    },
    /// The filter thread's selection, in display order.
    Filtered(Arc<Vec<DupRow>>),
}

impl Default for DupRows {
    fn default() -> Self {
        DupRows::All {
            sets: 0,
            possible: 0,
        }
    }
}

impl DupRows {
    /// How many rows.
    pub fn len(&self) -> usize {
        match self {
            DupRows::All { sets, possible } => sets + possible,
            DupRows::Filtered(rows) => rows.len(),
        }
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i`; `order` is the entries in display order (see
    /// [`DuplicatesPane::order`](super::DuplicatesPane::order)): set ids, then gone sets from `sets` on.
    pub fn get(&self, i: usize, order: &[u32], sets_len: usize) -> Option<DupRow> {
        match self {
            &DupRows::All { sets, possible } => {
                if i < sets {
                    let e = order.get(i).copied().unwrap_or(i as u32);
                    Some(entry_row(e, sets_len))
                } else if i < sets + possible {
                    Some(DupRow::Possible((i - sets) as u32))
                } else {
                    None
                }
            }
            DupRows::Filtered(rows) => rows.get(i).copied(),
        }
    }

    pub(super) fn sets(&self) -> usize {
        match self {
            DupRows::All { sets, .. } => *sets,
            DupRows::Filtered(rows) => rows.partition_point(|r| !matches!(r, DupRow::Possible(_))),
        }
    }

    /// The row of a set; `pos` is each entry's position in the display
    /// order (filtered rows are kept in that order, so a binary search).
    pub fn row_of_set(&self, set: u32, pos: &[u32], sets_len: usize) -> Option<usize> {
        let p = |e: u32| pos.get(e as usize).copied().unwrap_or(u32::MAX);
        match self {
            DupRows::All { .. } => Some(p(set) as usize).filter(|&r| r < self.sets()),
            DupRows::Filtered(rows) => rows[..self.sets()]
                .binary_search_by_key(&p(set), |r| p(row_entry(*r, sets_len)))
                .ok(),
        }
    }

    /// The sets among the rows, for their totals.
    pub(super) fn set_ids(&self, order: &[u32], sets_len: usize) -> Vec<u32> {
        let set = |r: DupRow| match r {
            DupRow::Set(s) => Some(s),
            _ => None,
        };
        match self {
            DupRows::All { sets, .. } => order[..*sets]
                .iter()
                .filter_map(|&e| set(entry_row(e, sets_len)))
                .collect(),
            DupRows::Filtered(rows) => rows.iter().filter_map(|&r| set(r)).collect(),
        }
    }
}

/// The row of an entry of the display order: a set id, or past the sets a
/// gone set.
pub(super) fn entry_row(e: u32, sets_len: usize) -> DupRow {
    match e.checked_sub(sets_len as u32) {
        Some(j) => DupRow::Gone(j),
        None => DupRow::Set(e),
    }
}

/// The entry of the display order of a set or gone row (`u32::MAX` for a
/// possible-duplicates row, which is not ordered).
pub(super) fn row_entry(r: DupRow, sets_len: usize) -> u32 {
    match r {
        DupRow::Set(s) => s,
        DupRow::Gone(j) => sets_len as u32 + j,
        DupRow::Possible(_) => u32::MAX,
    }
}

/// Set, Additional, Inst., Per inst, Per copy, Kind, Held by, Type.
pub(super) const SET: usize = 0;
pub(super) const ADDITIONAL: usize = 1;
pub(super) const INSTANCES: usize = 2;
pub(super) const PER_INST: usize = 3;
pub(super) const PER_COPY: usize = 4;
pub(super) const KIND: usize = 5;
pub(super) const HELD_BY: usize = 6;
pub(super) const TYPE: usize = 7;
/// With a comparison: additional bytes newest − oldest of the set.
pub(super) const DELTA: usize = 8;

/// Sets start by additional bytes, largest first (the detector's order).
pub const DUPS_SORT: Sort = Sort {
    column: ADDITIONAL,
    descending: true,
};

/// Entries in display order: set ids, and with a comparison the gone sets
/// as `sets + j`; sets whose equality is verified first, then the
/// unverified ones ([`Duplicates::is_unverified`]), each part in the order
/// of `sort` (ties in set order, gone sets last). With `steady_only`, the
/// sets that grow steadily alone. O(sets log sets), once per sort or
/// detection result.
pub fn set_order(
    sort: Sort,
    d: &Duplicates,
    names: &[Box<str>],
    delta: Option<&SetDeltas>,
    gone: &[GoneSet],
) -> Vec<u32> {
    let n = d.sets.len();
    let gone = if delta.is_some() { gone } else { &[] };
    let mut order: Vec<u32> = (0..(n + gone.len()) as u32).collect();
    if let Some(x) = delta.filter(|x| x.steady_only) {
        order.retain(|&i| x.steady.get(i as usize) == Some(&true));
    }
    let s = |i: u32| d.sets.get(i as usize);
    let g = |i: u32| &gone[i as usize - n];
    let figure = |i: u32, f: fn(&DuplicateSet) -> u64| s(i).map_or(0, f);
    match (sort.column, delta) {
        (DELTA, Some(x)) => sort.order(&mut order, |i| match s(i) {
            Some(_) => x.delta[i as usize],
            None => g(i).delta,
        }),
        (SET, _) => sort.order(&mut order, |i| i),
        (INSTANCES, _) => sort.order(&mut order, |i| {
            s(i).map_or(0, |_| d.members(i).len() as u64)
        }),
        (PER_INST, _) => sort.order(&mut order, |i| match s(i) {
            Some(s) => s.instance_bytes,
            None => g(i).instance_bytes,
        }),
        (PER_COPY, _) => sort.order(&mut order, |i| match s(i) {
            Some(s) => s.objects_per_copy,
            None => g(i).objects_per_copy,
        }),
        (TYPE, _) => sort.order(&mut order, |i| match s(i) {
            Some(s) => &*names[s.type_index as usize],
            None => &*g(i).name,
        }),
        _ => sort.order(&mut order, |i| figure(i, |s| s.additional_bytes)),
    }
    order.sort_by_key(|&i| s(i).is_some_and(|s| d.is_unverified(s)));
    order
}

/// A comparison's figures per set of the shown detection result.
#[derive(Debug, Clone, Default)]
pub struct SetDeltas {
    /// Additional bytes newest − oldest.
    pub delta: Vec<i128>,
    /// Additional bytes rise at every step.
    pub steady: Vec<bool>,
    /// The `t` key: only the sets that grow steadily.
    pub steady_only: bool,
}

/// Per set of `d`: its additional bytes newest − oldest and whether they
/// rise at every step. Sets are matched across snapshots by kind (type,
/// instance bytes, objects per copy) and rank within the kind
/// ([`kind_ranks`]), so two sets of one kind have a Δ each. O(sets log
/// sets), once per comparison or detection result.
pub fn set_deltas(c: &Compared, d: &Duplicates) -> SetDeltas {
    let rows: Vec<Option<&[u64]>> = d
        .sets
        .iter()
        .zip(kind_ranks(d))
        .map(|(s, rank)| {
            c.duplicate_row(s.type_index, s.instance_bytes, s.objects_per_copy, rank)
                .map(|r| &c.cmp.duplicates[r].additional_bytes[..])
        })
        .collect();
    SetDeltas {
        delta: rows
            .iter()
            .map(|a| a.map_or(0, |a| a[a.len() - 1] as i128 - a[0] as i128))
            .collect(),
        steady: rows.iter().map(|a| a.is_some_and(rises)).collect(),
        steady_only: false,
    }
}

/// A duplicate set of the baselines that the newest snapshot lacks: a row
/// of its own, dimmed and marked `(gone)`, with its negative Δ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoneSet {
    /// The set's type name.
    pub name: Box<str>,
    /// Shallow bytes of one instance.
    pub instance_bytes: u64,
    /// Objects reachable from one member, the member included.
    pub objects_per_copy: u64,
    /// Additional bytes newest (0) − oldest.
    pub delta: i128,
    /// Its copies and additional bytes in the last snapshot that had it.
    pub last_instances: u64,
    /// Its additional bytes then.
    pub last_additional: u64,
    /// That snapshot's position, oldest 0.
    pub last_seen: usize,
}

/// The sets of a comparison that the newest snapshot lacks (once, on its
/// arrival; O(compared sets)).
pub fn gone_sets(c: &Compared) -> Vec<GoneSet> {
    c.cmp
        .duplicates
        .iter()
        .filter(|d| d.instances.last() == Some(&0))
        .filter_map(|d| {
            let last_seen = d.instances.iter().rposition(|&n| n > 0)?;
            let a = &d.additional_bytes;
            Some(GoneSet {
                name: c.type_name(d.type_id).into(),
                instance_bytes: d.instance_bytes,
                objects_per_copy: d.objects_per_copy,
                delta: a[a.len() - 1] as i128 - a[0] as i128,
                last_instances: d.instances[last_seen],
                last_additional: a[last_seen],
                last_seen,
            })
        })
        .collect()
}

/// Widths of the list's values over every set and possible-duplicates type
/// of a detection result: measured once per result (O(sets), no text
/// formatted), so filtering never moves the columns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DupWidths {
    /// Digits of the largest set id (`#` comes on top).
    pub id_digits: usize,
    /// Digits of the largest additional bytes.
    pub additional: usize,
    /// Digits of the largest instance count.
    pub instances: usize,
    /// Digits of the largest instance bytes.
    pub instance_bytes: usize,
    /// Digits of the largest objects per copy.
    pub objects_per_copy: usize,
    /// Digits of the largest holding set id (the arrow and `#` on top).
    pub holder_digits: usize,
    /// There are possible-duplicates rows (`possible`, `D:detect`).
    pub possible: bool,
    /// There are sets whose equality cannot be verified (`unverified`).
    pub unverified: bool,
}

impl DupWidths {
    /// Measures every set and possible-duplicates type of `d`.
    pub fn measure(d: &Duplicates) -> DupWidths {
        let max = |f: &dyn Fn(&DuplicateSet) -> u64| d.sets.iter().map(f).max().unwrap_or(0);
        let possible = d.possible.iter().map(|p| p.instances.len() as u64).max();
        let digits = |n: u64| n.to_string().len();
        let instances = d.member_lists().iter().map(|m| m.len() as u64).max();
        let instances = instances.unwrap_or(0);
        DupWidths {
            // Sets are numbered by position: the last has the most digits.
            id_digits: digits(d.sets.len().saturating_sub(1) as u64),
            additional: bytes_width(max(&|s| s.additional_bytes)),
            instances: count_width(instances.max(possible.unwrap_or(0))),
            instance_bytes: bytes_width(max(&|s| s.instance_bytes)),
            objects_per_copy: count_width(max(&|s| s.objects_per_copy)),
            holder_digits: digits(max(&|s| s.holding_set().map_or(0, u64::from))),
            possible: possible.is_some(),
            unverified: d.sets.iter().any(|s| d.is_unverified(s)),
        }
    }

    /// Set, Additional, Inst., Per inst, Per copy, Kind, Held by, Type.
    pub(super) fn columns(&self, theme: &Theme) -> [Col; 8] {
        let mut held = theme.arrow().chars().count() + 1 + self.holder_digits;
        let mut kind = "trivial".len();
        if self.possible {
            held = held.max("D:detect".len());
            kind = "possible".len();
        }
        if self.unverified {
            kind = "unverified".len();
        }
        [
            Col::text("Set", 1 + self.id_digits).sortable(),
            Col::num("Additional", self.additional).sortable(),
            Col::num("Inst.", self.instances).sortable(),
            // On a narrow terminal the type name needs the room more (the
            // set's detail still shows both).
            Col::num("Per inst", self.instance_bytes)
                .optional(1)
                .sortable(),
            Col::num("Per copy", self.objects_per_copy)
                .optional(2)
                .sortable(),
            Col::text("Kind", kind),
            Col::text("Held by", held),
            Col::name("Type").sortable(),
        ]
    }
}

/// The inverse of a permutation of some of `0..len` (`u32::MAX` for those
/// left out).
pub(super) fn positions(order: &[u32], len: usize) -> Vec<u32> {
    let mut pos = vec![u32::MAX; len];
    for (p, &e) in order.iter().enumerate() {
        pos[e as usize] = p as u32;
    }
    pos
}

/// Rows of sets below the note and the header.
pub fn list_height(inner_height: u16) -> usize {
    inner_height.saturating_sub(2) as usize
}
