//! Text written once for every view (the text report, the TUI): sizes,
//! counts, percentages, plurals and durations, and text measured, cut,
//! shortened and wrapped in terminal columns (`unicode-width`), not in
//! chars, so that a wide character cannot push a column out of line.
//!
//! Functions that cut text take the ellipsis to end with (`…`, or `...`
//! for an ASCII terminal). Imports nothing of the crate.

use humansize::{format_size, BINARY};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Bytes in binary units (`1.50 KiB`), exact below 1 KiB.
pub fn size(bytes: u64) -> String {
    format_size(bytes, BINARY)
}

/// Width of the widest [`size`] of any value up to `max`, so that a column
/// sized by its largest value holds every smaller one (the text is not
/// monotone: `1000.50 KiB` is wider than `1.50 MiB`). At most 11
/// (`1023.99 KiB`).
pub fn size_width(max: u64) -> usize {
    if max < 1024 {
        return size(max).len();
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

/// An integer with thousands separators: `1,234,567`.
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Width of [`count`] of any value up to `max` (it grows with the value).
pub fn count_width(max: u64) -> usize {
    count(max).len()
}

/// `n` and a noun, singular for one: `1 object`, `2 objects` (the noun's
/// plural is given, as English has a few irregular ones).
pub fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", count(n), if n == 1 { one } else { many })
}

/// `n thing` or `n things`: [`counted`] for a noun whose plural takes an s.
pub fn plural(n: u64, thing: &str) -> String {
    format!("{} {thing}{}", count(n), if n == 1 { "" } else { "s" })
}

/// `part` as a percentage of `whole`, one decimal; `0.0%` of nothing. The
/// reports' figure (their bytes are a contract, see docs/json.md).
pub fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "0.0%".into();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

/// [`percent`], but `-` of nothing: the TUI's cells, where a share of an
/// empty heap (or of a total not known yet) is no share at all.
pub fn percent_or_dash(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    percent(part, whole)
}

/// Milliseconds as `0.4s` / `12s`.
pub fn secs(ms: u64) -> String {
    if ms < 10_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}s", ms / 1000)
    }
}

/// The AppDomains of a text dump, as `name (N objects)` joined by commas,
/// from (display name, objects) pairs in file order.
pub fn app_domains<'a>(domains: impl IntoIterator<Item = (&'a str, u64)>) -> String {
    let phrases: Vec<String> = domains
        .into_iter()
        .map(|(name, objects)| format!("{name} ({})", counted(objects, "object", "objects")))
        .collect();
    phrases.join(", ")
}

/// Terminal columns `s` takes.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// The longest prefix of `s` that fits in `cols` columns.
pub fn prefix(s: &str, cols: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        used += c.width().unwrap_or(0);
        if used > cols {
            return &s[..i];
        }
    }
    s
}

/// The longest suffix of `s` that fits in `cols` columns.
pub fn suffix(s: &str, cols: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices().rev() {
        used += c.width().unwrap_or(0);
        if used > cols {
            return &s[i + c.len_utf8()..];
        }
    }
    s
}

/// `s` cut to `cols` columns, ending with `ellipsis` when cut.
pub fn fit(s: &str, cols: usize, ellipsis: &str) -> String {
    if width(s) <= cols {
        return s.to_string();
    }
    let e_len = width(ellipsis);
    if cols <= e_len {
        return prefix(s, cols).to_string();
    }
    let mut out = prefix(s, cols - e_len).to_string();
    out.push_str(ellipsis);
    out
}

/// `s` cut to `cols` columns in the middle, keeping its start and (the
/// larger part) its end.
pub fn fit_middle(s: &str, cols: usize, ellipsis: &str) -> String {
    if width(s) <= cols {
        return s.to_string();
    }
    let e_len = width(ellipsis);
    if cols <= e_len + 2 {
        return fit(s, cols, ellipsis);
    }
    let room = cols - e_len;
    let head = prefix(s, room / 3);
    let tail = suffix(s, room - width(head));
    format!("{head}{ellipsis}{tail}")
}

/// `s` cut to `cols` columns from the left, starting with `ellipsis` when
/// cut: the end (e.g. the current node of a breadcrumb) stays.
pub fn fit_left(s: &str, cols: usize, ellipsis: &str) -> String {
    if width(s) <= cols {
        return s.to_string();
    }
    let e_len = width(ellipsis);
    if cols <= e_len {
        return suffix(s, cols).to_string();
    }
    format!("{ellipsis}{}", suffix(s, cols - e_len))
}

