//! The router. [`App`] is the model: what the analysis delivered
//! ([`Loading`]), the panes, the focus, the history, the input line and the
//! help overlay. [`update`] is the only place it changes: it routes an
//! [`Action`] to the focused pane (or the help, or the input line), carries
//! out the [`Intent`]s the pane answers with (jumps between panes, history,
//! jobs) and returns the [`Effect`]s the event loop must perform (jobs and
//! filter computations to start, redraws, quitting). No I/O here. Names no
//! pane's internals: every pane is reached through [`Pane`]. Imports the
//! panes and the help overlay, never `ui` or the event loop; panes never
//! import this module. History and jumps live in `navigation`, the arrival
//! of results in `arrival`.

use std::sync::Arc;

use crossterm::event::{KeyEvent, KeyEventKind, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;

use super::filtering::{FilterRequest, Filtered};
use super::help::{Help, HelpKey};
use super::keys::{self, Cmd, Key, Mode};
use super::layout::{layout, tab_at};
use super::loading::{Arrived, Loading};
use super::msg::Msg;
use super::panes::inspector::Inspector;
use super::panes::paths::PathsView;
use super::panes::{Ctx, Intent, Pane, Panes, Saved, Ticked};
use super::theme::Theme;
use super::worker::{run_job, BaselineSources, Job};
use heaptui_core::analysis::TypeStats;
use heaptui_core::graph::duplicates::Duplicates;
use heaptui_core::graph::{DominatorTree, HeapGraph};
use heaptui_core::model::{ObjectIdx, TypeIdx};
use heaptui_core::progress::Stage;

pub use super::loading::Totals;
pub use super::pane_id::PaneId;

mod arrival;
mod navigation;

/// Up to this many objects, on-demand queries run inline (a few ms);
/// above it they go to a background thread so keys stay fast.
pub const INLINE_JOB_LIMIT: usize = 500_000;

/// A sample of the worker's progress, taken by the event loop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProgressView {
    /// The stage the worker is in.
    pub stage: Stage,
    /// How much of that stage is done, 0..=1.
    pub fraction: f64,
    /// Since launch.
    pub elapsed_ms: u64,
    /// The heap is over the memory budget: its big arrays go to disk.
    pub spilling: bool,
}

/// Every input [`update`] handles: terminal events, worker messages, progress, ticks, signals.
#[derive(Debug)]
pub enum Action {
    /// A key press.
    Key(KeyEvent),
    /// A mouse event (clicks on tabs and rows, the wheel).
    Mouse(MouseEvent),
    /// The terminal's new size, in columns and rows.
    Resize(u16, u16),
    /// A message from a background thread (a stage, a job, a filter).
    Worker(Msg),
    /// A sample of the analysis's progress.
    Progress(ProgressView),
    /// Progress of a background job (precise retained), 0..=1.
    JobProgress(f64),
    /// Once per frame: advance what ranks on other threads (the Types
    /// pane's fuzzy matcher); answers [`Effect::Redraw`] while it moves.
    Tick,
    /// Settled runs (tests, the tape): let that ranking finish, as many
    /// ticks would.
    Settle,
    /// A caught signal (SIGTERM, SIGHUP, …): end with its exit status.
    Signal(i32),
}

/// What `update` asks of the event loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// End the UI (exit status 0).
    Quit,
    /// Analyse the dump again with the other `--references` mode.
    ToggleReferences,
    /// A signal asked to end: the exit status follows it.
    Signalled(i32),
    /// Give the terminal back and stop until continued (Ctrl-Z, SIGTSTP).
    Suspend,
    /// Continued: take the terminal again and redraw all of it (SIGCONT).
    Resume,
    /// Start a background job in its slot (a newer one of the same kind
    /// cancels and supersedes it).
    StartJob(Job),
    /// Compute a pane's filter off the UI thread; its result comes back as
    /// [`Msg::Filtered`]. Sent only while the model still awaits it
    /// ([`App::awaits`]), so a burst of keys sends one request.
    Filter(Box<FilterRequest>),
    /// The frame changed without an input (a new ranking): draw it at the
    /// next paced frame.
    Redraw,
}

/// What the text input line is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputPurpose {
    /// The `/` filter of the current pane.
    Filter,
    /// A pane's exclude pattern(s) ([`Intent::EditExclude`]), after
    /// this prompt.
    Exclude(&'static str),
}

