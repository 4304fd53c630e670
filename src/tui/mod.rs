//! The terminal UI (SPEC §3). Elm-shaped: [`app::App`] is the model,
//! [`app::Action`] every input, [`app::update`] the only place the model
//! changes (no I/O), [`ui::draw`] a pure view. This module owns the I/O:
//! the terminal, the input thread, the analysis worker, and the loop that
//! feeds them into `update` and paces redraws.

pub mod app;
pub mod filtering;
pub mod fmt;
pub mod keys;
pub mod layout;
pub mod loading;
pub mod matcher;
pub mod panes;
pub mod signals;
pub mod theme;
pub mod ui;
pub mod worker;

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, select, tick};
use crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event};
use ratatui::layout::Rect;

use crate::graph::duplicates::DuplicateOptions;
use crate::import::source::TERMINAL_IN_USE;
use crate::progress::Progress;
use app::{update, Action, App, Effect, PaneId, ProgressView};
use filtering::FilterThread;
use loading::Failure;
use signals::Exit;
use theme::Theme;
use worker::{Input, Msg};

/// The built-in sample heap of `heaptui --demo` (see fixtures/demo.gen.py).
pub const DEMO_DUMP: &str = include_str!("../../fixtures/demo.dump.txt");
pub const DEMO_NAME: &str = "demo.dump.txt";

/// What the UI was asked to open.
#[derive(Debug, Clone)]
pub struct Options {
    pub dump: Option<PathBuf>,
    pub demo: bool,
    pub ascii: bool,
    pub duplicates: DuplicateOptions,
}

/// Redraws caused by progress or data arrive at most this often; keys and
/// mouse redraw at once.
const FRAME_INTERVAL: Duration = Duration::from_millis(80);

/// Gives the terminal back however the UI ends (return, `?`, panic unwind).
struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let _ = crossterm::execute!(std::io::stdout(), DisableMouseCapture);
        ratatui::restore();
        TERMINAL_IN_USE.store(false, Ordering::Relaxed);
    }
}

/// An optional timing log (`HEAPTUI_UI_TRACE=file`): first frame and per-key
/// latencies, for the README's measurements.
struct Trace(Option<std::fs::File>);

impl Trace {
    fn open() -> Trace {
        Trace(std::env::var_os("HEAPTUI_UI_TRACE").and_then(|p| std::fs::File::create(p).ok()))
    }
    fn on(&self) -> bool {
        self.0.is_some()
    }
    fn log(&mut self, what: &str, d: Duration) {
        if let Some(f) = &mut self.0 {
            let _ = writeln!(f, "{what} {:.2}", d.as_secs_f64() * 1000.0);
        }
    }
}

/// Runs the UI until the user quits; returns the exit code: 0, 2 for a
/// dump that cannot be used, 101 when a background stage panicked,
/// 128 + n after SIGINT, SIGTERM or SIGHUP (other caught signals are
/// raised again once the terminal is restored).
pub fn run(options: Options) -> color_eyre::Result<u8> {
    let (exit, note) = run_ui(options)?;
    // The terminal is ours again: what the screen said goes to stderr too.
    if let Some(note) = note {
        eprintln!("heaptui: {note}");
    }
    Ok(exit.finish())
}

