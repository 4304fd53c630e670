//! The help overlay (`?`): its state (the scroll position), its keys and
//! its drawing, generated from the key table. The router opens it and hands
//! it every key while it is open; `ui` draws it over the frame. Imports the
//! key table, the layout of the frame and the theme; never `app` or `ui`.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Clear, Paragraph};
use ratatui::Frame;

use super::keys::{self, Cmd, Key, Mode, KEYS};
use super::theme::Theme;

/// The open help box: how far it is scrolled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Help {
    scroll: u16,
}

/// What a key did to the open help.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HelpKey {
    /// Scrolled (or stayed): the help stays open.
    Open,
    /// Any other key closes it.
    Close,
    /// Ctrl-C quits from the help too.
    Quit,
}

impl Help {
    /// The first line shows; the router opens it on `?`.
    pub fn new() -> Help {
        Help::default()
    }

    /// The first line shown.
    pub fn scroll(&self) -> u16 {
        self.scroll
    }

    /// A key while the help is open, in a frame of `size`: j/k and the page
    /// keys scroll (never past the last line, so Up moves at once), any
    /// other key closes.
    pub fn key(&mut self, key: Key, theme: &Theme, size: Rect) -> HelpKey {
        let scroll = self.scroll;
        self.scroll = match keys::lookup(Mode::Global, key) {
            Some(Cmd::Down) => scroll.saturating_add(1),
            Some(Cmd::Up) => scroll.saturating_sub(1),
            Some(Cmd::PageDown) => scroll.saturating_add(10),
            Some(Cmd::PageUp) => scroll.saturating_sub(10),
            Some(Cmd::Quit) if key == Key::Ctrl('c') => return HelpKey::Quit,
            _ => return HelpKey::Close,
        };
        self.scroll = self.scroll.min(max_scroll(theme, size));
        HelpKey::Open
    }

    /// Draws the box over the frame `area`; markers say what is above and
    /// below.
    pub fn draw(&self, t: &Theme, area: Rect, f: &mut Frame) {
        let rect = rect(area);
        f.render_widget(Clear, rect);
        let max = max_scroll(t, area);
        let scroll = self.scroll.min(max);
        let (up, down) = if t.ascii { ("^", "v") } else { ("↑", "↓") };
        let mut block = Block::bordered()
            .border_set(t.border())
            .title(Line::styled(" Help ", t.header()));
        if scroll > 0 {
            block = block
                .title(Line::styled(format!(" {up} more (k/PgUp) "), t.bold()).right_aligned());
        }
        if scroll < max {
            block = block.title_bottom(
                Line::styled(format!(" more {down} (j/PgDn) "), t.bold()).right_aligned(),
            );
        }
        f.render_widget(
            Paragraph::new(lines(t))
                .block(block)
                .style(Style::new())
                .scroll((scroll, 0)),
            rect,
        );
    }
}

/// The help box in a frame of `area`.
fn rect(area: Rect) -> Rect {
    let w = area.width.saturating_sub(4).min(76);
    let h = area.height.saturating_sub(2);
    Rect::new(area.x + (area.width - w) / 2, area.y + 1, w, h)
}

/// The last scroll position: the last line at the box's bottom.
fn max_scroll(t: &Theme, size: Rect) -> u16 {
    let inner_h = rect(size).height.saturating_sub(2) as usize;
    lines(t).len().saturating_sub(inner_h) as u16
}

/// The key table by mode, in the table's order: each mode's title and its
/// commands as (keys, what they do). The help box and the manual page
/// (`heaptui man`) show it.
pub fn key_sections() -> Vec<(&'static str, Vec<(String, &'static str)>)> {
    let mut modes = Vec::new();
    for b in KEYS {
        if !modes.contains(&b.mode) {
            modes.push(b.mode);
        }
    }
    modes
        .into_iter()
        .map(|m| {
            let mut seen: Vec<(keys::Cmd, String)> = Vec::new();
            for b in KEYS.iter().filter(|b| b.mode == m) {
                if let Some(e) = seen.iter_mut().find(|(c, _)| *c == b.cmd) {
                    e.1.push_str(&format!(" {}", b.key.label()));
                    continue;
                }
                seen.push((b.cmd, b.key.label()));
            }
            let rows = seen
                .into_iter()
                .map(|(cmd, keys)| {
                    let desc = KEYS
                        .iter()
                        .find(|b| b.mode == m && b.cmd == cmd)
                        .map_or("", |b| b.description);
                    (keys, desc)
                })
                .collect();
            (m.title(), rows)
        })
        .collect()
}

/// The filter syntax and the mouse, as (what, meaning), after the keys.
pub const FILTER_SYNTAX: [(&str, &str); 6] = [
    ("words", "fuzzy match (smart case), ranked"),
    ("a.*.b", "wildcard; each dotted part is a prefix"),
    ("[]  [,  [,]", "arrays / rank at least 2 / exactly 2"),
    ("!a  !g", "no arrays / no generic types"),
    ("<  <str  <,>", "generic / argument matching / arity"),
    ("#ns X  #c X", "namespace / class name contains X"),
];

/// The mouse actions, as (what, what it does), for the help screen.
pub const MOUSE: [(&str, &str); 3] = [
    ("click a tab", "switch to its pane"),
    ("click a row", "select it"),
    ("wheel", "move the selection 3 rows"),
];

/// The help lines, generated from the key table.
pub fn lines(t: &Theme) -> Vec<Line<'static>> {
    let mut lines = vec![
        Line::styled(" Keys (from the key table)", t.header()),
        Line::raw(" j/k PgUp/PgDn scroll; any other key closes."),
    ];
    for (title, rows) in key_sections() {
        lines.push(Line::raw(""));
        lines.push(Line::styled(format!(" {title}"), t.bold()));
        for (keys, desc) in rows {
            lines.push(Line::raw(format!("   {keys:<18} {desc}")));
        }
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(" Filter syntax", t.bold()));
    for (what, meaning) in FILTER_SYNTAX {
        let gap = if what.len() < 10 { 11 - what.len() } else { 2 };
        lines.push(Line::raw(format!("   {what}{:gap$}{meaning}", "")));
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled(" Mouse", t.bold()));
    for (what, meaning) in MOUSE {
        lines.push(Line::raw(format!("   {what:<18} {meaning}")));
    }
    lines
}
