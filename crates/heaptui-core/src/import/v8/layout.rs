//! Where the parts of a snapshot file lie: a walk over the top-level JSON
//! object that reads keys and skips values without building them. The
//! `snapshot` header is returned as a byte range (it is small and parsed
//! with serde_json); `nodes` and `edges` as the byte ranges of their
//! numbers; `strings` as the byte range of each string literal.
//!
//! The numeric arrays are offered to the caller as the walk meets them: it
//! reads one at once when it can (the header came first, the nodes before
//! the edges, as V8 writes them), finding its end while reading; else the
//! walk searches the end and the caller reads the array afterwards.

use std::ops::{ControlFlow, Range};

use super::strings::{scan_strings, StringSpans};
use crate::import::source::Source;

/// A numeric array's contents: `range` runs from after `[` to its `]`, or
/// to the end of the file when the array was cut (`closed` false).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumberArray {
    pub range: Range<usize>,
    pub closed: bool,
}

/// The parts found; a part the file does not hold (or that lies after the
/// point where the file was cut) is `None`.
#[derive(Debug, Default)]
pub struct Layout {
    pub header: Option<Range<usize>>,
    pub nodes: Option<NumberArray>,
    pub edges: Option<NumberArray>,
    pub strings: Option<StringSpans>,
    /// The `locations` array (where closures were defined), when it is a
    /// closed array of numbers.
    pub locations: Option<NumberArray>,
    /// Where the walk stopped early and why (a cut or malformed file).
    pub stopped: Option<String>,
}

fn skip_ws(bytes: &[u8], mut pos: usize) -> usize {
    while pos < bytes.len() && matches!(bytes[pos], b' ' | b'\t' | b'\n' | b'\r') {
        pos += 1;
    }
    pos
}

/// The end (one past the closing quote) of the string literal at `pos`.
pub fn skip_string(bytes: &[u8], pos: usize) -> Option<usize> {
    debug_assert_eq!(bytes.get(pos), Some(&b'"'));
    let mut i = pos + 1;
    loop {
        i += memchr::memchr2(b'"', b'\\', bytes.get(i..)?)?;
        if bytes[i] == b'"' {
            return Some(i + 1);
        }
        i += 2;
    }
}

