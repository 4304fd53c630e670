//! The scrolled table every list pane draws with: [`ListState`] (the
//! selected row and the first visible one) and [`ScrolledTable`], a widget
//! on ratatui's `Table`/`TableState` laid out by [`Columns`] (widths in
//! terminal columns, optional columns dropped first on narrow terminals).
//! A pane hands it only the visible rows, so a frame costs a page whatever
//! the list's length. New columns (a Δ column, say) are one more [`Col`]
//! and one more cell per row.
//!
//! Sorting is shared too: a pane marks its sortable columns
//! ([`Col::sortable`]), keeps a [`Sort`] (column and direction, shown in
//! the header as `Retained ▼`), and orders a permutation of its rows with
//! [`Sort::order`] once per change of the sort (`s` next column, `S`
//! reverse, a click on a header: [`Sort::next`], [`Sort::reversed`],
//! [`Sort::clicked`]); frames only read the permutation. A sortable Δ
//! column is one more `Col::num(..).sortable()` and one more key in the
//! pane's `match` on the column.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::widgets::{HighlightSpacing, Row, StatefulWidget, Table, TableState, Widget};

use super::{Ctx, Intent};
use crate::fmt::{fit, Align, Col, Columns};
use crate::theme::Theme;

pub use heaptui_core::text::plural;

/// The status of a key that needs a comparison, when there is none.
pub fn no_comparison(ctx: &Ctx) -> Intent {
    Intent::status(if ctx.loading.comparison_pending() {
        "the comparison with the older snapshots is still running"
    } else {
        "no comparison: open several snapshots (heaptui OLD NEW)"
    })
}

/// The order of a list: the column it is sorted by and the direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sort {
    /// The column sorted by (index into the list's columns).
    pub column: usize,
    /// Whether largest (or Z) comes first.
    pub descending: bool,
}

impl Sort {
    /// Sorted by `column` in its natural direction (see [`Sort::natural`]).
    pub fn by(column: usize, cols: &[Col]) -> Sort {
        Sort {
            column,
            descending: Sort::natural(column, cols),
        }
    }

    /// Numbers largest first, text A to Z.
    pub fn natural(column: usize, cols: &[Col]) -> bool {
        cols.get(column).is_some_and(|c| c.align == Align::Right)
    }

    /// The next sortable column after this one (wrapping), in its natural
    /// direction; itself when it is the only one.
    pub fn next(self, cols: &[Col]) -> Sort {
        let n = cols.len();
        (1..=n)
            .map(|d| (self.column + d) % n.max(1))
            .find(|&i| cols[i].sortable)
            .map_or(self, |i| Sort::by(i, cols))
    }

    /// The same column the other way.
    pub fn reversed(self) -> Sort {
        Sort {
            descending: !self.descending,
            ..self
        }
    }

    /// A click on the header of `column`: the same column reverses, another
    /// sortable one sorts in its natural direction; `None`: not sortable.
    pub fn clicked(self, column: usize, cols: &[Col]) -> Option<Sort> {
        match cols.get(column) {
            Some(c) if c.sortable && column == self.column => Some(self.reversed()),
            Some(c) if c.sortable => Some(Sort::by(column, cols)),
            _ => None,
        }
    }

    /// Marks the sorted column of `cols` for the header.
    pub fn mark(self, cols: &mut [Col]) {
        for (i, c) in cols.iter_mut().enumerate() {
            c.sorted = (i == self.column).then_some(self.descending);
        }
    }

    /// Orders `rows` (a permutation of row ids) by `key` in this direction.
    /// Stable: rows of equal keys keep their order, so a previous order
    /// breaks ties. O(n log n), once per change of the sort; each key is
    /// read once (a gather, then a sort of keys in place of lookups).
    pub fn order<K: Ord>(self, rows: &mut [u32], mut key: impl FnMut(u32) -> K) {
        if self.descending {
            rows.sort_by_cached_key(|&r| std::cmp::Reverse(key(r)));
        } else {
            rows.sort_by_cached_key(|&r| key(r));
        }
    }

    /// A status line for the new sort: `sorted by Retained, largest first`.
    pub fn describe(self, cols: &[Col]) -> String {
        let Some(c) = cols.get(self.column) else {
            return String::new();
        };
        let dir = match (c.align, self.descending) {
            (Align::Right, true) => "largest first",
            (Align::Right, false) => "smallest first",
            (Align::Left, false) => "A to Z",
            (Align::Left, true) => "Z to A",
        };
        format!("sorted by {}, {dir}", c.header.trim_end_matches('.'))
    }
}

