//! heaptui's terminal UI (docs/ui.md), over `heaptui-core`: [`run`] opens
//! the dump an [`Options`] names and shows it until the user quits. The
//! `testing` feature adds the `testing` module, the harness the tests drive
//! the UI with (heaptui-testkit turns it on; the binary never has it).
//!
//! The UI itself: Elm-shaped: [`app::App`] is the model,
//! [`app::Action`] every input, [`app::update`] the only place the model
//! changes (no I/O; it returns [`app::Effect`]s: quit, jobs, filter
//! computations, redraws), [`ui::draw`] a pure view. [`event_loop::run`] is
//! the one loop (generic over the backend and fed by a channel) that
//! carries out the effects; this module owns the rest of the I/O: the
//! terminal and its guard, the input and signal threads, the analysis
//! worker, and the test harness (`testing::drive`, `testing::loaded_app`, …, with
//! the `testing` feature).
//!
//! Each pane is a component ([`panes::Pane`]): its state (private), keys,
//! drawing, history place, arrivals and jumps; the router ([`app`]) names
//! no pane's internals, and the help overlay is one too ([`help`]).
//!
//! Layers, each importing only those below it (checked by the test in
//! `layering.rs`), top first:
//! - `event_loop` (the loop), then `ui` (the view), then `app` (the router);
//! - `panes` (the components);
//! - `jobs` (job threads), then `worker`, `filtering`, `loading` (the
//!   analysis thread, the filter thread, what arrived);
//! - `msg` (what the threads send);
//! - `compared` (comparison figures) and `help` (the overlay);
//! - `fmt`, `layout`, `keys` (text, the frame, the one key table);
//! - leaves: `pane_id` (the pane registry), `theme`, `signals`, `matcher`,
//!   `instance_rows`.

#![deny(missing_docs)]

pub mod app;
pub(crate) mod compared;
pub mod event_loop;
pub mod filtering;
pub mod fmt;
pub mod help;
pub(crate) mod instance_rows;
pub mod jobs;
pub mod keys;
#[cfg(test)]
mod layering;
pub mod layout;
pub mod loading;
pub mod matcher;
pub(crate) mod msg;
pub mod pane_id;
pub mod panes;
pub(crate) mod signals;
pub mod theme;
pub mod ui;
pub mod worker;

#[cfg(feature = "testing")]
pub mod testing;

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::bounded;
use crossterm::event::{self, DisableMouseCapture, EnableMouseCapture, Event};
use ratatui::layout::Rect;

use app::{Action, App};
use event_loop::Ended;
use filtering::FilterThread;
use heaptui_core::graph::duplicates::DuplicateOptions;
use heaptui_core::mem::TERMINAL_IN_USE;
use heaptui_core::progress::Progress;
use loading::Failure;
use msg::Msg;
use signals::Exit;
use theme::Theme;
use worker::Input;

pub use heaptui_core::demo::{DEMO_DUMP, DEMO_NAME, DEMO_SERIES};

/// What the UI was asked to open.
#[derive(Debug, Clone)]
pub struct Options {
    /// The dump to open; `None` for a built-in demo.
    pub dump: Option<PathBuf>,
    /// Older snapshots of the same program, oldest first: the comparison's
    /// baselines.
    pub baselines: Vec<PathBuf>,
    /// Open the built-in demo heap.
    pub demo: bool,
    /// Open the built-in demo series (the newest, compared with the others).
    pub demo_compare: bool,
    /// ASCII glyphs only (`--ascii`).
    pub ascii: bool,
    /// How duplicates are detected (`--duplicates`).
    pub duplicates: DuplicateOptions,
    /// How the dump files are read (`--compressed-refs`).
    pub import: heaptui_core::import::ImportOptions,
    /// The reopen cache; `None` with `--no-cache`.
    pub cache: Option<heaptui_core::cache::CacheOptions>,
}