/// The end of the JSON value at `pos` (any kind), or `None` when the file
/// ends first. Structure is followed only as far as brackets and strings.
fn skip_value(bytes: &[u8], pos: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = pos;
    loop {
        let b = *bytes.get(i)?;
        match b {
            b'"' => {
                i = skip_string(bytes, i)?;
                if depth == 0 {
                    return Some(i);
                }
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                if depth == 0 {
                    return Some(i);
                }
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b',' if depth == 0 => return Some(i),
            _ => {}
        }
        i += 1;
    }
}

/// The numeric array starting at `pos` (which holds `[`). Numbers hold no
/// brackets, so its end is the first `]`. Searched in parallel steps, a
/// window of them at a time, whose pages are given back at once, so finding
/// the end never holds the array in memory.
fn number_array(bytes: &[u8], pos: usize, source: &Source) -> NumberArray {
    use rayon::prelude::*;
    const STEP: usize = 8 << 20;
    let start = pos + 1;
    let window = STEP * (2 * rayon::current_num_threads()).max(4);
    let mut at = start;
    while at < bytes.len() {
        let end = (at + window).min(bytes.len());
        let steps: Vec<usize> = (at..end).step_by(STEP).collect();
        let found = steps.par_iter().find_map_first(|&s| {
            let e = (s + STEP).min(end);
            let k = memchr::memchr(b']', &bytes[s..e]);
            source.release(s, e - s);
            k.map(|k| s + k)
        });
        if let Some(k) = found {
            return NumberArray {
                range: start..k,
                closed: true,
            };
        }
        at = end;
    }
    NumberArray {
        range: start..bytes.len(),
        closed: false,
    }
}

/// What the walk does with a `nodes` or `edges` array whose `[` is at a
/// byte: `Continue(Some(array))` when the caller read it there (and so
/// found its end), `Continue(None)` to have the walk search its end (the
/// caller reads it later), `Break` to stop the walk (the caller failed).
pub type ReadArray<'r> =
    dyn FnMut(&Layout, &[u8], usize) -> ControlFlow<(), Option<NumberArray>> + 'r;

/// Walks the top-level object, searching every numeric array's end.
#[cfg(test)]
pub fn find(bytes: &[u8], source: &Source) -> Layout {
    find_reading(bytes, source, &mut |_, _, _| ControlFlow::Continue(None))
}

/// Walks the top-level object, offering each numeric array to `read`
/// (when it stops the walk, `stopped` stays `None`).
pub fn find_reading(bytes: &[u8], source: &Source, read: &mut ReadArray) -> Layout {
    let mut layout = Layout::default();
    let mut pos = skip_ws(bytes, 0);
    if bytes.get(pos) != Some(&b'{') {
        layout.stopped = Some("the file does not start with a JSON object".into());
        return layout;
    }
    pos += 1;
    loop {
        pos = skip_ws(bytes, pos);
        match bytes.get(pos) {
            Some(b'"') => {}
            Some(b'}') => return layout,
            Some(&b) => {
                layout.stopped = Some(format!("unexpected `{}` at byte {pos}", b as char));
                return layout;
            }
            None => {
                layout.stopped = Some("the file ends inside the top-level object".into());
                return layout;
            }
        }
        let Some(key_end) = skip_string(bytes, pos) else {
            layout.stopped = Some("the file ends inside a key".into());
            return layout;
        };
        let key = &bytes[pos + 1..key_end - 1];
        pos = skip_ws(bytes, key_end);
        if bytes.get(pos) != Some(&b':') {
            layout.stopped = Some(format!("expected `:` after a key at byte {pos}"));
            return layout;
        }
        pos = skip_ws(bytes, pos + 1);
        let end = match value(bytes, pos, key, &mut layout, source, read) {
            Step::To(end) => end,
            Step::Stop => return layout,
            Step::Cut => {
                let what = String::from_utf8_lossy(key);
                layout.stopped = Some(format!("the file ends inside `{what}`"));
                return layout;
            }
        };
        pos = skip_ws(bytes, end);
        match bytes.get(pos) {
            Some(b',') => pos += 1,
            Some(b'}') => return layout,
            Some(&b) => {
                layout.stopped = Some(format!("unexpected `{}` at byte {pos}", b as char));
                return layout;
            }
            None => {
                layout.stopped = Some("the file ends inside the top-level object".into());
                return layout;
            }
        }
    }
}

/// How a value's walk ended.
enum Step {
    /// At this byte, after the value.
    To(usize),
    /// The file ends inside the value.
    Cut,
    /// The array reader stopped the walk.
    Stop,
}

impl From<Option<usize>> for Step {
    fn from(end: Option<usize>) -> Step {
        end.map_or(Step::Cut, Step::To)
    }
}

/// Reads or skips the value of `key` at `pos` (what was found of a cut
/// array is still recorded).
fn value(
    bytes: &[u8],
    pos: usize,
    key: &[u8],
    layout: &mut Layout,
    source: &Source,
    read: &mut ReadArray,
) -> Step {
    let is_array = bytes.get(pos) == Some(&b'[');
    match key {
        b"snapshot" => {
            let end = skip_value(bytes, pos);
            layout.header = end.map(|end| pos..end);
            end.into()
        }
        b"nodes" | b"edges" if is_array => {
            let array = match read(layout, key, pos) {
                ControlFlow::Break(()) => return Step::Stop,
                ControlFlow::Continue(Some(array)) => array,
                ControlFlow::Continue(None) => number_array(bytes, pos, source),
            };
            let end = array.closed.then_some(array.range.end + 1);
            if key == b"nodes" {
                layout.nodes = Some(array);
            } else {
                layout.edges = Some(array);
            }
            end.into()
        }
        b"strings" if is_array => {
            let spans = scan_strings(bytes, pos + 1);
            let end = spans.closed.then_some(spans.end + 1);
            layout.strings = Some(spans);
            end.into()
        }
        b"locations" if is_array => match flat_array_end(bytes, pos) {
            Some(end) => {
                layout.locations = Some(NumberArray {
                    range: pos + 1..end - 1,
                    closed: true,
                });
                Step::To(end)
            }
            None => {
                layout.locations = None;
                skip_value(bytes, pos).into()
            }
        },
        _ if is_array => flat_array_end(bytes, pos)
            .or_else(|| skip_value(bytes, pos))
            .into(),
        _ => skip_value(bytes, pos).into(),
    }
}

/// The end of the array at `pos` when nothing in it opens another value
/// or a string (`locations`, `samples`: numbers only, tens of megabytes):
/// found by `memchr` rather than a byte at a time. `None` otherwise.
fn flat_array_end(bytes: &[u8], pos: usize) -> Option<usize> {
    let rest = bytes.get(pos + 1..)?;
    let close = memchr::memchr(b']', rest)?;
    match memchr::memchr3(b'[', b'{', b'"', &rest[..close]) {
        Some(_) => None,
        None => Some(pos + 1 + close + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_part_and_skips_the_others() {
        let text = br#" {"snapshot":{"meta":{"a":["]"]}},"nodes":[1,2, 3],
            "trace_tree":[[1,[2]],"x]"],"locations":[0,1, 2,3],"samples":[],
            "edges":[],"strings":["a\"]","b"]}"#;
        let l = find(text, &Source::Owned(Vec::new()));
        assert_eq!(l.stopped, None);
        let h = l.header.unwrap();
        assert_eq!(&text[h], br#"{"meta":{"a":["]"]}}"#);
        let n = l.nodes.unwrap();
        assert!(n.closed);
        assert_eq!(&text[n.range], b"1,2, 3");
        assert_eq!(l.edges.unwrap().range.len(), 0);
        assert_eq!(l.strings.unwrap().count(), 2);
        // Flat arrays end at their first `]`; others are walked.
        assert_eq!(flat_array_end(b"[1,2],[", 0), Some(5));
        assert_eq!(flat_array_end(br#"[1,"]"]"#, 0), None);
        assert_eq!(flat_array_end(b"[[1],2]", 0), None);
        assert_eq!(flat_array_end(b"[1,2", 0), None);
    }

    #[test]
    fn a_cut_array_is_kept_open() {
        let text = br#"{"snapshot":{},"nodes":[1,2,3"#;
        let l = find(text, &Source::Owned(Vec::new()));
        let n = l.nodes.unwrap();
        assert!(!n.closed);
        assert_eq!(&text[n.range], b"1,2,3");
        assert!(l.stopped.unwrap().contains("nodes"));
    }
}