/// A type name fitted to `cols`, keeping what tells names apart: the
/// class names, and the end of the name. First namespaces are shortened
/// to their first letter from the left (`S.C.G.List<S.String>`), then
/// dropped from the left (`List<F.M.OrderLine>`, `List<OrderLine>`), and
/// only then is the middle cut (`Dictionary<Str…CachedImage>`), so
/// `List<OrderLine>` and `List<Order>` stay different. Linear in the
/// name's length.
pub fn type_name(name: &str, cols: usize, ellipsis: &str) -> String {
    if width(name) <= cols {
        return name.to_string();
    }
    let parts = name_parts(name);
    // A namespace part: an identifier followed by a '.'.
    let is_ns: Vec<bool> = (0..parts.len())
        .map(|i| parts.get(i + 1) == Some(&".") && parts[i] != ".")
        .collect();
    let mut shown: Vec<&str> = parts.clone();
    let mut len: usize = shown.iter().map(|p| width(p)).sum();
    // 1. `System.` -> `S.`, leftmost first.
    for i in 0..parts.len() {
        if len <= cols {
            break;
        }
        if is_ns[i] {
            let first = parts[i].chars().next().map_or(0, char::len_utf8);
            let short = &parts[i][..first];
            len = len - width(parts[i]) + width(short);
            shown[i] = short;
        }
    }
    // 2. `S.` -> ``, leftmost first.
    for i in 0..parts.len() {
        if len <= cols {
            break;
        }
        if is_ns[i] {
            len -= width(shown[i]) + 1;
            shown[i] = "";
            shown[i + 1] = "";
        }
    }
    fit_middle(&shown.concat(), cols, ellipsis)
}

/// A type name's identifier runs and single separators, in order.
fn name_parts(name: &str) -> Vec<&str> {
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
    parts
}

