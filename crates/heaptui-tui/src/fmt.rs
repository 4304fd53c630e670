//! Number and text formatting shared by the panes. Text is measured in
//! terminal columns (`unicode-width`), not in chars, so a wide character
//! in a type name cannot push a column out of line.

use unicode_width::UnicodeWidthChar;
use unicode_width::UnicodeWidthStr;

use crate::model::{Model, ObjectIdx};
use crate::theme::Theme;

/// Terminal columns `s` takes.
pub fn text_width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// The longest prefix of `s` that fits in `width` columns.
fn prefix(s: &str, width: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        used += c.width().unwrap_or(0);
        if used > width {
            return &s[..i];
        }
    }
    s
}

/// Bytes in binary units (`1.50 KiB`), exact below 1 KiB; counts with
/// thousands separators: the same as the text report's.
pub use crate::report::{count, counted, size as bytes};

/// `part` of `whole` as a percentage with one decimal.
pub fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

/// Cuts `s` to `width` columns, ending with an ellipsis when cut.
pub fn fit(s: &str, width: usize, theme: &Theme) -> String {
    if text_width(s) <= width {
        return s.to_string();
    }
    let e = theme.ellipsis();
    let e_len = text_width(e);
    if width <= e_len {
        return prefix(s, width).to_string();
    }
    let mut out = prefix(s, width - e_len).to_string();
    out.push_str(e);
    out
}

/// A type name fitted to `width`, keeping what tells names apart: the
/// class names, and the end of the name. First namespaces are shortened
/// to their first letter from the left (`S.C.G.List<S.String>`), then
/// dropped from the left (`List<F.M.OrderLine>`, `List<OrderLine>`), and
/// only then is the middle cut (`Dictionary<Str…CachedImage>`), so
/// `List<OrderLine>` and `List<Order>` stay different. Linear in the
/// name's length.
pub fn type_name(name: &str, width: usize, theme: &Theme) -> String {
    if text_width(name) <= width {
        return name.to_string();
    }
    // Identifier runs and single separators.
    let mut parts: Vec<&str> = Vec::new();
    let mut start = None;
    for (i, c) in name.char_indices() {
        if c.is_alphanumeric() || c == '_' || c == '`' {
            start.get_or_insert(i);
        } else {
            if let Some(s) = start.take() {
                parts.push(&name[s..i]);
            }
            parts.push(&name[i..i + c.len_utf8()]);
        }
    }
    if let Some(s) = start {
        parts.push(&name[s..]);
    }
    // A namespace part: an identifier followed by a '.'.
    let is_ns: Vec<bool> = (0..parts.len())
        .map(|i| parts.get(i + 1) == Some(&".") && parts[i] != ".")
        .collect();
    let mut shown: Vec<&str> = parts.clone();
    let mut len: usize = shown.iter().map(|p| text_width(p)).sum();
    // 1. `System.` -> `S.`, leftmost first.
    for i in 0..parts.len() {
        if len <= width {
            break;
        }
        if is_ns[i] {
            let first = parts[i].chars().next().map_or(0, char::len_utf8);
            let short = &parts[i][..first];
            len = len - text_width(parts[i]) + text_width(short);
            shown[i] = short;
        }
    }
    // 2. `S.` -> ``, leftmost first.
    for i in 0..parts.len() {
        if len <= width {
            break;
        }
        if is_ns[i] {
            len -= text_width(shown[i]) + 1;
            shown[i] = "";
            shown[i + 1] = "";
        }
    }
    let short = shown.concat();
    fit_middle(&short, width, theme)
}

/// Cuts `s` to `width` columns in the middle, keeping its start and (the
/// larger part) its end.
pub fn fit_middle(s: &str, width: usize, theme: &Theme) -> String {
    let total = text_width(s);
    if total <= width {
        return s.to_string();
    }
    let e = theme.ellipsis();
    let e_len = text_width(e);
    if width <= e_len + 2 {
        return fit(s, width, theme);
    }
    let room = width - e_len;
    let head = room / 3;
    let head_s = prefix(s, head);
    let tail_s = suffix(s, room - text_width(head_s));
    format!("{head_s}{e}{tail_s}")
}

/// Cuts `s` to `width` columns from the left, starting with an ellipsis
/// when cut: the end (e.g. the current node of a breadcrumb) stays.
pub fn fit_left(s: &str, width: usize, theme: &Theme) -> String {
    if text_width(s) <= width {
        return s.to_string();
    }
    let e = theme.ellipsis();
    let e_len = text_width(e);
    if width <= e_len {
        return suffix(s, width).to_string();
    }
    format!("{e}{}", suffix(s, width - e_len))
}

