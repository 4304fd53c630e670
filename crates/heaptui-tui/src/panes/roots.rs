//! The Roots pane: root records grouped by kind and flags with the retained
//! bytes of their objects; a group expands to its records.

use std::collections::HashSet;
use std::sync::Arc;

use ratatui::layout::Rect;
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::table::{no_comparison, plural, Page, ScrolledTable, Sort, TableRow};
use super::{empty_message, Ctx, FilterPlan, Intent, ListState, Pane, Saved};
use crate::compared::{
    delta_width, rises, signed_bytes, steady_empty, steady_mark, steady_status, Compared,
};
use crate::filtering::{FilterResult, FilterWork};
use crate::fmt::{
    bytes, bytes_width, count, count_width, fit, text_width, type_name, Col, Columns,
};
use crate::keys::Cmd;
use crate::loading::Arrived;
use crate::theme::Theme;
use heaptui_core::analysis::RootFigures;
use heaptui_core::analysis::RootGroup;
use heaptui_core::analysis::TypeFilter;
use heaptui_core::graph::DominatorTree;
use heaptui_core::model::{root_flags, root_kind};
use heaptui_core::model::{short_frame, Model, ObjectIdx};

pub use crate::filtering::{match_groups, GroupMatch, RECORDS_SHOWN};

/// A row of the Roots pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootRow {
    /// A (kind, flags) group (index into the root groups).
    Group(usize),
    /// A (kind, flags) group of the baselines that the newest snapshot
    /// lacks (index into the pane's gone groups).
    Gone(usize),
    /// (group, index into `Model::roots`)
    Record(usize, u32),
    /// A thread's records within a group follow: (group, index into the
    /// group's `threads`).
    Thread(usize, usize),
    /// (group, how many more matching records are not listed).
    More(usize, usize),
}

/// Kind \[flags\], Records, Objects, Retained (all sortable).
const KIND: usize = 0;
const RECORDS: usize = 1;
const OBJECTS: usize = 2;
/// With a comparison: retained bytes newest − oldest.
const DELTA: usize = 4;

/// Groups start by retained bytes, largest first.
pub const ROOTS_SORT: Sort = Sort {
    column: 3,
    descending: true,
};

/// The label of a (kind, flags) group (its name cell, and the key of the
/// Kind sort).
fn group_label(kind: u32, flags: u32) -> String {
    format!(
        "{} [{}]",
        root_kind::name(kind),
        root_flags::describe(flags)
    )
}

/// A (kind, flags) group of the baselines that the newest snapshot lacks:
/// a row of its own, dimmed and marked `(gone)`, with its negative Δ.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoneGroup {
    /// A `root_kind` value.
    pub kind: u32,
    /// `root_flags` bits.
    pub flags: u32,
    /// Retained bytes newest (0) − oldest.
    pub delta: i128,
    /// Its figures in the last snapshot that had it, and that snapshot's
    /// position (oldest 0).
    pub last: RootFigures,
    /// That snapshot's position, oldest 0.
    pub last_seen: usize,
}

/// A comparison's figures for the Roots pane, computed once on its
/// arrival (O(groups)).
#[derive(Debug, Clone, Default)]
pub struct RootDeltas {
    /// Per group: retained bytes newest − oldest.
    pub delta: Vec<i128>,
    /// Per group: retained bytes rise at every step.
    pub steady: Vec<bool>,
    /// The groups the newest snapshot lacks.
    pub gone: Vec<GoneGroup>,
    /// How many snapshots are compared.
    pub snapshots: usize,
}