fn run_ui(options: Options) -> color_eyre::Result<(Exit, Option<String>)> {
    let launched = Instant::now();
    let mut trace = Trace::open();
    let (input, name) = match (&options.dump, options.demo) {
        (Some(p), _) => (Input::File(p.clone()), p.display().to_string()),
        (None, _) => (
            Input::Bytes(DEMO_NAME, DEMO_DUMP.as_bytes()),
            format!("{DEMO_NAME} (built-in demo)"),
        ),
    };
    // Paths that cannot be a dump fail before the screen changes (a stat,
    // not a read); what is wrong inside a file shows in the UI.
    if let Input::File(path) = &input {
        let problem = match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => Some("is a directory, not a heap dump file".to_string()),
            Ok(_) => std::fs::File::open(path).err().map(|e| e.to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some("no such file".into()),
            Err(e) => Some(e.to_string()),
        };
        if let Some(p) = problem {
            eprintln!("heaptui: {}: {p}", path.display());
            return Ok((Exit::Code(2), None));
        }
    }
    let theme = Theme::from_env(options.ascii);
    // Raw mode turns Ctrl-C into a key; a signal from elsewhere (kill, a
    // dropped SSH session) ends the loop, so the guard restores the screen.
    let (sig_tx, sig_rx) = bounded::<i32>(8);
    signals::forward(move |s| sig_tx.send(s).is_ok())?;

    // The cooked mode, for the SIGBUS handler to restore (it cannot use
    // crossterm's copy); saved before raw mode, and before any file is
    // mapped.
    crate::import::source::save_terminal_mode();
    // The first frame is drawn before the file is even opened.
    let mut terminal = ratatui::init();
    signals::install_panic_hook();
    TERMINAL_IN_USE.store(true, Ordering::Relaxed);
    let _guard = TerminalGuard;
    let _ = crossterm::execute!(std::io::stdout(), EnableMouseCapture);
    let size = terminal.size()?;
    let mut app = App::new(name, theme, Rect::new(0, 0, size.width, size.height));
    terminal.draw(|f| ui::draw(&app, f))?;
    trace.log("first_frame_ms", launched.elapsed());

    let progress = Arc::new(Progress::new());
    let (work_tx, work_rx) = bounded::<Msg>(16);
    worker::spawn(
        input,
        options.duplicates.clone(),
        progress.clone(),
        work_tx.clone(),
    )?;

    let filters = FilterThread::spawn(work_tx.clone())?;
    // For the timing log: per pane, the filter generation last sent and when.
    let mut filter_sent: [Option<(u64, Instant)>; 5] = [None; 5];

    let (key_tx, key_rx) = bounded::<Event>(256);
    std::thread::Builder::new()
        .name("heaptui-input".into())
        .spawn(move || {
            while let Ok(ev) = event::read() {
                if key_tx.send(ev).is_err() {
                    break;
                }
            }
        })?;

    let ticker = tick(Duration::from_millis(40));
    let mut job_progress: Option<Arc<Progress>> = None;
    let mut last_draw = Instant::now();
    let mut dirty = false;
    let exit = loop {
        let mut effects = Vec::new();
        let mut urgent = false;
        let mut key_at = None;
        let mut filter_done = None;
        select! {
            recv(sig_rx) -> sig => {
                if let Ok(sig) = sig {
                    progress.cancel();
                    break Exit::of_signal(sig);
                }
            }
            recv(key_rx) -> ev => {
                let Ok(ev) = ev else { break Exit::Code(0) };
                key_at = Some(Instant::now());
                urgent = true;
                // Coalesce what is already queued (wheel bursts, pastes).
                let mut batch = vec![ev];
                while let Ok(more) = key_rx.try_recv() {
                    batch.push(more);
                }
                for ev in batch {
                    let action = match ev {
                        Event::Key(k) => Action::Key(k),
                        Event::Mouse(m) => Action::Mouse(m),
                        Event::Resize(w, h) => Action::Resize(w, h),
                        _ => continue,
                    };
                    effects.extend(update(&mut app, action));
                }
            }
            recv(work_rx) -> msg => {
                if let Ok(msg) = msg {
                    // A filter result answers a key: it is drawn at once
                    // (one per key at most, superseded ones never come).
                    if let Msg::Filtered(f) = &msg {
                        urgent = true;
                        let i = f.pane.index();
                        if let Some((g, at)) = filter_sent[i] {
                            if g == f.generation && trace.on() {
                                filter_done = Some((i, at));
                            }
                        }
                    }
                    effects.extend(update(&mut app, Action::Worker(msg)));
                    dirty = true;
                }
            }
            recv(ticker) -> _ => {
                let view = ProgressView {
                    stage: progress.stage(),
                    fraction: progress.fraction(),
                    elapsed_ms: launched.elapsed().as_millis() as u64,
                };
                if let Some(p) = signals::take_background_panic() {
                    update(&mut app, Action::Worker(Msg::Panicked(p)));
                    dirty = true;
                }
                if view != app.progress && !app.loading.ready() {
                    dirty = true;
                }
                update(&mut app, Action::Progress(view));
                if let Some(p) = &job_progress {
                    update(&mut app, Action::JobProgress(p.fraction()));
                    dirty = true;
                }
                if app.job.is_none() {
                    job_progress = None;
                }
                update(&mut app, Action::Tick);
                if app.matcher.running || app.matcher.notified.swap(false, Ordering::Relaxed) {
                    dirty = true;
                }
            }
        }
        if effects.contains(&Effect::Quit) {
            // Do not wait for the worker: it polls the flag and the
            // process ends with us anyway.
            progress.cancel();
            if let Some(p) = &job_progress {
                p.cancel();
            }
            break match app.loading.failure() {
                // A dump that could not be used is exit code 2, as in `report`.
                Some(Failure::Input(_)) => Exit::Code(2),
                Some(Failure::Panic(_)) => Exit::Code(101),
                None => Exit::Code(0),
            };
        }
        for job in std::mem::take(&mut app.jobs) {
            if let (Some(g), Some(d)) = (app.graph().cloned(), app.dom().cloned()) {
                let p = Arc::new(Progress::new());
                job_progress = Some(p.clone());
                worker::spawn_job(job, g, d, p, work_tx.clone())?;
            }
        }
        for req in std::mem::take(&mut app.filter_requests) {
            filter_sent[req.pane.index()] = Some((req.generation, Instant::now()));
            filters.send(req);
        }
        if urgent {
            update(&mut app, Action::Tick);
        }
        if urgent || (dirty && last_draw.elapsed() >= FRAME_INTERVAL) {
            terminal.draw(|f| ui::draw(&app, f))?;
            last_draw = Instant::now();
            dirty = false;
            if let Some(t) = key_at {
                trace.log("key_ms", t.elapsed());
            }
            if let Some((i, t)) = filter_done {
                trace.log(
                    &format!("filter_{}_ms", PaneId::ALL[i].title()),
                    t.elapsed(),
                );
            }
        }
    };
    progress.cancel();
    let note = match app.loading.failure() {
        Some(Failure::Panic(m)) => Some(format!("the analysis failed (internal error): {m}")),
        _ => None,
    };
    Ok((exit, note))
}

