//! The thin event loop, generic over ratatui's [`Backend`] and fed by one
//! [`Receiver`] of input events (keys, mouse, resize, signals): it hands
//! every event to the pure [`update`], carries out the [`Effect`]s it
//! returns (jobs into their slots, filter requests to the filter thread,
//! redraws, quitting), samples progress and paces redraws; it never reaches
//! into the model. [`Runtime::settled`] runs
//! the same loop with the work done inline, one event at a time, for the
//! journeys and the demo tape (a finite channel, no sleeps). Owns no
//! terminal setup (see `tui::run`); imports `app` and the job plumbing.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{never, select, tick, Receiver};
use ratatui::backend::Backend;
use ratatui::Terminal;

use super::app::{update, Action, App, Effect, PaneId, ProgressView};
use super::filtering::{self, FilterRequest, FilterThread};
use super::jobs::JobThreads;
use super::loading::Failure;
use super::msg::Msg;
use super::signals::{self, Exit};
use super::ui;
use super::worker::run_job;
use heaptui_core::progress::Progress;

/// Redraws caused by progress or data arrive at most this often; keys and
/// mouse redraw at once.
const FRAME_INTERVAL: Duration = Duration::from_millis(80);

/// How often progress is sampled and the fuzzy matcher advanced.
const TICK: Duration = Duration::from_millis(40);

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Quit (a key or a signal), with the exit the process should make.
    Quit(Exit),
    /// The input channel closed (end of a test's key stream, or of stdin).
    InputClosed,
    /// The user asked for the analysis again with the other
    /// `--references` mode.
    ToggleReferences,
}

/// A latency of the UI in milliseconds, as a `tracing` event of target
/// `heaptui::ui` in the log `HEAPTUI_LOG` names (`heaptui_core::log`):
/// the first frame, each key until its frame is drawn, each filter until
/// its result is.
pub fn log_latency(what: &str, d: Duration) {
    let ms = d.as_secs_f64() * 1000.0;
    tracing::debug!(target: "heaptui::ui", what, ms = %format_args!("{ms:.2}"));
}

/// Whether [`log_latency`]'s events are recorded.
fn latencies_logged() -> bool {
    tracing::enabled!(target: "heaptui::ui", tracing::Level::DEBUG)
}

/// Where the loop's work goes: threads (live) or inline (settled).
pub struct Runtime {
    settled: bool,
    /// The analysis worker's progress (cancelled on quit).
    analysis: Option<Arc<Progress>>,
    /// Results of the analysis worker and the filter thread.
    results: Receiver<Msg>,
    filters: Option<FilterThread>,
    jobs: JobThreads,
    /// The progress of the job the status line shows.
    job_progress: Option<Arc<Progress>>,
    ticker: Receiver<Instant>,
    launched: Instant,
    /// For the timing log: per pane, the filter generation last sent and when.
    filter_sent: [Option<(u64, Instant)>; PaneId::COUNT],
    /// The screen must be cleared and drawn whole (after a suspend).
    redraw_all: bool,
}

impl Runtime {
    /// The terminal's runtime: work on threads, results through `results`.
    pub fn live(
        analysis: Arc<Progress>,
        results: Receiver<Msg>,
        filters: FilterThread,
        launched: Instant,
    ) -> Runtime {
        Runtime {
            settled: false,
            analysis: Some(analysis),
            results,
            filters: Some(filters),
            jobs: JobThreads::default(),
            job_progress: None,
            ticker: tick(TICK),
            launched,
            filter_sent: [None; PaneId::COUNT],
            redraw_all: false,
        }
    }

    /// Every job and filter runs inline and the matcher settles after each
    /// event, so a finite event stream gives the same frames every time.
    pub fn settled() -> Runtime {
        Runtime {
            settled: true,
            analysis: None,
            results: never(),
            filters: None,
            jobs: JobThreads::default(),
            job_progress: None,
            ticker: never(),
            launched: Instant::now(),
            filter_sent: [None; PaneId::COUNT],
            redraw_all: false,
        }
    }