/// Gives the terminal back however the UI ends (return, `?`, panic unwind).
struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let _ = crossterm::execute!(std::io::stdout(), DisableMouseCapture);
        ratatui::restore();
        TERMINAL_IN_USE.store(false, Ordering::Relaxed);
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
    // The paths were checked by the caller (the binary runs
    // `import::source::check_file` on each); what goes wrong from here on
    // shows in the UI.
    let (input, baselines, name) = inputs(&options);
    let theme = Theme::from_env(options.ascii);
    // Every input reaches the loop through one channel: keys, mouse and
    // resizes from the input thread, signals from the signal thread.
    let (event_tx, events) = bounded::<Action>(256);
    // Raw mode turns Ctrl-C into a key; a signal from elsewhere (kill, a
    // dropped SSH session) ends the loop, so the guard restores the screen.
    let signal_tx = event_tx.clone();
    signals::forward(move |s| signal_tx.send(Action::Signal(s)).is_ok())?;

    // The cooked mode, for the SIGBUS handler to restore (it cannot use
    // crossterm's copy); saved before raw mode, and before any file is
    // mapped.
    heaptui_core::mem::save_terminal_mode();
    // The first frame is drawn before the file is even opened.
    let mut terminal = ratatui::init();
    signals::install_panic_hook();
    TERMINAL_IN_USE.store(true, Ordering::Relaxed);
    let _guard = TerminalGuard;
    let _ = crossterm::execute!(std::io::stdout(), EnableMouseCapture);
    let size = terminal.size()?;
    let mut app = App::new(name, theme, Rect::new(0, 0, size.width, size.height))
        .comparing(baselines.len(), baseline_sources(&baselines, &options));
    terminal.draw(|f| ui::draw(&app, f))?;
    event_loop::log_latency("first frame", launched.elapsed());
    spawn_input(event_tx)?;

    // `R` analyses the dump again with the other `--references` mode: a
    // fresh worker, App and runtime over the same terminal and input.
    let (mut input, mut baselines) = (input, baselines);
    let exit = loop {
        let progress = Arc::new(Progress::new());
        let (work_tx, work_rx) = bounded::<Msg>(16);
        worker::spawn(
            input.clone(),
            baselines.clone(),
            options.duplicates.clone(),
            options.cache.clone(),
            progress.clone(),
            work_tx.clone(),
        )?;
        let filters = FilterThread::spawn(work_tx)?;
        let mut rt = event_loop::Runtime::live(progress.clone(), work_rx, filters, launched);
        match event_loop::run(&mut terminal, &mut app, &events, &mut rt)? {
            Ended::Quit(exit) => break exit,
            Ended::InputClosed => break Exit::Code(0),
            Ended::ToggleReferences => {
                progress.cancel();
                let toggled = toggle_references(&mut input, &mut baselines);
                let size = terminal.size()?;
                let title = app.name().to_string();
                app = App::new(title, theme, Rect::new(0, 0, size.width, size.height))
                    .comparing(baselines.len(), baseline_sources(&baselines, &options))
                    .with_status(match toggled {
                        Some(heaptui_core::import::References::All) => {
                            "analysing again: referents retain (--references all)"
                        }
                        _ => "analysing again: only strong references retain",
                    });
            }
        }
    };
    let note = match app.loading().failure() {
        Some(Failure::Panic(m)) => Some(format!("the analysis failed (internal error): {m}")),
        _ => None,
    };
    Ok((exit, note))
}

/// What `options` opens: the dump (a file or a built-in one), its
/// baselines, and the title.
fn inputs(options: &Options) -> (Input, Vec<Input>, String) {
    let (input, name) = match (&options.dump, options.demo) {
        (Some(p), _) => (
            Input::File(p.clone(), options.import),
            heaptui_core::model::printable_path(p),
        ),
        (None, _) if options.demo_compare => {
            let (name, text) = DEMO_SERIES[DEMO_SERIES.len() - 1];
            (
                Input::Bytes(name, text.as_bytes()),
                format!("{name} (demo)"),
            )
        }
        (None, _) => (
            Input::Bytes(DEMO_NAME, DEMO_DUMP.as_bytes()),
            format!("{DEMO_NAME} (built-in demo)"),
        ),
    };
    let baselines: Vec<Input> = if options.demo_compare && options.dump.is_none() {
        DEMO_SERIES[..DEMO_SERIES.len() - 1]
            .iter()
            .map(|(n, t)| Input::Bytes(n, t.as_bytes()))
            .collect()
    } else {
        options
            .baselines
            .iter()
            .map(|p| Input::File(p.clone(), options.import))
            .collect()
    };
    let name = match baselines.len() {
        0 => name,
        n => format!("{name} vs {n} older"),
    };
    (input, baselines, name)
}

/// Where the older snapshots are read from again when comparing (the
/// merged paths of a type per snapshot); `None` without baselines.
fn baseline_sources(baselines: &[Input], options: &Options) -> Option<msg::BaselineSources> {
    (!baselines.is_empty()).then(|| {
        msg::BaselineSources(Arc::new((
            baselines.to_vec(),
            options.duplicates.clone(),
            options.cache.clone(),
        )))
    })
}

/// The `heaptui-input` thread: keys, mouse and resizes into the loop's
/// channel until it hangs up.
fn spawn_input(event_tx: crossbeam_channel::Sender<Action>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("heaptui-input".into())
        .spawn(move || {
            while let Ok(ev) = event::read() {
                let action = match ev {
                    Event::Key(k) => Action::Key(k),
                    Event::Mouse(m) => Action::Mouse(m),
                    Event::Resize(w, h) => Action::Resize(w, h),
                    _ => continue,
                };
                if event_tx.send(action).is_err() {
                    break;
                }
            }
        })
        .map(|_| ())
}

/// Switches every dump file to the other `--references` mode; the new
/// mode, or `None` when no input is a file.
fn toggle_references(
    input: &mut Input,
    baselines: &mut [Input],
) -> Option<heaptui_core::import::References> {
    let mut toggled = None;
    for i in std::iter::once(input).chain(baselines.iter_mut()) {
        if let Input::File(_, import) = i {
            import.references = import.references.toggled();
            toggled = Some(import.references);
        }
    }
    toggled
}
