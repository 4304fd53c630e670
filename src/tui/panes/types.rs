//! The Types pane: type statistics (SPEC §2.2) ranked by the nucleo
//! matcher, precise retained bytes on request, and the immediate dominators
//! of a type's instances with an exclude pattern (§2.3).

use std::collections::HashMap;
use std::sync::Arc;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use super::instances::{self, InstancesView};
use super::table::{ScrolledTable, Sort, TableRow};
use super::{empty_message, Ctx, FilterPlan, Intent, ListState, Pane};
use crate::analysis::filter::TypeFilter;
use crate::analysis::{ImmediateDominators, PreciseRetained, TypeStats};
use crate::graph::DominatorTree;
use crate::tui::compared::{signed_bytes, Compared};
use crate::tui::filtering::{FilterResult, FilterWork};
use crate::tui::fmt::{bytes, bytes_width, count, count_width, fit, type_name, Col, Columns};
use crate::tui::instance_rows::{InstanceRows, TypeObjects};
use crate::tui::keys::{Cmd, Mode};
use crate::tui::matcher::TypeMatcher;
use crate::tui::worker::Job;

#[derive(Debug, Clone)]
pub struct ImmView {
    pub type_index: u32,
    pub exclude: String,
    pub rows: Vec<ImmediateDominators>,
    pub list: ListState,
    /// Widths of the number columns' values (see [`ImmView::new`]).
    pub widths: [usize; 3],
}

impl ImmView {
    /// The view of a result; its columns are measured here, once.
    pub fn new(type_index: u32, exclude: String, rows: Vec<ImmediateDominators>) -> ImmView {
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

    fn columns(&self) -> [Col; 4] {
        [
            Col::name("Dominator type"),
            Col::num("Objects", self.widths[0]),
            Col::num("Dominated", self.widths[1]),
            Col::num("Dom. retain", self.widths[2]),
        ]
    }
}

/// Type, Count, Shallow, Min ret. (the sortable columns), Precise.
const NAME: usize = 0;
const COUNT: usize = 1;
const SHALLOW: usize = 2;
const MIN_RETAINED: usize = 3;
/// With a comparison: shallow bytes newest − oldest, after Precise.
const DELTA: usize = 5;

/// Types start sorted by minimum retained bytes, largest first.
pub const TYPES_SORT: Sort = Sort {
    column: MIN_RETAINED,
    descending: true,
};

/// Positions in `types` in the order of `sort`; ties keep the order of
/// `types` (shallow bytes). O(types log types), once per sort.
pub fn type_order(
    sort: Sort,
    types: &[TypeStats],
    names: &[Box<str>],
    delta: Option<&[i128]>,
) -> Vec<u32> {
    let mut order: Vec<u32> = (0..types.len() as u32).collect();
    let t = |p: u32| &types[p as usize];
    match (sort.column, delta) {
        (NAME, _) => sort.order(&mut order, |p| &*names[t(p).type_index as usize]),
        (COUNT, _) => sort.order(&mut order, |p| t(p).count),
        (SHALLOW, _) => sort.order(&mut order, |p| t(p).shallow_bytes),
        (DELTA, Some(d)) => sort.order(&mut order, |p| d[t(p).type_index as usize]),
        _ => sort.order(&mut order, |p| t(p).min_retained_bytes),
    }
    order
}

/// Per type index of the opened snapshot: its shallow bytes newest −
/// oldest in a comparison (once, when the comparison arrives).
pub fn type_deltas(c: &Compared, types: usize) -> Vec<i128> {
    (0..types as u32)
        .map(|t| c.type_row(t).map_or(0, |r| c.cmp.types[r].shallow_growth()))
        .collect()
}

#[derive(Debug)]
pub struct TypesPane {
    pub list: ListState,
    pub precise: HashMap<u32, PreciseRetained>,
    pub precise_running: Option<u32>,
    pub imm: Option<ImmView>,
    /// Focus is on the immediate-dominators list.
    pub imm_focus: bool,
    /// The exclude pattern for immediate dominators (a glob, may be empty).
    pub exclude: String,
    /// Widths of the number columns' values over every type (see
    /// [`TypesPane::measure`]).
    pub widths: [usize; 4],
    /// The ranked, filtered rows (nucleo).
    pub matcher: TypeMatcher,
    pub sort: Sort,
    /// With a comparison: per type index, shallow bytes newest − oldest,
    /// and how many types of the baselines are gone now.
    pub delta: Option<(Arc<Vec<i128>>, usize)>,
    /// Positions in the type statistics in the order of `sort`: the
    /// matcher is given the types in this order.
    pub order: Arc<Vec<u32>>,
    /// The sort changed: the next filter gives the matcher the types again.
    reorder: bool,
    /// The filter has fuzzy text: nucleo ranks the rows by match.
    pub ranked: bool,
    /// The list of a type's instances, drawn over the types when open.
    pub instances: Option<InstancesView>,
    /// The objects of each type, built by the first `x`'s job.
    pub type_objects: Option<Arc<TypeObjects>>,
}

impl Default for TypesPane {
    fn default() -> TypesPane {
        TypesPane {
            list: ListState::default(),
            precise: HashMap::new(),
            precise_running: None,
            imm: None,
            imm_focus: false,
            exclude: String::new(),
            widths: [0; 4],
            matcher: TypeMatcher::default(),
            sort: TYPES_SORT,
            delta: None,
            order: Arc::new(Vec::new()),
            reorder: false,
            ranked: false,
            instances: None,
            type_objects: None,
        }
    }
}

impl TypesPane {
    /// The type on the selected row.
    fn selected_type(&self) -> Option<u32> {
        self.matcher.rows(self.list.selected, 1).first().copied()
    }

