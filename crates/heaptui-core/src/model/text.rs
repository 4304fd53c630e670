//! Text that comes from a dump (type names, AppDomain names, the snippets
//! quoted in diagnostics) made safe to print to a terminal. Strings enter
//! the model only through importers, and every importer passes them through
//! [`printable`]: the views (report, TUI) can then print them as they are.

use std::fmt::Write;
use std::path::Path;

use unicode_width::UnicodeWidthChar;

/// `bytes` as text safe to print: invalid UTF-8 shown lossily (U+FFFD),
/// then every control character, C0 (`\0`–`\x1f`, tab and line ends
/// included), DEL (`\x7f`) and C1 (U+0080–U+009F), written visibly as
/// `\xHH` (its code point in two hex digits) so that no escape sequence,
/// bell or line break from a dump ever reaches the terminal. Characters
/// that would reorder or hide text are written `\u{HHHH}`: bidi controls
/// (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C), zero-width
/// characters (U+200B, U+200C, U+2060–U+2064, U+FEFF; U+200D too, except
/// between emoji, where it joins them), and combining marks in runs of
/// more than [`MAX_MARKS`] (they stack over one cell and shift columns).
/// Text without any of these is copied once, unchanged.
pub fn printable(bytes: &[u8]) -> Box<str> {
    let text = String::from_utf8_lossy(bytes);
    if is_plain(&text) {
        return text.into();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_control() {
            // Every control character is below U+00A0: two hex digits.
            let _ = write!(out, "\\x{:02x}", c as u32);
        } else if hiding(c) {
            let joins = c == '\u{200d}'
                && i > 0
                && i + 1 < chars.len()
                && (pictographic(chars[i - 1]) || emoji_modifier(chars[i - 1]))
                && pictographic(chars[i + 1]);
            match joins {
                true => out.push(c),
                false => escape(&mut out, c),
            }
        } else if zero_width(c) {
            let run = chars[i..]
                .iter()
                .take_while(|&&c| marking(c))
                .count()
                .max(1);
            let long = run > MAX_MARKS;
            for &m in &chars[i..i + run] {
                match long {
                    true => escape(&mut out, m),
                    false => out.push(m),
                }
            }
            i += run;
            continue;
        } else {
            out.push(c);
        }
        i += 1;
    }
    out.into()
}

/// Whether [`printable`] leaves `text` as it is (a quick look: false for
/// some text it keeps, such as accents).
pub fn is_plain(text: &str) -> bool {
    !text.chars().any(|c| c.is_control() || zero_width(c))
}

/// A path as [`printable`] text (file names reach the terminal too).
pub fn printable_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    printable(path.as_os_str().as_bytes()).into()
}

/// Combining marks (and other zero-width characters) shown as they are in
/// a run of at most this many.
pub const MAX_MARKS: usize = 3;

fn escape(out: &mut String, c: char) {
    let _ = write!(out, "\\u{{{:04x}}}", c as u32);
}

/// Takes no cell of its own (the slow path of [`printable`] looks closer).
fn zero_width(c: char) -> bool {
    !c.is_ascii() && (hiding(c) || c.width() == Some(0))
}

/// A combining mark or variation selector: zero-width, not a control or
/// one of the [`hiding`] characters.
fn marking(c: char) -> bool {
    !c.is_control() && !hiding(c) && c.width() == Some(0)
}

/// Bidi controls and invisible characters: always escaped (U+200D save
/// between emoji).
fn hiding(c: char) -> bool {
    matches!(
        c,
        '\u{061c}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{feff}'
    )
}

/// Emoji and pictographs that zero-width joiners join.
fn pictographic(c: char) -> bool {
    matches!(
        c,
        '\u{00a9}'
            | '\u{00ae}'
            | '\u{203c}'
            | '\u{2049}'
            | '\u{2122}'
            | '\u{2190}'..='\u{21ff}'
            | '\u{2300}'..='\u{23ff}'
            | '\u{2600}'..='\u{27bf}'
            | '\u{2b00}'..='\u{2bff}'
            | '\u{1f000}'..='\u{1faff}'
    )
}

/// What may stand between an emoji and a joiner: a variation selector, a
/// skin tone.
fn emoji_modifier(c: char) -> bool {
    matches!(c, '\u{fe0f}' | '\u{1f3fb}'..='\u{1f3ff}')
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
    fn bidi_controls_and_zero_width_characters_are_shown_as_escapes() {
        assert_eq!(
            &*printable("Evil\u{202e}gpj.exe".as_bytes()),
            "Evil\\u{202e}gpj.exe"
        );
        for c in ['\u{202a}', '\u{2066}', '\u{2069}', '\u{200e}', '\u{200f}'] {
            let s = format!("a{c}b");
            assert_eq!(
                &*printable(s.as_bytes()),
                format!("a\\u{{{:04x}}}b", c as u32)
            );
        }
        assert_eq!(
            &*printable("a\u{200b}b\u{feff}".as_bytes()),
            "a\\u{200b}b\\u{feff}"
        );
        // A joiner between letters hides; between emoji it joins them.
        assert_eq!(&*printable("a\u{200d}b".as_bytes()), "a\\u{200d}b");
        let family = "👨\u{200d}👩\u{200d}👧 ❤\u{fe0f}\u{200d}🔥";
        assert_eq!(&*printable(family.as_bytes()), family);
    }

    #[test]
    fn long_runs_of_combining_marks_are_shown_as_escapes() {
        // Accents as written in names pass.
        for s in ["é", "Ả", "e\u{301}", "a\u{301}\u{302}\u{303}", "नमस्ते"] {
            assert_eq!(&*printable(s.as_bytes()), s);
        }
        let zalgo = format!("a{}b", "\u{301}".repeat(40));
        let out = printable(zalgo.as_bytes());
        assert_eq!(&*out, format!("a{}b", "\\u{0301}".repeat(40)));
    }

    #[test]
    fn invalid_utf8_is_lossy_and_never_a_raw_c1_byte() {
        let out = printable(b"T\x9b\xff");
        assert_eq!(&*out, "T\u{fffd}\u{fffd}");
        assert!(!out.chars().any(char::is_control));
    }
}
