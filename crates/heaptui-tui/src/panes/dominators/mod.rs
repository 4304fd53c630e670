//! The Dominators pane: the zoom stack of grouped dominator trees with its
//! breadcrumb, Tree/Path modes, the retained-size chart beside the tree
//! (wide) or instead of it (narrow, `c`), and the pane's keys. Only visible
//! rows are drawn, so cost follows what is on screen.

mod chart;
mod tree;
mod view;

pub use view::{draw, list_height};

pub use chart::{Bar, RetainedChart};
pub use tree::*;

use ratatui::layout::Rect;
use ratatui::widgets::{Block, Paragraph};
use ratatui::Frame;

use std::sync::Arc;

use super::{empty_message, Ctx, FilterPlan, Intent, Jump, Landing, Pane, PaneId, Saved};
use crate::compared::{signed_bytes_width, steady_empty, steady_status, Compared};
use crate::filtering::{FilterResult, FilterWork};
use crate::fmt::{bytes_width, count_width};
use crate::keys::Cmd;
use crate::layout::is_wide;
use crate::loading::Arrived;
use crate::msg::Msg;
use crate::theme::Theme;
use crate::worker::Job;
use heaptui_core::analysis::Group;
use heaptui_core::analysis::TypeFilter;
use heaptui_core::graph::DominatorTree;
use heaptui_core::model::Model;
use heaptui_core::model::ObjectIdx;

/// The pane's state: the zoom stack (index 0 is the whole tree).
#[derive(Debug, Clone)]
pub struct DominatorsPane {
    zooms: Vec<Tree>,
    mode: TreeMode,
    /// On narrow terminals: the chart replaces the tree.
    chart_only: bool,
    marks: Marks,
    /// Widths of the retained bytes and objects of any row: no row (group
    /// or object) retains more than the reachable heap.
    widths: [usize; 2],
    /// The comparison with older snapshots, once it arrived.
    compared: Option<Arc<Compared>>,
    /// Siblings by growth instead of retained bytes (`s`).
    growth_order: bool,
    /// Only the rows that grow steadily (`t`).
    steady_only: bool,
    /// Widths of the Δ retained and Δ count cells of any row.
    delta_widths: [usize; 2],
    /// The chart's nested levels, computed once per zoom, rows and filter.
    chart_cache: chart::NestedCache,
    /// An object being revealed that waits for a node on its way to be
    /// grouped (see [`Tree::reveal`]); a newer reveal or a zoom drops it.
    pending_reveal: Option<ObjectIdx>,
}

impl DominatorsPane {
    /// The pane on the super-root's children, grouped by the worker
    /// ([`heaptui_core::analysis::group_children_unsorted`]).
    pub fn new(top: &[Arc<Group>], dom: &DominatorTree) -> DominatorsPane {
        let mut p = DominatorsPane {
            zooms: vec![Tree::of_super_root("all roots".into(), top, dom)],
            mode: TreeMode::Tree,
            chart_only: false,
            marks: None,
            widths: [
                bytes_width(dom.reachable_bytes),
                count_width(dom.reachable_objects),
            ],
            compared: None,
            growth_order: false,
            steady_only: false,
            delta_widths: [0, 0],
            chart_cache: chart::NestedCache::default(),
            pending_reveal: None,
        };
        p.refresh();
        p
    }

    /// The zoom levels, the whole tree first.
    pub fn zooms(&self) -> &[Tree] {
        &self.zooms
    }

    /// Tree or path view.
    pub fn tree_mode(&self) -> TreeMode {
        self.mode
    }

    /// The current zoom level's tree.
    pub fn tree(&self) -> &Tree {
        self.zooms.last().expect("the root tree is never popped")
    }

    /// The current zoom level's tree, to change.
    pub fn tree_mut(&mut self) -> &mut Tree {
        self.zooms
            .last_mut()
            .expect("the root tree is never popped")
    }

    /// Lays out every zoom level's visible rows again (after a mode, order or filter change).
    pub fn refresh(&mut self) {
        let (mode, marks) = (self.mode, self.marks.clone());
        for t in &mut self.zooms {
            t.growth_order = self.growth_order;
            t.steady_only = self.steady_only;
            t.flatten(mode, &marks);
        }
    }