    /// Asks for the immediate dominators of the selected type.
    pub fn immediate_dominators(&self) -> Vec<Intent> {
        let Some(ty) = self.selected_type() else {
            return Vec::new();
        };
        let job = Job::ImmediateDominators {
            type_index: ty,
            exclude: self.exclude.clone(),
        };
        vec![Intent::Request {
            job,
            label: "immediate dominators".into(),
        }]
    }

    /// The exclude pattern was edited and accepted.
    pub fn set_exclude(&mut self, text: String) -> Vec<Intent> {
        self.exclude = text;
        if self.imm.is_some() {
            self.immediate_dominators()
        } else {
            Vec::new()
        }
    }

    /// A precise retained size arrived.
    pub fn precise_done(&mut self, type_index: u32, result: PreciseRetained) {
        self.precise.insert(type_index, result);
        self.precise_running = None;
    }

    /// Immediate dominators arrived; the focus moves to them.
    pub fn immediate_dominators_done(
        &mut self,
        type_index: u32,
        exclude: String,
        rows: Vec<ImmediateDominators>,
    ) {
        self.imm = Some(ImmView::new(type_index, exclude, rows));
        self.imm_focus = true;
    }

    /// Sizes the number columns for the widest values of the whole data
    /// set: once per dump, so the columns stay put while a filter changes
    /// the rows. Precise sizes arrive later; none exceeds the reachable heap.
    pub fn measure(&mut self, types: &[TypeStats], dom: &DominatorTree) {
        let max = |f: fn(&TypeStats) -> u64| types.iter().map(f).max().unwrap_or(0);
        self.widths = [
            count_width(max(|t| t.count)),
            bytes_width(max(|t| t.shallow_bytes)),
            bytes_width(max(|t| t.min_retained_bytes)),
            bytes_width(dom.reachable_bytes).max("running".len()),
        ];
    }

    fn columns(&self) -> Vec<Col> {
        let mut cols = vec![
            Col::name("Type").sortable(),
            Col::num("Count", self.widths[0]).sortable(),
            Col::num("Shallow", self.widths[1]).sortable(),
            Col::num("Min ret.", self.widths[2]).sortable(),
            Col::num("Precise", self.widths[3]).optional(1),
        ];
        if self.delta.is_some() {
            cols.push(Col::num("Δ shallow", self.widths[1] + 1).sortable());
        }
        self.sort.mark(&mut cols);
        cols
    }

    /// Installs a comparison's Δ column (once, on its arrival).
    pub fn set_compared(&mut self, c: &Compared, types: usize) {
        let gone = c.cmp.types.iter().filter(|t| t.vanishes()).count();
        self.delta = Some((Arc::new(type_deltas(c, types)), gone));
        self.reorder = true;
    }

    fn deltas(&self) -> Option<&[i128]> {
        self.delta.as_ref().map(|(d, _)| &d[..])
    }

    /// Sorts the types by `sort`: a new order for the matcher, applied by
    /// filtering again (off the UI thread).
    fn resort(&mut self, sort: Sort, ctx: &Ctx) -> Vec<Intent> {
        let (Some(graph), Some(types)) = (ctx.loading.graph(), ctx.loading.types()) else {
            return Vec::new();
        };
        self.sort = sort;
        self.order = Arc::new(type_order(
            sort,
            types,
            &graph.dump.type_names,
            self.deltas(),
        ));
        self.reorder = true;
        let mut status = sort.describe(&self.columns());
        if self.ranked {
            status.push_str(" (while the filter has text, best matches first)");
        }
        vec![Intent::Refilter, Intent::status(status)]
    }

