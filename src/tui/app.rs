//! The App model and `update`: every input (key, mouse, resize, worker
//! result, progress sample, tick) is an [`Action`]; `update` changes the
//! model and may ask the event loop for an [`Effect`]. No I/O here, so the
//! journeys in `tests/` drive exactly what the terminal drives.

use std::sync::Arc;

use crossterm::event::{KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use super::filtering::{FilterRequest, FilterResult, FilterWork, Filtered};
use super::keys::{self, Cmd, Key, Mode};
use super::layout;
use super::loading::{Arrived, Loading};
use super::matcher::TypeMatcher;
use super::panes::dominators::{DominatorsPane, Item, Tree};
use super::panes::duplicates::{self, DupRow, DupRows, DuplicatesPane};
use super::panes::inspector::{Inspector, Target};
use super::panes::roots::{RootRow, RootsPane};
use super::panes::types::{ImmView, TypesPane};
use super::panes::{dominators, ListState};
use super::theme::Theme;
use super::ui;
use super::worker::{run_job, Job, Msg};
use crate::analysis::filter::TypeFilter;
use crate::analysis::TypeStats;
use crate::graph::duplicates::Duplicates;
use crate::graph::{DominatorTree, HeapGraph};
use crate::progress::Stage;

/// Up to this many objects, on-demand queries run inline (a few ms);
/// above it they go to a background thread so keys stay fast.
const INLINE_JOB_LIMIT: usize = 500_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaneId {
    Overview,
    Dominators,
    Types,
    Duplicates,
    Roots,
}

impl PaneId {
    pub const ALL: [PaneId; 5] = [
        PaneId::Overview,
        PaneId::Dominators,
        PaneId::Types,
        PaneId::Duplicates,
        PaneId::Roots,
    ];

    pub fn title(self) -> &'static str {
        match self {
            PaneId::Overview => "Overview",
            PaneId::Dominators => "Dominators",
            PaneId::Types => "Types",
            PaneId::Duplicates => "Duplicates",
            PaneId::Roots => "Roots",
        }
    }

    pub fn index(self) -> usize {
        PaneId::ALL.iter().position(|&p| p == self).unwrap_or(0)
    }
}

/// A sample of the worker's progress, taken by the event loop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProgressView {
    pub stage: Stage,
    pub fraction: f64,
    /// Since launch.
    pub elapsed_ms: u64,
}

#[derive(Debug)]
pub enum Action {
    Key(KeyEvent),
    Mouse(MouseEvent),
    Resize(u16, u16),
    Worker(Msg),
    Progress(ProgressView),
    /// Progress of a background job (precise retained), 0..=1.
    JobProgress(f64),
    /// Once per frame: advance the fuzzy matcher.
    Tick,
    /// A caught signal (SIGTERM, SIGHUP, …): end with its exit status.
    Signal(i32),
}

/// What `update` asks of the event loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    Quit,
    /// A signal asked to end: the exit status follows it.
    Signalled(i32),
    /// Start a background job in its slot (a newer one of the same kind
    /// cancels and supersedes it).
    StartJob(Job),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputPurpose {
    Filter,
    Exclude,
}

/// The one-line text input at the bottom (filter or exclude pattern).
#[derive(Debug, Clone)]
pub struct InputLine {
    pub purpose: InputPurpose,
    pub text: String,
}

/// Whole-heap sums the frames show, computed once when data arrives.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    pub bytes: u64,
    /// (kind, flags, records), sorted.
    pub root_kinds: Vec<(u32, u32, u64)>,
    pub additional_bytes: u64,
}

/// A history entry: where the user was.
#[derive(Debug, Clone)]
pub struct Nav {
    pub pane: PaneId,
    pub inspector: Option<u32>,
    pub dom_depth: usize,
    pub dom_selected: Option<u32>,
    pub types: ListState,
    pub dups: ListState,
    pub dups_detail: Option<u32>,
    pub roots: ListState,
}

pub struct App {
    pub name: String,
    pub theme: Theme,
    pub size: Rect,
    /// How far the analysis got, with its results.
    pub loading: Loading,
    /// Computed once per dump, so no frame walks the heap.
    pub totals: Totals,
    /// Effects requested while handling the current action; `update`
    /// returns them.
    outbox: Vec<Effect>,
    pub progress: ProgressView,
    pub job: Option<(String, f64)>,
    pub pane: PaneId,
    pub inspector: Option<Inspector>,
    pub help: Option<u16>,
    pub input: Option<InputLine>,
    /// Filter text per pane (index = PaneId::index).
    pub filters: [String; 5],
    /// Filter computations for the filter thread, at most one per pane
    /// (the loop drains it; tests run it with [`super::run_jobs`]).
    pub filter_requests: Vec<FilterRequest>,
    /// Per pane, the generation of the filter result the view waits for;
    /// any other result is stale and dropped.
    pub filter_pending: [Option<u64>; 5],
    filter_generation: u64,
    pub overview_scroll: u16,
    /// The selected jump target of the overview (k-th target line).
    /// `None` until the user moves, so Enter never acts on a line that
    /// was never shown.
    pub overview_sel: Option<usize>,
    pub dominators: Option<DominatorsPane>,
    pub types_pane: TypesPane,
    pub dups_pane: DuplicatesPane,
    pub roots_pane: RootsPane,
    pub matcher: TypeMatcher,
    pub history: Vec<Nav>,
    pub status: String,
}

