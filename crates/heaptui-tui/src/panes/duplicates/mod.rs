//! The Duplicates pane: duplicate sets by additional bytes (docs/duplicates.md) with
//! their holding sets, possible duplicates, and per set its members and the
//! instance graph of one member.

use std::sync::Arc;

use ratatui::layout::Rect;
use ratatui::Frame;

use super::table::{no_comparison, Sort};
use super::{Ctx, FilterPlan, Intent, Jump, Landing, ListState, Pane, PaneId, Saved};
use crate::compared::{delta_width, steady_status, Compared};
use crate::filtering::{FilterResult, FilterWork};
use crate::fmt::{bytes, count, Col, Columns};
use crate::keys::Cmd;
use crate::loading::Arrived;
use crate::msg::Msg;
use crate::theme::Theme;
use crate::worker::Job;
use heaptui_core::analysis::TypeFilter;
use heaptui_core::graph::duplicates::{DuplicateTotals, Duplicates};
use heaptui_core::graph::HeapGraph;
use heaptui_core::model::ObjectIdx;

pub use crate::filtering::DupRow;

mod detail;
mod draw;
mod owner_deltas;
mod owners;
mod rows;

pub use detail::*;
pub use owners::{GoneOwner, OwnerDelta, OwnerDeltas, OwnerRow, OwnerSort, OwnersView};
pub use rows::*;

/// Where the user was in the pane (see [`Pane::save`]): the list's
/// selection, and the open detail's set and whether it came from the list.
struct DuplicatesPlace {
    list: ListState,
    detail: Option<(u32, bool)>,
    /// The owners view was shown, with this selection.
    owners: Option<ListState>,
}

/// The Duplicates pane: the duplicate sets (and possible duplicates), and a set's detail.
#[derive(Debug)]
pub struct DuplicatesPane {
    list: ListState,
    rows: DupRows,
    /// The detection result `rows` index into. It trails
    /// `App::duplicates` while a filter over a newer result is computed,
    /// so rows and sets always agree.
    source: Option<Arc<Duplicates>>,
    detail: Option<DupDetail>,
    /// Column widths for `source` (see [`DupWidths::measure`]).
    widths: DupWidths,
    sort: Sort,
    /// The entries in display order ([`set_order`]): the sets of `source`
    /// and the gone sets.
    order: Vec<u32>,
    /// Each entry's position in `order` (`u32::MAX`: not shown).
    pos: Vec<u32>,
    /// The totals of the sets among the rows (computed when they change).
    totals: DuplicateTotals,
    /// With a comparison: per set of `source`, its Δ and steadiness.
    delta: Option<SetDeltas>,
    compared: Option<Arc<Compared>>,
    /// With a comparison: the sets the newest snapshot lacks.
    gone: Vec<GoneSet>,
    /// Their type names, for the filter thread.
    gone_names: Arc<Vec<Box<str>>>,
    /// `t` (kept across detection results).
    steady_only: bool,
    /// `O`: the owners view is shown instead of the sets.
    owners_on: bool,
    /// The owners of the latest detection result asked for, once computed.
    owners: Option<OwnersView>,
    /// `e` in the owners view: its exclude patterns (`None`: the format's).
    owner_exclude: Option<Vec<String>>,
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
            owners_on: false,
            owners: None,
            owner_exclude: None,
        }
    }
}

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

    /// The list row that shows `set`, if the filter lets it through.
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

impl DuplicatesPane {
    /// The list's selection and scroll.
    pub fn list(&self) -> &ListState {
        &self.list
    }

    /// How many rows the list has.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Whether the list has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.len() == 0
    }

    /// The totals of the sets among the rows.
    pub fn totals(&self) -> &DuplicateTotals {
        &self.totals
    }

    /// The open set's detail.
    pub fn detail(&self) -> Option<&DupDetail> {
        self.detail.as_ref()
    }

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

    /// Whether the owners view is what the pane shows (no set's detail open).
    pub fn shows_owners(&self) -> bool {
        self.owners_on && self.detail.is_none()
    }

    /// The owners view, once computed.
    pub fn owners(&self) -> Option<&OwnersView> {
        self.owners.as_ref()
    }

    /// The set the Duplicates keys act on: the detail's, or the selected row's.
    fn current_set(&self) -> Option<u32> {
        if self.shows_owners() {
            return self.owners.as_ref().and_then(|v| v.selected_set());
        }
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
            label: DETECTING.into(),
        }]
    }
}