impl RootDeltas {
    /// The comparison's figures for `groups` (the opened snapshot's root groups).
    pub fn new(c: &Compared, groups: &[RootGroup]) -> RootDeltas {
        let rows: Vec<Option<&[RootFigures]>> = groups
            .iter()
            .map(|g| {
                c.root_row(g.kind, g.flags)
                    .map(|r| &c.cmp.roots[r].figures[..])
            })
            .collect();
        let growth =
            |f: &[RootFigures]| f[f.len() - 1].retained_bytes as i128 - f[0].retained_bytes as i128;
        let gone = c
            .cmp
            .roots
            .iter()
            .filter(|r| r.figures.last().is_some_and(|f| f.records == 0))
            .filter_map(|r| {
                let last_seen = r.figures.iter().rposition(|f| f.records > 0)?;
                Some(GoneGroup {
                    kind: r.kind,
                    flags: r.flags,
                    delta: growth(&r.figures),
                    last: r.figures[last_seen],
                    last_seen,
                })
            })
            .collect();
        RootDeltas {
            delta: rows.iter().map(|f| f.map_or(0, growth)).collect(),
            steady: rows
                .iter()
                .map(|f| {
                    f.is_some_and(|f| {
                        let b: Vec<u64> = f.iter().map(|x| x.retained_bytes).collect();
                        rises(&b)
                    })
                })
                .collect(),
            gone,
            snapshots: c.snapshots(),
        }
    }
}

/// Group positions in the order of `sort` (ties keep the analysis's order,
/// by retained bytes); with a comparison the gone groups follow as
/// positions `groups.len() + j`, and `steady_only` keeps the groups that
/// grow steadily. O(groups log groups), once per sort.
pub fn group_order(
    sort: Sort,
    groups: &[RootGroup],
    delta: Option<&RootDeltas>,
    steady_only: bool,
) -> Vec<u32> {
    let n = groups.len();
    let gone = delta.map_or(&[][..], |d| &d.gone[..]);
    let mut order: Vec<u32> = (0..(n + gone.len()) as u32).collect();
    if let (Some(d), true) = (delta, steady_only) {
        order.retain(|&i| d.steady.get(i as usize) == Some(&true));
    }
    let g = |i: u32| groups.get(i as usize);
    let x = |i: u32| &gone[i as usize - n];
    let figure = |i: u32, f: fn(&RootGroup) -> u64| g(i).map_or(0, f);
    match (sort.column, delta) {
        (DELTA, Some(d)) => sort.order(&mut order, |i| match g(i) {
            Some(_) => d.delta[i as usize],
            None => x(i).delta,
        }),
        (KIND, _) => {
            let labels: Vec<String> = (0..(n + gone.len()) as u32)
                .map(|i| match g(i) {
                    Some(g) => group_label(g.kind, g.flags),
                    None => group_label(x(i).kind, x(i).flags),
                })
                .collect();
            sort.order(&mut order, |i| &labels[i as usize]);
        }
        (RECORDS, _) => sort.order(&mut order, |i| figure(i, |g| g.roots.len() as u64)),
        (OBJECTS, _) => sort.order(&mut order, |i| figure(i, |g| g.objects)),
        _ => sort.order(&mut order, |i| figure(i, |g| g.retained_bytes)),
    }
    order
}

/// The Roots pane: root records grouped by kind and flags, expandable into records and threads.
#[derive(Debug)]
pub struct RootsPane {
    list: ListState,
    rows: Vec<RootRow>,
    expanded: HashSet<usize>,
    /// The filter's matches per group (`None`: no filter).
    matches: Option<Arc<Vec<GroupMatch>>>,
    /// Widths of the records, objects and retained bytes of any row (see
    /// [`RootsPane::measure`]).
    widths: [usize; 3],
    sort: Sort,
    /// Group positions in the order of `sort` (gone groups from
    /// `groups.len()` on).
    order: Vec<u32>,
    /// With a comparison: the Δ column, steady and gone groups.
    delta: Option<RootDeltas>,
    compared: Option<Arc<Compared>>,
    /// `t`: only the groups that grow steadily.
    steady_only: bool,
    /// The order is to be computed again (new data or a new sort).
    stale: bool,
}

impl Default for RootsPane {
    fn default() -> RootsPane {
        RootsPane {
            list: ListState::default(),
            rows: Vec::new(),
            expanded: HashSet::new(),
            matches: None,
            widths: [0; 3],
            sort: ROOTS_SORT,
            order: Vec::new(),
            delta: None,
            compared: None,
            steady_only: false,
            stale: true,
        }
    }
}