    /// Installs the comparison (once, on its arrival): every zoom level's
    /// rows get their paths, and the Δ columns their widths.
    pub fn set_compared(&mut self, compared: Arc<Compared>, dom: &DominatorTree) {
        let p = &compared.cmp.paths;
        let k = p.snapshots;
        // No row grows or shrinks by more than the larger reachable heap.
        let max_bytes = compared
            .cmp
            .reachable_bytes
            .iter()
            .copied()
            .max()
            .unwrap_or(0)
            .max(dom.reachable_bytes);
        let max_count = (1..p.len())
            .map(|r| {
                let f = p.figures_of(r as u32);
                f[0].count.max(f[k - 1].count) as u64
            })
            .max()
            .unwrap_or(0);
        self.delta_widths = [signed_bytes_width(max_bytes), count_width(max_count) + 1];
        for i in 0..self.zooms.len() {
            let root_path = if i == 0 {
                0
            } else {
                let origin = self.zooms[i].origin;
                self.zooms[i - 1].nodes[origin as usize].path
            };
            self.zooms[i].set_compared(Some(compared.clone()), root_path);
        }
        self.compared = Some(compared);
        self.refresh();
    }

    /// Keeps the selection on screen for a list of `height` rows.
    pub fn scroll(&mut self, height: usize) {
        let t = self.tree_mut();
        let i = t.selected_index();
        if i < t.offset {
            t.offset = i;
        } else if height > 0 && i >= t.offset + height {
            t.offset = i + 1 - height;
        }
        t.offset = t.offset.min(t.flat.len().saturating_sub(height.max(1)));
        if i < t.offset {
            t.offset = i;
        }
    }

    /// Selects visible row `i` (the last one past the end).
    pub fn select_index(&mut self, i: usize) {
        let t = self.tree_mut();
        if let Some(&n) = t.flat.get(i.min(t.flat.len().saturating_sub(1))) {
            t.selected = n;
        }
        if self.mode == TreeMode::Path {
            self.refresh();
        }
    }

    /// Top-level rows of the current zoom (the chart's bars).
    pub fn top_level(&self) -> Vec<u32> {
        self.tree().top.clone()
    }

    /// The top-level ancestor of the selection (the chart's highlight).
    pub fn top_of_selection(&self) -> u32 {
        let t = self.tree();
        let mut chain = t.ancestors(t.selected);
        chain.pop();
        chain.last().copied().unwrap_or(t.selected)
    }

    /// The zoom levels' labels joined by arrows.
    pub fn breadcrumb(&self, theme: &Theme) -> String {
        let parts: Vec<&str> = self.zooms.iter().map(|t| t.label.as_str()).collect();
        parts.join(&format!(" {} ", theme.arrow()))
    }
}

impl DominatorsPane {
    /// Enter: zoom into the selected row (the chart follows), or page on a
    /// "more" row. In the chart alone, the highlighted bar.
    fn zoom_in(&mut self, ctx: &Ctx, dump: &Model, dom: &DominatorTree) -> Vec<Intent> {
        if self.chart_only && !is_wide(ctx.body.width) {
            let top = self.top_of_selection();
            self.tree_mut().selected = top;
        }
        let t = self.tree();
        let sel = t.selected;
        let mut out = Vec::new();
        match &t.nodes[sel as usize].item {
            Item::More { .. } => {
                self.tree_mut().more(sel, dom);
                self.refresh();
            }
            Item::SuperRoot => {}
            Item::Vanished(_) => {
                return vec![Intent::status(
                    "this row is gone from the newest snapshot: expand it (Right) to see what was below",
                )];
            }
            item => {
                if !t.has_children(sel, dom) {
                    return vec![Intent::status("nothing below this row to zoom into")];
                }
                let item = match item {
                    // A one-member group zooms into its object.
                    Item::Group(g) if g.members.len() == 1 => Item::Instance(g.members[0]),
                    other => other.clone(),
                };
                let label = t.label_of(sel, dump, ctx.theme);
                out.push(Intent::History);
                let root_path = t.nodes[sel as usize].path;
                let (mut tree, deferred) = Tree::new(item, label, dump, dom);
                tree.origin = sel;
                if let Some(c) = &self.compared {
                    tree.set_compared(Some(c.clone()), root_path);
                }
                self.zooms.push(tree);
                self.pending_reveal = None;
                self.refresh();
                out.extend(defer(deferred));
            }
        }
        self.scroll(ctx.rows());
        out
    }