/// `w` on a set: what would be freed if its extra copies (every member
/// but the first) were gone, the inspector opening on the first, which
/// stays (docs/ui.md).
pub(super) fn what_if_set(d: &Duplicates, set: u32, ctx: &Ctx) -> Vec<Intent> {
    let (Some(s), Some(g)) = (d.sets.get(set as usize), ctx.loading.graph()) else {
        return Vec::new();
    };
    let Some((&first, extra)) = d.members(set).split_first() else {
        return Vec::new();
    };
    let label = format!(
        "the {} extra {} of set #{set} ({})",
        count(extra.len() as u64),
        if extra.len() == 1 { "copy" } else { "copies" },
        crate::fmt::type_name(&g.dump.type_names[s.type_index as usize], 40, ctx.theme)
    );
    let cut = heaptui_core::analysis::Cut {
        objects: ObjectIdx::cast_slice(extra).to_vec(),
        edges: Vec::new(),
    };
    what_if_request(ObjectIdx(first), label, cut, None)
}

/// Opens the inspector on `anchor` and asks what the cut frees.
pub(super) fn what_if_request(
    anchor: ObjectIdx,
    label: String,
    cut: heaptui_core::analysis::Cut,
    owner: Option<crate::worker::OwnerCut>,
) -> Vec<Intent> {
    vec![
        Intent::Inspect(anchor),
        Intent::Request {
            job: Job::WhatIf {
                anchor,
                label: label.clone(),
                cut,
                owner,
            },
            label: format!("what if {label} were gone"),
        },
    ]
}

/// Where a [`show_set`] goes: a duplicate set, its detail open or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShowSet {
    /// The set, a position in `Duplicates::sets`.
    pub set: u32,
    /// Whether its detail opens.
    pub open: bool,
}

/// A jump that selects duplicate set `set` (a position in
/// `Duplicates::sets`) in the Duplicates pane, its detail open or not.
pub fn show_set(set: u32, open: bool) -> Jump {
    Jump::to(PaneId::Duplicates, ShowSet { set, open })
}

/// The status line's label of a detection for one type (`D`), until the
/// detection lands.
const DETECTING: &str = "detecting duplicates";

impl Pane for DuplicatesPane {
    fn save(&self) -> Saved {
        Box::new(DuplicatesPlace {
            list: self.list,
            detail: self.detail.as_ref().map(|d| (d.set, d.from_list)),
            owners: self
                .owners_on
                .then(|| self.owners.as_ref().map(|v| v.list).unwrap_or_default()),
        })
    }

    fn restore(&mut self, saved: &Saved, ctx: &Ctx) {
        let Some(place) = saved.downcast_ref::<DuplicatesPlace>() else {
            return;
        };
        self.list = place.list;
        self.owners_on = place.owners.is_some();
        if let (Some(list), Some(v)) = (place.owners, &mut self.owners) {
            v.list = list;
        }
        self.detail = match (place.detail, ctx.loading.graph(), &self.source) {
            (Some((s, from_list)), Some(g), Some(d)) => {
                let mut det = detail(g, d, s, ctx.theme);
                det.from_list = from_list;
                Some(det)
            }
            _ => None,
        };
    }