impl RootsPane {
    /// Sizes the number columns for the widest group, once per dump. A
    /// record's object retains no more than its group.
    pub fn measure(&mut self, groups: &[RootGroup]) {
        let max = |f: fn(&RootGroup) -> u64| groups.iter().map(f).max().unwrap_or(0);
        self.widths = [
            count_width(max(|g| g.roots.len() as u64)),
            count_width(max(|g| g.objects)),
            bytes_width(max(|g| g.retained_bytes)),
        ];
    }

    fn columns(&self) -> Vec<Col> {
        let mut cols = vec![
            Col::name("Kind [flags] / object").sortable(),
            Col::num("Records", self.widths[0]).sortable(),
            Col::num("Objects", self.widths[1]).sortable(),
            Col::num("Retained", self.widths[2]).sortable(),
        ];
        if let Some(d) = &self.delta {
            let w = delta_width(self.widths[2], d.gone.iter().map(|g| g.delta));
            cols.push(Col::num("Δ retained", w).sortable());
        }
        self.sort.mark(&mut cols);
        cols
    }

    /// Installs a comparison (once, on its arrival): the Δ column and the
    /// gone groups.
    pub fn set_compared(&mut self, c: &Arc<Compared>, groups: &[RootGroup]) {
        self.compared = Some(c.clone());
        self.delta = None;
        self.stale = true;
        self.rebuild(groups);
    }

    /// The comparison's figures for `groups` (once per comparison) and the
    /// order, when stale.
    fn reorder(&mut self, groups: &[RootGroup]) {
        if let (Some(c), None) = (&self.compared, &self.delta) {
            self.delta = Some(RootDeltas::new(c, groups));
        }
        self.order = group_order(self.sort, groups, self.delta.as_ref(), self.steady_only);
        self.stale = false;
    }

    /// `t`: only the groups that grow steadily, or all again.
    fn toggle_steady(&mut self, ctx: &Ctx) -> Vec<Intent> {
        let Some(d) = &self.delta else {
            return vec![no_comparison(ctx)];
        };
        let snapshots = d.snapshots;
        self.steady_only = !self.steady_only;
        let mut out = self.resort(self.sort, ctx);
        out.clear();
        out.push(Intent::status(steady_status(
            self.steady_only,
            snapshots,
            "root groups",
        )));
        out
    }

    /// Why a key does nothing on a gone group's row.
    fn gone_status(&self, j: usize) -> Intent {
        let g = self.delta.as_ref().and_then(|d| d.gone.get(j));
        Intent::status(match g {
            Some(g) => format!(
                "this group is gone now ({}, {} retained in snapshot {}): nothing to open",
                plural(g.last.records, "record"),
                bytes(g.last.retained_bytes),
                g.last_seen + 1
            ),
            None => "this root group is gone from the newest snapshot".into(),
        })
    }

    /// Applies a new sort: the groups in its order, the selection on its
    /// group.
    fn resort(&mut self, sort: Sort, ctx: &Ctx) -> Vec<Intent> {
        let Some(groups) = ctx.loading.roots() else {
            return Vec::new();
        };
        let head = match self.rows.get(self.list.selected) {
            Some(RootRow::Group(g))
            | Some(RootRow::Record(g, _))
            | Some(RootRow::Thread(g, _))
            | Some(RootRow::More(g, _)) => Some(RootRow::Group(*g)),
            Some(RootRow::Gone(j)) => Some(RootRow::Gone(*j)),
            None => None,
        };
        self.sort = sort;
        self.stale = true;
        self.rebuild(groups);
        if let Some(h) = head {
            self.list.selected = self.rows.iter().position(|r| *r == h).unwrap_or(0);
        }
        self.fit(ctx);
        vec![Intent::status(sort.describe(&self.columns()))]
    }

