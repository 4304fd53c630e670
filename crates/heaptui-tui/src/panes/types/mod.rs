//! The Types pane: type statistics (docs/analyses.md) ranked by the nucleo
//! matcher, precise retained bytes on request, and the immediate dominators
//! of a type's instances with an exclude pattern (docs/analyses.md).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use ratatui::layout::Rect;
use ratatui::Frame;

use super::dominators::reveal;
use super::instances::{self, InstancesView};
use super::table::{no_comparison, plural, Sort};
use super::{Ctx, FilterPlan, Intent, ListState, Pane, Saved, Ticked};
use crate::compared::{delta_width, steady_status, Compared};
use crate::filtering::{FilterResult, FilterWork};
use crate::fmt::{bytes, bytes_width, count_width, Col, Columns};
use crate::instance_rows::{InstanceRows, TypeObjects};
use crate::keys::{Cmd, Mode};
use crate::loading::Arrived;
use crate::matcher::TypeMatcher;
use crate::msg::Msg;
use crate::worker::Job;
use heaptui_core::analysis::TypeFilter;
use heaptui_core::analysis::{ImmediateDominators, PreciseRetained, TypeStats};
use heaptui_core::graph::DominatorTree;
use heaptui_core::model::{ObjectIdx, TypeIdx};

mod draw;
mod rows;

pub use rows::*;

/// The Types pane: per-type statistics, a type's instances and its immediate dominators.
#[derive(Debug)]
pub struct TypesPane {
    list: ListState,
    precise: HashMap<TypeIdx, PreciseRetained>,
    precise_running: Option<TypeIdx>,
    imm: Option<ImmView>,
    /// Focus is on the immediate-dominators list.
    imm_focus: bool,
    /// The exclude pattern for immediate dominators (a glob, may be empty).
    exclude: String,
    /// Widths of the number columns' values over every type (see
    /// [`TypesPane::measure`]).
    widths: [usize; 4],
    /// The ranked, filtered rows (nucleo).
    matcher: TypeMatcher,
    sort: Sort,
    /// With a comparison: the Δ column, the steady types and the gone
    /// types ([`TypesDelta`]).
    delta: Option<TypesDelta>,
    /// Type names of the opened snapshot: matcher items from here on are
    /// gone types ([`TypeRow::Gone`]).
    names: usize,
    /// Positions in the type statistics in the order of `sort`: the
    /// matcher is given the types in this order.
    order: Arc<Vec<u32>>,
    /// The sort changed: the next filter gives the matcher the types again.
    reorder: bool,
    /// The filter has fuzzy text: nucleo ranks the rows by match.
    ranked: bool,
    /// The list of a type's instances, drawn over the types when open.
    instances: Option<InstancesView>,
    /// The objects of each type, built by the first `x`'s job.
    type_objects: Option<Arc<TypeObjects>>,
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
            names: 0,
            order: Arc::new(Vec::new()),
            // The first filter orders the types.
            reorder: true,
            ranked: false,
            instances: None,
            type_objects: None,
        }
    }
}

impl TypesPane {
    /// The row the matcher lists as `item`.
    fn type_row(&self, item: u32) -> TypeRow {
        match self.delta {
            Some(_) if item as usize >= self.names => TypeRow::Gone(item - self.names as u32),
            _ => TypeRow::Type(TypeIdx(item)),
        }
    }

    /// The selected row.
    fn selected_row(&self) -> Option<TypeRow> {
        let item = *self.matcher.rows(self.list.selected, 1).first()?;
        Some(self.type_row(item))
    }

    /// The type on the selected row (none on a gone type's row).
    fn selected_type(&self) -> Option<TypeIdx> {
        match self.selected_row()? {
            TypeRow::Type(t) => Some(t),
            TypeRow::Gone(_) => None,
        }
    }