    /// Opens the list of the selected type's instances (its rows come
    /// from a job).
    fn list_instances(&mut self) -> Vec<Intent> {
        let Some(ty) = self.selected_type() else {
            return Vec::new();
        };
        let (view, request) = InstancesView::open(ty, self.type_objects.clone());
        self.instances = Some(view);
        vec![request]
    }

    /// The rows of the instances list arrived.
    pub fn instances_done(&mut self, rows: InstanceRows) {
        if self.type_objects.is_none() {
            self.type_objects = Some(rows.index.clone());
        }
        if let Some(view) = &mut self.instances {
            view.arrived(rows);
        }
    }

    /// Keys of the instances list.
    fn instances_key(&mut self, cmd: Cmd) -> Vec<Intent> {
        let Some(view) = &mut self.instances else {
            return Vec::new();
        };
        match cmd {
            Cmd::Open => view.selected().map(Intent::Inspect).into_iter().collect(),
            Cmd::SortNext | Cmd::SortReverse => {
                let sort = match cmd {
                    Cmd::SortNext => view.wanted().next(&view.columns()),
                    _ => view.wanted().reversed(),
                };
                self.resort_instances(sort)
            }
            _ => Vec::new(),
        }
    }

    fn resort_instances(&mut self, sort: Sort) -> Vec<Intent> {
        let Some(view) = &mut self.instances else {
            return Vec::new();
        };
        let request = view.resort(sort, self.type_objects.clone());
        vec![request, Intent::status(sort.describe(&view.columns()))]
    }

    /// Rows of the type list and of the lower split, for a body of `inner` rows.
    pub fn split(&self, inner: u16) -> (u16, u16) {
        if self.imm.is_some() {
            let top = inner / 2;
            (top, inner - top)
        } else {
            (inner, 0)
        }
    }
}

impl Pane for TypesPane {
    fn mode(&self, base: Mode) -> Mode {
        if self.instances.is_some() {
            Mode::TypeInstances
        } else {
            base
        }
    }

    fn key(&mut self, cmd: Cmd, ctx: &Ctx) -> Vec<Intent> {
        if self.instances.is_some() {
            return self.instances_key(cmd);
        }
        match cmd {
            Cmd::SortNext => self.resort(self.sort.next(&self.columns()), ctx),
            Cmd::SortReverse => self.resort(self.sort.reversed(), ctx),
            Cmd::ListInstances => self.list_instances(),
            Cmd::Open if self.imm_focus => {
                let Some(imm) = &self.imm else {
                    return Vec::new();
                };
                let target = imm.rows.get(imm.list.selected).and_then(|r| {
                    let dom = ctx.loading.dom()?;
                    r.dominators
                        .iter()
                        .copied()
                        .max_by_key(|&o| dom.retained_bytes[o as usize])
                });
                match target {
                    Some(o) => vec![Intent::Reveal(o)],
                    None => vec![Intent::status(
                        "these instances are held directly by GC roots",
                    )],
                }
            }
            Cmd::Open => match self.selected_type() {
                Some(ty) => match ctx.loading.largest_instance(ty) {
                    Some(o) => vec![Intent::Reveal(o)],
                    None => vec![Intent::status("no reachable instance of this type")],
                },
                None => Vec::new(),
            },
            Cmd::PreciseRetained => {
                let Some(ty) = self.selected_type() else {
                    return Vec::new();
                };
                if self.precise_running.is_some() {
                    vec![Intent::status(
                        "a precise retained computation is already running",
                    )]
                } else if !self.precise.contains_key(&ty) {
                    self.precise_running = Some(ty);
                    let name = ctx
                        .loading
                        .graph()
                        .map(|g| g.dump.type_names[ty as usize].to_string())
                        .unwrap_or_default();
                    vec![Intent::Request {
                        job: Job::Precise { type_index: ty },
                        label: format!("precise retained of {name}"),
                    }]
                } else {
                    Vec::new()
                }
            }
            Cmd::ImmediateDominators => self.immediate_dominators(),
            Cmd::ExcludePattern => vec![Intent::EditExclude(self.exclude.clone())],
            _ => Vec::new(),
        }
    }

