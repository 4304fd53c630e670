//! The TUI's side of the text layer ([`heaptui_core::text`], shared with the
//! report): its functions with the theme's ellipsis, table columns, and
//! object labels sized to a row.

use crate::theme::Theme;
use heaptui_core::model::{Model, ObjectIdx};

pub use heaptui_core::text::{
    count, count_width, counted, percent_or_dash as percent, plural, secs, size as bytes,
    size_width as bytes_width, width as text_width,
};

/// Cuts `s` to `width` columns, ending with an ellipsis when cut.
pub fn fit(s: &str, width: usize, theme: &Theme) -> String {
    heaptui_core::text::fit(s, width, theme.ellipsis())
}

/// A type name fitted to `width` (see [`heaptui_core::text::type_name`]).
pub fn type_name(name: &str, width: usize, theme: &Theme) -> String {
    heaptui_core::text::type_name(name, width, theme.ellipsis())
}

/// Cuts `s` to `width` columns in the middle, keeping its start and (the
/// larger part) its end.
pub fn fit_middle(s: &str, width: usize, theme: &Theme) -> String {
    heaptui_core::text::fit_middle(s, width, theme.ellipsis())
}

/// Cuts `s` to `width` columns from the left, starting with an ellipsis
/// when cut: the end (e.g. the current node of a breadcrumb) stays.
pub fn fit_left(s: &str, width: usize, theme: &Theme) -> String {
    heaptui_core::text::fit_left(s, width, theme.ellipsis())
}

/// How a column's cells are aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text from the left.
    Left,
    /// Numbers from the right.
    Right,
}

/// One column of a [`Columns`] layout.
#[derive(Debug, Clone, Copy)]
pub struct Col {
    /// The header text.
    pub header: &'static str,
    /// Width of its widest value (computed once per data set by the pane).
    pub content: usize,
    /// How its cells are aligned (right-aligned columns sort largest first).
    pub align: Align,
    /// The name column: takes the width the others leave, and its text is
    /// shortened; exactly one column of a table is flexible.
    pub flex: bool,
    /// Non-zero: the column is left out when the name would otherwise get
    /// fewer than [`NAME_ROOM`] cells (the highest first).
    pub optional: u8,
    /// The list sorts by this column (`s`, `S`, a click on its header); its
    /// width keeps room for the sort mark, so the layout never moves when
    /// the sort does.
    pub sortable: bool,
    /// The list is sorted by this column: `Some(descending)`.
    pub sorted: Option<bool>,
}

impl Col {
    /// A right-aligned number column.
    pub const fn num(header: &'static str, content: usize) -> Col {
        Col {
            header,
            content,
            align: Align::Right,
            flex: false,
            optional: 0,
            sortable: false,
            sorted: None,
        }
    }

    /// A left-aligned text column of fixed width.
    pub const fn text(header: &'static str, content: usize) -> Col {
        Col {
            header,
            content,
            align: Align::Left,
            flex: false,
            optional: 0,
            sortable: false,
            sorted: None,
        }
    }

    /// Makes the column optional, left out before those of lower `rank`.
    pub const fn optional(self, rank: u8) -> Col {
        Col {
            optional: rank,
            ..self
        }
    }

    /// Makes the column sortable (see [`crate::panes::table::Sort`]).
    pub const fn sortable(self) -> Col {
        Col {
            sortable: true,
            ..self
        }
    }

    /// The header as drawn: with the sort mark (` ▼`, ASCII ` v`) when the
    /// list is sorted by this column.
    pub fn title(&self, theme: &Theme) -> String {
        match self.sorted {
            Some(desc) => format!("{} {}", self.header, sort_mark(desc, theme)),
            None => self.header.to_string(),
        }
    }

    /// Cells its header needs: the sort mark's included when sortable.
    fn header_width(&self) -> usize {
        text_width(self.header) + if self.sortable { 2 } else { 0 }
    }

    /// The flexible name column.
    pub const fn name(header: &'static str) -> Col {
        Col {
            header,
            content: 0,
            align: Align::Left,
            flex: true,
            optional: 0,
            sortable: false,
            sorted: None,
        }
    }
}

