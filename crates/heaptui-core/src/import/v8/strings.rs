//! The snapshot's `strings` array: found literal by literal (a sequential
//! scan for quotes and backslashes, a few GB/s), then decoded in parallel
//! into one arena. Literals without a backslash are their own UTF-8 bytes;
//! the others go through serde_json's string decoder.

use std::borrow::Cow;

use rayon::prelude::*;

use super::layout::skip_string;

/// Byte ranges of the string literals of the array (quotes included).
#[derive(Debug, Default)]
pub struct StringSpans {
    /// Literal `i` is `bytes[spans[2i]..spans[2i + 1]]`.
    spans: Vec<u64>,
    /// Where the array's elements start (after `[`).
    pub start: usize,
    /// Where the array's `]` is (when `closed`), else where the scan stopped.
    pub end: usize,
    pub closed: bool,
    /// Why the scan stopped before `]`: a cut file or a malformed element.
    pub stopped: Option<String>,
}

impl StringSpans {
    pub fn count(&self) -> usize {
        self.spans.len() / 2
    }
}

/// Scans the array whose elements start at `pos` (just after `[`).
pub fn scan_strings(bytes: &[u8], mut pos: usize) -> StringSpans {
    let mut out = StringSpans {
        start: pos,
        ..StringSpans::default()
    };
    let ws = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    loop {
        while pos < bytes.len() && (ws(bytes[pos]) || bytes[pos] == b',') {
            pos += 1;
        }
        match bytes.get(pos) {
            Some(b']') => {
                out.end = pos;
                out.closed = true;
                return out;
            }
            Some(b'"') => match skip_string(bytes, pos) {
                Some(end) => {
                    out.spans.push(pos as u64);
                    out.spans.push(end as u64);
                    pos = end;
                }
                None => {
                    out.stopped = Some("the file ends inside the strings array".into());
                    return out;
                }
            },
            Some(&b) => {
                out.stopped = Some(format!(
                    "strings array: unexpected `{}` at byte {pos}",
                    b.escape_ascii()
                ));
                return out;
            }
            None => {
                out.stopped = Some("the file ends inside the strings array".into());
                return out;
            }
        }
    }
}

/// The decoded strings, in one arena.
#[derive(Debug, Default)]
pub struct Pool {
    bytes: Vec<u8>,
    /// `count + 1` offsets into `bytes`.
    offsets: Vec<u64>,
    /// Literals that were not valid JSON strings (kept as their raw text).
    pub undecodable: u64,
}

impl Pool {
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn get(&self, i: usize) -> Option<&str> {
        let start = *self.offsets.get(i)? as usize;
        let end = *self.offsets.get(i + 1)? as usize;
        // Every piece was pushed from a `str`.
        std::str::from_utf8(&self.bytes[start..end]).ok()
    }

    pub fn bytes_of(&self, i: usize) -> &[u8] {
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&s), Some(&e)) => &self.bytes[s as usize..e as usize],
            _ => &[],
        }
    }
}

/// One literal's text: `None` when it is not a valid JSON string.
fn decode(literal: &[u8]) -> Option<Cow<'_, str>> {
    let inner = literal.get(1..literal.len().checked_sub(1)?)?;
    if memchr::memchr(b'\\', inner).is_none() {
        return Some(String::from_utf8_lossy(inner));
    }
    serde_json::from_slice::<String>(literal)
        .ok()
        .map(Cow::Owned)
}

/// Decodes every literal (in parallel pieces of about 4096 strings).
pub fn decode_all(bytes: &[u8], spans: &StringSpans) -> Pool {
    const PIECE: usize = 4096;
    let parts: Vec<(Vec<u8>, Vec<u64>, u64)> = spans
        .spans
        .par_chunks(2 * PIECE)
        .map(|piece| {
            let mut out = Vec::new();
            let mut ends = Vec::with_capacity(piece.len() / 2);
            let mut bad = 0;
            for pair in piece.chunks_exact(2) {
                let literal = &bytes[pair[0] as usize..pair[1] as usize];
                match decode(literal) {
                    Some(text) => out.extend_from_slice(text.as_bytes()),
                    None => {
                        bad += 1;
                        let inner = &literal[1..literal.len() - 1];
                        out.extend_from_slice(String::from_utf8_lossy(inner).as_bytes());
                    }
                }
                ends.push(out.len() as u64);
            }
            (out, ends, bad)
        })
        .collect();
    let total: usize = parts.iter().map(|p| p.0.len()).sum();
    let mut pool = Pool {
        bytes: Vec::with_capacity(total),
        offsets: Vec::with_capacity(spans.count() + 1),
        undecodable: 0,
    };
    pool.offsets.push(0);
    for (text, ends, bad) in parts {
        let base = pool.bytes.len() as u64;
        pool.bytes.extend_from_slice(&text);
        pool.offsets.extend(ends.iter().map(|e| base + e));
        pool.undecodable += bad;
    }
    pool
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_escapes_and_keeps_plain_bytes() {
        let text = r#"["plain", "q\"\\\n\u00e9\ud83d\ude00", "café", "\ud800"]"#.as_bytes();
        let spans = scan_strings(text, 1);
        assert!(spans.closed);
        assert_eq!(spans.count(), 4);
        let pool = decode_all(text, &spans);
        assert_eq!(pool.get(0), Some("plain"));
        assert_eq!(pool.get(1), Some("q\"\\\né😀"));
        assert_eq!(pool.get(2), Some("café"));
        // A lone surrogate is no JSON string serde accepts: kept raw, counted.
        assert_eq!(pool.get(3), Some("\\ud800"));
        assert_eq!(pool.undecodable, 1);
        assert_eq!(pool.get(4), None);
    }

    #[test]
    fn a_cut_array_keeps_its_whole_literals() {
        let text = br#"["a","b","c"#;
        let spans = scan_strings(text, 1);
        assert!(!spans.closed);
        assert_eq!(spans.count(), 2);
        assert!(spans.stopped.is_some());
    }
}