/// The one-line text input at the bottom (filter or exclude pattern).
#[derive(Debug, Clone)]
pub struct InputLine {
    /// What the text is for.
    pub purpose: InputPurpose,
    /// The text typed so far.
    pub text: String,
}

/// A history entry: where the user was. Each pane saved its own place
/// ([`Pane::save`]), so a pane added to the registry has its history.
#[derive(Debug)]
struct Nav {
    /// The pane that was shown.
    pane: PaneId,
    /// The object the inspector showed, if it was open.
    inspector: Option<ObjectIdx>,
    /// The merged paths shown, if they were.
    paths: Option<PathsView>,
    /// Per pane (index = [`PaneId::index`]), its place.
    panes: [Saved; PaneId::COUNT],
}

/// The background job the status line shows, while it runs.
#[derive(Debug, Clone)]
struct Running {
    /// What the status line calls it.
    label: String,
    /// How much of it is done, 0..=1.
    fraction: f64,
    /// The stage whose arrival is its result, for a job answered that way
    /// (a detection for one type lands as a new duplicates stage).
    lands_as: Option<Arrived>,
}

/// The UI's whole state: the model [`update`] changes and [`crate::ui::draw`]
/// shows. Its fields are private: the view and the tests read them through
/// the accessors below, and only [`update`] (and the few setters the
/// harness and the terminal's owner use before the first action) change
/// them.
pub struct App {
    /// The title: the dump's name (and how many older snapshots it is compared with).
    name: String,
    /// Colours and glyphs.
    theme: Theme,
    /// The terminal's size.
    size: Rect,
    /// How far the analysis got, with its results.
    loading: Loading,
    /// Computed once per dump, so no frame walks the heap.
    totals: Totals,
    /// Effects requested while handling the current action; `update`
    /// returns them.
    outbox: Vec<Effect>,
    /// The last sample of the analysis's progress.
    progress: ProgressView,
    /// The background job the status line shows, and its progress.
    job: Option<Running>,
    /// The pane shown.
    pane: PaneId,
    /// The object inspector, while it is open.
    inspector: Option<Inspector>,
    /// The merged paths to the roots, while they are shown (under the
    /// inspector when both are open).
    paths: Option<PathsView>,
    /// The help overlay, while it is open.
    help: Option<Help>,
    /// The text input line, while it is open.
    input: Option<InputLine>,
    /// Filter text per pane (index = PaneId::index).
    filters: [String; PaneId::COUNT],
    /// Per pane, the filter request whose result the view waits for (sent
    /// as an [`Effect::Filter`]); a result of any other generation is
    /// stale and dropped.
    filter_pending: [Option<FilterRequest>; PaneId::COUNT],
    filter_generation: u64,
    /// Every pane's state (the registry in `pane_id`).
    panes: Panes,
    /// Where the user was, newest last (`Back` returns to it).
    history: Vec<Nav>,
    /// The status line's message.
    status: String,
    /// Heaps of more objects than this run their jobs in the background
    /// ([`INLINE_JOB_LIMIT`]; tests lower it to see a job under way).
    inline_job_limit: usize,
}