    /// Right/`l` (`open`) and Left/`h`: expand, go to the first child;
    /// collapse, go to the parent.
    fn expand(&mut self, open: bool, ctx: &Ctx, dump: &Model, dom: &DominatorTree) -> Vec<Intent> {
        let mut deferred = None;
        let t = self.tree_mut();
        let s = t.selected;
        let expanded = t.nodes[s as usize].expanded;
        if open {
            if !t.has_children(s, dom) {
                return Vec::new();
            }
            if expanded {
                // Second press: first child.
                if let Some(&c) = t.nodes[s as usize]
                    .children
                    .as_ref()
                    .and_then(|c| c.first())
                {
                    t.selected = c;
                }
            } else {
                deferred = t.expand(s, dump, dom);
            }
        } else if expanded {
            t.nodes[s as usize].expanded = false;
        } else if let Some(p) = t.nodes[s as usize].parent.filter(|&p| p != 0) {
            t.selected = p;
        }
        self.refresh();
        self.scroll(ctx.rows());
        defer(deferred)
    }

    /// `x`: the selected group's rows become its instances, or the
    /// instances a group again.
    fn toggle_instances(&mut self, dump: &Model, dom: &DominatorTree) -> Vec<Intent> {
        let t = self.tree_mut();
        let s = t.selected;
        if !t.is_group(s) {
            return vec![Intent::status(
                "one object: x switches a group (N x Type) to its instances and back",
            )];
        }
        let deferred = t.toggle_instances(s, dump, dom);
        self.refresh();
        defer(deferred)
    }

    /// Shows `object` in the unzoomed tree, expanding its ancestors; the
    /// filter must have been dropped (the router does that). Where a node
    /// on the way must be grouped by a job first, that job is returned (or
    /// none, when one is running already) and the object is kept in
    /// [`DominatorsPane::pending_reveal`]: the router reveals again when
    /// the groups arrive.
    pub fn reveal(&mut self, object: ObjectIdx, dump: &Model, dom: &DominatorTree) -> Vec<Intent> {
        self.zooms.truncate(1);
        self.marks = None;
        self.pending_reveal = None;
        let outcome = self.tree_mut().reveal(object.raw(), dump, dom);
        self.refresh();
        match outcome {
            Reveal::Waiting(job) => {
                self.pending_reveal = Some(object);
                defer(job)
            }
            Reveal::Shown | Reveal::NotUnder => Vec::new(),
        }
    }
}

/// Where the user was in the pane (see [`Pane::save`]): the zoom depth
/// and the selected node.
struct DominatorsPlace {
    depth: usize,
    selected: Option<u32>,
}

/// The jobs a reveal asks for, labelled as such on the status line.
/// Where a [`reveal`] goes: an object to show in the unzoomed tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RevealObject(pub ObjectIdx);

/// A jump that shows `object` in the (unzoomed) dominator tree.
pub fn reveal(object: ObjectIdx) -> Jump {
    Jump::to(PaneId::Dominators, RevealObject(object))
}

/// `M`: the merged paths to the roots of the selected group's objects,
/// or of the selected object.
fn merged_paths(t: &Tree, dump: &Model, ctx: &Ctx) -> Vec<Intent> {
    let (label, objects) = match &t.nodes[t.selected as usize].item {
        Item::Group(g) => (
            format!(
                "{} × {}",
                crate::fmt::count(g.members.len() as u64),
                dump.name_of_type(g.type_index)
            ),
            ObjectIdx::cast_slice(&g.members).to_vec(),
        ),
        Item::Instance(o) => (
            format!(
                "{} {}",
                dump.row_type_name(ObjectIdx(*o)),
                dump.id_hex(ObjectIdx(*o))
            ),
            vec![ObjectIdx(*o)],
        ),
        _ => return vec![Intent::status("M: select a group row or an object")],
    };
    vec![super::paths::request(
        super::paths::objects(label, objects),
        ctx,
    )]
}