/// The mark of a sorted column's header: largest (or Z) first `▼`, else
/// `▲` (ASCII `v` / `^`).
pub fn sort_mark(descending: bool, theme: &Theme) -> &'static str {
    match (descending, theme.ascii) {
        (true, false) => "▼",
        (false, false) => "▲",
        (true, true) => "v",
        (false, true) => "^",
    }
}

/// Optional columns give way before the name gets narrower than this.
pub const NAME_ROOM: usize = 16;

/// Narrowest the name column gets before the row runs past the right edge:
/// a name gives way before a figure is cut (a size cut to `6.06 Mi` reads
/// as another size), down to a letter and the ellipsis.
const NAME_MIN: usize = 3;

/// A table's row layout: a one-cell marker (`>` on the selection), then the
/// columns with one blank between each two. Fixed columns are as wide as
/// their header and their widest value, so a number is never cut and never
/// touches its neighbour; the name column gets the rest and its text is
/// shortened instead. When even that leaves the name too little room,
/// optional columns are left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns {
    widths: Vec<usize>,
    aligns: Vec<Align>,
    shown: Vec<bool>,
    flex: Option<usize>,
}

impl Columns {
    /// Lays out `cols` in `width` cells (the marker included).
    pub fn new(width: usize, cols: &[Col]) -> Columns {
        let mut widths: Vec<usize> = cols
            .iter()
            .map(|c| c.header_width().max(c.content))
            .collect();
        let mut shown = vec![true; cols.len()];
        let flex = cols.iter().position(|c| c.flex);
        if let Some(f) = flex {
            let room = |shown: &[bool]| {
                let fixed: usize = (0..cols.len())
                    .filter(|&i| i != f && shown[i])
                    .map(|i| widths[i] + 1)
                    .sum();
                width.saturating_sub(1 + fixed)
            };
            while room(&shown) < NAME_ROOM {
                let drop = (0..cols.len())
                    .filter(|&i| shown[i] && cols[i].optional > 0)
                    .max_by_key(|&i| cols[i].optional);
                match drop {
                    Some(i) => shown[i] = false,
                    None => break,
                }
            }
            widths[f] = room(&shown).max(NAME_MIN);
        }
        Columns {
            widths,
            aligns: cols.iter().map(|c| c.align).collect(),
            shown,
            flex,
        }
    }

    /// Whether column `i` is shown.
    pub fn shown(&self, i: usize) -> bool {
        self.shown[i]
    }

    /// Width of column `i`.
    pub fn width(&self, i: usize) -> usize {
        self.widths[i]
    }

    /// Width of the shown columns `from..to` with the blanks between them,
    /// for a cell that spans them.
    pub fn span(&self, from: usize, to: usize) -> usize {
        let shown: Vec<usize> = (from..to)
            .filter(|&i| self.shown[i])
            .map(|i| self.widths[i])
            .collect();
        shown.iter().sum::<usize>() + shown.len().saturating_sub(1)
    }

    /// The column under cell `x` of a row (the marker is cell 0; the blank
    /// after a column counts as its own): for a click on the header.
    pub fn column_at(&self, x: usize) -> Option<usize> {
        let mut left = 1;
        for (i, &w) in self.widths.iter().enumerate() {
            if !self.shown[i] {
                continue;
            }
            if x >= left && x <= left + w {
                return Some(i);
            }
            left += w + 1;
        }
        None
    }

    /// The shown cells, each fitted (the name) and padded to its column.
    pub fn cells(&self, cells: &[&str], theme: &Theme) -> Vec<String> {
        let mut out = Vec::with_capacity(cells.len());
        for (i, cell) in cells.iter().enumerate() {
            if !self.shown[i] {
                continue;
            }
            let w = self.widths[i];
            let cell = if Some(i) == self.flex {
                fit(cell, w, theme)
            } else {
                cell.to_string()
            };
            let pad = " ".repeat(w.saturating_sub(text_width(&cell)));
            out.push(match self.aligns[i] {
                Align::Left => cell,
                Align::Right => pad + &cell,
            });
        }
        out
    }