impl App {
    pub fn new(name: String, theme: Theme, size: Rect) -> App {
        App {
            name,
            theme,
            size,
            loading: Loading::default(),
            totals: Totals::default(),
            outbox: Vec::new(),
            progress: ProgressView {
                stage: Stage::Parse,
                fraction: 0.0,
                elapsed_ms: 0,
            },
            job: None,
            pane: PaneId::Overview,
            inspector: None,
            help: None,
            input: None,
            filters: Default::default(),
            filter_requests: Vec::new(),
            filter_pending: [None; 5],
            filter_generation: 0,
            overview_scroll: 0,
            overview_sel: None,
            dominators: None,
            types_pane: TypesPane::default(),
            dups_pane: DuplicatesPane::default(),
            roots_pane: RootsPane::default(),
            matcher: TypeMatcher::new(),
            history: Vec::new(),
            status: String::new(),
        }
    }

    pub fn type_stats(&self, type_index: u32) -> Option<&TypeStats> {
        self.loading.type_stats(type_index)
    }

    pub fn graph(&self) -> Option<&Arc<HeapGraph>> {
        self.loading.graph()
    }

    pub fn dom(&self) -> Option<&Arc<DominatorTree>> {
        self.loading.dom()
    }

    pub fn types(&self) -> Option<&Arc<Vec<TypeStats>>> {
        self.loading.types()
    }

    pub fn duplicates(&self) -> Option<&Arc<Duplicates>> {
        self.loading.duplicates()
    }

    /// The key mode of the current focus.
    pub fn mode(&self) -> Mode {
        if self.input.is_some() {
            Mode::Filter
        } else if self.inspector.is_some() {
            Mode::Inspector
        } else {
            match self.pane {
                PaneId::Overview => Mode::Global,
                PaneId::Dominators => Mode::Dominators,
                PaneId::Types => Mode::Types,
                PaneId::Duplicates => Mode::Duplicates,
                PaneId::Roots => Mode::Roots,
            }
        }
    }

    fn nav(&self) -> Nav {
        Nav {
            pane: self.pane,
            inspector: self.inspector.as_ref().map(|i| i.object),
            dom_depth: self.dominators.as_ref().map_or(0, |d| d.zooms.len() - 1),
            dom_selected: self.dominators.as_ref().map(|d| d.tree().selected),
            types: self.types_pane.list,
            dups: self.dups_pane.list,
            dups_detail: self.dups_pane.detail.as_ref().map(|d| d.set),
            roots: self.roots_pane.list,
        }
    }

    fn push_history(&mut self) {
        let nav = self.nav();
        self.history.push(nav);
        if self.history.len() > 200 {
            self.history.remove(0);
        }
    }