    fn arrived(&mut self, what: Arrived, ctx: &Ctx) -> Vec<Intent> {
        match what {
            // Under a filter the pane keeps showing the previous result
            // until the filter thread has narrowed this one. The owners
            // view, once asked for, follows the new result (a `D`).
            Arrived::Duplicates => {
                let mut out = vec![Intent::Refilter];
                if self.owners_on || self.owners.is_some() {
                    out.extend(self.request_owners(ctx));
                }
                out
            }
            Arrived::Comparison => {
                let Some(c) = ctx.loading.compared() else {
                    return Vec::new();
                };
                let loaded = ctx.loading.graph().is_some()
                    && ctx.loading.dom().is_some()
                    && ctx.loading.suspects().is_some();
                if loaded {
                    self.set_compared(c);
                    if let (Some(v), Some(g)) = (&mut self.owners, ctx.loading.graph()) {
                        v.delta = OwnerDeltas::of(c, &v.owners, &g.dump);
                        v.reorder();
                    }
                }
                Intent::refilter_if(loaded)
            }
            _ => Vec::new(),
        }
    }

    fn prepare_jump(&self, jump: &Jump, ctx: &Ctx) -> Landing {
        let Some(&ShowSet { set, .. }) = jump.place() else {
            return Landing::Refused(None);
        };
        let (Some(d), Some(_)) = (ctx.loading.duplicates(), ctx.loading.graph()) else {
            return Landing::Refused(None);
        };
        // Set ids are those of the newest result: a pane still showing an
        // older one or about to change its rows (a filter under way), or
        // filtering the set out, shows everything instead.
        let current = self.shows(d) && !ctx.filtering;
        Landing::Taken {
            drop_filter: !current || self.row_of_set(set).is_none(),
        }
    }

    fn jump(&mut self, jump: Jump, dropped_filter: bool, ctx: &Ctx) -> Vec<Intent> {
        let (Some(&ShowSet { set, open }), Some(d), Some(graph)) =
            (jump.place(), ctx.loading.duplicates(), ctx.loading.graph())
        else {
            return Vec::new();
        };
        if dropped_filter {
            self.show_all(d.clone(), &graph.dump.type_names);
        }
        // A set's detail opened from an owner goes back to it (Bksp: the
        // history holds the owners view).
        self.owners_on = false;
        self.select_set(set, open, Some(graph), ctx.theme);
        Vec::new()
    }

    fn key(&mut self, cmd: Cmd, ctx: &Ctx) -> Vec<Intent> {
        if cmd == Cmd::ToggleOwners {
            return self.toggle_owners(ctx);
        }
        if self.shows_owners() {
            if let Some(out) = self.owners_key(cmd, ctx) {
                return out;
            }
        }
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
                    .and_then(|s| d.sets[s as usize].holding_set())
                {
                    Some(h) => vec![Intent::Jump(show_set(h, self.detail.is_some()))],
                    None => vec![Intent::status("this set is not held by another set")],
                }
            }
            Cmd::DetectPossible => self.detect_possible(ctx),
            Cmd::WhatIf => match (&self.source, self.current_set()) {
                (Some(d), Some(s)) => what_if_set(d, s, ctx),
                _ => vec![Intent::status(
                    "select a set: w asks what its extra copies hold",
                )],
            },
            Cmd::MergedPaths => match (&self.source, self.current_set(), ctx.loading.graph()) {
                (Some(d), Some(s), Some(g)) => {
                    let set = &d.sets[s as usize];
                    let label = format!(
                        "set #{s}: {} × {}",
                        crate::fmt::count(d.members(s).len() as u64),
                        g.dump.type_names[set.type_index as usize]
                    );
                    let members = ObjectIdx::cast_slice(d.members(s)).to_vec();
                    vec![super::paths::request(
                        super::paths::objects(label, members),
                        ctx,
                    )]
                }
                _ => Vec::new(),
            },
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
        if self.shows_owners() {
            if let Some(v) = &mut self.owners {
                let n = v.len();
                v.list.step(delta, n, h.saturating_sub(1));
            }
            return Vec::new();
        }
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
        if self.shows_owners() {
            return self.owners.as_ref()?.selected_object();
        }
        let d = self.source.as_ref()?;
        if let Some(det) = &self.detail {
            if let Some(o) = det.lines.get(det.list.selected).and_then(|l| l.object) {
                return Some(ObjectIdx(o));
            }
            return d.members(det.set).first().copied().map(ObjectIdx);
        }
        match self.row(self.list.selected)? {
            DupRow::Set(s) => d.members(s).first().copied().map(ObjectIdx),
            DupRow::Possible(p) => d.possible[p as usize].instances.first().map(ObjectIdx),
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
        if let Some(v) = &mut self.owners {
            let n = v.len();
            v.list.scroll(n, h.saturating_sub(1));
        }
    }