    /// One row: `marker` (one cell) and the cells, padded to their columns
    /// (cells of left-out columns are skipped). The name cell is shortened
    /// to fit (callers may shorten it better first, e.g. with
    /// [`type_name`]); other cells are never cut.
    pub fn row(&self, marker: &str, cells: &[&str], theme: &Theme) -> String {
        let mut out = String::with_capacity(self.widths.iter().sum::<usize>() + cells.len() + 1);
        out.push_str(marker);
        let last = (0..cells.len()).rev().find(|&i| self.shown[i]);
        let mut first = true;
        for (i, cell) in cells.iter().enumerate() {
            if !self.shown[i] {
                continue;
            }
            if !first {
                out.push(' ');
            }
            first = false;
            let w = self.widths[i];
            let fitted;
            let cell = if Some(i) == self.flex {
                fitted = fit(cell, w, theme);
                fitted.as_str()
            } else {
                cell
            };
            let pad = w.saturating_sub(text_width(cell));
            match self.aligns[i] {
                Align::Left => {
                    out.push_str(cell);
                    // The last cell needs no trailing blanks.
                    if Some(i) != last {
                        out.extend(std::iter::repeat_n(' ', pad));
                    }
                }
                Align::Right => {
                    out.extend(std::iter::repeat_n(' ', pad));
                    out.push_str(cell);
                }
            }
        }
        out
    }

    /// The header row (a blank where the marker goes).
    pub fn header(&self, cols: &[Col], theme: &Theme) -> String {
        let titles: Vec<String> = cols.iter().map(|c| c.title(theme)).collect();
        let cells: Vec<&str> = titles.iter().map(String::as_str).collect();
        self.row(" ", &cells, theme)
    }
}

/// A row keeps at least this much of a type's name beside an object's text.
const TYPE_MIN: usize = 12;

/// The characters of an object's text that `room` cells leave (the quotes
/// and the space before them taken off), at most
/// [`heaptui_core::model::ROW_PREVIEW_CHARS`]; 0 where fewer than 6 would show.
fn preview_chars(room: usize) -> usize {
    match room
        .saturating_sub(3)
        .min(heaptui_core::model::ROW_PREVIEW_CHARS)
    {
        r if r < 6 => 0,
        r => r,
    }
}

/// An object's text for a label `width` cells wide that also shows its
/// type and id (see [`Model::quoted_preview`]): the text comes before the
/// type's full name, which is shortened to make room for it (a class's
/// name or a string tells more than `java.lang.`), down to 12 cells;
/// none where fewer than 6 characters would show.
pub fn row_preview(dump: &Model, o: ObjectIdx, width: usize) -> String {
    let room = width.saturating_sub(dump.id_hex(o).len() + 1 + TYPE_MIN);
    dump.quoted_preview(o, preview_chars(room))
}