    /// Why a key does nothing on a gone type's row.
    fn gone_status(&self, j: u32) -> Intent {
        let g = self.delta.as_ref().and_then(|d| d.gone.get(j as usize));
        Intent::status(match g {
            Some(g) => format!(
                "this type is gone now ({}, {} in snapshot {}): nothing to open",
                plural(g.last_count, "instance"),
                bytes(g.last_shallow),
                g.last_seen + 1
            ),
            None => "this type is gone from the newest snapshot".into(),
        })
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
    pub fn precise_done(&mut self, type_index: TypeIdx, result: PreciseRetained) {
        self.precise.insert(type_index, result);
        self.precise_running = None;
    }

    /// Immediate dominators arrived; the focus moves to them.
    pub fn immediate_dominators_done(
        &mut self,
        type_index: TypeIdx,
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
        if let Some(d) = &self.delta {
            let w = delta_width(self.widths[1], d.gone.iter().map(|g| g.delta));
            cols.push(Col::num("Δ shallow", w).sortable());
        }
        self.sort.mark(&mut cols);
        cols
    }

    /// Installs a comparison's Δ column and gone rows (once, on its
    /// arrival); `types`: the opened snapshot's type names.
    pub fn set_compared(&mut self, c: &Compared, types: usize) {
        self.delta = Some(TypesDelta::new(c, types));
        self.names = types;
        self.reorder = true;
    }

    /// `t`: only the types that grow steadily, or all again.
    fn toggle_steady(&mut self, ctx: &Ctx) -> Vec<Intent> {
        let Some(d) = &mut self.delta else {
            return vec![no_comparison(ctx)];
        };
        d.steady_only = !d.steady_only;
        let status = steady_status(d.steady_only, d.snapshots, "types");
        let mut out = self.resort(self.sort, ctx);
        out.truncate(1);
        out.push(Intent::status(status));
        out
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
            self.delta.as_ref(),
        ));
        self.reorder = true;
        let mut status = sort.describe(&self.columns());
        if self.ranked {
            status.push_str(" (while the filter has text, best matches first)");
        }
        vec![Intent::Refilter, Intent::status(status)]
    }

    /// `p`: the precise retained size of the selected type's instances,
    /// asked for once (one such job at a time).
    fn precise_retained(&mut self, ctx: &Ctx) -> Vec<Intent> {
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
                .map(|g| g.dump.name_of_type(ty).to_string())
                .unwrap_or_default();
            vec![Intent::Request {
                job: Job::Precise { type_index: ty },
                label: format!("precise retained of {name}"),
            }]
        } else {
            Vec::new()
        }
    }

    /// Enter in the immediate-dominators split: the selected row's
    /// dominator that retains most, shown in the tree.
    fn reveal_dominator(&self, ctx: &Ctx) -> Vec<Intent> {
        let Some(imm) = &self.imm else {
            return Vec::new();
        };
        let target = imm.rows.get(imm.list.selected).and_then(|r| {
            let dom = ctx.loading.dom()?;
            r.dominators
                .iter()
                .copied()
                .max_by_key(|&o| dom.retained_bytes(o.index()))
        });
        match target {
            Some(o) => vec![Intent::Jump(reveal(o))],
            None => vec![Intent::status(
                "these instances are held directly by GC roots",
            )],
        }
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

    /// The type list's selection and scroll.
    pub fn list(&self) -> &ListState {
        &self.list
    }

    /// The precise retained sizes computed so far, per type.
    pub fn precise(&self) -> &HashMap<TypeIdx, PreciseRetained> {
        &self.precise
    }

    /// The open instances list.
    pub fn instances(&self) -> Option<&InstancesView> {
        self.instances.as_ref()
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
                    self.measure(&d.types, &d.dom);
                    vec![Intent::Refilter]
                }
                None => Vec::new(),
            },
            Arrived::Comparison => {
                let (Some(graph), Some(c)) = (ctx.loading.graph(), ctx.loading.compared()) else {
                    return Vec::new();
                };
                if ctx.loading.dom().is_none() || ctx.loading.suspects().is_none() {
                    return Vec::new();
                }
                self.set_compared(c, graph.dump.type_names.len());
                vec![Intent::Refilter]
            }
            _ => Vec::new(),
        }
    }

    fn receive(&mut self, msg: Msg, _ctx: &Ctx) -> Result<Vec<Intent>, Msg> {
        match msg {
            Msg::Precise { type_index, result } => self.precise_done(type_index, result),
            Msg::ImmediateDominators {
                type_index,
                exclude,
                rows,
            } => self.immediate_dominators_done(type_index, exclude, rows),
            Msg::Instances(rows) => self.instances_done(rows),
            msg => return Err(msg),
        }
        Ok(Vec::new())
    }

    fn edited(&mut self, text: String, _ctx: &Ctx) -> Vec<Intent> {
        self.set_exclude(text)
    }

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
            Cmd::Open | Cmd::ListInstances | Cmd::PreciseRetained | Cmd::ImmediateDominators
                if !self.imm_focus && matches!(self.selected_row(), Some(TypeRow::Gone(_))) =>
            {
                match self.selected_row() {
                    Some(TypeRow::Gone(j)) => vec![self.gone_status(j)],
                    _ => Vec::new(),
                }
            }
            Cmd::SteadyOnly => self.toggle_steady(ctx),
            Cmd::ListInstances => self.list_instances(),
            Cmd::Open if self.imm_focus => self.reveal_dominator(ctx),
            Cmd::Open => match self.selected_type() {
                Some(ty) => match ctx.loading.largest_instance(ty) {
                    Some(o) => vec![Intent::Jump(reveal(o))],
                    None => vec![Intent::status("no reachable instance of this type")],
                },
                None => Vec::new(),
            },
            Cmd::PreciseRetained => self.precise_retained(ctx),
            Cmd::ImmediateDominators => self.immediate_dominators(),
            Cmd::ExcludePattern => vec![Intent::EditExclude {
                text: self.exclude.clone(),
                prompt: "exclude pattern (glob, e.g. System.*): ",
            }],
            Cmd::MergedPaths => match self.selected_type() {
                Some(ty) => vec![super::paths::request(
                    crate::msg::PathsTarget::Type(ty),
                    ctx,
                )],
                None => Vec::new(),
            },
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

    fn selected_object(&self, ctx: &Ctx) -> Option<ObjectIdx> {
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
        if self.reorder {
            self.order = Arc::new(type_order(
                self.sort,
                types,
                &graph.dump.type_names,
                self.delta.as_ref(),
            ));
        }
        let reorder = std::mem::take(&mut self.reorder);
        match self.matcher.set_ordered(filter, reorder) {
            Some(injector) => FilterPlan::Work(FilterWork::Types {
                graph: graph.clone(),
                types: types.clone(),
                order: self.order.clone(),
                gone: self
                    .delta
                    .as_ref()
                    .map(|d| d.gone_names.clone())
                    .unwrap_or_default(),
                injector,
            }),
            None => FilterPlan::Applied,
        }
    }

    fn filtered(&mut self, _result: FilterResult, _ctx: &Ctx) {}

    fn tick(&mut self) -> Ticked {
        let changed = self.matcher.tick();
        let busy = self.matcher.running || self.matcher.notified.swap(false, Ordering::Relaxed);
        Ticked { changed, busy }
    }

    fn settle(&mut self) {
        self.matcher.settle();
    }

    /// `t` is hinted only when there is a comparison to narrow by.
    fn key_label(&self, cmd: Cmd) -> Option<&'static str> {
        match cmd {
            Cmd::SteadyOnly if self.delta.is_none() => Some(""),
            _ => None,
        }
    }

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
        draw::draw(self, ctx, area, f)
    }
}