    fn receive(&mut self, msg: Msg, ctx: &Ctx) -> Result<Vec<Intent>, Msg> {
        let Msg::Owners { source, owners } = msg else {
            return Err(msg);
        };
        // A result for an older detection (or older patterns) is dropped:
        // the slot's latest request replaces it.
        if ctx
            .loading
            .duplicates()
            .is_some_and(|d| Arc::ptr_eq(d, &source))
        {
            let old = self.owners.take();
            let delta = match (ctx.loading.compared(), ctx.loading.graph()) {
                (Some(c), Some(g)) => OwnerDeltas::of(c, &owners, &g.dump),
                _ => None,
            };
            let mut v = OwnersView::new(source, owners, delta);
            if let Some(old) = old {
                (v.list, v.sort, v.steady_only) = (old.list, old.sort, old.steady_only);
                v.reorder();
            }
            let n = v.len();
            v.list.scroll(n, ctx.rows().saturating_sub(1));
            self.owners = Some(v);
        }
        // The filter applies to the new owners too.
        Ok(Intent::refilter_if(!ctx.filter.is_empty()))
    }

    fn edited(&mut self, text: String, ctx: &Ctx) -> Vec<Intent> {
        let patterns: Vec<String> = text
            .split([' ', ','])
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        self.owner_exclude = if text.trim().is_empty() {
            None
        } else {
            Some(patterns)
        };
        // Computed again with the new patterns.
        self.owners = None;
        self.request_owners(ctx)
    }

    fn filter(&mut self, filter: &TypeFilter, ctx: &Ctx) -> FilterPlan {
        let (Some(graph), Some(duplicates)) = (ctx.loading.graph(), ctx.loading.duplicates())
        else {
            return FilterPlan::NotReady;
        };
        if filter.is_empty() {
            self.show_all(duplicates.clone(), &graph.dump.type_names);
            if let Some(v) = &mut self.owners {
                v.set_shown(None);
            }
            FilterPlan::Cleared
        } else {
            FilterPlan::Work(FilterWork::Duplicates {
                graph: graph.clone(),
                duplicates: duplicates.clone(),
                gone: self.gone_names.clone(),
                owners: self.owners.as_ref().map(|v| {
                    let gone = v.delta.iter().flat_map(|d| &d.gone);
                    (
                        v.owners.clone(),
                        Arc::new(gone.map(|g| g.path.clone()).collect()),
                    )
                }),
            })
        }
    }

    fn filtered(&mut self, result: FilterResult, ctx: &Ctx) {
        if let (
            FilterResult::Duplicates {
                source,
                rows,
                owners,
            },
            Some(graph),
        ) = (result, ctx.loading.graph())
        {
            self.show(source, DupRows::Filtered(rows), &graph.dump.type_names);
            match (owners, &mut self.owners) {
                (Some(m), Some(v)) if Arc::ptr_eq(&m.owners, &v.owners) => {
                    v.set_shown(Some((m.shown, m.gone)));
                }
                _ => {}
            }
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
        let owners = self.shows_owners();
        match cmd {
            Cmd::ToggleOwners if owners => Some("sets"),
            Cmd::OpenInDominators | Cmd::ExcludePattern if !owners => Some(""),
            Cmd::ExcludePattern => Some("exclude"),
            Cmd::SortNext | Cmd::SteadyOnly if owners => {
                match self.owners.as_ref().is_some_and(|v| v.delta.is_some()) {
                    true => None,
                    false => Some(""),
                }
            }
            Cmd::DetectPossible | Cmd::JumpHoldingSet if owners => Some(""),
            // An owner has no paths of its own (its sets do: O, then M).
            Cmd::MergedPaths if owners => Some(""),
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
        draw::draw(self, ctx, area, f)
    }
}
