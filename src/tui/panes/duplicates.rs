//! The Duplicates pane: duplicate sets by additional bytes (SPEC §2.4) with
//! their holding sets, possible duplicates, and per set its members and the
//! instance graph of one member.

use std::sync::Arc;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::table::{no_comparison, Page, ScrolledTable, Sort, TableRow};
use super::{empty_message, Ctx, FilterPlan, Intent, ListState, Pane};
use crate::analysis::compare::kind_ranks;
use crate::analysis::filter::TypeFilter;
use crate::graph::duplicates::{DuplicateSet, DuplicateTotals, Duplicates};
use crate::graph::HeapGraph;
use crate::model::ObjectIdx;
use crate::tui::compared::{
    delta_width, rises, signed_bytes, steady_empty, steady_mark, steady_status, Compared,
};
use crate::tui::filtering::{FilterResult, FilterWork};
use crate::tui::fmt::{bytes, bytes_width, count, count_width, fit, type_name, Col, Columns};
use crate::tui::keys::Cmd;
use crate::tui::theme::Theme;
use crate::tui::worker::Job;

pub use crate::tui::filtering::DupRow;

#[derive(Debug, Clone)]
pub struct DetailLine {
    pub text: String,
    pub object: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct DupDetail {
    pub set: u32,
    pub lines: Vec<DetailLine>,
    pub list: ListState,
    /// Opened with Enter on the list's row: Backspace closes it, back to
    /// the list. A detail reached by a jump (`H`, the Overview, the
    /// inspector) goes back through the history instead.
    pub from_list: bool,
}

/// The rows of the list: every entry of the display order (the sets, and
/// with a comparison the gone sets) then every possible-duplicates type
/// (no filter: nothing to store), or the filter thread's selection (sets
/// in set order, gone sets, then possible duplicates) put in display order.
#[derive(Debug, Clone)]
pub enum DupRows {
    /// `sets`: the entries of the display order (sets and gone sets).
    All {
        sets: usize,
        possible: usize,
    },
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
    pub fn len(&self) -> usize {
        match self {
            DupRows::All { sets, possible } => sets + possible,
            DupRows::Filtered(rows) => rows.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i`; `order` is the entries in display order (see
    /// [`DuplicatesPane::order`]): set ids, then gone sets from `sets` on.
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

    fn sets(&self) -> usize {
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
    fn set_ids(&self, order: &[u32], sets_len: usize) -> Vec<u32> {
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
fn entry_row(e: u32, sets_len: usize) -> DupRow {
    match e.checked_sub(sets_len as u32) {
        Some(j) => DupRow::Gone(j),
        None => DupRow::Set(e),
    }
}

/// The entry of the display order of a set or gone row (`u32::MAX` for a
/// possible-duplicates row, which is not ordered).
fn row_entry(r: DupRow, sets_len: usize) -> u32 {
    match r {
        DupRow::Set(s) => s,
        DupRow::Gone(j) => sets_len as u32 + j,
        DupRow::Possible(_) => u32::MAX,
    }
}

/// Set, Additional, Inst., Per inst, Per copy, Kind, Held by, Type.
const SET: usize = 0;
const ADDITIONAL: usize = 1;
const INSTANCES: usize = 2;
const PER_INST: usize = 3;
const PER_COPY: usize = 4;
const KIND: usize = 5;
const HELD_BY: usize = 6;
const TYPE: usize = 7;
/// With a comparison: additional bytes newest − oldest of the set.
const DELTA: usize = 8;

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
        (INSTANCES, _) => sort.order(&mut order, |i| figure(i, |s| s.members.len() as u64)),
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
        .zip(kind_ranks(&d.sets))
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
    pub name: Box<str>,
    pub instance_bytes: u64,
    pub objects_per_copy: u64,
    /// Additional bytes newest (0) − oldest.
    pub delta: i128,
    /// Its copies and additional bytes in the last snapshot that had it.
    pub last_instances: u64,
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

#[derive(Debug)]
pub struct DuplicatesPane {
    pub list: ListState,
    pub rows: DupRows,
    /// The detection result `rows` index into. It trails
    /// `App::duplicates` while a filter over a newer result is computed,
    /// so rows and sets always agree.
    pub source: Option<Arc<Duplicates>>,
    pub detail: Option<DupDetail>,
    /// Column widths for `source` (see [`DupWidths::measure`]).
    pub widths: DupWidths,
    pub sort: Sort,
    /// The entries in display order ([`set_order`]): the sets of `source`
    /// and the gone sets.
    pub order: Vec<u32>,
    /// Each entry's position in `order` (`u32::MAX`: not shown).
    pos: Vec<u32>,
    /// The totals of the sets among the rows (computed when they change).
    pub totals: DuplicateTotals,
    /// With a comparison: per set of `source`, its Δ and steadiness.
    pub delta: Option<SetDeltas>,
    compared: Option<Arc<Compared>>,
    /// With a comparison: the sets the newest snapshot lacks.
    gone: Vec<GoneSet>,
    /// Their type names, for the filter thread.
    gone_names: Arc<Vec<Box<str>>>,
    /// `t` (kept across detection results).
    steady_only: bool,
}

impl Default for DuplicatesPane {
    fn default() -> DuplicatesPane {
        DuplicatesPane {
            list: ListState::default(),
            rows: DupRows::default(),
            source: None,
            detail: None,
            widths: DupWidths::default(),
            sort: DUPS_SORT,
            order: Vec::new(),
            pos: Vec::new(),
            totals: DuplicateTotals::default(),
            delta: None,
            compared: None,
            gone: Vec::new(),
            gone_names: Arc::default(),
            steady_only: false,
        }
    }
}

/// Widths of the list's values over every set and possible-duplicates type
/// of a detection result: measured once per result (O(sets), no text
/// formatted), so filtering never moves the columns.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DupWidths {
    /// Digits of the largest set id (`#` comes on top).
    pub id_digits: usize,
    pub additional: usize,
    pub instances: usize,
    pub instance_bytes: usize,
    pub objects_per_copy: usize,
    /// Digits of the largest holding set id (the arrow and `#` on top).
    pub holder_digits: usize,
    /// There are possible-duplicates rows (`possible`, `D:detect`).
    pub possible: bool,
    /// There are sets whose equality cannot be verified (`unverified`).
    pub unverified: bool,
}

impl DupWidths {
    pub fn measure(d: &Duplicates) -> DupWidths {
        let max = |f: &dyn Fn(&DuplicateSet) -> u64| d.sets.iter().map(f).max().unwrap_or(0);
        let possible = d.possible.iter().map(|p| p.instances.len() as u64).max();
        let digits = |n: u64| n.to_string().len();
        DupWidths {
            id_digits: digits(max(&|s| s.id as u64)),
            additional: bytes_width(max(&|s| s.additional_bytes)),
            instances: count_width(max(&|s| s.members.len() as u64).max(possible.unwrap_or(0))),
            instance_bytes: bytes_width(max(&|s| s.instance_bytes)),
            objects_per_copy: count_width(max(&|s| s.objects_per_copy)),
            holder_digits: digits(max(&|s| s.holding_set.map_or(0, u64::from))),
            possible: possible.is_some(),
            unverified: d.sets.iter().any(|s| d.is_unverified(s)),
        }
    }

    /// Set, Additional, Inst., Per inst, Per copy, Kind, Held by, Type.
    fn columns(&self, theme: &Theme) -> [Col; 8] {
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

/// Objects listed in a member's instance graph at most.
const GRAPH_LIMIT: usize = 300;

impl DuplicatesPane {
    /// Shows `rows` of `source` (filtered rows come in set order) in the
    /// pane's sort, with their totals. O(rows); O(sets log sets) for a new
    /// `source`.
    pub fn show(&mut self, source: Arc<Duplicates>, rows: DupRows, names: &[Box<str>]) {
        if !self
            .source
            .as_ref()
            .is_some_and(|s| Arc::ptr_eq(s, &source))
        {
            self.widths = DupWidths::measure(&source);
            if self.compared.is_some() && !self.gone.is_empty() {
                // Room for `gone` in the Set column.
                self.widths.id_digits = self.widths.id_digits.max(3);
            }
            self.delta = self.compared.as_ref().map(|c| SetDeltas {
                steady_only: self.steady_only,
                ..set_deltas(c, &source)
            });
            self.reorder(&source, names);
        }
        let rows = match rows {
            DupRows::All { possible, .. } => DupRows::All {
                sets: self.order.len(),
                possible,
            },
            rows => rows,
        };
        self.rows = self.sorted(rows, source.sets.len());
        self.totals = source.totals(self.rows.set_ids(&self.order, source.sets.len()));
        self.source = Some(source);
        self.list.scroll(self.rows.len(), usize::MAX);
    }

    /// The display order of `source` and its inverse, for the pane's sort.
    fn reorder(&mut self, source: &Duplicates, names: &[Box<str>]) {
        self.order = set_order(self.sort, source, names, self.delta.as_ref(), &self.gone);
        self.pos = positions(&self.order, source.sets.len() + self.gone.len());
    }

    /// Filtered rows put in the display order: sets and gone sets by
    /// position (those the order leaves out dropped), then the possible
    /// duplicates; every entry of the order with no filter.
    fn sorted(&self, rows: DupRows, sets_len: usize) -> DupRows {
        match rows {
            DupRows::All { possible, .. } => DupRows::All {
                sets: self.order.len(),
                possible,
            },
            DupRows::Filtered(rows) => {
                let pos = |r: DupRow| match row_entry(r, sets_len) {
                    u32::MAX => u32::MAX,
                    e => self.pos.get(e as usize).copied().unwrap_or(u32::MAX),
                };
                let mut rows: Vec<DupRow> = rows
                    .iter()
                    .copied()
                    .filter(|&r| matches!(r, DupRow::Possible(_)) || pos(r) != u32::MAX)
                    .collect();
                let sets = rows.partition_point(|r| !matches!(r, DupRow::Possible(_)));
                rows[..sets].sort_unstable_by_key(|&r| pos(r));
                DupRows::Filtered(Arc::new(rows))
            }
        }
    }

    /// Shows every set and possible-duplicates type of `source`.
    pub fn show_all(&mut self, source: Arc<Duplicates>, names: &[Box<str>]) {
        let rows = DupRows::All {
            sets: source.sets.len(),
            possible: source.possible.len(),
        };
        self.show(source, rows, names);
    }

    /// Installs a comparison (once, on its arrival): the Δ column and the
    /// gone sets.
    pub fn set_compared(&mut self, c: &Arc<Compared>) {
        self.compared = Some(c.clone());
        self.gone = gone_sets(c);
        self.gone_names = Arc::new(self.gone.iter().map(|g| g.name.clone()).collect());
        // The next `show` measures the source again, with the deltas.
        self.source = None;
    }

    /// The columns, with the Δ one when comparing.
    fn columns(&self, theme: &Theme) -> Vec<Col> {
        let mut cols = self.widths.columns(theme).to_vec();
        if self.delta.is_some() {
            let w = delta_width(self.widths.additional, self.gone.iter().map(|g| g.delta));
            cols.push(Col::num("Δ addit.", w).sortable());
            // Narrow terminals give up the per-copy figures first, then
            // Held by and Kind (the set's detail shows them), so the Δ fits.
            cols[PER_COPY] = cols[PER_COPY].optional(4);
            cols[PER_INST] = cols[PER_INST].optional(3);
            cols[HELD_BY] = cols[HELD_BY].optional(2);
            cols[KIND] = cols[KIND].optional(1);
        }
        cols
    }

    fn sets_len(&self) -> usize {
        self.source.as_ref().map_or(0, |d| d.sets.len())
    }

    pub fn row_of_set(&self, set: u32) -> Option<usize> {
        self.rows.row_of_set(set, &self.pos, self.sets_len())
    }

    /// The row `i` of the list.
    pub fn row(&self, i: usize) -> Option<DupRow> {
        self.rows.get(i, &self.order, self.sets_len())
    }

    /// Applies a new sort (a key or a header click): the rows are put in
    /// its order and the selection keeps its set.
    fn resort(&mut self, sort: Sort, ctx: &Ctx) -> Vec<Intent> {
        let (Some(graph), Some(source)) = (ctx.loading.graph(), self.source.clone()) else {
            return Vec::new();
        };
        let selected = self.row(self.list.selected);
        self.sort = sort;
        self.reorder(&source, &graph.dump.type_names);
        self.rows = self.sorted(self.rows.clone(), source.sets.len());
        self.totals = source.totals(self.rows.set_ids(&self.order, source.sets.len()));
        let entry = selected.map_or(u32::MAX, |r| row_entry(r, source.sets.len()));
        self.list.selected = match entry {
            u32::MAX => 0,
            e => self.row_of_set(e).unwrap_or(0),
        };
        self.fit(ctx);
        let mut cols = self.columns(ctx.theme);
        sort.mark(&mut cols);
        vec![Intent::status(sort.describe(&cols))]
    }

    /// `t`: only the sets that grow steadily, or all again.
    fn toggle_steady(&mut self, ctx: &Ctx) -> Vec<Intent> {
        let Some(d) = &mut self.delta else {
            return vec![no_comparison(ctx)];
        };
        self.steady_only = !self.steady_only;
        d.steady_only = self.steady_only;
        let snapshots = self.compared.as_ref().map_or(0, |c| c.snapshots());
        let status = steady_status(self.steady_only, snapshots, "sets");
        let mut out = self.resort(self.sort, ctx);
        out.clear();
        out.push(Intent::status(status));
        out
    }
}

/// The inverse of a permutation of some of `0..len` (`u32::MAX` for those
/// left out).
fn positions(order: &[u32], len: usize) -> Vec<u32> {
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

/// Members, then the instance graph of the first member: a depth-first
/// walk of its references, each object listed once (later visits marked).
pub fn detail(graph: &HeapGraph, d: &Duplicates, set: u32, theme: &Theme) -> DupDetail {
    let dump = &graph.dump;
    let s = &d.sets[set as usize];
    let mut lines = vec![DetailLine {
        text: format!(
            "Set #{} {} {} x {}, {} each, {} per copy, {} additional",
            s.id,
            theme.sep(),
            count(s.members.len() as u64),
            dump.type_names[s.type_index as usize],
            bytes(s.instance_bytes),
            crate::tui::fmt::counted(s.objects_per_copy, "object", "objects"),
            bytes(s.additional_bytes)
        ),
        object: None,
    }];
    if let Some(h) = s.holding_set {
        lines.push(DetailLine {
            text: format!("held by {} set #{h} (H jumps there)", theme.arrow()),
            object: None,
        });
    }
    lines.push(DetailLine {
        text: "Members (Enter inspects):".into(),
        object: None,
    });
    for &m in &s.members {
        lines.push(DetailLine {
            text: format!(
                "  {} {}",
                dump.id_hex(ObjectIdx(m)),
                dump.type_name(ObjectIdx(m))
            ),
            object: Some(m),
        });
    }
    let Some(&first) = s.members.first() else {
        return DupDetail {
            set,
            lines,
            list: ListState::default(),
            from_list: false,
        };
    };
    lines.push(DetailLine {
        text: format!("Instance graph of {}:", dump.id_hex(ObjectIdx(first))),
        object: None,
    });
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![(first, 0usize)];
    let mut listed = 0;
    while let Some((o, depth)) = stack.pop() {
        if listed == GRAPH_LIMIT {
            lines.push(DetailLine {
                text: format!("  {} (first {GRAPH_LIMIT} objects shown)", theme.ellipsis()),
                object: None,
            });
            break;
        }
        listed += 1;
        let again = !seen.insert(o);
        lines.push(DetailLine {
            text: format!(
                "  {}{} {} {}{}",
                "  ".repeat(depth),
                dump.type_name(ObjectIdx(o)),
                dump.id_hex(ObjectIdx(o)),
                bytes(dump.sizes[o as usize]),
                if again { " (again)" } else { "" }
            ),
            object: Some(o),
        });
        if !again {
            for &r in graph.refs_raw(o).iter().rev() {
                stack.push((r, depth + 1));
            }
        }
    }
    // Start on the first member: the lines above it are headings.
    let first = lines.iter().position(|l| l.object.is_some()).unwrap_or(0);
    DupDetail {
        set,
        lines,
        list: ListState {
            selected: first,
            offset: 0,
        },
        from_list: false,
    }
}

impl DuplicatesPane {
    /// Whether the rows are those of `d` with no filter result pending.
    pub fn shows(&self, d: &Arc<Duplicates>) -> bool {
        self.source.as_ref().is_some_and(|s| Arc::ptr_eq(s, d))
    }

    /// Selects `set` (which must be among the rows, else the first row) and
    /// opens its detail or closes any.
    pub fn select_set(
        &mut self,
        set: u32,
        open: bool,
        graph: Option<&Arc<HeapGraph>>,
        theme: &Theme,
    ) {
        self.list.selected = self.row_of_set(set).unwrap_or(0);
        self.detail = match (open, graph, &self.source) {
            (true, Some(g), Some(d)) => Some(detail(g, d, set, theme)),
            _ => None,
        };
    }

    /// The set the Duplicates keys act on: the detail's, or the selected row's.
    fn current_set(&self) -> Option<u32> {
        match &self.detail {
            Some(det) => Some(det.set),
            None => match self.row(self.list.selected) {
                Some(DupRow::Set(s)) => Some(s),
                _ => None,
            },
        }
    }

    /// Why Enter does nothing on a gone set's row.
    fn gone_status(&self, j: u32) -> Intent {
        Intent::status(match self.gone.get(j as usize) {
            Some(g) => format!(
                "this set is gone now ({}, {} extra in snapshot {}): nothing to open",
                match g.last_instances {
                    1 => "1 copy".to_string(),
                    n => format!("{} copies", count(n)),
                },
                bytes(g.last_additional),
                g.last_seen + 1
            ),
            None => "this set is gone from the newest snapshot".into(),
        })
    }

    fn detect_possible(&self, ctx: &Ctx) -> Vec<Intent> {
        let Some(DupRow::Possible(p)) = self.row(self.list.selected) else {
            return vec![Intent::status("select a possible-duplicates row")];
        };
        let (Some(shown), Some(current)) = (&self.source, ctx.loading.duplicates()) else {
            return Vec::new();
        };
        let job = Job::DetectDuplicates {
            type_index: shown.possible[p as usize].type_index,
            current: current.clone(),
        };
        vec![Intent::Request {
            job,
            label: "detecting duplicates".into(),
        }]
    }
}

impl Pane for DuplicatesPane {
    fn key(&mut self, cmd: Cmd, ctx: &Ctx) -> Vec<Intent> {
        match cmd {
            Cmd::Open => {
                let (Some(graph), Some(d)) = (ctx.loading.graph(), self.source.clone()) else {
                    return Vec::new();
                };
                if let Some(det) = &self.detail {
                    return match det.lines.get(det.list.selected).and_then(|l| l.object) {
                        Some(o) => vec![Intent::Inspect(ObjectIdx(o))],
                        None => Vec::new(),
                    };
                }
                match self.row(self.list.selected) {
                    Some(DupRow::Set(s)) => {
                        let mut det = detail(graph, &d, s, ctx.theme);
                        det.from_list = true;
                        self.detail = Some(det);
                        Vec::new()
                    }
                    Some(DupRow::Possible(_)) => self.detect_possible(ctx),
                    Some(DupRow::Gone(j)) => vec![self.gone_status(j)],
                    None => Vec::new(),
                }
            }
            Cmd::JumpHoldingSet => {
                let Some(d) = &self.source else {
                    return Vec::new();
                };
                match self
                    .current_set()
                    .and_then(|s| d.sets[s as usize].holding_set)
                {
                    Some(h) => vec![Intent::JumpToSet {
                        set: h,
                        open: self.detail.is_some(),
                    }],
                    None => vec![Intent::status("this set is not held by another set")],
                }
            }
            Cmd::DetectPossible => self.detect_possible(ctx),
            Cmd::SortNext | Cmd::SortReverse | Cmd::SteadyOnly if self.detail.is_some() => {
                vec![Intent::status("Bksp back to the list to sort it")]
            }
            Cmd::SteadyOnly => self.toggle_steady(ctx),
            Cmd::SortNext => self.resort(self.sort.next(&self.columns(ctx.theme)), ctx),
            Cmd::SortReverse => self.resort(self.sort.reversed(), ctx),
            _ => Vec::new(),
        }
    }

    fn step(&mut self, delta: isize, ctx: &Ctx) -> Vec<Intent> {
        let h = ctx.rows();
        if let Some(det) = &mut self.detail {
            let n = det.lines.len();
            det.list.step(delta, n, h);
        } else {
            let n = self.rows.len();
            self.list.step(delta, n, h.saturating_sub(1));
        }
        Vec::new()
    }

    fn selected_object(&self, _ctx: &Ctx) -> Option<ObjectIdx> {
        let d = self.source.as_ref()?;
        if let Some(det) = &self.detail {
            if let Some(o) = det.lines.get(det.list.selected).and_then(|l| l.object) {
                return Some(ObjectIdx(o));
            }
            return d.sets[det.set as usize]
                .members
                .first()
                .copied()
                .map(ObjectIdx);
        }
        match self.row(self.list.selected)? {
            DupRow::Set(s) => d.sets[s as usize].members.first().copied().map(ObjectIdx),
            DupRow::Possible(p) => d.possible[p as usize]
                .instances
                .first()
                .copied()
                .map(ObjectIdx),
            DupRow::Gone(_) => None,
        }
    }

    fn fit(&mut self, ctx: &Ctx) {
        let h = ctx.rows();
        let n = self.rows.len();
        self.list.scroll(n, h.saturating_sub(1));
        if let Some(det) = &mut self.detail {
            det.list.scroll(det.lines.len(), h);
        }
    }

    fn filter(&mut self, filter: &TypeFilter, ctx: &Ctx) -> FilterPlan {
        let (Some(graph), Some(duplicates)) = (ctx.loading.graph(), ctx.loading.duplicates())
        else {
            return FilterPlan::NotReady;
        };
        if filter.is_empty() {
            self.show_all(duplicates.clone(), &graph.dump.type_names);
            FilterPlan::Cleared
        } else {
            FilterPlan::Work(FilterWork::Duplicates {
                graph: graph.clone(),
                duplicates: duplicates.clone(),
                gone: self.gone_names.clone(),
            })
        }
    }

    fn filtered(&mut self, result: FilterResult, ctx: &Ctx) {
        if let (FilterResult::Duplicates { source, rows }, Some(graph)) =
            (result, ctx.loading.graph())
        {
            self.show(source, DupRows::Filtered(rows), &graph.dump.type_names);
        }
    }

    fn click_geometry(&self) -> Option<(usize, usize, u16)> {
        Some(match &self.detail {
            Some(det) => (det.list.selected, det.list.offset, 2),
            None => (self.list.selected, self.list.offset, 3),
        })
    }

    fn click_header(&mut self, x: usize, ctx: &Ctx) -> Vec<Intent> {
        if self.detail.is_some() {
            return Vec::new();
        }
        let cols = self.columns(ctx.theme);
        let width = ctx.body.width.saturating_sub(2) as usize;
        match Columns::new(width, &cols)
            .column_at(x)
            .and_then(|c| self.sort.clicked(c, &cols))
        {
            Some(sort) => self.resort(sort, ctx),
            None => vec![Intent::status("this column does not sort")],
        }
    }

    /// `t` is hinted only when there is a comparison to narrow by.
    fn key_label(&self, cmd: Cmd) -> Option<&'static str> {
        match cmd {
            Cmd::SteadyOnly if self.delta.is_none() || self.detail.is_some() => Some(""),
            _ => None,
        }
    }

    /// Backspace in a detail opened from the list goes back to the list
    /// (as its header says), before the history.
    fn back(&mut self) -> bool {
        if self.detail.as_ref().is_some_and(|d| d.from_list) {
            self.detail = None;
            return true;
        }
        false
    }

    fn draw(&self, ctx: &Ctx, area: Rect, f: &mut Frame) {
        let theme = ctx.theme;
        let pane = self;
        let t = &self.totals;
        let room = area.width.saturating_sub(2) as usize;
        let title = match (ctx.loading.duplicates(), &self.source) {
            (Some(_), Some(_)) if t.unverified_sets > 0 => {
                // The bytes are the extra copies' own (shallow) bytes, which
                // nested sets do not count twice: not the Additional
                // column's sum, so the words stay as long as they fit.
                let (sets, extra) = (count(t.sets), bytes(t.bytes));
                let sep = theme.sep();
                let unverified = count(t.unverified_sets);
                [
                    format!(
                        " Duplicates: {sets} sets, {extra} in extra copies {sep} unverified: {unverified} sets, {} ",
                        bytes(t.unverified_bytes),
                    ),
                    format!(
                        " Dups: {sets} sets, {extra} in extra copies {sep} unverified: {unverified} sets, {} ",
                        bytes(t.unverified_bytes),
                    ),
                    format!(" Duplicates: {sets} sets, {extra} in extra copies {sep} {unverified} unverified "),
                    format!(" Dups: {sets} sets, {extra} extra copies {sep} {unverified} unverified "),
                ]
                .into_iter()
                .find(|t| t.chars().count() <= room)
                .unwrap_or_else(|| format!(" Dups: {sets} sets, {extra} extra {sep} {unverified} unverified "))
            }
            (Some(_), Some(_)) => format!(
                " Duplicates: {} sets, {} in extra copies ",
                count(t.sets),
                bytes(t.bytes),
            ),
            _ => " Duplicates ".into(),
        };
        let inner = super::framed(f, area, &title, theme);
        let (Some(graph), Some(d)) = (ctx.loading.graph(), &pane.source) else {
            f.render_widget(Paragraph::new(" detecting duplicates…"), inner);
            return;
        };
        let dump = &graph.dump;
        let height = inner.height.saturating_sub(1) as usize;
        if let Some(det) = &pane.detail {
            let back = if det.from_list {
                " Set detail (Backspace: back to the list)"
            } else {
                " Set detail (Backspace: back)"
            };
            let mut lines = vec![Line::styled(back, theme.header())];
            for (i, l) in det
                .lines
                .iter()
                .enumerate()
                .skip(det.list.offset)
                .take(height)
            {
                let sel = i == det.list.selected;
                let text = fit(
                    &format!("{}{}", if sel { ">" } else { " " }, l.text),
                    inner.width as usize,
                    theme,
                );
                lines.push(Line::styled(
                    text,
                    if sel {
                        theme.selected()
                    } else if l.object.is_none() {
                        theme.bold()
                    } else {
                        Default::default()
                    },
                ));
            }
            f.render_widget(Paragraph::new(lines), inner);
            return;
        }
        let w = inner.width as usize;
        let height = list_height(inner.height);
        let mut cols = pane.columns(theme);
        pane.sort.mark(&mut cols);
        let table = Columns::new(w, &cols);
        let type_w = table.width(7);
        // Where the dump has values and field names (HPROF, V8), members
        // were compared by them: no caveat (SPEC 2.4).
        let caveat = if pane.steady_only {
            " only the sets that grow in every snapshot (t shows every set)"
        } else if d.has_values() {
            " equal = same type, size, values and fields, all the way down"
        } else {
            " equal = same type, size and reference shape (dumps hold no field values)"
        };
        let note = Line::styled(fit(caveat, w, theme), theme.dim());
        let [note_area, list_area] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(inner);
        f.render_widget(Paragraph::new(note), note_area);
        let row = |i: usize| {
            let cells: Vec<String> = match pane.row(i)? {
                DupRow::Set(id) => {
                    let s = &d.sets[id as usize];
                    let mut cells = vec![
                        format!("#{}", s.id),
                        bytes(s.additional_bytes),
                        count(s.members.len() as u64),
                        bytes(s.instance_bytes),
                        count(s.objects_per_copy),
                        (if d.is_unverified(s) {
                            "unverified"
                        } else if s.trivial {
                            "trivial"
                        } else {
                            "full"
                        })
                        .into(),
                        s.holding_set
                            .map_or("-".to_string(), |h| format!("{}#{h}", theme.arrow())),
                        type_name(&dump.type_names[s.type_index as usize], type_w, theme),
                    ];
                    if let Some(x) = &pane.delta {
                        let i = id as usize;
                        let mark = if x.steady[i] { steady_mark(theme) } else { " " };
                        cells.push(format!("{}{mark}", signed_bytes(x.delta[i], theme)));
                    }
                    cells
                }
                DupRow::Gone(j) => {
                    let g = pane.gone.get(j as usize)?;
                    let cells = vec![
                        "gone".into(),
                        bytes(0),
                        "0".into(),
                        bytes(g.instance_bytes),
                        count(g.objects_per_copy),
                        "-".into(),
                        "-".into(),
                        type_name(&g.name, type_w, theme),
                        format!("{} ", signed_bytes(g.delta, theme)),
                    ];
                    return Some(TableRow::of(cells).style(theme.dim()));
                }
                DupRow::Possible(p) => {
                    let p = &d.possible[p as usize];
                    let mut cells = vec![
                        "?".into(),
                        "-".into(),
                        count(p.instances.len() as u64),
                        "-".into(),
                        "-".into(),
                        "possible".into(),
                        "D:detect".into(),
                        type_name(&dump.type_names[p.type_index as usize], type_w, theme),
                    ];
                    if pane.delta.is_some() {
                        cells.push(String::new());
                    }
                    cells
                }
            };
            Some(TableRow::of(cells))
        };
        let page = Page {
            list: &pane.list,
            len: pane.rows.len(),
            height,
            selected: theme.selected(),
        };
        let empty = || {
            if pane.steady_only && ctx.filter.trim().is_empty() {
                let n = pane.compared.as_ref().map_or(0, |c| c.snapshots());
                steady_empty(n, "sets")
            } else {
                empty_message(ctx, false, "duplicate sets", "no duplicate sets")
            }
        };
        f.render_widget(
            ScrolledTable::page(&table, &cols, theme, page, row, empty),
            list_area,
        );
    }
}