impl App {
    /// An App before any analysis result, titled `name`, for a terminal of `size`.
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
                spilling: false,
            },
            job: None,
            pane: PaneId::ALL[0],
            inspector: None,
            paths: None,
            help: None,
            input: None,
            filters: Default::default(),
            filter_pending: Default::default(),
            filter_generation: 0,
            panes: Panes::default(),
            history: Vec::new(),
            status: String::new(),
            inline_job_limit: INLINE_JOB_LIMIT,
        }
    }

    /// The App, expecting a comparison with `baselines` older snapshots,
    /// read again from `sources` (the merged paths of a type per
    /// snapshot) when given.
    pub fn comparing(mut self, baselines: usize, sources: Option<BaselineSources>) -> App {
        self.loading = Loading::with_baselines(baselines);
        if let Some(sources) = sources {
            self.loading.set_baseline_sources(sources);
        }
        self
    }

    /// The App, its status line saying `status` (why it starts).
    pub fn with_status(mut self, status: impl Into<String>) -> App {
        self.status = status.into();
        self
    }

    /// Runs jobs inline only on heaps of at most `objects` objects (tests
    /// lower it to see a job under way); [`INLINE_JOB_LIMIT`] by default.
    #[cfg(feature = "testing")]
    pub fn set_inline_job_limit(&mut self, objects: usize) {
        self.inline_job_limit = objects;
    }

    /// The title: the dump's name (and how many older snapshots it is
    /// compared with).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Colours and glyphs.
    pub fn theme(&self) -> &Theme {
        &self.theme
    }

    /// The terminal's size.
    pub fn size(&self) -> Rect {
        self.size
    }

    /// How far the analysis got, with its results.
    pub fn loading(&self) -> &Loading {
        &self.loading
    }

    /// Whole-heap sums, computed once per dump.
    pub fn totals(&self) -> &Totals {
        &self.totals
    }

    /// The last sample of the analysis's progress.
    pub fn progress(&self) -> ProgressView {
        self.progress
    }

    /// The background job the status line shows, and how much of it is
    /// done (0..=1), while it runs.
    pub fn job(&self) -> Option<(&str, f64)> {
        self.job.as_ref().map(|j| (j.label.as_str(), j.fraction))
    }

    /// The pane shown (under the inspector or the merged paths when they
    /// are open).
    pub fn pane(&self) -> PaneId {
        self.pane
    }

    /// Every pane's state.
    pub fn panes(&self) -> &Panes {
        &self.panes
    }

    /// The object inspector, while it is open.
    pub fn inspector(&self) -> Option<&Inspector> {
        self.inspector.as_ref()
    }

    /// The merged paths to the roots, while they are shown.
    pub fn paths(&self) -> Option<&PathsView> {
        self.paths.as_ref()
    }

    /// The help overlay, while it is open.
    pub fn help(&self) -> Option<&Help> {
        self.help.as_ref()
    }

    /// The text input line, while it is open.
    pub fn input(&self) -> Option<&InputLine> {
        self.input.as_ref()
    }

    /// The filter text of pane `id`.
    pub fn filter(&self, id: PaneId) -> &str {
        &self.filters[id.index()]
    }

    /// How many steps `Back` can go (history entries kept).
    pub fn history_len(&self) -> usize {
        self.history.len()
    }

    /// The status line's message.
    pub fn status(&self) -> &str {
        &self.status
    }

    /// The whole-heap sums, to change (tests that show figures no small
    /// dump has).
    #[cfg(feature = "testing")]
    pub fn totals_mut(&mut self) -> &mut Totals {
        &mut self.totals
    }

    /// What pane `id`, or with `None` the focus (the inspector or the
    /// merged paths when open), answers to `cmd`, its answer not carried
    /// out: the pane changes, the router does not (tests of what a pane
    /// asks for).
    #[cfg(feature = "testing")]
    pub fn ask(&mut self, id: Option<PaneId>, cmd: Cmd) -> Vec<Intent> {
        match id {
            Some(id) => self.with_pane(id, |p, ctx| p.key(cmd, ctx)),
            None => self.with_focus(|p, ctx| p.key(cmd, ctx)),
        }
    }

    /// A type's statistics, once the dominators are known.
    pub fn type_stats(&self, type_index: TypeIdx) -> Option<&TypeStats> {
        self.loading.type_stats(type_index)
    }

    /// The heap graph, once built.
    pub fn graph(&self) -> Option<&Arc<HeapGraph>> {
        self.loading.graph()
    }

    /// The dominator tree, once computed.
    pub fn dom(&self) -> Option<&Arc<DominatorTree>> {
        self.loading.dom()
    }

    /// Every type's statistics, once the dominators are known.
    pub fn types(&self) -> Option<&Arc<Vec<TypeStats>>> {
        self.loading.types()
    }

    /// The duplicate sets, once detected.
    pub fn duplicates(&self) -> Option<&Arc<Duplicates>> {
        self.loading.duplicates()
    }

    /// What pane `id` reads besides its own state.
    pub fn ctx(&self, id: PaneId) -> Ctx<'_> {
        Ctx {
            name: &self.name,
            theme: &self.theme,
            loading: &self.loading,
            totals: &self.totals,
            body: layout(self.size).body,
            filter: &self.filters[id.index()],
            filtering: self.filter_pending[id.index()].is_some(),
        }
    }

    /// The state of pane `id`.
    pub fn pane_view(&self, id: PaneId) -> &dyn Pane {
        self.panes.get(id)
    }

    /// Runs `f` on pane `id` with its context (fields borrowed apart, so
    /// the pane may change while it reads the shared data).
    fn with_pane<R>(&mut self, id: PaneId, f: impl FnOnce(&mut dyn Pane, &Ctx) -> R) -> R {
        let App {
            name,
            theme,
            size,
            loading,
            totals,
            filters,
            filter_pending,
            panes,
            ..
        } = self;
        let ctx = Ctx {
            name,
            theme,
            loading,
            totals,
            body: layout(*size).body,
            filter: &filters[id.index()],
            filtering: filter_pending[id.index()].is_some(),
        };
        f(panes.get_mut(id), &ctx)
    }

    /// [`App::with_pane`] on the focus: the inspector when it is open,
    /// else the merged paths when they are shown.
    fn with_focus<R>(&mut self, f: impl FnOnce(&mut dyn Pane, &Ctx) -> R) -> R {
        if let Some(mut ins) = self.inspector.take() {
            let r = f(&mut ins, &self.ctx(self.pane));
            self.inspector = Some(ins);
            return r;
        }
        if let Some(mut paths) = self.paths.take() {
            let r = f(&mut paths, &self.ctx(self.pane));
            if self.paths.is_none() {
                self.paths = Some(paths);
            }
            return r;
        }
        self.with_pane(self.pane, f)
    }

    /// Whether an overlay (the inspector, the merged paths) covers the pane.
    pub fn overlaid(&self) -> bool {
        self.inspector.is_some() || self.paths.is_some()
    }

    /// The key mode of the current focus.
    pub fn mode(&self) -> Mode {
        if self.input.is_some() {
            Mode::Filter
        } else if self.inspector.is_some() {
            Mode::Inspector
        } else if self.paths.is_some() {
            Mode::Paths
        } else {
            self.panes.mode(self.pane)
        }
    }

    /// The footer label of a key in the focus's state (see
    /// [`Pane::key_label`]).
    pub fn key_label(&self, cmd: Cmd) -> Option<&'static str> {
        match (&self.inspector, &self.paths, self.input.is_some()) {
            (None, None, false) => self.pane_view(self.pane).key_label(cmd),
            (None, Some(p), false) => p.key_label(cmd),
            _ => None,
        }
    }

    /// Rows of a list in the pane body (inside borders, below the header).
    pub fn body_rows(&self) -> usize {
        layout(self.size).body.height.saturating_sub(3) as usize
    }

    /// Whether the focused pane waits for a filter result (the status line
    /// says "filtering…").
    pub fn filtering(&self) -> bool {
        self.filter_pending[self.pane.index()].is_some()
    }

    /// Whether the model still waits for the result of `request` (a newer
    /// filter or a cleared one supersedes it).
    pub fn awaits(&self, request: &FilterRequest) -> bool {
        self.filter_pending[request.pane.index()]
            .as_ref()
            .is_some_and(|r| r.generation == request.generation)
    }

    /// The filter requests whose results the panes wait for (at most one
    /// per pane): what the filter thread has yet to answer (tests answer
    /// them with `tui::run_jobs`).
    pub fn awaited_filters(&self) -> Vec<FilterRequest> {
        self.filter_pending.iter().flatten().cloned().collect()
    }

    /// Keeps every selection visible after a resize or a jump.
    fn fix_scroll(&mut self) {
        for id in PaneId::ALL {
            self.with_pane(id, |p, ctx| p.fit(ctx));
        }
        if let Some(mut ins) = self.inspector.take() {
            ins.fit(&self.ctx(self.pane));
            self.inspector = Some(ins);
        }
        if let Some(mut paths) = self.paths.take() {
            paths.fit(&self.ctx(self.pane));
            self.paths = Some(paths);
        }
    }

    // ----- intents ------------------------------------------------------

    /// Carries out what a pane asked for; `before` is where the user was
    /// before the key (for [`Intent::History`]).
    fn apply(&mut self, intents: Vec<Intent>, before: Nav) {
        let mut before = Some(before);
        for intent in intents {
            match intent {
                Intent::History => {
                    if let Some(nav) = before.take() {
                        self.push(nav);
                    }
                }
                Intent::Jump(jump) => self.jump(jump),
                Intent::Inspect(o) => self.inspect(o),
                Intent::Request { job, label } => self.request(job, &label),
                Intent::Status(s) => self.status = s,
                Intent::Refilter => self.apply_filter(self.pane),
                Intent::EditExclude { text, prompt } => {
                    self.input = Some(InputLine {
                        purpose: InputPurpose::Exclude(prompt),
                        text,
                    })
                }
            }
        }
    }

    /// A key for the focused pane (or the inspector).
    fn route_to_focus(&mut self, cmd: Cmd) {
        let before = self.nav();
        let intents = self.with_focus(|p, ctx| p.key(cmd, ctx));
        self.apply(intents, before);
    }

    fn step(&mut self, delta: isize) {
        let before = self.nav();
        let intents = self.with_focus(|p, ctx| p.step(delta, ctx));
        self.apply(intents, before);
    }

    /// Runs a job inline on small heaps, else asks the loop to start it in
    /// the background (precise retained sizes, what-ifs and merged paths
    /// that read the older snapshots again always go there).
    fn request(&mut self, job: Job, label: &str) {
        let (Some(graph), Some(dom)) = (self.loading.graph().cloned(), self.loading.dom().cloned())
        else {
            return;
        };
        if let Some(ins) = &mut self.inspector {
            ins.requested(&job);
        }
        // Reading the older snapshots again is never inline: their size is
        // not the opened one's.
        let background = matches!(
            job,
            Job::Precise { .. }
                | Job::WhatIf { .. }
                | Job::MergedPaths {
                    baselines: Some(_),
                    ..
                }
        ) || graph.objects() > self.inline_job_limit;
        if background {
            // A detection for one type (`D`) lands as a new duplicates
            // stage, not as a job result.
            let lands_as =
                matches!(job, Job::DetectDuplicates { .. }).then_some(Arrived::Duplicates);
            self.job = Some(Running {
                label: label.to_string(),
                fraction: 0.0,
                lands_as,
            });
            self.outbox.push(Effect::StartJob(job));
        } else if let Some(msg) =
            run_job(job, &graph, &dom, &heaptui_core::progress::Progress::new())
        {
            self.on_worker(msg);
        }
    }

    // ----- keys -----------------------------------------------------------

    fn command(&mut self, cmd: Cmd) -> Option<Effect> {
        let h = self.body_rows() as isize;
        match cmd {
            Cmd::Quit => return Some(Effect::Quit),
            Cmd::Help => self.help = Some(Help::new()),
            Cmd::NextPane => self.switch(PaneId::ALL[(self.pane.index() + 1) % PaneId::COUNT]),
            Cmd::PrevPane => {
                self.switch(PaneId::ALL[(self.pane.index() + PaneId::COUNT - 1) % PaneId::COUNT])
            }
            Cmd::Pane(p) => self.switch(p),
            Cmd::OpenFilter => self.open_filter(),
            Cmd::Inspect => match self.with_focus(|p, ctx| p.selected_object(ctx)) {
                Some(o) => self.inspect(o),
                None => self.status = "nothing to inspect here".into(),
            },
            Cmd::ToggleReferences => {
                match self.loading.graph().map(|g| g.dump.referents.is_some()) {
                    Some(true) => return Some(Effect::ToggleReferences),
                    Some(false) => self.status = "R: only Java heaps have reference objects".into(),
                    None => self.status = "R: wait for the dump to be read".into(),
                }
            }
            Cmd::FullName => {
                self.status = self
                    .with_focus(|p, ctx| p.full_name(ctx))
                    .unwrap_or_else(|| "no row with a type is selected".into());
            }
            Cmd::Escape => {
                let i = self.pane.index();
                if !self.overlaid() && !self.filters[i].is_empty() {
                    self.filters[i].clear();
                    self.apply_filter(self.pane);
                } else {
                    return self.command(Cmd::Back);
                }
            }
            Cmd::Back => self.back(),
            Cmd::Up => self.step(-1),
            Cmd::Down => self.step(1),
            Cmd::PageUp => self.step(-h),
            Cmd::PageDown => self.step(h),
            Cmd::Top => self.step(isize::MIN / 2),
            Cmd::Bottom => self.step(isize::MAX / 2),
            Cmd::Accept | Cmd::Clear | Cmd::DeleteChar => {}

            // Open, expand and the panes' own keys.
            pane_cmd => self.route_to_focus(pane_cmd),
        }
        None
    }

    /// `/`: the input line on the pane's filter (closing the inspector),
    /// where the pane takes one.
    fn open_filter(&mut self) {
        if self.paths.is_some() && self.inspector.is_none() {
            self.status =
                "the filter narrows the list panes (2-5); Backspace leaves the paths".into();
        } else if !self.pane_view(self.pane).filterable() && self.inspector.is_none() {
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

    /// Backspace: inside the pane first (closing a split), then the
    /// history, then the overlays.
    fn back(&mut self) {
        if !self.overlaid() && self.with_pane(self.pane, |p, _| p.back()) {
            // Taken inside the pane.
        } else if let Some(nav) = self.history.pop() {
            self.restore(nav);
        } else if self.inspector.is_some() {
            self.inspector = None;
        } else if self.paths.is_some() {
            self.paths = None;
        } else {
            self.status = "at the start of the history".into();
        }
    }

    /// A key in the input line (filter or exclude pattern).
    fn input_key(&mut self, key: Key) {
        let Some(mut line) = self.input.take() else {
            return;
        };
        let mut keep_open = true;
        match (keys::lookup(Mode::Filter, key), key) {
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
        match line.purpose {
            InputPurpose::Filter => {
                // Live: every change of the text asks for a new result.
                let i = self.pane.index();
                if self.filters[i] != line.text {
                    self.filters[i] = line.text.clone();
                    self.apply_filter(self.pane);
                }
            }
            InputPurpose::Exclude(_) if !keep_open => {
                let before = self.nav();
                let text = line.text.clone();
                let intents = self.with_pane(self.pane, |p, ctx| p.edited(text, ctx));
                self.apply(intents, before);
                self.fix_scroll();
            }
            InputPurpose::Exclude(_) => {}
        }
        if keep_open {
            self.input = Some(line);
        }
    }

    fn mouse(&mut self, m: MouseEvent) {
        let areas = layout(self.size);
        match m.kind {
            MouseEventKind::ScrollDown => self.step(3),
            MouseEventKind::ScrollUp => self.step(-3),
            MouseEventKind::Down(MouseButton::Left) => {
                if m.row == areas.tabs.y {
                    if let Some(p) = tab_at(
                        m.column,
                        self.size.width,
                        (!self.overlaid()).then_some(self.pane),
                    ) {
                        self.switch(p);
                    }
                    return;
                }
                let geometry = match (&self.inspector, &self.paths) {
                    (Some(ins), _) => ins.click_geometry(),
                    (None, Some(p)) => p.click_geometry(),
                    (None, None) => self.pane_view(self.pane).click_geometry(),
                };
                let Some((sel, off, top)) = geometry else {
                    return;
                };
                let body = areas.body;
                if top > 0 && m.row + 1 == body.y + top && m.column > body.x {
                    // The list's header: sort by the clicked column.
                    let x = (m.column - body.x - 1) as usize;
                    let before = self.nav();
                    let intents = self.with_focus(|p, ctx| p.click_header(x, ctx));
                    self.apply(intents, before);
                    return;
                }
                if m.row < body.y + top || m.row >= body.y + body.height.saturating_sub(1) {
                    return;
                }
                // Translate to a step from the current selection.
                let target = off + (m.row - body.y - top) as usize;
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

/// A key: to the help while it is open, to the input line while it is
/// open, else through the key table to the router.
fn key(app: &mut App, ev: KeyEvent) -> Option<Effect> {
    if ev.kind != KeyEventKind::Press {
        return None;
    }
    let key = Key::of(&ev);
    // Raw mode makes Ctrl-Z a key: it suspends as in a shell.
    if key == Key::Ctrl('z') {
        return Some(Effect::Suspend);
    }
    app.status.clear();
    if let Some(help) = &mut app.help {
        match help.key(key, &app.theme, app.size) {
            HelpKey::Open => {}
            HelpKey::Close => app.help = None,
            HelpKey::Quit => return Some(Effect::Quit),
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
    keys::lookup(app.mode(), key).and_then(|cmd| app.command(cmd))
}

fn handle(app: &mut App, action: Action) -> Option<Effect> {
    match action {
        Action::Key(ev) => key(app, ev),
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
                j.fraction = f;
            }
            None
        }
        Action::Tick => {
            let mut ticked = Ticked::default();
            for id in PaneId::ALL {
                ticked = ticked.or(app.panes.get_mut(id).tick());
            }
            if ticked.changed {
                app.fix_scroll();
            }
            ticked.busy.then_some(Effect::Redraw)
        }
        Action::Settle => {
            for id in PaneId::ALL {
                app.panes.get_mut(id).settle();
            }
            None
        }
        Action::Signal(sig) => Some(match super::signals::Asked::of(sig) {
            super::signals::Asked::Suspend => Effect::Suspend,
            super::signals::Asked::Resume => Effect::Resume,
            super::signals::Asked::End => Effect::Signalled(sig),
        }),
    }
}
