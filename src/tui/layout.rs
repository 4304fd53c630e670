//! Frame geometry shared by the router and the panes: the five rows of the
//! frame, the smallest usable terminal, and the one width at which panes
//! switch from their narrow to their wide layout. Imports only ratatui.

use ratatui::layout::{Constraint, Layout, Rect};

/// Below this the UI shows only a note asking for a larger terminal.
pub const MIN_WIDTH: u16 = 30;
pub const MIN_HEIGHT: u16 = 8;

/// Pane bodies at least this wide (borders included) use the wide layout:
/// the Dominators chart sits beside the tree instead of being toggled.
pub const WIDE_BODY: u16 = 122;

/// Whether a pane body of this width uses the wide layout.
pub fn is_wide(body_width: u16) -> bool {
    body_width >= WIDE_BODY
}

pub struct Areas {
    pub title: Rect,
    pub tabs: Rect,
    pub body: Rect,
    pub status: Rect,
    pub footer: Rect,
}

pub fn layout(area: Rect) -> Areas {
    let [title, tabs, body, status, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    Areas {
        title,
        tabs,
        body,
        status,
        footer,
    }
}