    fn cancel_all(&mut self) {
        if let Some(p) = &self.analysis {
            p.cancel();
        }
        self.jobs.cancel_all();
    }
}

/// The exit a quit makes: a dump that could not be used is 2, as in
/// `report`; a panicked stage 101.
fn exit_of(app: &App) -> Exit {
    match app.loading().failure() {
        Some(Failure::Input(_)) => Exit::Code(2),
        Some(Failure::Panic(_)) => Exit::Code(101),
        None => Exit::Code(0),
    }
}

/// Runs until a quit or the end of `events`, drawing on `terminal`.
pub fn run<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    events: &Receiver<Action>,
    rt: &mut Runtime,
) -> std::io::Result<Ended> {
    let results = rt.results.clone();
    let job_results = rt.jobs.results().clone();
    let ticker = rt.ticker.clone();
    let mut last_draw = Instant::now();
    let mut dirty = false;
    let ended = loop {
        let mut turn = Turn::default();
        select! {
            recv(events) -> ev => {
                let Ok(ev) = ev else { break Ended::InputClosed };
                on_input(app, rt, events, ev, &mut turn);
            }
            recv(results) -> msg => {
                if let Ok(msg) = msg {
                    on_result(app, rt, msg, &mut turn);
                    dirty = true;
                }
            }
            recv(job_results) -> done => {
                if let Ok((ticket, msg)) = done {
                    if let Some(msg) = rt.jobs.accept(ticket, msg) {
                        turn.effects.extend(update(app, Action::Worker(msg)));
                        dirty = true;
                    }
                }
            }
            recv(ticker) -> _ => {
                dirty |= sample(app, rt, &mut turn.effects);
            }
        }
        if let Some(end) = carry_out(app, rt, std::mem::take(&mut turn.effects))? {
            rt.cancel_all();
            break end;
        }
        if rt.settled {
            update(app, Action::Settle);
        }
        if std::mem::take(&mut rt.redraw_all) {
            terminal.clear()?;
            turn.urgent = true;
        }
        if turn.urgent {
            update(app, Action::Tick);
        }
        if turn.urgent || (dirty && last_draw.elapsed() >= FRAME_INTERVAL) {
            terminal.draw(|f| ui::draw(app, f))?;
            last_draw = Instant::now();
            dirty = false;
            log_latencies(&turn);
        }
    };
    Ok(ended)
}

/// What one turn of the loop gathered.
#[derive(Default)]
struct Turn {
    effects: Vec<Effect>,
    /// Drawn at once (an input, or a filter result that answers one).
    urgent: bool,
    /// When the input came (for the timing log).
    key_at: Option<Instant>,
    /// The awaited filter result of a pane, and when it was asked for.
    filter_done: Option<(usize, Instant)>,
}

/// An input, and (live) the ones already queued behind it.
fn on_input(app: &mut App, rt: &Runtime, events: &Receiver<Action>, ev: Action, turn: &mut Turn) {
    turn.key_at = Some(Instant::now());
    turn.urgent = true;
    turn.effects.extend(update(app, ev));
    // Coalesce what is already queued (wheel bursts, pastes); a settled
    // run takes one event per turn.
    if !rt.settled {
        while let Ok(more) = events.try_recv() {
            turn.effects.extend(update(app, more));
        }
    }
}

/// A result of the analysis worker or the filter thread.
fn on_result(app: &mut App, rt: &Runtime, msg: Msg, turn: &mut Turn) {
    // A filter result answers a key: it is drawn at once (one per key at
    // most, superseded ones never come).
    if let Msg::Filtered(f) = &msg {
        turn.urgent = true;
        let i = f.pane.index();
        if let Some((g, at)) = rt.filter_sent[i] {
            if g == f.generation && latencies_logged() {
                turn.filter_done = Some((i, at));
            }
        }
    }
    turn.effects.extend(update(app, Action::Worker(msg)));
}

