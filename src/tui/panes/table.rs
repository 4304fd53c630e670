//! The scrolled table every list pane draws with: [`ListState`] (the
//! selected row and the first visible one) and [`ScrolledTable`], a widget
//! on ratatui's `Table`/`TableState` laid out by [`Columns`] (widths in
//! terminal columns, optional columns dropped first on narrow terminals).
//! A pane hands it only the visible rows, so a frame costs a page whatever
//! the list's length. New columns (a Δ column, say) are one more [`Col`]
//! and one more cell per row.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::widgets::{HighlightSpacing, Row, StatefulWidget, Table, TableState, Widget};

use crate::tui::fmt::{fit, Col, Columns};
use crate::tui::theme::Theme;

/// A scrolled list: the selected row and the first visible row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListState {
    pub selected: usize,
    pub offset: usize,
}

impl ListState {
    /// Moves by `delta` rows within `len`, keeping the selection among the
    /// `height` visible rows.
    pub fn step(&mut self, delta: isize, len: usize, height: usize) {
        if len == 0 {
            *self = ListState::default();
            return;
        }
        let s = (self.selected as isize + delta).clamp(0, len as isize - 1);
        self.selected = s as usize;
        self.scroll(len, height);
    }

    pub fn scroll(&mut self, len: usize, height: usize) {
        self.selected = self.selected.min(len.saturating_sub(1));
        let height = height.max(1);
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + height {
            self.offset = self.selected + 1 - height;
        }
        self.offset = self.offset.min(len.saturating_sub(height));
    }
}

/// One visible row of a [`ScrolledTable`].
pub struct TableRow {
    /// A cell per column (those of dropped columns are skipped).
    pub cells: Vec<String>,
    /// A line of its own across the columns instead of cells (a record
    /// under its group).
    pub spanning: Option<String>,
    pub selected: bool,
    pub style: Style,
}

impl TableRow {
    pub fn cells(cells: Vec<String>, selected: bool, style: Style) -> TableRow {
        TableRow {
            cells,
            spanning: None,
            selected,
            style,
        }
    }

    pub fn spanning(text: String, selected: bool, style: Style) -> TableRow {
        TableRow {
            cells: Vec::new(),
            spanning: Some(text),
            selected,
            style,
        }
    }
}

/// A header line and the visible rows; `>` marks the selected row (with
/// its style, never colour alone); `empty` stands in for no rows.
pub struct ScrolledTable<'a> {
    pub columns: &'a Columns,
    pub header: &'a [Col],
    pub theme: &'a Theme,
    pub rows: Vec<TableRow>,
    pub empty: Option<String>,
}

impl Widget for ScrolledTable<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let theme = self.theme;
        let w = area.width as usize;
        let widths: Vec<Constraint> = (0..self.header.len())
            .filter(|&i| self.columns.shown(i))
            .map(|i| Constraint::Length(self.columns.width(i) as u16))
            .collect();
        let titles: Vec<&str> = self.header.iter().map(|c| c.header).collect();
        let header = Row::new(self.columns.cells(&titles, theme)).style(theme.header());
        let rows = self.rows.iter().map(|r| {
            let cells: Vec<&str> = r.cells.iter().map(String::as_str).collect();
            let cells = match r.spanning {
                Some(_) => Vec::new(),
                None => self.columns.cells(&cells, theme),
            };
            Row::new(cells).style(r.style)
        });
        let table = Table::new(rows, widths)
            .header(header)
            .column_spacing(1)
            .highlight_symbol(">")
            .highlight_spacing(HighlightSpacing::Always);
        let mut state =
            TableState::default().with_selected(self.rows.iter().position(|r| r.selected));
        StatefulWidget::render(table, area, buf, &mut state);
        // Rows of their own are written over their (empty) table row.
        for (i, r) in self.rows.iter().enumerate() {
            let y = area.y + 1 + i as u16;
            if let (Some(text), true) = (&r.spanning, y < area.bottom()) {
                let marker = if r.selected { ">" } else { " " };
                let text = fit(&format!("{marker}{text}"), w, theme);
                buf.set_stringn(area.x, y, text, w, r.style);
            }
        }
        if let (true, Some(empty)) = (self.rows.is_empty(), &self.empty) {
            if area.height > 1 {
                buf.set_stringn(area.x, area.y + 1, fit(empty, w, theme), w, Style::new());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_draws_what_the_column_layout_says() {
        let theme = Theme {
            ascii: true,
            colors: crate::tui::theme::Colors::Mono,
        };
        let cols = [Col::name("Type"), Col::num("Count", 5), Col::num("%", 6)];
        let columns = Columns::new(30, &cols);
        let row = |c: &[&str], sel| {
            TableRow::cells(c.iter().map(|s| s.to_string()).collect(), sel, Style::new())
        };
        let table = ScrolledTable {
            columns: &columns,
            header: &cols,
            theme: &theme,
            rows: vec![
                row(&["System.String", "12", "50.0%"], false),
                row(&["A.Very.Long.Type.Name.That.Is.Cut", "3", "0.1%"], true),
                TableRow::spanning(
                    "  a record spanning the columns".into(),
                    false,
                    Style::new(),
                ),
            ],
            empty: None,
        };
        let mut buf = Buffer::empty(Rect::new(0, 0, 30, 5));
        table.render(buf.area, &mut buf);
        let line = |y: u16| (0..30).map(|x| buf[(x, y)].symbol()).collect::<String>();
        let text = |m: &str, c: &[&str]| format!("{:<30}", columns.row(m, c, &theme));
        assert_eq!(line(0), text(" ", &["Type", "Count", "%"]));
        assert_eq!(line(1), text(" ", &["System.String", "12", "50.0%"]));
        assert_eq!(
            line(2),
            text(">", &["A.Very.Long.Type.Name.That.Is.Cut", "3", "0.1%"])
        );
        assert_eq!(line(3), format!("{:<30}", "   a record spanning the co..."));
        assert_eq!(line(4).trim(), "");
    }

    #[test]
    fn list_state_scrolls_with_the_selection() {
        let mut l = ListState::default();
        l.step(5, 10, 3);
        assert_eq!((l.selected, l.offset), (5, 3));
        l.step(100, 10, 3);
        assert_eq!((l.selected, l.offset), (9, 7));
        l.step(-9, 10, 3);
        assert_eq!((l.selected, l.offset), (0, 0));
        l.step(1, 0, 3);
        assert_eq!(l, ListState::default());
    }
}
