//! The Roots pane: root records grouped by kind and flags with the retained
//! bytes of their objects; a group expands to its records.

use std::collections::HashSet;
use std::sync::Arc;

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use super::table::{ScrolledTable, Sort, TableRow};
use super::{empty_message, Ctx, FilterPlan, Intent, ListState, Pane};
use crate::analysis::filter::TypeFilter;
use crate::analysis::roots::RootGroup;
use crate::model::{root_flags, root_kind};
use crate::tui::compared::{signed_bytes, Compared};
use crate::tui::filtering::{FilterResult, FilterWork};
use crate::tui::fmt::{
    bytes, bytes_width, count, count_width, fit, text_width, type_name, Col, Columns,
};
use crate::tui::keys::Cmd;

pub use crate::tui::filtering::{match_groups, GroupMatch, RECORDS_SHOWN};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootRow {
    Group(usize),
    /// (group, index into `Model::roots`)
    Record(usize, u32),
    More(usize, usize),
}

/// Kind [flags], Records, Objects, Retained (all sortable).
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

/// The label of a group (its name cell, and the key of the Kind sort).
fn group_label(g: &RootGroup) -> String {
    format!(
        "{} [{}]",
        root_kind::name(g.kind),
        root_flags::describe(g.flags)
    )
}

/// Group positions in the order of `sort` (ties keep the analysis's order,
/// by retained bytes). O(groups log groups), once per sort.
pub fn group_order(sort: Sort, groups: &[RootGroup], delta: Option<&[i128]>) -> Vec<u32> {
    let mut order: Vec<u32> = (0..groups.len() as u32).collect();
    let g = |i: u32| &groups[i as usize];
    if let (DELTA, Some(d)) = (sort.column, delta) {
        sort.order(&mut order, |i| d[i as usize]);
        return order;
    }
    match sort.column {
        KIND => {
            let labels: Vec<String> = groups.iter().map(group_label).collect();
            sort.order(&mut order, |i| &labels[i as usize]);
        }
        RECORDS => sort.order(&mut order, |i| g(i).roots.len()),
        OBJECTS => sort.order(&mut order, |i| g(i).objects),
        _ => sort.order(&mut order, |i| g(i).retained_bytes),
    }
    order
}