    /// Rebuilds rows from the groups, the expanded set and the filter's
    /// matches: groups without a match are hidden. O(groups + records
    /// shown), so expanding a group of a million records costs a page.
    pub fn rebuild(&mut self, groups: &[RootGroup]) {
        self.rows.clear();
        if self.stale {
            self.reorder(groups);
        }
        for &gi in &self.order {
            let gi = gi as usize;
            let Some(g) = groups.get(gi) else {
                // A gone group has no records a type filter could match.
                if self.matches.is_none() {
                    self.rows.push(RootRow::Gone(gi - groups.len()));
                }
                continue;
            };
            let (records, first): (usize, &[u32]) = match &self.matches {
                Some(m) => (m[gi].records, &m[gi].first),
                None => (g.roots.len(), &g.roots[..g.roots.len().min(RECORDS_SHOWN)]),
            };
            if self.matches.is_some() && records == 0 {
                continue;
            }
            self.rows.push(RootRow::Group(gi));
            if self.expanded.contains(&gi) {
                if self.matches.is_none() && !g.threads.is_empty() {
                    // Records by thread, each thread's under its name.
                    let mut runs = g.threads.iter().enumerate().peekable();
                    for (k, &r) in first.iter().enumerate() {
                        while let Some(&(ti, run)) = runs.peek() {
                            if (run.start as usize) > k {
                                break;
                            }
                            runs.next();
                            if k < (run.start + run.len) as usize {
                                self.rows.push(RootRow::Thread(gi, ti));
                            }
                        }
                        self.rows.push(RootRow::Record(gi, r));
                    }
                } else {
                    for &r in first {
                        self.rows.push(RootRow::Record(gi, r));
                    }
                }
                if records > first.len() {
                    self.rows.push(RootRow::More(gi, records - first.len()));
                }
            }
        }
        self.list.scroll(self.rows.len(), usize::MAX);
    }
}

impl RootsPane {
    /// Expands (`open`) or collapses the group of the selected row.
    fn expand(&mut self, open: bool, ctx: &Ctx) {
        let g = match self.rows.get(self.list.selected) {
            Some(RootRow::Group(g))
            | Some(RootRow::Record(g, _))
            | Some(RootRow::Thread(g, _))
            | Some(RootRow::More(g, _)) => *g,
            Some(RootRow::Gone(_)) | None => return,
        };
        let changed = if open {
            self.expanded.insert(g)
        } else {
            self.expanded.remove(&g)
        };
        if changed {
            if !open {
                self.list.selected = self
                    .rows
                    .iter()
                    .position(|r| *r == RootRow::Group(g))
                    .unwrap_or(0);
            }
            if let Some(groups) = ctx.loading.roots() {
                self.rebuild(groups);
            }
        }
    }
}

impl RootsPane {
    /// The frame's title, with the comparison's state.
    fn title(&self, theme: &Theme) -> String {
        match (&self.delta, self.steady_only) {
            (Some(_), true) => {
                format!(
                    " Roots by kind and flags {} steady growth only ",
                    theme.sep()
                )
            }
            (Some(_), false) => format!(
                " Roots by kind and flags {0} Δ vs oldest {0} t: steady only ",
                theme.sep()
            ),
            (None, _) => " Roots by kind and flags ".to_string(),
        }
    }

    /// The row of group `gi`.
    fn group_row(&self, g: &RootGroup, gi: usize, theme: &Theme) -> TableRow {
        let mark = if self.expanded.contains(&gi) {
            theme.expanded()
        } else {
            theme.collapsed()
        };
        let name = format!("{mark} {}", group_label(g.kind, g.flags));
        let mut cells = vec![
            name,
            count(g.roots.len() as u64),
            count(g.objects),
            bytes(g.retained_bytes),
        ];
        if let Some(d) = &self.delta {
            let mark = if d.steady[gi] {
                steady_mark(theme)
            } else {
                " "
            };
            cells.push(format!("{}{mark}", signed_bytes(d.delta[gi], theme)));
        }
        TableRow::of(cells)
    }