/// A scrolled list: the selected row and the first visible row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListState {
    /// The selected row.
    pub selected: usize,
    /// The first visible row.
    pub offset: usize,
}

impl ListState {
    /// The state as a pane's saved view (for a pane whose view is its list).
    pub fn save(&self) -> super::Saved {
        Box::new(*self)
    }

    /// Takes back a view that [`save`](Self::save) made; anything else
    /// leaves the state as it is.
    pub fn restore(&mut self, saved: &super::Saved) {
        if let Some(list) = saved.downcast_ref::<ListState>() {
            *self = *list;
        }
    }

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

    /// Keeps `selected` below `len` and within the `height` rows shown from `offset`.
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
    /// Whether the row is the selected one.
    pub selected: bool,
    /// Its style.
    pub style: Style,
}

impl TableRow {
    /// A row of cells.
    pub fn cells(cells: Vec<String>, selected: bool, style: Style) -> TableRow {
        TableRow {
            cells,
            spanning: None,
            selected,
            style,
        }
    }

    /// A line across the columns.
    pub fn spanning(text: String, selected: bool, style: Style) -> TableRow {
        TableRow {
            cells: Vec::new(),
            spanning: Some(text),
            selected,
            style,
        }
    }

    /// A row of cells for [`ScrolledTable::page`] (which marks the
    /// selection).
    pub fn of(cells: Vec<String>) -> TableRow {
        TableRow::cells(cells, false, Style::new())
    }

    /// A spanning line for [`ScrolledTable::page`].
    pub fn line(text: String) -> TableRow {
        TableRow::spanning(text, false, Style::new())
    }

    /// The row's style when it is not selected (the page gives the
    /// selected row its own).
    pub fn style(self, style: Style) -> TableRow {
        TableRow { style, ..self }
    }
}

/// The rows on one page of a list, for [`ScrolledTable::page`].
pub struct Page<'a> {
    /// The list's selection and scroll offset.
    pub list: &'a ListState,
    /// Rows in the list.
    pub len: usize,
    /// Rows that fit below the header.
    pub height: usize,
    /// The selected row's style (the theme's `selected()` as a rule; a
    /// list whose focus is elsewhere passes something quieter).
    pub selected: Style,
}

/// A header line and the visible rows; `>` marks the selected row (with
/// its style, never colour alone); `empty` stands in for no rows.
pub struct ScrolledTable<'a> {
    /// Which columns fit the width, and how wide each is.
    pub columns: &'a Columns,
    /// The columns' headers.
    pub header: &'a [Col],
    /// Colours and glyphs.
    pub theme: &'a Theme,
    /// The visible rows.
    pub rows: Vec<TableRow>,
    /// Shown instead of the rows when there are none.
    pub empty: Option<String>,
}

impl<'a> ScrolledTable<'a> {
    /// The table of one page of a list: `row(i)` builds row `i` (its cells
    /// or its spanning line, and its style when not selected: dimmed for a
    /// row gone from the newest snapshot, say); the selected row gets
    /// `page.selected` and the `>` marker; `empty` is asked for the line
    /// that stands in for an empty list. A page of rows is built, whatever
    /// the list's length; `None` from `row` skips the row.
    pub fn page(
        columns: &'a Columns,
        header: &'a [Col],
        theme: &'a Theme,
        page: Page,
        mut row: impl FnMut(usize) -> Option<TableRow>,
        empty: impl FnOnce() -> String,
    ) -> ScrolledTable<'a> {
        let start = page.list.offset.min(page.len);
        let end = page.len.min(start + page.height);
        let rows = (start..end)
            .filter_map(|i| {
                let mut r = row(i)?;
                if i == page.list.selected {
                    r.selected = true;
                    r.style = page.selected;
                }
                Some(r)
            })
            .collect();
        ScrolledTable {
            columns,
            header,
            theme,
            rows,
            empty: (page.len == 0).then(empty),
        }
    }
}

