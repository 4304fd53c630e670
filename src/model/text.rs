//! Text that comes from a dump (type names, AppDomain names, the snippets
//! quoted in diagnostics) made safe to print to a terminal. Strings enter
//! the model only through importers, and every importer passes them through
//! [`printable`]: the views (report, TUI) can then print them as they are.

use std::fmt::Write;

/// `bytes` as text safe to print: invalid UTF-8 shown lossily (U+FFFD),
/// then every control character, C0 (`\0`–`\x1f`, tab and line ends
/// included), DEL (`\x7f`) and C1 (U+0080–U+009F), written visibly as
/// `\xHH` (its code point in two hex digits) so that no escape sequence,
/// bell or line break from a dump ever reaches the terminal. Text without
/// control characters is copied once, unchanged.
pub fn printable(bytes: &[u8]) -> Box<str> {
    let text = String::from_utf8_lossy(bytes);
    if !text.chars().any(char::is_control) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if c.is_control() {
            // Every control character is below U+00A0: two hex digits.
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_unchanged() {
        for s in [
            "",
            "System.String",
            "Dictionary<K, V>[,]",
            "\\Windows\\app.exe",
            "Ünïcødé ✓",
        ] {
            assert_eq!(&*printable(s.as_bytes()), s);
        }
    }

    #[test]
    fn control_characters_are_shown_as_escapes() {
        assert_eq!(&*printable(b"\x1b]2;x\x07"), "\\x1b]2;x\\x07");
        assert_eq!(&*printable(b"a\x1b[41mb"), "a\\x1b[41mb");
        assert_eq!(&*printable(b"\0\t\r\n\x7f"), "\\x00\\x09\\x0d\\x0a\\x7f");
        // C1 controls (CSI U+009B, NEL U+0085) as UTF-8.
        assert_eq!(&*printable("\u{9b}31m\u{85}".as_bytes()), "\\x9b31m\\x85");
    }

    #[test]
    fn invalid_utf8_is_lossy_and_never_a_raw_c1_byte() {
        let out = printable(b"T\x9b\xff");
        assert_eq!(&*out, "T\u{fffd}\u{fffd}");
        assert!(!out.chars().any(char::is_control));
    }
}