    /// The row of root record `r`: its object, where it lies, and what it
    /// retains. Its label spans the name, records and objects columns.
    fn record_row(
        &self,
        dump: &Model,
        dom: &DominatorTree,
        r: u32,
        table: &Columns,
        theme: &Theme,
    ) -> TableRow {
        let label_w = table.span(0, 3);
        let root = &dump.roots[r as usize];
        // Statics name their declaring class when it is not the object's
        // own type; a root in a thread names its frame (and its thread
        // where no thread row precedes it).
        let place = match (
            dump.root_places.thread(r as usize),
            dump.root_places.frame(r as usize),
        ) {
            (Some(t), Some(f)) if self.matches.is_some() => {
                Some(format!(" in {}: {}", t.name, short_frame(f)))
            }
            (Some(t), None) if self.matches.is_some() => Some(format!(" in {}", t.name)),
            (_, Some(f)) => Some(format!(" in {}", short_frame(f))),
            _ => None,
        };
        let container = root
            .container_type
            .filter(|&t| t != dump.type_of(root.object))
            .map(|t| format!(" (static of {})", dump.name_of_type(t)))
            .or(place)
            .unwrap_or_default();
        // The type gives way to the id; a long declaring class is cut at
        // the end.
        let id = dump.id_hex(root.object);
        let room = label_w
            .saturating_sub(4 + id.len() + text_width(&container))
            .max(12);
        let label = format!(
            "   {} {id}{container}",
            type_name(dump.type_name(root.object), room, theme)
        );
        let text = format!(
            "{:<label_w$} {:>rw$}",
            fit(&label, label_w, theme),
            bytes(dom.retained_bytes(root.object.index())),
            rw = table.width(3),
        );
        TableRow::line(text)
    }
}

impl Pane for RootsPane {
    fn save(&self) -> Saved {
        self.list.save()
    }

    fn restore(&mut self, saved: &Saved, _ctx: &Ctx) {
        self.list.restore(saved);
    }

    fn arrived(&mut self, what: Arrived, ctx: &Ctx) -> Vec<Intent> {
        match what {
            Arrived::Dominators => match ctx.loading.dominated() {
                Some(d) => {
                    self.measure(&d.roots);
                    vec![Intent::Refilter]
                }
                None => Vec::new(),
            },
            Arrived::Comparison => {
                let Some(c) = ctx.loading.compared() else {
                    return Vec::new();
                };
                let loaded = ctx.loading.graph().is_some()
                    && ctx.loading.dom().is_some()
                    && ctx.loading.suspects().is_some();
                if loaded {
                    if let Some(roots) = ctx.loading.roots() {
                        self.set_compared(c, roots);
                    }
                }
                Intent::refilter_if(loaded)
            }
            _ => Vec::new(),
        }
    }

    fn key(&mut self, cmd: Cmd, ctx: &Ctx) -> Vec<Intent> {
        match cmd {
            Cmd::Open => match self.rows.get(self.list.selected).copied() {
                Some(RootRow::Group(_)) => self.expand(true, ctx),
                Some(RootRow::Gone(j)) => return vec![self.gone_status(j)],
                Some(RootRow::Record(..)) | Some(RootRow::Thread(..)) => {
                    if let Some(o) = self.selected_object(ctx) {
                        return vec![Intent::Inspect(o)];
                    }
                }
                _ => {}
            },
            Cmd::SortNext => return self.resort(self.sort.next(&self.columns()), ctx),
            Cmd::SortReverse => return self.resort(self.sort.reversed(), ctx),
            Cmd::SteadyOnly => return self.toggle_steady(ctx),
            Cmd::Expand => self.expand(true, ctx),
            Cmd::Collapse => self.expand(false, ctx),
            _ => {}
        }
        Vec::new()
    }

    fn step(&mut self, delta: isize, ctx: &Ctx) -> Vec<Intent> {
        let n = self.rows.len();
        self.list.step(delta, n, ctx.rows());
        Vec::new()
    }

    fn selected_object(&self, ctx: &Ctx) -> Option<ObjectIdx> {
        let graph = ctx.loading.graph()?;
        let groups = ctx.loading.roots()?;
        match self.rows.get(self.list.selected)? {
            RootRow::Group(g) => groups[*g]
                .roots
                .first()
                .map(|&r| graph.dump.roots[r as usize].object),
            RootRow::Record(_, r) => Some(graph.dump.roots[*r as usize].object),
            // A thread row stands for the thread's object.
            RootRow::Thread(g, k) => {
                let t = groups[*g].threads.get(*k)?.thread;
                graph.dump.root_places.threads.get(t as usize)?.object
            }
            RootRow::More(..) | RootRow::Gone(_) => None,
        }
    }

    fn fit(&mut self, ctx: &Ctx) {
        self.list.scroll(self.rows.len(), ctx.rows());
    }