impl Widget for ScrolledTable<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let theme = self.theme;
        let w = area.width as usize;
        let widths: Vec<Constraint> = (0..self.header.len())
            .filter(|&i| self.columns.shown(i))
            .map(|i| Constraint::Length(self.columns.width(i) as u16))
            .collect();
        let titles: Vec<String> = self.header.iter().map(|c| c.title(theme)).collect();
        let titles: Vec<&str> = titles.iter().map(String::as_str).collect();
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
            colors: crate::theme::Colors::Mono,
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
    fn a_page_builds_the_visible_rows_and_marks_the_selection() {
        let theme = Theme {
            ascii: true,
            colors: crate::theme::Colors::Mono,
        };
        let cols = [Col::name("N")];
        let columns = Columns::new(10, &cols);
        let list = ListState {
            selected: 4,
            offset: 3,
        };
        let mut asked = Vec::new();
        let page = Page {
            list: &list,
            len: 100,
            height: 3,
            selected: theme.selected(),
        };
        let t = ScrolledTable::page(
            &columns,
            &cols,
            &theme,
            page,
            |i| {
                asked.push(i);
                Some(TableRow::of(vec![i.to_string()]).style(theme.dim()))
            },
            || unreachable!("the list is not empty"),
        );
        assert_eq!(asked, [3, 4, 5], "a page of rows, no more");
        let cells: Vec<&str> = t.rows.iter().map(|r| r.cells[0].as_str()).collect();
        assert_eq!(cells, ["3", "4", "5"]);
        let sel: Vec<bool> = t.rows.iter().map(|r| r.selected).collect();
        assert_eq!(sel, [false, true, false]);
        assert_eq!(t.rows[1].style, theme.selected());
        assert_eq!(t.rows[0].style, theme.dim());
        assert_eq!(t.empty, None);
        // An empty list asks for its line.
        let page = Page {
            list: &ListState::default(),
            len: 0,
            height: 3,
            selected: theme.selected(),
        };
        let t = ScrolledTable::page(&columns, &cols, &theme, page, |_| None, || "none".into());
        assert!(t.rows.is_empty());
        assert_eq!(t.empty.as_deref(), Some("none"));
    }

    #[test]
    fn sort_cycles_sortable_columns_reverses_and_follows_clicks() {
        let cols = [
            Col::name("Type").sortable(),
            Col::num("Count", 5).sortable(),
            Col::num("Precise", 6),
            Col::num("Retained", 6).sortable(),
        ];
        let s = Sort::by(3, &cols);
        assert!(s.descending, "numbers start largest first");
        // The next sortable column, wrapping and skipping Precise.
        let s = s.next(&cols);
        assert_eq!((s.column, s.descending), (0, false), "names start A to Z");
        let s = s.next(&cols).next(&cols);
        assert_eq!(s.column, 3);
        assert_eq!(s.reversed().descending, !s.descending);
        // A click on the sorted column reverses it, on another sorts by it,
        // on one that does not sort changes nothing.
        assert_eq!(s.clicked(3, &cols), Some(s.reversed()));
        assert_eq!(s.clicked(1, &cols), Some(Sort::by(1, &cols)));
        assert_eq!(s.clicked(2, &cols), None);
        assert_eq!(s.clicked(9, &cols), None);
        assert_eq!(s.describe(&cols), "sorted by Retained, largest first");
    }

    #[test]
    fn sort_orders_a_permutation_stably_both_ways() {
        let keys = [5u64, 1, 5, 3, 0];
        let cols = [Col::num("N", 1).sortable()];
        let mut rows: Vec<u32> = (0..5).collect();
        Sort::by(0, &cols).order(&mut rows, |i| keys[i as usize]);
        // Largest first; the two 5s keep their order.
        assert_eq!(rows, [0, 2, 3, 1, 4]);
        let mut rows: Vec<u32> = (0..5).collect();
        Sort::by(0, &cols)
            .reversed()
            .order(&mut rows, |i| keys[i as usize]);
        assert_eq!(rows, [4, 1, 3, 0, 2]);
    }

    #[test]
    fn the_header_marks_the_sorted_column_and_keeps_its_room() {
        let theme = Theme {
            ascii: true,
            colors: crate::theme::Colors::Mono,
        };
        let mut cols = [
            Col::name("Type").sortable(),
            Col::num("Count", 3).sortable(),
        ];
        let columns = Columns::new(20, &cols);
        // "Count" and room for " v": the layout does not move with the sort.
        assert_eq!(columns.width(1), 7);
        Sort::by(1, &cols).mark(&mut cols);
        assert_eq!(columns.header(&cols, &theme), " Type        Count v");
        Sort::by(0, &cols).mark(&mut cols);
        assert_eq!(columns.header(&cols, &theme), " Type ^        Count");
        assert_eq!(Columns::new(20, &cols), columns);
        // Clicks: the marker cell is no column, the blank after one is its.
        assert_eq!(columns.column_at(0), None);
        assert_eq!(columns.column_at(1), Some(0));
        assert_eq!(columns.column_at(13), Some(1));
        assert_eq!(columns.column_at(19), Some(1));
        assert_eq!(columns.column_at(40), None);
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