#[derive(Debug)]
pub struct RootsPane {
    pub list: ListState,
    pub rows: Vec<RootRow>,
    pub expanded: HashSet<usize>,
    /// The filter's matches per group (`None`: no filter).
    pub matches: Option<Arc<Vec<GroupMatch>>>,
    /// Widths of the records, objects and retained bytes of any row (see
    /// [`RootsPane::measure`]).
    pub widths: [usize; 3],
    pub sort: Sort,
    /// Group positions in the order of `sort`.
    pub order: Vec<u32>,
    /// With a comparison: per group, retained bytes newest − oldest.
    pub delta: Option<Arc<Vec<i128>>>,
    compared: Option<Arc<Compared>>,
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
        if self.delta.is_some() {
            cols.push(Col::num("Δ retained", self.widths[2] + 1).sortable());
        }
        self.sort.mark(&mut cols);
        cols
    }

    /// Installs a comparison (once, on its arrival): the Δ column.
    pub fn set_compared(&mut self, c: &Arc<Compared>, groups: &[RootGroup]) {
        self.compared = Some(c.clone());
        self.delta = None;
        self.deltas(groups);
        self.order = group_order(self.sort, groups, self.delta.as_deref().map(|d| &d[..]));
    }

    /// The per-group Δ of `groups` (once per comparison).
    fn deltas(&mut self, groups: &[RootGroup]) {
        if let (Some(c), None) = (&self.compared, &self.delta) {
            let d = groups
                .iter()
                .map(|g| {
                    c.root_row(g.kind, g.flags).map_or(0, |r| {
                        let f = &c.cmp.roots[r].figures;
                        f[f.len() - 1].retained_bytes as i128 - f[0].retained_bytes as i128
                    })
                })
                .collect();
            self.delta = Some(Arc::new(d));
        }
    }

    /// Applies a new sort: the groups in its order, the selection on its
    /// group.
    fn resort(&mut self, sort: Sort, ctx: &Ctx) -> Vec<Intent> {
        let Some(groups) = ctx.loading.roots() else {
            return Vec::new();
        };
        let group = match self.rows.get(self.list.selected) {
            Some(RootRow::Group(g)) | Some(RootRow::Record(g, _)) | Some(RootRow::More(g, _)) => {
                Some(*g)
            }
            None => None,
        };
        self.sort = sort;
        self.deltas(groups);
        self.order = group_order(sort, groups, self.delta.as_deref().map(|d| &d[..]));
        self.rebuild(groups);
        if let Some(g) = group {
            self.list.selected = self
                .rows
                .iter()
                .position(|r| *r == RootRow::Group(g))
                .unwrap_or(0);
        }
        self.fit(ctx);
        vec![Intent::status(sort.describe(&self.columns()))]
    }

    /// Rebuilds rows from the groups, the expanded set and the filter's
    /// matches: groups without a match are hidden. O(groups + records
    /// shown), so expanding a group of a million records costs a page.
    pub fn rebuild(&mut self, groups: &[RootGroup]) {
        self.rows.clear();
        if self.order.len() != groups.len() {
            self.deltas(groups);
            self.order = group_order(self.sort, groups, self.delta.as_deref().map(|d| &d[..]));
        }
        for &gi in &self.order {
            let gi = gi as usize;
            let g = &groups[gi];
            let (records, first): (usize, &[u32]) = match &self.matches {
                Some(m) => (m[gi].records, &m[gi].first),
                None => (g.roots.len(), &g.roots[..g.roots.len().min(RECORDS_SHOWN)]),
            };
            if self.matches.is_some() && records == 0 {
                continue;
            }
            self.rows.push(RootRow::Group(gi));
            if self.expanded.contains(&gi) {
                for &r in first {
                    self.rows.push(RootRow::Record(gi, r));
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
            Some(RootRow::Group(g)) | Some(RootRow::Record(g, _)) | Some(RootRow::More(g, _)) => *g,
            None => return,
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

impl Pane for RootsPane {
    fn key(&mut self, cmd: Cmd, ctx: &Ctx) -> Vec<Intent> {
        match cmd {
            Cmd::Open => match self.rows.get(self.list.selected).copied() {
                Some(RootRow::Group(_)) => self.expand(true, ctx),
                Some(RootRow::Record(..)) => {
                    if let Some(o) = self.selected_object(ctx) {
                        return vec![Intent::Inspect(o)];
                    }
                }
                _ => {}
            },
            Cmd::SortNext => return self.resort(self.sort.next(&self.columns()), ctx),
            Cmd::SortReverse => return self.resort(self.sort.reversed(), ctx),
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

    fn selected_object(&self, ctx: &Ctx) -> Option<u32> {
        let graph = ctx.loading.graph()?;
        let groups = ctx.loading.roots()?;
        match self.rows.get(self.list.selected)? {
            RootRow::Group(g) => groups[*g]
                .roots
                .first()
                .map(|&r| graph.dump.roots[r as usize].object),
            RootRow::Record(_, r) => Some(graph.dump.roots[*r as usize].object),
            RootRow::More(..) => None,
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
        let block = Block::bordered()
            .border_set(theme.border())
            .title(Line::styled(" Roots by kind and flags ", theme.header()));
        let inner = block.inner(area);
        f.render_widget(block, area);
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
        // A record's label spans the name, records and objects columns.
        let label_w = table.span(0, 3);
        let height = inner.height.saturating_sub(1) as usize;
        let mut shown = Vec::new();
        for (i, row) in pane
            .rows
            .iter()
            .enumerate()
            .skip(pane.list.offset)
            .take(height)
        {
            let sel = i == pane.list.selected;
            let style = if sel {
                theme.selected()
            } else {
                Default::default()
            };
            shown.push(match *row {
                RootRow::Group(gi) => {
                    let g = &groups[gi];
                    let mark = if pane.expanded.contains(&gi) {
                        theme.expanded()
                    } else {
                        theme.collapsed()
                    };
                    let name = format!("{mark} {}", group_label(g));
                    let mut cells = vec![
                        name,
                        count(g.roots.len() as u64),
                        count(g.objects),
                        bytes(g.retained_bytes),
                    ];
                    if let Some(d) = &pane.delta {
                        cells.push(signed_bytes(d[gi], theme));
                    }
                    TableRow::cells(cells, sel, style)
                }
                RootRow::Record(_, r) => {
                    let root = &dump.roots[r as usize];
                    // Statics name their declaring class when it is not the
                    // object's own type.
                    let container = root
                        .container_type
                        .filter(|&t| t != dump.types[root.object as usize])
                        .map(|t| format!(" (static of {})", dump.type_names[t as usize]))
                        .unwrap_or_default();
                    // The type gives way to the id; a long declaring class is
                    // cut at the end.
                    let id = dump.id_hex(root.object);
                    let room = label_w
                        .saturating_sub(4 + id.len() + text_width(&container))
                        .max(12);
                    let label = format!(
                        "   {} {id}{container}",
                        type_name(dump.type_name(root.object), room, theme)
                    );
                    // The label spans the name, records and objects columns.
                    let text = format!(
                        "{:<label_w$} {:>rw$}",
                        fit(&label, label_w, theme),
                        bytes(dom.retained_bytes[root.object as usize]),
                        rw = table.width(3),
                    );
                    TableRow::spanning(text, sel, style)
                }
                RootRow::More(_, n) => {
                    let text = format!("   {} {} more records", theme.ellipsis(), count(n as u64));
                    TableRow::spanning(text, sel, style)
                }
            });
        }
        let empty = pane
            .rows
            .is_empty()
            .then(|| empty_message(ctx, false, "roots", "the dump has no root records"));
        f.render_widget(
            ScrolledTable {
                columns: &table,
                header: &cols,
                theme,
                rows: shown,
                empty,
            },
            inner,
        );
    }
}