    fn filter(&mut self, filter: &TypeFilter, ctx: &Ctx) -> FilterPlan {
        let (Some(graph), Some(groups)) = (ctx.loading.graph(), ctx.loading.roots()) else {
            return FilterPlan::NotReady;
        };
        if filter.is_empty() {
            self.matches = None;
            self.rebuild(groups);
            FilterPlan::Cleared
        } else {
            FilterPlan::Work(FilterWork::Roots {
                graph: graph.clone(),
                groups: groups.clone(),
            })
        }
    }

    fn filtered(&mut self, result: FilterResult, ctx: &Ctx) {
        if let (FilterResult::Roots(matches), Some(groups)) = (result, ctx.loading.roots()) {
            self.matches = Some(matches);
            self.rebuild(groups);
        }
    }

    fn click_geometry(&self) -> Option<(usize, usize, u16)> {
        Some((self.list.selected, self.list.offset, 2))
    }

    /// `t` is hinted only when there is a comparison to narrow by.
    fn key_label(&self, cmd: Cmd) -> Option<&'static str> {
        match cmd {
            Cmd::SteadyOnly if self.delta.is_none() => Some(""),
            _ => None,
        }
    }

    fn click_header(&mut self, x: usize, ctx: &Ctx) -> Vec<Intent> {
        let cols = self.columns();
        let width = ctx.body.width.saturating_sub(2) as usize;
        match Columns::new(width, &cols)
            .column_at(x)
            .and_then(|c| self.sort.clicked(c, &cols))
        {
            Some(sort) => self.resort(sort, ctx),
            None => Vec::new(),
        }
    }

    fn draw(&self, ctx: &Ctx, area: Rect, f: &mut Frame) {
        let theme = ctx.theme;
        let pane = self;
        let inner = super::framed(f, area, &self.title(theme), theme);
        let (Some(graph), Some(dom), Some(groups)) =
            (ctx.loading.graph(), ctx.loading.dom(), ctx.loading.roots())
        else {
            f.render_widget(Paragraph::new(" waiting for the dominator tree…"), inner);
            return;
        };
        let dump = &graph.dump;
        let w = inner.width as usize;
        let cols = pane.columns();
        let table = Columns::new(w, &cols);
        let row = |i: usize| {
            Some(match *pane.rows.get(i)? {
                RootRow::Group(gi) => pane.group_row(&groups[gi], gi, theme),
                RootRow::Gone(j) => {
                    let g = pane.delta.as_ref()?.gone.get(j)?;
                    let name = format!("  (gone) {}", group_label(g.kind, g.flags));
                    let cells = vec![
                        name,
                        "0".into(),
                        "0".into(),
                        bytes(0),
                        format!("{} ", signed_bytes(g.delta, theme)),
                    ];
                    TableRow::of(cells).style(theme.dim())
                }
                RootRow::Thread(gi, k) => {
                    let run = groups[gi].threads.get(k)?;
                    let name = dump
                        .root_places
                        .threads
                        .get(run.thread as usize)
                        .map_or("?", |t| &*t.name);
                    let records = if run.len == 1 { "record" } else { "records" };
                    let label = format!("   thread {name}: {} {records}", count(run.len as u64));
                    TableRow::line(fit(&label, w, theme))
                }
                RootRow::Record(_, r) => pane.record_row(dump, dom, r, &table, theme),
                RootRow::More(_, n) => TableRow::line(format!(
                    "   {} {} more records",
                    theme.ellipsis(),
                    count(n as u64)
                )),
            })
        };
        let page = Page {
            list: &pane.list,
            len: pane.rows.len(),
            height: inner.height.saturating_sub(1) as usize,
            selected: theme.selected(),
        };
        let empty = || {
            if let (Some(d), true) = (
                &pane.delta,
                pane.steady_only && ctx.filter.trim().is_empty(),
            ) {
                steady_empty(d.snapshots, "root groups")
            } else {
                empty_message(ctx, false, "roots", "the dump has no root records")
            }
        };
        f.render_widget(
            ScrolledTable::page(&table, &cols, theme, page, row, empty),
            inner,
        );
    }
}
