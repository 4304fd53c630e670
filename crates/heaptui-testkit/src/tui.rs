//! Shared helpers for the TUI tests: the demo App, key streams, screens.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::Terminal;

use heaptui_tui::app::{Action, App, Effect};
use heaptui_tui::event_loop::Ended;
use heaptui_tui::theme::Theme;
use heaptui_tui::ui;

pub use heaptui_tui::testing::*;

pub const COLOR: Theme = Theme {
    ascii: false,
    colors: heaptui_tui::theme::Colors::Ansi16,
};

pub fn app(w: u16, h: u16) -> App {
    demo_app(w, h, COLOR)
}

/// An App over a dump given as text, analysed synchronously like the demo
/// (stage times zero).
pub fn text_app(text: &'static str, w: u16, h: u16) -> App {
    let mut app = heaptui_tui::testing::loaded_app("test.txt", text.as_bytes(), w, h, COLOR);
    heaptui_tui::app::update(&mut app, heaptui_tui::app::Action::Tick);
    app
}

pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub fn ch(c: char) -> KeyEvent {
    let m = if c.is_ascii_uppercase() {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    KeyEvent::new(KeyCode::Char(c), m)
}

/// Presses a key stream written as space-separated names: `Enter`, `Esc`,
/// `Bksp`, `Tab`, `Up`, `Down`, `Left`, `Right`, `PgDn`, `PgUp`, `Space`,
/// single characters, or `"text"` (typed character by character). The
/// keys go through the real event loop (settled: each key's work is done
/// before the next); `[Effect::Quit]` when they ended it.
pub fn keys(app: &mut App, script: &str) -> Vec<Effect> {
    let mut events = Vec::new();
    for tok in script.split_whitespace() {
        let evs: Vec<KeyEvent> = match tok {
            "Enter" => vec![key(KeyCode::Enter)],
            "Esc" => vec![key(KeyCode::Esc)],
            "Bksp" => vec![key(KeyCode::Backspace)],
            "Tab" => vec![key(KeyCode::Tab)],
            "Up" => vec![key(KeyCode::Up)],
            "Down" => vec![key(KeyCode::Down)],
            "Left" => vec![key(KeyCode::Left)],
            "Right" => vec![key(KeyCode::Right)],
            "PgDn" => vec![key(KeyCode::PageDown)],
            "PgUp" => vec![key(KeyCode::PageUp)],
            "Space" => vec![ch(' ')],
            "CtrlC" => vec![KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)],
            t if t.starts_with('"') => t.trim_matches('"').chars().map(ch).collect(),
            t if t.chars().count() == 1 => vec![ch(t.chars().next().unwrap())],
            t => panic!("unknown key {t}"),
        };
        events.extend(evs.into_iter().map(Action::Key));
    }
    match drive(app, events) {
        Ended::Quit(_) => vec![Effect::Quit],
        Ended::ToggleReferences => vec![Effect::ToggleReferences],
        Ended::InputClosed => Vec::new(),
    }
}

pub fn buffer(app: &App) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(app.size().width, app.size().height)).unwrap();
    t.draw(|f| ui::draw(app, f)).unwrap();
    t.backend().buffer().clone()
}

/// The screen as plain text, one line per row, trailing blanks trimmed.
pub fn screen(app: &App) -> String {
    text(&buffer(app))
}

/// The screen, asserted to contain every needle (the screen is the
/// message when one is missing).
pub fn shows(app: &App, needles: &[&str]) -> String {
    let s = screen(app);
    for n in needles {
        assert!(s.contains(n), "{n:?} missing:\n{s}");
    }
    s
}

/// The demo heap at 80×24 after a key script.
pub fn after(script: &str) -> App {
    let mut a = app(80, 24);
    keys(&mut a, script);
    a
}

pub fn text(buf: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        for x in 0..buf.area.width {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The row (text) that carries the selection marker `>` in the body.
pub fn selected_row(app: &App) -> String {
    screen(app)
        .lines()
        .skip(3)
        .find(|l| {
            l.trim_start_matches(['│', '|', ' ']).starts_with('>')
                || l.contains("│>")
                || l.contains("|>")
        })
        .unwrap_or_default()
        .to_string()
}