    fn step(&mut self, delta: isize, ctx: &Ctx) -> Vec<Intent> {
        let h = ctx.rows();
        if let Some(view) = &mut self.instances {
            view.list.step(delta, view.rows.len(), h);
            return Vec::new();
        }
        let (top, bottom) = self.split(h as u16 + 1);
        if self.imm_focus {
            if let Some(imm) = &mut self.imm {
                let n = imm.rows.len();
                imm.list.step(delta, n, bottom.saturating_sub(2) as usize);
            }
            return Vec::new();
        }
        let n = self.matcher.count();
        self.list.step(delta, n, top.saturating_sub(1) as usize);
        if let Some(ty) = self.selected_type() {
            if self.imm.as_ref().is_some_and(|i| i.type_index != ty) {
                self.imm = None;
            }
        }
        Vec::new()
    }

    fn selected_object(&self, ctx: &Ctx) -> Option<u32> {
        if let Some(view) = &self.instances {
            return view.selected();
        }
        ctx.loading.largest_instance(self.selected_type()?)
    }

    fn fit(&mut self, ctx: &Ctx) {
        if let Some(view) = &mut self.instances {
            view.list.scroll(view.rows.len(), ctx.rows());
        }
        let (top, bottom) = self.split(ctx.rows() as u16 + 1);
        let n = self.matcher.count();
        self.list.scroll(n, top.saturating_sub(1) as usize);
        if let Some(imm) = &mut self.imm {
            imm.list
                .scroll(imm.rows.len(), bottom.saturating_sub(2) as usize);
        }
    }

    fn back(&mut self) -> bool {
        if self.instances.take().is_some() {
            return true;
        }
        if !self.imm_focus {
            return false;
        }
        self.imm = None;
        self.imm_focus = false;
        true
    }

    /// Only a change of the structural tokens needs new candidates; fuzzy
    /// text is nucleo's, on its own threads.
    fn filter(&mut self, filter: &TypeFilter, ctx: &Ctx) -> FilterPlan {
        let (Some(graph), Some(types)) = (ctx.loading.graph(), ctx.loading.types()) else {
            return FilterPlan::NotReady;
        };
        self.list = ListState::default();
        self.ranked = !filter.fuzzy.is_empty();
        if self.order.len() != types.len() || self.reorder {
            self.order = Arc::new(type_order(
                self.sort,
                types,
                &graph.dump.type_names,
                self.deltas(),
            ));
        }
        let reorder = std::mem::take(&mut self.reorder);
        match self.matcher.set_ordered(filter, reorder) {
            Some(injector) => FilterPlan::Work(FilterWork::Types {
                graph: graph.clone(),
                types: types.clone(),
                order: self.order.clone(),
                injector,
            }),
            None => FilterPlan::Applied,
        }
    }

    fn filtered(&mut self, _result: FilterResult, _ctx: &Ctx) {}

    fn click_geometry(&self) -> Option<(usize, usize, u16)> {
        if let Some(view) = &self.instances {
            return Some((view.list.selected, view.list.offset, 2));
        }
        Some((self.list.selected, self.list.offset, 2))
    }

    fn click_header(&mut self, x: usize, ctx: &Ctx) -> Vec<Intent> {
        let width = ctx.body.width.saturating_sub(2) as usize;
        if let Some(view) = &self.instances {
            return match instances::header_column(view, width, x)
                .and_then(|c| view.wanted().clicked(c, &view.columns()))
            {
                Some(sort) => self.resort_instances(sort),
                None => Vec::new(),
            };
        }
        let cols = self.columns();
        match Columns::new(width, &cols)
            .column_at(x)
            .and_then(|c| self.sort.clicked(c, &cols))
        {
            Some(sort) => self.resort(sort, ctx),
            None => vec![Intent::status("this column does not sort")],
        }
    }

