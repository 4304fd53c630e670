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

use super::pane_id::PaneId;

fn tab_label(p: PaneId) -> String {
    format!(" {} {} ", p.index() + 1, p.tab())
}

/// The tab texts, focused or not (`[ 2 Dominators ]` / `  2 Dominators  `).
pub fn tab_text(p: PaneId, focused: bool) -> String {
    let label = tab_label(p);
    if focused {
        format!("[{label}]")
    } else {
        format!(" {label} ")
    }
}

/// The pane whose tab covers column `x`.
pub fn tab_at(x: u16) -> Option<PaneId> {
    let mut at = 0u16;
    for p in PaneId::ALL {
        let w = tab_label(p).len() as u16 + 2;
        if x >= at && x < at + w {
            return Some(p);
        }
        at += w;
    }
    None
}
