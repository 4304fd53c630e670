//! Number and text formatting shared by the panes.

use crate::tui::theme::Theme;

/// Bytes in binary units (`1.50 KiB`), exact below 1 KiB; counts with
/// thousands separators: the same as the text report's.
pub use crate::report::{count, size as bytes};

/// `part` of `whole` as a percentage with one decimal.
pub fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".into();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

/// Cuts `s` to `width` characters, ending with an ellipsis when cut.
pub fn fit(s: &str, width: usize, theme: &Theme) -> String {
    let n = s.chars().count();
    if n <= width {
        return s.to_string();
    }
    let e = theme.ellipsis();
    let e_len = e.chars().count();
    if width <= e_len {
        return s.chars().take(width).collect();
    }
    let mut out: String = s.chars().take(width - e_len).collect();
    out.push_str(e);
    out
}

/// A type name fitted to `width`: namespaces shortened to their first
/// letter from the left (`S.C.G.List<S.String>`) before cutting the end.
pub fn type_name(name: &str, width: usize, theme: &Theme) -> String {
    if name.chars().count() <= width {
        return name.to_string();
    }
    // Split into identifier runs and separators; shorten dotted runs that
    // are followed by a '.', leftmost first, until the name fits.
    let mut parts: Vec<String> = Vec::new();
    let mut cur = String::new();
    for c in name.chars() {
        if c.is_alphanumeric() || c == '_' || c == '`' {
            cur.push(c);
        } else {
            if !cur.is_empty() {
                parts.push(std::mem::take(&mut cur));
            }
            parts.push(c.to_string());
        }
    }
    if !cur.is_empty() {
        parts.push(cur);
    }
    let len = |p: &[String]| p.iter().map(|s| s.chars().count()).sum::<usize>();
    for i in 0..parts.len() {
        if len(&parts) <= width {
            break;
        }
        let is_ns = parts.get(i + 1).is_some_and(|n| n == ".") && parts[i].chars().count() > 1;
        if is_ns {
            parts[i] = parts[i]
                .chars()
                .next()
                .map(String::from)
                .unwrap_or_default();
        }
    }
    fit(&parts.concat(), width, theme)
}

/// Milliseconds as `0.4s` / `12s`.
pub fn secs(ms: u64) -> String {
    if ms < 10_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}s", ms / 1000)
    }
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
            color: false,
        };
        assert_eq!(fit("abcdef", 5, &t), "ab...");
        assert_eq!(fit("abc", 5, &t), "abc");
        assert_eq!(secs(1234), "1.2s");
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
    }
}