/// The timing log's lines for a drawn turn.
fn log_latencies(turn: &Turn) {
    if let Some(t) = turn.key_at {
        log_latency("key", t.elapsed());
    }
    if let Some((i, t)) = turn.filter_done {
        log_latency(&format!("filter {}", PaneId::ALL[i].title()), t.elapsed());
    }
}

/// One tick: progress of the analysis and of the shown job, a panic of a
/// background thread, the fuzzy matcher. True when the frame changed.
fn sample(app: &mut App, rt: &mut Runtime, effects: &mut Vec<Effect>) -> bool {
    let mut dirty = false;
    if let Some(p) = signals::take_background_panic() {
        effects.extend(update(app, Action::Worker(Msg::Panicked(p))));
        dirty = true;
    }
    if let Some(progress) = &rt.analysis {
        let view = ProgressView {
            stage: progress.stage(),
            fraction: progress.fraction(),
            elapsed_ms: rt.launched.elapsed().as_millis() as u64,
            spilling: progress.is_spilling(),
        };
        if view != app.progress() && (!app.loading().ready() || app.loading().comparison_pending())
        {
            dirty = true;
        }
        update(app, Action::Progress(view));
    }
    if let Some(p) = &rt.job_progress {
        update(app, Action::JobProgress(p.fraction()));
        dirty = true;
    }
    if app.job().is_none() {
        rt.job_progress = None;
    }
    for effect in update(app, Action::Tick) {
        match effect {
            Effect::Redraw => dirty = true,
            other => effects.push(other),
        }
    }
    dirty
}

/// Hands a filter request to the filter thread, or, settled, computes it
/// and delivers its result (returning the effects of that); a request the
/// model no longer awaits is dropped.
fn send_filter(app: &mut App, rt: &mut Runtime, req: Box<FilterRequest>) -> Vec<Effect> {
    if !app.awaits(&req) {
        return Vec::new();
    }
    if rt.settled {
        if let Some(f) = filtering::compute(*req, &|| false) {
            return update(app, Action::Worker(Msg::Filtered(f)));
        }
    } else if let Some(filters) = &rt.filters {
        rt.filter_sent[req.pane.index()] = Some((req.generation, Instant::now()));
        filters.send(*req);
    }
    Vec::new()
}

/// Carries out effects (and, settled, the effects of their results).
/// Returns how the loop ends, if it does.
fn carry_out(
    app: &mut App,
    rt: &mut Runtime,
    effects: Vec<Effect>,
) -> std::io::Result<Option<Ended>> {
    let mut queue: VecDeque<Effect> = effects.into();
    // Filter requests go after the other effects and their results, as
    // the newest of a burst of keys (older ones are no longer awaited).
    let mut filters = Vec::new();
    loop {
        let Some(effect) = queue.pop_front() else {
            if filters.is_empty() {
                break;
            }
            for req in std::mem::take(&mut filters) {
                queue.extend(send_filter(app, rt, req));
            }
            continue;
        };
        match effect {
            Effect::Redraw => {}
            Effect::Filter(req) => filters.push(req),
            Effect::Quit => return Ok(Some(Ended::Quit(exit_of(app)))),
            Effect::ToggleReferences => return Ok(Some(Ended::ToggleReferences)),
            Effect::Signalled(sig) => return Ok(Some(Ended::Quit(Exit::of_signal(sig)))),
            Effect::Suspend | Effect::Resume => {
                if !rt.settled {
                    match effect {
                        Effect::Suspend => signals::suspend(),
                        _ => signals::take_terminal(),
                    }
                }
                rt.redraw_all = true;
            }
            Effect::StartJob(job) => {
                let (Some(graph), Some(dom)) = (app.graph().cloned(), app.dom().cloned()) else {
                    continue;
                };
                if rt.settled {
                    if let Some(msg) = run_job(job, &graph, &dom, &Progress::new()) {
                        queue.extend(update(app, Action::Worker(msg)));
                    }
                } else {
                    rt.job_progress = Some(rt.jobs.start(job, graph, dom)?);
                }
            }
        }
    }
    Ok(None)
}