/// Words of `text` in lines of at most `cols` columns; a word wider than
/// a line is cut into pieces (each at least one character). At least one
/// line, empty for an empty text. Linear in the text's length.
pub fn wrap(text: &str, cols: usize) -> Vec<String> {
    let cols = cols.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut used = 0;
    for mut word in text.split(' ').filter(|w| !w.is_empty()) {
        loop {
            let word_cols = width(word);
            let room = if line.is_empty() {
                cols
            } else {
                cols.saturating_sub(used + 1)
            };
            if word_cols <= room {
                if !line.is_empty() {
                    line.push(' ');
                    used += 1;
                }
                line.push_str(word);
                used += word_cols;
                break;
            }
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
                used = 0;
                continue;
            }
            // A word wider than a line: its first `cols` columns, or its
            // first character where that alone is wider.
            let mut head = prefix(word, cols);
            if head.is_empty() {
                head = &word[..word.chars().next().map_or(0, char::len_utf8)];
            }
            lines.push(head.to_string());
            word = &word[head.len()..];
            if word.is_empty() {
                break;
            }
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures() {
        assert_eq!(count(0), "0");
        assert_eq!(count(1234567), "1,234,567");
        assert_eq!(size(1536), "1.50 KiB");
        assert_eq!(size(1000 * 1024 + 512), "1000.50 KiB");
        assert_eq!(percent(1, 3), "33.3%");
        assert_eq!(percent(1, 0), "0.0%");
        assert_eq!(percent_or_dash(1, 3), "33.3%");
        assert_eq!(percent_or_dash(1, 0), "-");
        assert_eq!(counted(1, "index", "indices"), "1 index");
        assert_eq!(plural(1, "set"), "1 set");
        assert_eq!(plural(1200, "set"), "1,200 sets");
        assert_eq!(secs(1234), "1.2s");
        assert_eq!(secs(12_345), "12s");
        assert_eq!(app_domains([]), "");
        assert_eq!(
            app_domains([("A", 1), ("(outside any AppDomain)", 2)]),
            "A (1 object), (outside any AppDomain) (2 objects)"
        );
    }

    #[test]
    fn fits() {
        assert_eq!(fit("abcdef", 5, "..."), "ab...");
        assert_eq!(fit("abc", 5, "..."), "abc");
        assert_eq!(fit("abcdef", 2, "..."), "ab");
        assert_eq!(fit_left("all roots → A → Order", 12, "…"), "…→ A → Order");
        assert_eq!(fit_left("short", 12, "…"), "short");
        assert_eq!(fit_middle("abcdefghij", 7, "…"), "ab…ghij");
        assert_eq!(fit("日本語", 4, "…"), "日…");
    }

    #[test]
    fn type_names() {
        let name =
            "System.Collections.Generic.Dictionary<System.String,FieldOps.Imaging.CachedImage>";
        assert_eq!(type_name(name, 100, "..."), name);
        assert_eq!(
            type_name(name, 60, "..."),
            "S.C.G.Dictionary<System.String,FieldOps.Imaging.CachedImage>"
        );
        assert_eq!(
            type_name(name, 50, "..."),
            "S.C.G.Dictionary<S.String,F.Imaging.CachedImage>"
        );
        assert_eq!(
            type_name(name, 40, "..."),
            "C.G.Dictionary<S.String,F.I.CachedImage>"
        );
        assert_eq!(type_name(name, 30, "..."), "Dictionary<String,CachedImage>");
        assert_eq!(type_name(name, 20, "..."), "Dicti...CachedImage>");
        assert_eq!(type_name(name, 20, "...").len(), 20);
    }

    #[test]
    fn shortened_names_stay_different() {
        let a = "System.Collections.Generic.List<FieldOps.Model.OrderLine>";
        let b = "System.Collections.Generic.List<FieldOps.Model.Order>";
        for w in 8..a.len() {
            let (sa, sb) = (type_name(a, w, "…"), type_name(b, w, "…"));
            assert!(width(&sa) <= w && width(&sb) <= w, "{w}: {sa} {sb}");
            assert_ne!(sa, sb, "{w}");
        }
        assert_eq!(type_name(a, 20, "…"), "List<F.M.OrderLine>");
        assert_eq!(type_name(b, 20, "…"), "C.G.List<F.M.Order>");
        assert_eq!(type_name(a, 12, "…"), "Lis…derLine>");
    }

    #[test]
    fn wrap_breaks_at_words_and_cuts_a_word_wider_than_a_line() {
        assert_eq!(wrap("one two three", 7), ["one two", "three"]);
        assert_eq!(wrap("one two three", 100), ["one two three"]);
        assert_eq!(wrap("ab abcdefghij c", 4), ["ab", "abcd", "efgh", "ij c"]);
        assert_eq!(wrap("Retained 1 → 2", 10), ["Retained 1", "→ 2"]);
        assert_eq!(wrap("", 5), [""]);
        assert_eq!(wrap("  a  b ", 5), ["a b"]);
        // A character wider than the line still goes on one.
        assert_eq!(wrap("日本", 1), ["日", "本"]);
        assert_eq!(wrap("x日本", 3), ["x日", "本"]);
        assert_eq!(wrap("abc", 0), ["a", "b", "c"]);
    }

    /// The wrap as it was written first (quadratic in a long word), as an
    /// oracle for the linear one.
    fn wrap_oracle(text: &str, cols: usize) -> Vec<String> {
        let cols = cols.max(1);
        let mut lines = Vec::new();
        let mut line = String::new();
        for word in text.split(' ').filter(|w| !w.is_empty()) {
            let mut word = word.to_string();
            loop {
                let room = if line.is_empty() {
                    cols
                } else {
                    cols.saturating_sub(width(&line) + 1)
                };
                if width(&word) <= room {
                    if !line.is_empty() {
                        line.push(' ');
                    }
                    line.push_str(&word);
                    break;
                }
                if !line.is_empty() {
                    lines.push(std::mem::take(&mut line));
                    continue;
                }
                let chars: Vec<char> = word.chars().collect();
                let mut cut = 0;
                let mut head = String::new();
                while cut < chars.len() {
                    let mut h = head.clone();
                    h.push(chars[cut]);
                    if width(&h) > cols && !head.is_empty() {
                        break;
                    }
                    head = h;
                    cut += 1;
                }
                lines.push(head);
                word = chars[cut..].iter().collect();
                if word.is_empty() {
                    break;
                }
            }
        }
        if !line.is_empty() || lines.is_empty() {
            lines.push(line);
        }
        lines
    }

    proptest::proptest! {
        #[test]
        fn wrap_matches_the_oracle(
            text in "[ a-c日→\u{301}]{0,40}",
            cols in 0usize..12,
        ) {
            proptest::prop_assert_eq!(wrap(&text, cols), wrap_oracle(&text, cols));
        }
    }
}