/// A type's name followed by the text `o` holds, in `width` cells: the
/// Type column of a duplicate set, whose members all hold that text. The
/// text takes the room the name leaves beyond 12 cells, as in
/// [`row_preview`].
pub fn type_with_preview(
    dump: &Model,
    name: &str,
    o: Option<ObjectIdx>,
    width: usize,
    theme: &Theme,
) -> String {
    let room = width.saturating_sub(text_width(name).min(TYPE_MIN));
    let text = o.map_or(String::new(), |o| {
        dump.quoted_preview(o, preview_chars(room))
    });
    let name = type_name(name, width.saturating_sub(text_width(&text)), theme);
    format!("{name}{text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_theme_gives_the_ellipsis() {
        let ascii = Theme {
            ascii: true,
            colors: crate::theme::Colors::Mono,
        };
        let unicode = Theme {
            ascii: false,
            ..ascii
        };
        assert_eq!(fit("abcdef", 5, &ascii), "ab...");
        assert_eq!(fit("abcdef", 5, &unicode), "abcd…");
        assert_eq!(fit_left("abcdef", 5, &unicode), "…cdef");
        assert_eq!(percent(1, 0), "-");
    }

    #[test]
    fn bytes_width_holds_every_smaller_value() {
        // Every value up to a few MiB, and around each unit's boundaries.
        let mut probes: Vec<u64> = (0..3 << 20).step_by(97).collect();
        for shift in [10u32, 20, 30, 40, 50, 60] {
            for d in [0u64, 1, 5, 10, 512, 1000 << (shift - 10)] {
                for base in [1u64 << shift, 1000 << (shift - 10)] {
                    probes.push(base.saturating_sub(d));
                    probes.push(base.saturating_add(d));
                }
            }
        }
        probes.push(u64::MAX);
        probes.sort_unstable();
        let mut widest = 0;
        for &v in &probes {
            widest = widest.max(bytes(v).len());
            assert!(
                bytes_width(v) >= widest,
                "{v}: {} < {widest}",
                bytes_width(v)
            );
            assert!(bytes_width(v) <= 11);
        }
        assert_eq!(bytes_width(0), 3); // "0 B"
        assert_eq!(bytes_width(1023), 6);
        assert_eq!(bytes_width(2048), 8); // "1.50 KiB" occurs below it
        assert_eq!(bytes_width(5 << 30), 11);
        assert_eq!(count_width(10_000_000), 10);
    }

    #[test]
    fn columns_keep_a_blank_between_cells_and_cut_only_the_name() {
        let t = Theme {
            ascii: true,
            colors: crate::theme::Colors::Mono,
        };
        let cols = [
            Col::name("Type"),
            Col::num("Count", count_width(19_602)),
            Col::num("Shallow", 11),
            Col::num("Min ret.", 11),
        ];
        let c = Columns::new(50, &cols);
        assert_eq!(c.width(0), 50 - 1 - (7 + 12 + 12));
        assert_eq!(
            c.header(&cols, &t),
            " Type                Count     Shallow    Min ret."
        );
        let row = c.row(
            ">",
            &[
                "A.Very.Long.Type.Name.That.Does.Not.Fit",
                "19,602",
                "1006.96 KiB",
                "1006.91 KiB",
            ],
            &t,
        );
        assert_eq!(row, ">A.Very.Long.Typ... 19,602 1006.96 KiB 1006.91 KiB");
        assert_eq!(row.len(), 50);
        // Too narrow: the name keeps its minimum, the numbers stay whole.
        let c = Columns::new(20, &cols);
        assert_eq!(c.width(0), NAME_MIN);
        let row = c.row(" ", &["T", "1", "2 B", "3 B"], &t);
        assert_eq!(row, " T        1         2 B         3 B");
        assert_eq!(c.span(1, 3), 6 + 1 + 11);
        // Optional columns give way to the name, the highest rank first.
        let cols = [
            Col::name("Type"),
            Col::num("A", 10),
            Col::num("B", 10).optional(1),
            Col::num("C", 10).optional(2),
        ];
        let c = Columns::new(40, &cols);
        assert!(c.shown(2) && !c.shown(3));
        assert_eq!(c.width(0), 40 - 1 - 22);
        let row = c.row(" ", &["T", "a", "b", "c"], &t);
        assert_eq!(row, format!(" T{}a{}b", " ".repeat(26), " ".repeat(10)));
        assert_eq!(c.span(1, 4), 21);
        assert!(Columns::new(60, &cols).shown(3));
    }

    #[test]
    fn widths_are_terminal_columns() {
        let t = Theme {
            ascii: true,
            colors: crate::theme::Colors::Mono,
        };
        // Two columns per ideograph: cut by columns, never mid-character.
        assert_eq!(text_width("型名"), 4);
        assert_eq!(fit("型名型名", 5, &t), "型...");
        assert_eq!(fit("型名", 4, &t), "型名");
        let c = Columns::new(20, &[Col::name("Type"), Col::num("N", 3)]);
        let row = c.row(" ", &["型名", "1"], &t);
        assert_eq!(text_width(&row), 20, "{row:?}");
    }
}
