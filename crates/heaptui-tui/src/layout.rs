//! Frame geometry shared by the router and the panes: the five rows of the
//! frame, the smallest usable terminal, and the one width at which panes
//! switch from their narrow to their wide layout. Imports only ratatui.

use ratatui::layout::{Constraint, Layout, Rect};

/// Below this the UI shows only a note asking for a larger terminal.
pub const MIN_WIDTH: u16 = 30;
/// Below this many rows, likewise.
pub const MIN_HEIGHT: u16 = 8;

/// Pane bodies at least this wide (borders included) use the wide layout:
/// the Dominators chart sits beside the tree instead of being toggled.
pub const WIDE_BODY: u16 = 122;

/// Whether a pane body of this width uses the wide layout.
pub fn is_wide(body_width: u16) -> bool {
    body_width >= WIDE_BODY
}

/// The five rows of the frame.
pub struct Areas {
    /// The title line.
    pub title: Rect,
    /// The pane tabs.
    pub tabs: Rect,
    /// The pane body.
    pub body: Rect,
    /// The status line.
    pub status: Rect,
    /// The key hints.
    pub footer: Rect,
}

/// Cuts a frame of `area` into its five rows (the body takes what the others leave).
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

/// How much of a tab's name fits: the whole name with padding, the
/// whole name, a short name, or only the number (the focused tab keeps
/// its short name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TabStyle {
    Padded,
    Tight,
    Short,
    Number,
}

/// Columns kept after the pane tabs for the `[Inspector]` tab.
const INSPECTOR_TAB: u16 = 11;

fn tab_style(width: u16) -> TabStyle {
    let fits = |s: TabStyle| {
        let w: usize = PaneId::ALL.iter().map(|&p| tab_label(p, s).len() + 2).sum();
        w as u16 + INSPECTOR_TAB <= width
    };
    [TabStyle::Padded, TabStyle::Tight, TabStyle::Short]
        .into_iter()
        .find(|&s| fits(s))
        .unwrap_or(TabStyle::Number)
}

fn tab_label(p: PaneId, style: TabStyle) -> String {
    let n = p.index() + 1;
    match style {
        TabStyle::Padded => format!(" {n} {} ", p.tab()),
        TabStyle::Tight => format!("{n} {}", p.tab()),
        TabStyle::Short => format!("{n} {}", p.short()),
        TabStyle::Number => format!("{n}"),
    }
}

/// The tab texts in a tab row `width` columns wide, focused or not
/// (`[ 2 Dominators ]` / `  2 Dominators  `; narrower rows drop the
/// padding, then shorten the names, then keep only the numbers with the
/// focused tab's short name).
pub fn tab_text(p: PaneId, focused: bool, width: u16) -> String {
    let style = tab_style(width);
    let label = if focused && style == TabStyle::Number {
        tab_label(p, TabStyle::Short)
    } else {
        tab_label(p, style)
    };
    if focused {
        format!("[{label}]")
    } else {
        format!(" {label} ")
    }
}

/// The pane whose tab covers column `x` of a tab row `width` wide, with
/// `focused` the focused tab (none while the Inspector is open).
pub fn tab_at(x: u16, width: u16, focused: Option<PaneId>) -> Option<PaneId> {
    let mut at = 0u16;
    for p in PaneId::ALL {
        let w = tab_text(p, Some(p) == focused, width).len() as u16;
        if x >= at && x < at + w {
            return Some(p);
        }
        at += w;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabs_keep_their_names_as_long_as_they_can() {
        let row = |width| -> String {
            PaneId::ALL
                .iter()
                .map(|&p| tab_text(p, p == PaneId::Roots, width))
                .collect()
        };
        assert_eq!(
            row(100),
            "  1 Overview    2 Dominators    3 Types    4 Duplicates  [ 5 Roots ]  6 Leaks  "
        );
        assert_eq!(
            row(80),
            " 1 Overview  2 Dominators  3 Types  4 Duplicates [5 Roots] 6 Leaks "
        );
        assert_eq!(row(60), " 1 Over  2 Dom  3 Types  4 Dup [5 Roots] 6 Leaks ");
        assert_eq!(row(40), " 1  2  3  4 [5 Roots] 6 ");
        for width in [30, 40, 60, 70, 80, 200] {
            // Below 35 columns the six numbers leave no room for `[Inspector]`.
            assert!(row(width).len() as u16 + INSPECTOR_TAB <= width.max(35));
            // Every column of every tab maps back to it.
            let mut x = 0;
            for p in PaneId::ALL {
                let w = tab_text(p, p == PaneId::Roots, width).len() as u16;
                for c in x..x + w {
                    assert_eq!(
                        tab_at(c, width, Some(PaneId::Roots)),
                        Some(p),
                        "{width} {c}"
                    );
                }
                x += w;
            }
        }
    }
}