/// An App with the demo heap loaded synchronously (tests, the tape replay):
/// stage times are zero so frames are deterministic.
pub fn demo_app(width: u16, height: u16, theme: Theme) -> App {
    loaded_app(DEMO_NAME, DEMO_DUMP.as_bytes(), width, height, theme)
}

/// An App with the dump text `bytes` (named `name`) analysed synchronously,
/// stage times zero, background jobs run: what the screen shows once the
/// analysis is done (tests).
pub fn loaded_app(
    name: &'static str,
    bytes: &'static [u8],
    width: u16,
    height: u16,
    theme: Theme,
) -> App {
    let mut app = App::new(name.into(), theme, Rect::new(0, 0, width, height));
    let input = Input::Bytes(name, bytes);
    let mut msgs = Vec::new();
    worker::analyse(
        &input,
        &DuplicateOptions::default(),
        &Progress::new(),
        &mut |m| {
            msgs.push(m);
            true
        },
    );
    for mut m in msgs {
        match &mut m {
            Msg::Parsed { ms }
            | Msg::Graph { ms, .. }
            | Msg::Dominators { ms, .. }
            | Msg::Duplicates { ms, .. } => *ms = 0,
            _ => {}
        }
        update(&mut app, Action::Worker(m));
    }
    run_jobs(&mut app);
    app.matcher.settle();
    app
}

/// Runs queued background jobs and filter requests synchronously, which
/// drains what the worker threads would do (tests; the real loop hands them
/// to threads instead).
pub fn run_jobs(app: &mut App) {
    for job in std::mem::take(&mut app.jobs) {
        if let (Some(g), Some(d)) = (app.graph().cloned(), app.dom().cloned()) {
            if let Some(m) = worker::run_job(job, &g, &d, &Progress::new()) {
                update(app, Action::Worker(m));
            }
        }
    }
    for req in std::mem::take(&mut app.filter_requests) {
        if let Some(f) = filtering::compute(req, &|| false) {
            update(app, Action::Worker(Msg::Filtered(f)));
        }
    }
}

/// Feeds a key, runs what it queued and lets the fuzzy matcher finish
/// (tests; the real loop ticks per frame instead).
pub fn press(app: &mut App, key: crossterm::event::KeyEvent) -> Option<Effect> {
    let e = update(app, Action::Key(key));
    run_jobs(app);
    app.matcher.settle();
    update(app, Action::Tick);
    e
}