    fn restore(&mut self, nav: Nav) {
        self.pane = nav.pane;
        self.inspector = None;
        if let Some(o) = nav.inspector {
            self.open_inspector(o);
        }
        if let Some(d) = &mut self.dominators {
            d.zooms.truncate(nav.dom_depth + 1);
            if let Some(s) = nav.dom_selected {
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
        self.types_pane.list = nav.types;
        self.dups_pane.list = nav.dups;
        self.dups_pane.detail = match (
            nav.dups_detail,
            self.loading.graph(),
            &self.dups_pane.source,
        ) {
            (Some(s), Some(g), Some(d)) => Some(duplicates::detail(g, d, s, &self.theme)),
            _ => None,
        };
        self.roots_pane.list = nav.roots;
        self.fix_scroll();
    }

    /// Rows of a list in the pane body (inside borders, below the header).
    pub fn body_rows(&self) -> usize {
        let body = ui::layout(self.size).body;
        body.height.saturating_sub(3) as usize
    }

    /// Keeps every selection visible after a resize or a jump.
    fn fix_scroll(&mut self) {
        let h = self.body_rows();
        if let Some(d) = &mut self.dominators {
            d.scroll(h);
        }
        let (top, bottom) = self.types_pane.split(h as u16 + 1);
        let n = self.matcher.count();
        self.types_pane
            .list
            .scroll(n, top.saturating_sub(1) as usize);
        if let Some(imm) = &mut self.types_pane.imm {
            imm.list
                .scroll(imm.rows.len(), bottom.saturating_sub(2) as usize);
        }
        let n = self.dups_pane.rows.len();
        self.dups_pane.list.scroll(n, h.saturating_sub(1));
        if let Some(det) = &mut self.dups_pane.detail {
            det.list.scroll(det.lines.len(), h);
        }
        let n = self.roots_pane.rows.len();
        self.roots_pane.list.scroll(n, h);
        if let Some(ins) = &mut self.inspector {
            ins.list.scroll(ins.entries.len(), h + 1);
        }
    }

    // ----- data arrival -------------------------------------------------

    fn on_worker(&mut self, msg: Msg) {
        let msg = match self.loading.on_msg(msg) {
            Ok(arrived) => {
                self.on_arrived(arrived);
                self.fix_scroll();
                return;
            }
            Err(msg) => msg,
        };
        match msg {
            Msg::Precise { type_index, result } => {
                self.types_pane.precise.insert(type_index, result);
                self.types_pane.precise_running = None;
                self.job = None;
            }
            Msg::ImmediateDominators {
                type_index,
                exclude,
                rows,
            } => {
                self.types_pane.imm = Some(ImmView::new(type_index, exclude, rows));
                self.types_pane.imm_focus = true;
                self.job = None;
            }
            Msg::RetentionPath { object, path } => {
                if let Some(ins) = &mut self.inspector {
                    if ins.object == object {
                        ins.set_retention_path(path);
                    }
                }
                self.job = None;
            }
            Msg::Expanded { tree, node, groups } => {
                if let (Some(d), Some(dom)) = (&mut self.dominators, self.loading.dom()) {
                    if let Some(t) = d.zooms.iter_mut().find(|t| t.id == tree) {
                        t.set_groups(node, groups, dom);
                    }
                    d.refresh();
                }
                self.job = None;
            }
            Msg::Filtered(f) => self.on_filtered(f),
            // Stage results, taken by `Loading` above.
            _ => {}
        }
        self.fix_scroll();
    }

    /// Brings the panes up to a stage that just arrived.
    fn on_arrived(&mut self, arrived: Arrived) {
        match arrived {
            Arrived::Graph => {
                let Some(graph) = self.loading.graph().cloned() else {
                    return;
                };
                self.totals.bytes = graph.dump.total_bytes();
                let mut kinds: Vec<(u32, u32, u64)> = Vec::new();
                let mut keys: Vec<(u32, u32)> =
                    graph.dump.roots.iter().map(|r| (r.kind, r.flags)).collect();
                keys.sort_unstable();
                for k in keys.chunk_by(|a, b| a == b) {
                    kinds.push((k[0].0, k[0].1, k.len() as u64));
                }
                self.totals.root_kinds = kinds;
            }
            Arrived::Dominators => {
                let (Some(graph), Some(d)) = (
                    self.loading.graph().cloned(),
                    self.loading.dominated().cloned(),
                ) else {
                    return;
                };
                self.dominators = Some(DominatorsPane::new(&graph.dump, &d.dom));
                self.types_pane.measure(&d.types, &d.dom);
                self.roots_pane.measure(&d.roots);
                for p in [PaneId::Dominators, PaneId::Types, PaneId::Roots] {
                    self.apply_filter(p);
                }
            }
            Arrived::Duplicates => {
                if let Some(d) = self.loading.duplicates() {
                    self.totals.additional_bytes = d.total_additional_bytes();
                }
                // Under a filter the pane keeps showing the previous result
                // until the filter thread has narrowed this one.
                self.apply_filter(PaneId::Duplicates);
            }
            Arrived::Nothing | Arrived::Failure => {}
        }
    }

    /// Applies the pane's filter text to its view: at once when that is
    /// O(1) (no filter), else by queueing a request for the filter thread
    /// that supersedes any older one for the pane. The view keeps showing
    /// the previous result until [`App::on_filtered`] installs the new one.
    fn apply_filter(&mut self, pane: PaneId) {
        let text = self.filters[pane.index()].clone();
        let filter = TypeFilter::parse(&text);
        let Some(graph) = self.loading.graph().cloned() else {
            return;
        };
        let work = match pane {
            PaneId::Overview => None,
            PaneId::Types => {
                let Some(types) = self.loading.types().cloned() else {
                    return;
                };
                self.types_pane.list = ListState::default();
                // Only a change of the structural tokens needs new
                // candidates; fuzzy text is nucleo's, on its own threads.
                self.matcher.set(&filter).map(|injector| FilterWork::Types {
                    graph,
                    types,
                    injector,
                })
            }
            PaneId::Dominators => {
                let Some(dom) = self.loading.dom().cloned() else {
                    return;
                };
                if filter.is_empty() {
                    self.forget_filter(pane);
                    if let Some(d) = &mut self.dominators {
                        d.marks = None;
                        d.refresh();
                    }
                    None
                } else {
                    Some(FilterWork::Tree { graph, dom })
                }
            }
            PaneId::Duplicates => {
                let Some(duplicates) = self.loading.duplicates().cloned() else {
                    return;
                };
                if filter.is_empty() {
                    self.forget_filter(pane);
                    self.dups_pane.show_all(duplicates);
                    None
                } else {
                    Some(FilterWork::Duplicates { graph, duplicates })
                }
            }
            PaneId::Roots => {
                let Some(groups) = self.loading.roots().cloned() else {
                    return;
                };
                if filter.is_empty() {
                    self.forget_filter(pane);
                    self.roots_pane.matches = None;
                    self.roots_pane.rebuild(&groups);
                    None
                } else {
                    Some(FilterWork::Roots { graph, groups })
                }
            }
        };
        if let Some(work) = work {
            self.forget_filter(pane);
            self.filter_generation += 1;
            self.filter_pending[pane.index()] = Some(self.filter_generation);
            self.filter_requests.push(FilterRequest {
                pane,
                generation: self.filter_generation,
                filter: filter.clone(),
                work,
            });
        }
        if !filter.unknown.is_empty() {
            self.status = format!("ignored: {}", filter.unknown.join(" "));
        }
        self.fix_scroll();
    }

    /// Stops waiting for the pane's filter result: a queued request is
    /// withdrawn, and a result already under way will be dropped.
    fn forget_filter(&mut self, pane: PaneId) {
        self.filter_pending[pane.index()] = None;
        self.filter_requests.retain(|r| r.pane != pane);
    }

    /// Whether the focused pane waits for a filter result (the status line
    /// says "filtering…").
    pub fn filtering(&self) -> bool {
        self.filter_pending[self.pane.index()].is_some()
    }

    /// Installs a filter result unless a newer filter superseded it.
    fn on_filtered(&mut self, f: Filtered) {
        let i = f.pane.index();
        if self.filter_pending[i] != Some(f.generation) {
            return;
        }
        self.filter_pending[i] = None;
        match f.result {
            FilterResult::Tree(marks) => {
                if let Some(d) = &mut self.dominators {
                    d.marks = Some(marks);
                    d.refresh();
                }
            }
            FilterResult::Duplicates { source, rows } => {
                self.dups_pane.show(source, DupRows::Filtered(rows));
            }
            FilterResult::Roots(matches) => {
                if let Some(groups) = self.loading.roots().cloned() {
                    self.roots_pane.matches = Some(matches);
                    self.roots_pane.rebuild(&groups);
                }
            }
            FilterResult::Types => {}
        }
    }

    // ----- navigation helpers -------------------------------------------

    fn switch(&mut self, pane: PaneId) {
        if pane == self.pane && self.inspector.is_none() {
            return;
        }
        self.push_history();
        self.inspector = None;
        self.pane = pane;
    }

    /// The object the focus stands for (for `i`).
    fn selected_object(&self) -> Option<u32> {
        if let Some(ins) = &self.inspector {
            return match ins.target() {
                Some(Target::Object(o)) => Some(o),
                _ => Some(ins.object),
            };
        }
        let graph = self.loading.graph()?;
        match self.pane {
            PaneId::Overview => {
                let (_, targets) = super::panes::overview::lines(self, 80);
                match targets.get(self.overview_sel?)?.1 {
                    Target::Object(o) => Some(o),
                    Target::Set(s) => self.loading.duplicates()?.sets[s as usize]
                        .members
                        .first()
                        .copied(),
                }
            }
            PaneId::Dominators => {
                let d = self.dominators.as_ref()?;
                d.tree().object(d.tree().selected, self.loading.dom()?)
            }
            PaneId::Types => {
                let ty = *self
                    .matcher
                    .rows(self.types_pane.list.selected, 1)
                    .first()?;
                self.loading.largest_instance(ty)
            }
            PaneId::Duplicates => {
                let d = self.dups_pane.source.as_ref()?;
                if let Some(det) = &self.dups_pane.detail {
                    if let Some(o) = det.lines.get(det.list.selected).and_then(|l| l.object) {
                        return Some(o);
                    }
                    return d.sets[det.set as usize].members.first().copied();
                }
                match self.dups_pane.rows.get(self.dups_pane.list.selected)? {
                    DupRow::Set(s) => d.sets[s as usize].members.first().copied(),
                    DupRow::Possible(p) => d.possible[p as usize].instances.first().copied(),
                }
            }
            PaneId::Roots => {
                let groups = self.loading.roots()?;
                match self.roots_pane.rows.get(self.roots_pane.list.selected)? {
                    RootRow::Group(g) => groups[*g]
                        .roots
                        .first()
                        .map(|&r| graph.dump.roots[r as usize].object),
                    RootRow::Record(_, r) => Some(graph.dump.roots[*r as usize].object),
                    RootRow::More(..) => None,
                }
            }
        }
    }

    /// Hands deferred tree grouping to [`App::request`].
    fn defer(&mut self, deferred: Option<super::panes::dominators::Deferred>) {
        if let Some(d) = deferred {
            let job = Job::GroupChildren {
                tree: d.tree,
                node: d.node,
                parents: d.parents,
            };
            self.request(job, "grouping children");
        }
    }

    /// Runs a job inline on small heaps, else queues it for a background
    /// thread (precise retained sizes always go to the background).
    fn request(&mut self, job: Job, label: &str) {
        let (Some(graph), Some(dom)) = (self.loading.graph().cloned(), self.loading.dom().cloned())
        else {
            return;
        };
        let background = matches!(job, Job::Precise { .. }) || graph.objects() > INLINE_JOB_LIMIT;
        if background {
            self.job = Some((label.to_string(), 0.0));
            self.outbox.push(Effect::StartJob(job));
        } else if let Some(msg) = run_job(job, &graph, &dom, &crate::progress::Progress::new()) {
            self.on_worker(msg);
        }
    }

    fn inspect(&mut self, object: u32) {
        if self.loading.graph().is_none() {
            return;
        }
        self.push_history();
        self.open_inspector(object);
        self.fix_scroll();
    }

    /// Builds the inspector now and asks for the retention path as a job.
    fn open_inspector(&mut self, object: u32) {
        let Some(graph) = self.loading.graph().cloned() else {
            return;
        };
        self.inspector = Some(Inspector::build(
            object,
            &graph,
            self.loading.dom().map(|d| &**d),
            self.loading.duplicates().map(|d| &**d),
            &self.theme,
        ));
        if self.loading.dom().is_some() {
            self.request(Job::RetentionPath { object }, "retention path");
        }
    }

    /// Shows an object in the (unzoomed) dominator tree.
    fn reveal(&mut self, object: u32) {
        let (Some(graph), Some(dom)) = (self.loading.graph().cloned(), self.loading.dom().cloned())
        else {
            self.status = "the dominator tree is not ready yet".into();
            return;
        };
        if !dom.is_reachable(object) {
            self.status = format!(
                "{} is unreachable: not in the dominator tree",
                graph.dump.id_hex(object)
            );
            return;
        }
        self.push_history();
        self.inspector = None;
        self.pane = PaneId::Dominators;
        let d = self.dominators.as_mut().expect("exists with dom");
        d.zooms.truncate(1);
        // The object must be visible: its tree drops the filter.
        if d.marks.is_some() || self.filter_pending[PaneId::Dominators.index()].is_some() {
            d.marks = None;
            self.filters[PaneId::Dominators.index()].clear();
            self.forget_filter(PaneId::Dominators);
        }
        let d = self.dominators.as_mut().expect("exists with dom");
        d.tree_mut().reveal(object, &graph.dump, &dom);
        d.refresh();
        self.fix_scroll();
    }

    fn jump_to_set(&mut self, set: u32, open: bool) {
        let (Some(graph), Some(d)) = (
            self.loading.graph().cloned(),
            self.loading.duplicates().cloned(),
        ) else {
            return;
        };
        self.push_history();
        self.inspector = None;
        self.pane = PaneId::Duplicates;
        // Set ids are those of the newest result: a pane still showing an
        // older one or about to change its rows (a filter under way), or
        // filtering the set out, shows everything instead.
        let current = self
            .dups_pane
            .source
            .as_ref()
            .is_some_and(|s| Arc::ptr_eq(s, &d))
            && self.filter_pending[PaneId::Duplicates.index()].is_none();
        if !current || self.dups_pane.row_of_set(set).is_none() {
            self.filters[PaneId::Duplicates.index()].clear();
            self.forget_filter(PaneId::Duplicates);
            self.dups_pane.show_all(d.clone());
        }
        self.dups_pane.list.selected = self.dups_pane.row_of_set(set).unwrap_or(0);
        self.dups_pane.detail = open.then(|| duplicates::detail(&graph, &d, set, &self.theme));
        self.fix_scroll();
    }

    // ----- commands -------------------------------------------------------

    fn command(&mut self, cmd: Cmd) -> Option<Effect> {
        let h = self.body_rows();
        match cmd {
            Cmd::Quit => return Some(Effect::Quit),
            Cmd::Help => self.help = Some(0),
            Cmd::NextPane => self.switch(PaneId::ALL[(self.pane.index() + 1) % 5]),
            Cmd::PrevPane => self.switch(PaneId::ALL[(self.pane.index() + 4) % 5]),
            Cmd::Pane(n) => self.switch(PaneId::ALL[(n as usize - 1).min(4)]),
            Cmd::OpenFilter => {
                if self.pane == PaneId::Overview && self.inspector.is_none() {
                    self.status = "the filter narrows the list panes (2-5)".into();
                } else {
                    self.inspector = None;
                    let text = self.filters[self.pane.index()].clone();
                    self.input = Some(InputLine {
                        purpose: InputPurpose::Filter,
                        text,
                    });
                }
            }
            Cmd::Inspect => match self.selected_object() {
                Some(o) => self.inspect(o),
                None => self.status = "nothing to inspect here".into(),
            },
            Cmd::Escape => {
                let i = self.pane.index();
                if self.inspector.is_none() && !self.filters[i].is_empty() {
                    self.filters[i].clear();
                    self.apply_filter(self.pane);
                } else {
                    return self.command(Cmd::Back);
                }
            }
            Cmd::Back => {
                if self.pane == PaneId::Types
                    && self.types_pane.imm_focus
                    && self.inspector.is_none()
                {
                    self.types_pane.imm = None;
                    self.types_pane.imm_focus = false;
                } else if let Some(nav) = self.history.pop() {
                    self.restore(nav);
                } else if self.inspector.is_some() {
                    self.inspector = None;
                } else {
                    self.status = "at the start of the history".into();
                }
            }
            Cmd::Up => self.step(-1),
            Cmd::Down => self.step(1),
            Cmd::PageUp => self.step(-(h as isize)),
            Cmd::PageDown => self.step(h as isize),
            Cmd::Top => self.step(isize::MIN / 2),
            Cmd::Bottom => self.step(isize::MAX / 2),
            Cmd::Open => return self.open(),
            Cmd::Expand => self.expand(true),
            Cmd::ToggleExpand => self.toggle_space(),
            Cmd::Collapse => self.expand(false),
            Cmd::ToggleTreeMode => {
                if let Some(d) = &mut self.dominators {
                    d.mode = match d.mode {
                        dominators::TreeMode::Tree => dominators::TreeMode::Path,
                        dominators::TreeMode::Path => dominators::TreeMode::Tree,
                    };
                    d.refresh();
                }
            }
            Cmd::ToggleChart => {
                if let Some(d) = &mut self.dominators {
                    d.chart_only = !d.chart_only;
                    if layout::is_wide(ui::layout(self.size).body.width) {
                        self.status =
                            "the chart is always shown beside the tree at this width".into();
                    }
                }
            }
            Cmd::Instances => {
                if let (Some(d), Some(g), Some(dom)) = (
                    &mut self.dominators,
                    self.loading.graph(),
                    self.loading.dom(),
                ) {
                    let t = d.tree_mut();
                    let s = t.selected;
                    let deferred = t.toggle_instances(s, &g.dump, dom);
                    d.refresh();
                    self.defer(deferred);
                }
            }
            Cmd::ZoomOut => {
                // Not a history step: Backspace already retraces zooms.
                if let Some(d) = &mut self.dominators {
                    if d.zooms.len() > 1 {
                        d.zooms.pop();
                        d.refresh();
                    }
                }
            }
            Cmd::PreciseRetained => {
                let &ty = self
                    .matcher
                    .rows(self.types_pane.list.selected, 1)
                    .first()?;
                if self.types_pane.precise_running.is_some() {
                    self.status = "a precise retained computation is already running".into();
                } else if !self.types_pane.precise.contains_key(&ty) {
                    self.types_pane.precise_running = Some(ty);
                    let name = self
                        .graph()
                        .map(|g| g.dump.type_names[ty as usize].to_string())
                        .unwrap_or_default();
                    self.request(
                        Job::Precise { type_index: ty },
                        &format!("precise retained of {name}"),
                    );
                }
            }
            Cmd::ImmediateDominators => self.immediate_dominators(),
            Cmd::ExcludePattern => {
                self.input = Some(InputLine {
                    purpose: InputPurpose::Exclude,
                    text: self.types_pane.exclude.clone(),
                });
            }
            Cmd::JumpHoldingSet => {
                let d = self.dups_pane.source.clone()?;
                let set = match &self.dups_pane.detail {
                    Some(det) => Some(det.set),
                    None => match self.dups_pane.rows.get(self.dups_pane.list.selected) {
                        Some(DupRow::Set(s)) => Some(s),
                        _ => None,
                    },
                };
                match set.and_then(|s| d.sets[s as usize].holding_set) {
                    Some(h) => {
                        let open = self.dups_pane.detail.is_some();
                        self.jump_to_set(h, open);
                    }
                    None => self.status = "this set is not held by another set".into(),
                }
            }
            Cmd::DetectPossible => match self.dups_pane.rows.get(self.dups_pane.list.selected) {
                Some(DupRow::Possible(p)) => {
                    let shown = self.dups_pane.source.clone()?;
                    let type_index = shown.possible[p as usize].type_index;
                    let current = self.loading.duplicates().cloned()?;
                    self.request(
                        Job::DetectDuplicates {
                            type_index,
                            current,
                        },
                        "detecting duplicates",
                    );
                }
                _ => self.status = "select a possible-duplicates row".into(),
            },
            Cmd::OpenInDominators => {
                if let Some(ins) = &self.inspector {
                    let o = ins.object;
                    self.reveal(o);
                }
            }
            Cmd::Accept | Cmd::Clear | Cmd::DeleteChar => {}
        }
        None
    }

    fn immediate_dominators(&mut self) {
        let Some(&ty) = self.matcher.rows(self.types_pane.list.selected, 1).first() else {
            return;
        };
        let exclude = self.types_pane.exclude.clone();
        self.request(
            Job::ImmediateDominators {
                type_index: ty,
                exclude,
            },
            "immediate dominators",
        );
        self.fix_scroll();
    }

    fn step(&mut self, delta: isize) {
        let h = self.body_rows();
        if let Some(ins) = &mut self.inspector {
            let n = ins.entries.len();
            ins.list.step(delta, n, h + 1);
            return;
        }
        match self.pane {
            PaneId::Overview => {
                // Move among the jump targets and keep the selected one on
                // screen; with none (still loading), just scroll.
                let width = ui::layout(self.size).body.width.saturating_sub(2) as usize;
                let (lines, targets) = super::panes::overview::lines(self, width);
                let h = ui::layout(self.size).body.height.saturating_sub(2) as usize;
                if targets.is_empty() {
                    let max = lines.len().saturating_sub(h) as isize;
                    self.overview_scroll =
                        (self.overview_scroll as isize + delta).clamp(0, max) as u16;
                } else if delta > 0 && self.overview_sel == Some(targets.len() - 1) {
                    // Past the last target: scroll on to the diagnostics.
                    let max = lines.len().saturating_sub(h) as isize;
                    self.overview_scroll =
                        (self.overview_scroll as isize + delta).clamp(0, max) as u16;
                } else {
                    // The first move selects the first target.
                    let k = match self.overview_sel {
                        None => 0,
                        Some(k) => {
                            (k as isize + delta).clamp(0, targets.len() as isize - 1) as usize
                        }
                    };
                    self.overview_sel = Some(k);
                    let at = targets[k].0;
                    let mut scroll = self.overview_scroll as usize;
                    if at < scroll + 1 {
                        scroll = at.saturating_sub(1);
                    } else if at >= scroll + h {
                        scroll = at + 1 - h;
                    }
                    // The first target also shows the file header above it.
                    if k == 0 && delta < 0 {
                        scroll = 0;
                    }
                    self.overview_scroll = scroll as u16;
                }
            }
            PaneId::Dominators => {
                let Some(d) = &mut self.dominators else {
                    return;
                };
                let narrow_chart =
                    d.chart_only && !layout::is_wide(ui::layout(self.size).body.width);
                if narrow_chart {
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
                d.scroll(h);
            }
            PaneId::Types => {
                if self.types_pane.imm_focus {
                    let (_, bottom) = self.types_pane.split(h as u16 + 1);
                    if let Some(imm) = &mut self.types_pane.imm {
                        let n = imm.rows.len();
                        imm.list.step(delta, n, bottom.saturating_sub(2) as usize);
                    }
                } else {
                    let (top, _) = self.types_pane.split(h as u16 + 1);
                    let n = self.matcher.count();
                    self.types_pane
                        .list
                        .step(delta, n, top.saturating_sub(1) as usize);
                    if let Some(&ty) = self.matcher.rows(self.types_pane.list.selected, 1).first() {
                        if self
                            .types_pane
                            .imm
                            .as_ref()
                            .is_some_and(|i| i.type_index != ty)
                        {
                            self.types_pane.imm = None;
                        }
                    }
                }
            }
            PaneId::Duplicates => {
                if let Some(det) = &mut self.dups_pane.detail {
                    let n = det.lines.len();
                    det.list.step(delta, n, h);
                } else {
                    let n = self.dups_pane.rows.len();
                    self.dups_pane.list.step(delta, n, h.saturating_sub(1));
                }
            }
            PaneId::Roots => {
                let n = self.roots_pane.rows.len();
                self.roots_pane.list.step(delta, n, h);
            }
        }
    }

    fn open(&mut self) -> Option<Effect> {
        if let Some(ins) = &self.inspector {
            match ins.target() {
                Some(Target::Object(o)) => self.inspect(o),
                Some(Target::Set(s)) => self.jump_to_set(s, true),
                None => self.status = "not a jump target".into(),
            }
            return None;
        }
        match self.pane {
            PaneId::Overview => {
                let (_, targets) = super::panes::overview::lines(self, 80);
                match self.overview_sel.and_then(|k| targets.get(k)).map(|t| t.1) {
                    Some(Target::Object(o)) => self.reveal(o),
                    Some(Target::Set(s)) => self.jump_to_set(s, true),
                    None => {}
                }
            }
            PaneId::Dominators => self.zoom_in(),
            PaneId::Types => {
                if self.types_pane.imm_focus {
                    let Some(imm) = &self.types_pane.imm else {
                        return None;
                    };
                    let target = imm.rows.get(imm.list.selected).and_then(|r| {
                        let dom = self.loading.dom()?;
                        r.dominators
                            .iter()
                            .copied()
                            .max_by_key(|&o| dom.retained_bytes[o as usize])
                    });
                    match target {
                        Some(o) => self.reveal(o),
                        None => {
                            self.status = "these instances are held directly by GC roots".into()
                        }
                    }
                } else if let Some(&ty) =
                    self.matcher.rows(self.types_pane.list.selected, 1).first()
                {
                    match self.loading.largest_instance(ty) {
                        Some(o) => self.reveal(o),
                        None => self.status = "no reachable instance of this type".into(),
                    }
                }
            }
            PaneId::Duplicates => {
                let (Some(graph), Some(d)) =
                    (self.loading.graph().cloned(), self.dups_pane.source.clone())
                else {
                    return None;
                };
                if let Some(det) = &self.dups_pane.detail {
                    if let Some(o) = det.lines.get(det.list.selected).and_then(|l| l.object) {
                        self.inspect(o);
                    }
                    return None;
                }
                match self.dups_pane.rows.get(self.dups_pane.list.selected) {
                    Some(DupRow::Set(s)) => {
                        self.push_history();
                        self.dups_pane.detail =
                            Some(duplicates::detail(&graph, &d, s, &self.theme));
                    }
                    Some(DupRow::Possible(_)) => return self.command(Cmd::DetectPossible),
                    None => {}
                }
            }
            PaneId::Roots => match self
                .roots_pane
                .rows
                .get(self.roots_pane.list.selected)
                .copied()
            {
                Some(RootRow::Group(_)) => self.expand(true),
                Some(RootRow::Record(..)) => {
                    if let Some(o) = self.selected_object() {
                        self.inspect(o);
                    }
                }
                _ => {}
            },
        }
        None
    }

    fn zoom_in(&mut self) {
        let (Some(graph), Some(dom)) = (self.loading.graph().cloned(), self.loading.dom().cloned())
        else {
            return;
        };
        let narrow = !layout::is_wide(ui::layout(self.size).body.width);
        if let Some(d) = &mut self.dominators {
            // In the chart alone, Enter zooms into the highlighted bar.
            if d.chart_only && narrow {
                let top = d.top_of_selection();
                d.tree_mut().selected = top;
            }
        }
        let Some(d) = &self.dominators else { return };
        let t = d.tree();
        let sel = t.selected;
        match &t.nodes[sel as usize].item {
            Item::More { .. } => {
                let d = self.dominators.as_mut().expect("checked");
                d.tree_mut().more(sel, &dom);
                d.refresh();
            }
            Item::SuperRoot => {}
            item => {
                if !t.has_children(sel, &dom) {
                    self.status = "nothing below this row to zoom into".into();
                    return;
                }
                let item = match item {
                    // A one-member group zooms into its object.
                    Item::Group(g) if g.members.len() == 1 => Item::Instance(g.members[0]),
                    other => other.clone(),
                };
                let label = t.label_of(sel, &graph.dump, &self.theme);
                self.push_history();
                let d = self.dominators.as_mut().expect("checked");
                let (tree, deferred) = Tree::new(item, label, &graph.dump, &dom);
                d.zooms.push(tree);
                d.refresh();
                self.defer(deferred);
            }
        }
        let h = self.body_rows();
        if let Some(d) = &mut self.dominators {
            d.scroll(h);
        }
    }

    fn expand(&mut self, open: bool) {
        match self.pane {
            PaneId::Dominators if self.inspector.is_none() => {
                let (Some(graph), Some(dom)) =
                    (self.loading.graph().cloned(), self.loading.dom().cloned())
                else {
                    return;
                };
                let rows = self.body_rows();
                let mut deferred = None;
                let Some(d) = &mut self.dominators else {
                    return;
                };
                let t = d.tree_mut();
                let s = t.selected;
                let expanded = t.nodes[s as usize].expanded;
                if open {
                    if !t.has_children(s, &dom) {
                        return;
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
                        deferred = t.expand(s, &graph.dump, &dom);
                    }
                } else if expanded {
                    t.nodes[s as usize].expanded = false;
                } else if let Some(p) = t.nodes[s as usize].parent.filter(|&p| p != 0) {
                    t.selected = p;
                }
                d.refresh();
                d.scroll(rows);
                self.defer(deferred);
            }
            PaneId::Roots if self.inspector.is_none() => {
                let g = match self.roots_pane.rows.get(self.roots_pane.list.selected) {
                    Some(RootRow::Group(g))
                    | Some(RootRow::Record(g, _))
                    | Some(RootRow::More(g, _)) => *g,
                    None => return,
                };
                let changed = if open {
                    self.roots_pane.expanded.insert(g)
                } else {
                    self.roots_pane.expanded.remove(&g)
                };
                if changed {
                    if !open {
                        self.roots_pane.list.selected = self
                            .roots_pane
                            .rows
                            .iter()
                            .position(|r| *r == RootRow::Group(g))
                            .unwrap_or(0);
                    }
                    if let Some(groups) = self.loading.roots().cloned() {
                        self.roots_pane.rebuild(&groups);
                    }
                }
            }
            _ => {}
        }
    }

    fn toggle_space(&mut self) {
        let expanded = self
            .dominators
            .as_ref()
            .map(|d| d.tree().nodes[d.tree().selected as usize].expanded)
            .unwrap_or(false);
        self.expand(!expanded);
    }

    // ----- input line -------------------------------------------------------

    fn input_key(&mut self, key: Key) {
        let Some(mut line) = self.input.take() else {
            return;
        };
        let cmd = keys::lookup(Mode::Filter, key);
        let mut keep_open = true;
        match (cmd, key) {
            (Some(Cmd::Accept), _) => keep_open = false,
            (Some(Cmd::Clear), _) => {
                line.text.clear();
                keep_open = false;
            }
            (Some(Cmd::DeleteChar), _) => {
                line.text.pop();
            }
            (_, Key::Char(c)) => line.text.push(c),
            _ => {}
        }
        let committed = !keep_open;
        match line.purpose {
            InputPurpose::Filter => {
                // Live: every change of the text asks for a new result.
                let i = self.pane.index();
                if self.filters[i] != line.text {
                    self.filters[i] = line.text.clone();
                    self.apply_filter(self.pane);
                }
            }
            InputPurpose::Exclude => {
                if committed {
                    self.types_pane.exclude = line.text.clone();
                    if self.types_pane.imm.is_some() {
                        self.immediate_dominators();
                    }
                }
            }
        }
        if keep_open {
            self.input = Some(line);
        }
    }

    // ----- mouse ------------------------------------------------------------

    fn mouse(&mut self, m: MouseEvent) {
        let areas = ui::layout(self.size);
        match m.kind {
            MouseEventKind::ScrollDown => self.step(3),
            MouseEventKind::ScrollUp => self.step(-3),
            MouseEventKind::Down(MouseButton::Left) => {
                if m.row == areas.tabs.y {
                    if let Some(p) = ui::tab_at(m.column) {
                        self.switch(p);
                    }
                    return;
                }
                let body = areas.body;
                // Border plus header lines above the first row.
                let top = if self.inspector.is_none()
                    && self.pane == PaneId::Duplicates
                    && self.dups_pane.detail.is_none()
                {
                    3
                } else {
                    2
                };
                if m.row < body.y + top || m.row >= body.y + body.height.saturating_sub(1) {
                    return;
                }
                let row = (m.row - body.y - top) as usize;
                // Translate to a step from the current selection.
                let (sel, off) = match (&self.inspector, self.pane) {
                    (Some(ins), _) => (ins.list.selected, ins.list.offset.saturating_sub(1)),
                    (None, PaneId::Dominators) => match &self.dominators {
                        Some(d) => (d.tree().selected_index(), d.tree().offset),
                        None => return,
                    },
                    (None, PaneId::Types) => {
                        (self.types_pane.list.selected, self.types_pane.list.offset)
                    }
                    (None, PaneId::Duplicates) => match &self.dups_pane.detail {
                        Some(det) => (det.list.selected, det.list.offset),
                        None => (self.dups_pane.list.selected, self.dups_pane.list.offset),
                    },
                    (None, PaneId::Roots) => {
                        (self.roots_pane.list.selected, self.roots_pane.list.offset)
                    }
                    (None, PaneId::Overview) => return,
                };
                let target = off + row + usize::from(self.inspector.is_some());
                let target = target.saturating_sub(usize::from(self.inspector.is_some()));
                self.step(target as isize - sel as isize);
            }
            _ => {}
        }
    }
}

/// Applies one action: changes the model, does no I/O, and returns what
/// the event loop must carry out.
pub fn update(app: &mut App, action: Action) -> Vec<Effect> {
    let first = handle(app, action);
    let mut effects = std::mem::take(&mut app.outbox);
    if let Some(e) = first {
        effects.insert(0, e);
    }
    effects
}

fn handle(app: &mut App, action: Action) -> Option<Effect> {
    match action {
        Action::Key(ev) => {
            if ev.kind != KeyEventKind::Press {
                return None;
            }
            let key = Key::of(&ev);
            app.status.clear();
            if let Some(scroll) = app.help {
                match keys::lookup(Mode::Global, key) {
                    Some(Cmd::Down) => app.help = Some(scroll.saturating_add(1)),
                    Some(Cmd::Up) => app.help = Some(scroll.saturating_sub(1)),
                    Some(Cmd::PageDown) => app.help = Some(scroll.saturating_add(10)),
                    Some(Cmd::PageUp) => app.help = Some(scroll.saturating_sub(10)),
                    Some(Cmd::Quit) if key == Key::Ctrl('c') => return Some(Effect::Quit),
                    _ => app.help = None,
                }
                return None;
            }
            if app.input.is_some() {
                if key == Key::Ctrl('c') {
                    return Some(Effect::Quit);
                }
                app.input_key(key);
                return None;
            }
            let mode = app.mode();
            match keys::lookup(mode, key) {
                Some(cmd) => app.command(cmd),
                None => None,
            }
        }
        Action::Mouse(m) => {
            if app.help.is_none() && app.input.is_none() {
                app.mouse(m);
            }
            None
        }
        Action::Resize(w, h) => {
            app.size = Rect::new(0, 0, w, h);
            app.fix_scroll();
            None
        }
        Action::Worker(msg) => {
            app.on_worker(msg);
            None
        }
        Action::Progress(p) => {
            app.progress = p;
            None
        }
        Action::JobProgress(f) => {
            if let Some(j) = &mut app.job {
                j.1 = f;
            }
            None
        }
        Action::Tick => {
            if app.matcher.tick() {
                app.fix_scroll();
            }
            None
        }
        Action::Signal(sig) => Some(Effect::Signalled(sig)),
    }
}
