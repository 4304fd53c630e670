//! The harness the tests (through the testkit) and the demo tape drive the
//! UI with: an [`App`] loaded synchronously, the settled event loop over a
//! finite stream of events. Built only with the `testing` feature, which
//! `heaptui-testkit` turns on: none of it ships in the binary.

use ratatui::layout::Rect;

use crate::app::{update, Action, App, Effect};
use crate::event_loop::{self, Ended};
use crate::filtering;
use crate::theme::Theme;
use crate::worker::{self, Input, Msg};
use crate::{DEMO_DUMP, DEMO_NAME, DEMO_SERIES};
use heaptui_core::graph::duplicates::DuplicateOptions;
use heaptui_core::progress::Progress;

/// The memory budget of the test harness's apps (the default depends on
/// the machine): 1 GiB, as `--memory 1GiB` gives it.
pub const TEST_BUDGET: heaptui_core::mem::budget::Budget = heaptui_core::mem::budget::Budget {
    bytes: 1 << 30,
    source: heaptui_core::mem::budget::Source::Given,
};

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
    loaded_series_app(&[(name, bytes)], width, height, theme)
}

/// An App over a series of dump texts `(name, text)`, oldest first,
/// analysed synchronously: the newest opened, the others its baselines,
/// the comparison done (tests).
pub fn loaded_series_app(
    series: &[(&'static str, &'static [u8])],
    width: u16,
    height: u16,
    theme: Theme,
) -> App {
    let (&(name, bytes), older) = series.split_last().expect("one dump at least");
    // The overview shows the budget: one that is the same on every machine.
    heaptui_core::mem::budget::set(TEST_BUDGET);
    let title = match older.len() {
        0 => name.to_string(),
        n => format!("{name} vs {n} older"),
    };
    let input = Input::Bytes(name, bytes);
    let baselines: Vec<Input> = older.iter().map(|&(n, b)| Input::Bytes(n, b)).collect();
    let mut msgs = Vec::new();
    worker::analyse_series(
        &input,
        &baselines,
        &DuplicateOptions::default(),
        None,
        &Progress::new(),
        &mut |m| {
            msgs.push(m);
            true
        },
    );
    let sources = (!baselines.is_empty()).then(|| {
        crate::msg::BaselineSources(std::sync::Arc::new((
            baselines,
            DuplicateOptions::default(),
            None,
        )))
    });
    let mut app =
        App::new(title, theme, Rect::new(0, 0, width, height)).comparing(older.len(), sources);
    let mut events = Vec::new();
    for mut m in msgs {
        match &mut m {
            Msg::Parsed { ms, .. }
            | Msg::Graph { ms, .. }
            | Msg::Dominators { ms, .. }
            | Msg::Duplicates { ms, .. } => *ms = 0,
            _ => {}
        }
        events.push(Action::Worker(m));
    }
    drive(&mut app, events);
    app
}

/// The built-in demo series analysed synchronously (tests).
pub fn demo_series_app(width: u16, height: u16, theme: Theme) -> App {
    let series: Vec<(&'static str, &'static [u8])> = DEMO_SERIES
        .iter()
        .map(|&(n, t)| (n, t.as_bytes()))
        .collect();
    loaded_series_app(&series, width, height, theme)
}

/// Runs the real event loop, settled (work inline, one event per turn),
/// over a finite stream of events on a `TestBackend` of the app's size:
/// how the journeys and the demo tape drive the UI.
pub fn drive(app: &mut App, events: Vec<Action>) -> Ended {
    let (tx, rx) = crossbeam_channel::unbounded();
    for e in events {
        let _ = tx.send(e);
    }
    drop(tx);
    let backend = ratatui::backend::TestBackend::new(app.size().width, app.size().height);
    let mut terminal = ratatui::Terminal::new(backend).expect("a test backend");
    let mut rt = event_loop::Runtime::settled();
    event_loop::run(&mut terminal, app, &rx, &mut rt).expect("a test backend does not fail")
}

/// Computes the filter requests the panes await synchronously and delivers
/// their results, which is what the filter thread would do (tests that look
/// at the state between a key and its filter result).
pub fn run_jobs(app: &mut App) {
    for req in app.awaited_filters() {
        if let Some(f) = filtering::compute(req, &|| false) {
            update(app, Action::Worker(Msg::Filtered(f)));
        }
    }
}

/// Feeds one key through the settled loop; `Some(Effect::Quit)` when it
/// ended the loop.
pub fn press(app: &mut App, key: crossterm::event::KeyEvent) -> Option<Effect> {
    match drive(app, vec![Action::Key(key)]) {
        Ended::Quit(_) => Some(Effect::Quit),
        Ended::ToggleReferences => Some(Effect::ToggleReferences),
        Ended::InputClosed => None,
    }
}