fn revealing(intents: Vec<Intent>) -> Vec<Intent> {
    intents
        .into_iter()
        .filter_map(|i| match i {
            Intent::Request { job, .. } => Some(Intent::Request {
                job,
                label: "revealing: grouping children".into(),
            }),
            _ => None,
        })
        .collect()
}

/// Grouping work too big to do inline becomes a job.
fn defer(deferred: Option<Deferred>) -> Vec<Intent> {
    deferred
        .map(|d| Intent::Request {
            job: Job::GroupChildren {
                tree: d.tree,
                node: d.node,
                parents: d.parents,
            },
            label: "grouping children".into(),
        })
        .into_iter()
        .collect()
}

/// The pane exists once the dominator tree does; before, it says so.
impl Pane for Option<DominatorsPane> {
    fn save(&self) -> Saved {
        Box::new(DominatorsPlace {
            depth: self.as_ref().map_or(0, |d| d.zooms.len() - 1),
            selected: self.as_ref().map(|d| d.tree().selected),
        })
    }

    fn restore(&mut self, saved: &Saved, _ctx: &Ctx) {
        let (Some(d), Some(place)) = (self, saved.downcast_ref::<DominatorsPlace>()) else {
            return;
        };
        d.zooms.truncate(place.depth + 1);
        if let Some(s) = place.selected {
            let t = d.tree_mut();
            if (s as usize) < t.nodes.len() {
                t.selected = s;
                for a in t.ancestors(s) {
                    t.nodes[a as usize].expanded = true;
                }
            }
        }
        d.refresh();
    }