    fn draw(&self, ctx: &Ctx, area: Rect, f: &mut Frame) {
        let theme = ctx.theme;
        let pane = self;
        if let (Some(view), Some(graph)) = (&self.instances, ctx.loading.graph()) {
            let dom = ctx.loading.dom().map(|d| &**d);
            view.render(graph, dom, theme, area, f);
            return;
        }
        let block = Block::bordered()
            .border_set(theme.border())
            .title(Line::styled(
                format!(
                    " Types ({} shown{}{}) ",
                    count(self.matcher.count() as u64),
                    if self.ranked {
                        ", best matches first"
                    } else {
                        ""
                    },
                    if self.matcher.running {
                        ", running"
                    } else {
                        ""
                    }
                ) + &match &self.delta {
                    Some((_, gone)) if *gone > 0 => format!(
                        "{} Δ vs oldest, {} types gone (heaptui report lists them) ",
                        theme.sep(),
                        count(*gone as u64)
                    ),
                    Some(_) => format!("{} Δ vs oldest ", theme.sep()),
                    None => String::new(),
                },
                theme.header(),
            ));
        let inner = block.inner(area);
        f.render_widget(block, area);
        let (Some(graph), Some(_)) = (ctx.loading.graph(), ctx.loading.types()) else {
            f.render_widget(
                Paragraph::new(" waiting for the dominator tree (min retained sizes need it)"),
                inner,
            );
            return;
        };
        let dump = &graph.dump;
        let (top_h, bottom_h) = pane.split(inner.height);
        let [top, bottom] =
            Layout::vertical([Constraint::Length(top_h), Constraint::Length(bottom_h)])
                .areas(inner);
        let cols = pane.columns();
        let table = Columns::new(top.width as usize, &cols);
        let height = top.height.saturating_sub(1) as usize;
        let rows = self.matcher.rows(pane.list.offset, height);
        let mut shown = Vec::with_capacity(rows.len());
        for (i, ty) in rows.iter().enumerate() {
            let Some(s) = ctx.loading.type_stats(*ty) else {
                continue;
            };
            let selected = pane.list.offset + i == pane.list.selected;
            let precise = match (pane.precise.get(ty), pane.precise_running) {
                (Some(p), _) => bytes(p.bytes),
                (None, Some(r)) if r == *ty => "running".into(),
                _ => "-".into(),
            };
            let mut cells = vec![
                type_name(&dump.type_names[*ty as usize], table.width(0), theme),
                count(s.count),
                bytes(s.shallow_bytes),
                bytes(s.min_retained_bytes),
                precise,
            ];
            if let Some(d) = pane.deltas() {
                cells.push(signed_bytes(d[*ty as usize], theme));
            }
            let style = if selected && !pane.imm_focus {
                theme.selected()
            } else if selected {
                theme.bold()
            } else {
                Default::default()
            };
            shown.push(TableRow::cells(cells, selected, style));
        }
        let empty = rows.is_empty().then(|| {
            empty_message(
                ctx,
                self.matcher.running,
                "types",
                "the dump defines no types",
            )
        });
        f.render_widget(
            ScrolledTable {
                columns: &table,
                header: &cols,
                theme,
                rows: shown,
                empty,
            },
            top,
        );

        if let Some(imm) = &pane.imm {
            let w = bottom.width as usize;
            let cols = imm.columns();
            let table = Columns::new(w, &cols);
            let excl = if imm.exclude.is_empty() {
                "none (e to set)".to_string()
            } else {
                imm.exclude.clone()
            };
            let title = Line::styled(
                fit(
                    &format!(
                        " Immediate dominators of {} {} skipping: {excl}",
                        dump.type_names[imm.type_index as usize],
                        theme.sep()
                    ),
                    w,
                    theme,
                ),
                theme.header(),
            );
            let [title_area, list_area] =
                Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(bottom);
            f.render_widget(Paragraph::new(title), title_area);
            let height = bottom.height.saturating_sub(2) as usize;
            let mut shown = Vec::new();
            for (i, r) in imm
                .rows
                .iter()
                .enumerate()
                .skip(imm.list.offset)
                .take(height)
            {
                let selected = i == imm.list.selected;
                // The type is shortened, not the count of dominators after it.
                let name = match r.type_index {
                    Some(t) => {
                        let n = format!(" ({})", count(r.dominators.len() as u64));
                        let room = table.width(0).saturating_sub(n.len());
                        format!(
                            "{}{n}",
                            type_name(&dump.type_names[t as usize], room, theme)
                        )
                    }
                    None => "<GC roots directly>".into(),
                };
                let cells = vec![
                    name,
                    count(r.dominated_objects),
                    bytes(r.dominated_shallow_bytes),
                    bytes(r.dominators_retained_bytes),
                ];
                let style = if selected && pane.imm_focus {
                    theme.selected()
                } else {
                    Default::default()
                };
                shown.push(TableRow::cells(cells, selected, style));
            }
            f.render_widget(
                ScrolledTable {
                    columns: &table,
                    header: &cols,
                    theme,
                    rows: shown,
                    empty: Some(" (no reachable instances)".into()),
                },
                list_area,
            );
        }
    }
}