/// The longest suffix of `s` that fits in `width` columns.
fn suffix(s: &str, width: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices().rev() {
        used += c.width().unwrap_or(0);
        if used > width {
            return &s[i + c.len_utf8()..];
        }
    }
    s
}

/// Width of the widest `bytes(x)` for any `x <= max`, so a column sized
/// by its largest value holds every smaller one (the text is not monotone:
/// `1000.50 KiB` is wider than `1.50 MiB`). At most 11 (`1023.99 KiB`).
pub fn bytes_width(max: u64) -> usize {
    if max < 1024 {
        return bytes(max).len();
    }
    if max >= 1 << 20 {
        // Every KiB value lies below `max`, `1000.50 KiB` among them.
        return 11;
    }
    // Kibibytes: as many integer digits as `max` has, two decimals, " KiB";
    // never narrower than the widest byte count (`1023 B`).
    let int_digits = format!("{:.2}", max as f64 / 1024.0).find('.').unwrap_or(4);
    (int_digits + 3 + 4).max(6)
}

/// Width of `count(x)` for any `x <= max` (it grows with the value).
pub fn count_width(max: u64) -> usize {
    count(max).len()
}

/// How a column's cells are aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// One column of a [`Columns`] layout.
#[derive(Debug, Clone, Copy)]
pub struct Col {
    pub header: &'static str,
    /// Width of its widest value (computed once per data set by the pane).
    pub content: usize,
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

/// Milliseconds as `0.4s` / `12s`.
pub fn secs(ms: u64) -> String {
    if ms < 10_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}s", ms / 1000)
    }
}

/// A row keeps at least this much of a type's name beside an object's text.
const TYPE_MIN: usize = 12;

/// The characters of an object's text that `room` cells leave (the quotes
/// and the space before them taken off), at most
/// [`crate::model::ROW_PREVIEW_CHARS`]; 0 where fewer than 6 would show.
fn preview_chars(room: usize) -> usize {
    match room.saturating_sub(3).min(crate::model::ROW_PREVIEW_CHARS) {
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
    fn formats() {
        assert_eq!(count(0), "0");
        assert_eq!(count(1234567), "1,234,567");
        assert_eq!(bytes(1536), "1.50 KiB");
        assert_eq!(percent(1, 3), "33.3%");
        assert_eq!(percent(1, 0), "-");
        let t = Theme {
            ascii: true,
            colors: crate::theme::Colors::Mono,
        };
        assert_eq!(fit("abcdef", 5, &t), "ab...");
        assert_eq!(fit("abc", 5, &t), "abc");
        assert_eq!(secs(1234), "1.2s");
        assert_eq!(bytes(1000 * 1024 + 512), "1000.50 KiB");
        let name =
            "System.Collections.Generic.Dictionary<System.String,FieldOps.Imaging.CachedImage>";
        assert_eq!(type_name(name, 100, &t), name);
        assert_eq!(
            type_name(name, 60, &t),
            "S.C.G.Dictionary<System.String,FieldOps.Imaging.CachedImage>"
        );
        assert_eq!(
            type_name(name, 50, &t),
            "S.C.G.Dictionary<S.String,F.Imaging.CachedImage>"
        );
        assert_eq!(
            type_name(name, 40, &t),
            "C.G.Dictionary<S.String,F.I.CachedImage>"
        );
        assert_eq!(type_name(name, 30, &t), "Dictionary<String,CachedImage>");
        assert_eq!(type_name(name, 20, &t), "Dicti...CachedImage>");
        assert_eq!(type_name(name, 20, &t).len(), 20);
    }

    #[test]
    fn shortened_names_stay_different() {
        let t = Theme {
            ascii: false,
            colors: crate::theme::Colors::Mono,
        };
        let a = "System.Collections.Generic.List<FieldOps.Model.OrderLine>";
        let b = "System.Collections.Generic.List<FieldOps.Model.Order>";
        for w in 8..a.len() {
            let (sa, sb) = (type_name(a, w, &t), type_name(b, w, &t));
            assert!(
                text_width(&sa) <= w && text_width(&sb) <= w,
                "{w}: {sa} {sb}"
            );
            assert_ne!(sa, sb, "{w}");
        }
        assert_eq!(type_name(a, 20, &t), "List<F.M.OrderLine>");
        assert_eq!(type_name(b, 20, &t), "C.G.List<F.M.Order>");
        assert_eq!(type_name(a, 12, &t), "Lis…derLine>");
        assert_eq!(fit_left("all roots → A → Order", 12, &t), "…→ A → Order");
        assert_eq!(fit_left("short", 12, &t), "short");
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