    fn arrived(&mut self, what: Arrived, ctx: &Ctx) -> Vec<Intent> {
        match what {
            Arrived::Dominators => {
                let Some(d) = ctx.loading.dominated() else {
                    return Vec::new();
                };
                *self = Some(DominatorsPane::new(&d.top, &d.dom));
                vec![Intent::Refilter]
            }
            Arrived::Comparison => {
                let (Some(d), Some(dom), Some(c)) =
                    (self, ctx.loading.dom(), ctx.loading.compared())
                else {
                    return Vec::new();
                };
                if ctx.loading.graph().is_some() && ctx.loading.suspects().is_some() {
                    d.set_compared(c.clone(), dom);
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn receive(&mut self, msg: Msg, ctx: &Ctx) -> Result<Vec<Intent>, Msg> {
        let Msg::Expanded { tree, node, groups } = msg else {
            return Err(msg);
        };
        let Some(d) = self else {
            return Ok(Vec::new());
        };
        let Some(dom) = ctx.loading.dom() else {
            return Ok(Vec::new());
        };
        if let Some(t) = d.zooms.iter_mut().find(|t| t.id == tree) {
            t.set_groups(node, groups, dom);
        }
        d.refresh();
        // A reveal that waited for these groups goes on.
        Ok(match (d.pending_reveal.take(), ctx.loading.graph()) {
            (Some(object), Some(graph)) => revealing(d.reveal(object, &graph.dump, dom)),
            _ => Vec::new(),
        })
    }

    fn prepare_jump(&self, jump: &Jump, ctx: &Ctx) -> Landing {
        let Some(&RevealObject(object)) = jump.place() else {
            return Landing::Refused(None);
        };
        let (Some(graph), Some(dom)) = (ctx.loading.graph(), ctx.loading.dom()) else {
            return Landing::Refused(Some("the dominator tree is not ready yet".into()));
        };
        if !dom.is_reachable(object.raw()) {
            return Landing::Refused(Some(format!(
                "{} is unreachable: not in the dominator tree",
                graph.dump.id_hex(object)
            )));
        }
        // The object must be visible: its tree drops the filter.
        let marked = self.as_ref().is_some_and(|d| d.marks.is_some());
        Landing::Taken {
            drop_filter: marked || ctx.filtering,
        }
    }

    fn jump(&mut self, jump: Jump, _dropped_filter: bool, ctx: &Ctx) -> Vec<Intent> {
        let (Some(&RevealObject(object)), Some(d), Some(graph), Some(dom)) =
            (jump.place(), self, ctx.loading.graph(), ctx.loading.dom())
        else {
            return Vec::new();
        };
        revealing(d.reveal(object, &graph.dump, dom))
    }

    /// `x` names what it would do to the selected row: show a group's
    /// instances, group them again, or nothing for one object.
    fn key_label(&self, cmd: Cmd) -> Option<&'static str> {
        let t = self.as_ref()?.tree();
        match cmd {
            Cmd::Instances if !t.is_group(t.selected) => Some(""),
            Cmd::Instances if t.nodes[t.selected as usize].instances => Some("group"),
            // Named even in its default state, so the footer ranks it
            // with the state-dependent keys.
            Cmd::Instances => Some("instances"),
            _ => None,
        }
    }

    fn key(&mut self, cmd: Cmd, ctx: &Ctx) -> Vec<Intent> {
        let (Some(d), Some(graph), Some(dom)) = (self, ctx.loading.graph(), ctx.loading.dom())
        else {
            return Vec::new();
        };
        let dump = &graph.dump;
        match cmd {
            Cmd::Open => d.zoom_in(ctx, dump, dom),
            Cmd::Expand => d.expand(true, ctx, dump, dom),
            Cmd::Collapse => d.expand(false, ctx, dump, dom),
            Cmd::WhatIf => what_if(d.tree(), dump),
            Cmd::ToggleExpand => {
                let expanded = d.tree().nodes[d.tree().selected as usize].expanded;
                d.expand(!expanded, ctx, dump, dom)
            }
            Cmd::ToggleTreeMode => {
                d.mode = match d.mode {
                    TreeMode::Tree => TreeMode::Path,
                    TreeMode::Path => TreeMode::Tree,
                };
                d.refresh();
                Vec::new()
            }
            Cmd::ToggleChart => {
                d.chart_only = !d.chart_only;
                if is_wide(ctx.body.width) {
                    vec![Intent::status(
                        "the chart is always shown beside the tree at this width",
                    )]
                } else {
                    Vec::new()
                }
            }
            Cmd::MergedPaths => merged_paths(d.tree(), dump, ctx),
            Cmd::Instances => d.toggle_instances(dump, dom),
            Cmd::SortGrowth | Cmd::SteadyOnly if d.compared.is_none() => {
                vec![super::table::no_comparison(ctx)]
            }
            Cmd::SortGrowth => {
                d.growth_order = !d.growth_order;
                d.refresh();
                d.scroll(ctx.rows());
                Vec::new()
            }
            Cmd::SteadyOnly => {
                d.steady_only = !d.steady_only;
                d.refresh();
                d.scroll(ctx.rows());
                let n = d.compared.as_ref().map_or(0, |c| c.snapshots());
                vec![Intent::status(steady_status(d.steady_only, n, "rows"))]
            }
            Cmd::ZoomOut => {
                // Not a history step: Backspace already retraces zooms.
                if d.zooms.len() > 1 {
                    d.zooms.pop();
                    d.pending_reveal = None;
                    d.refresh();
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn step(&mut self, delta: isize, ctx: &Ctx) -> Vec<Intent> {
        let Some(d) = self else {
            return Vec::new();
        };
        if d.chart_only && !is_wide(ctx.body.width) {
            // The chart alone: move among its bars.
            let tops = d.top_level();
            let cur = d.top_of_selection();
            let i = tops.iter().position(|&t| t == cur).unwrap_or(0) as isize;
            let j = (i + delta).clamp(0, tops.len().saturating_sub(1) as isize) as usize;
            if let Some(&t) = tops.get(j) {
                d.tree_mut().selected = t;
            }
            d.refresh();
        } else {
            let t = d.tree();
            let i = (t.selected_index() as isize + delta)
                .clamp(0, t.flat.len().saturating_sub(1) as isize);
            d.select_index(i as usize);
        }
        d.scroll(ctx.rows());
        Vec::new()
    }

    fn selected_object(&self, ctx: &Ctx) -> Option<ObjectIdx> {
        let d = self.as_ref()?;
        d.tree()
            .object(d.tree().selected, ctx.loading.dom()?)
            .map(ObjectIdx)
    }

    /// A row is named by its row type (`class X` for a Java class
    /// object), as the tree shows it.
    fn full_name(&self, ctx: &Ctx) -> Option<String> {
        let (object, graph) = (self.selected_object(ctx)?, ctx.loading.graph()?);
        Some(graph.dump.row_type_name(object).to_string())
    }

    fn fit(&mut self, ctx: &Ctx) {
        if let Some(d) = self {
            d.scroll(ctx.rows());
        }
    }

    fn filter(&mut self, filter: &TypeFilter, ctx: &Ctx) -> FilterPlan {
        let (Some(graph), Some(dom)) = (ctx.loading.graph(), ctx.loading.dom()) else {
            return FilterPlan::NotReady;
        };
        if filter.is_empty() {
            if let Some(d) = self {
                d.marks = None;
                d.refresh();
            }
            FilterPlan::Cleared
        } else {
            FilterPlan::Work(FilterWork::Tree {
                graph: graph.clone(),
                dom: dom.clone(),
            })
        }
    }

    fn filtered(&mut self, result: FilterResult, _ctx: &Ctx) {
        if let (FilterResult::Tree(marks), Some(d)) = (result, self) {
            d.marks = Some(marks);
            d.refresh();
        }
    }

    fn click_geometry(&self) -> Option<(usize, usize, u16)> {
        let d = self.as_ref()?;
        Some((d.tree().selected_index(), d.tree().offset, 2))
    }

    fn draw(&self, ctx: &Ctx, area: Rect, f: &mut Frame) {
        match (self, ctx.loading.graph(), ctx.loading.dom()) {
            (Some(d), Some(g), Some(dom)) => {
                let empty = if d.steady_only && ctx.filter.trim().is_empty() {
                    let n = d.compared.as_ref().map_or(0, |c| c.snapshots());
                    steady_empty(n, "rows")
                } else {
                    empty_message(
                        ctx,
                        false,
                        "objects",
                        "no object is reachable from a strong root",
                    )
                };
                draw(d, &g.dump, dom, ctx.theme, &empty, area, f)
            }
            _ => {
                let block = Block::bordered()
                    .border_set(ctx.theme.border())
                    .title(" Dominators ");
                let msg = if ctx.loading.error().is_some() {
                    " no data"
                } else {
                    " computing the dominator tree…"
                };
                f.render_widget(Paragraph::new(msg).block(block), area);
            }
        }
    }
}

/// Levels indented at most: a deeper row (a long chain) shows its depth as a
/// number instead, so its name keeps the room.
const MAX_INDENT: u32 = 12;

/// `w` on a row: open the inspector on the row's object that retains most
/// and ask what the row's objects (all of a group's) would free.
fn what_if(t: &Tree, dump: &heaptui_core::model::Model) -> Vec<Intent> {
    let members: Vec<u32> = match &t.nodes[t.selected as usize].item {
        Item::Group(g) => g.members.clone(),
        Item::Instance(o) => vec![*o],
        _ => {
            return vec![Intent::status(
                "select a row of objects (a group or one object)",
            )]
        }
    };
    let Some(&anchor) = members.first() else {
        return Vec::new();
    };
    let label = crate::panes::what_if::group_label(dump, &members);
    let anchor = ObjectIdx(anchor);
    let cut = heaptui_core::analysis::Cut {
        objects: members.into_iter().map(ObjectIdx).collect(),
        edges: Vec::new(),
    };
    vec![
        Intent::Inspect(anchor),
        Intent::Request {
            job: crate::worker::Job::WhatIf {
                anchor,
                label: label.clone(),
                cut,
                owner: None,
            },
            label: format!("what if {label} were gone"),
        },
    ]
}
