//! Reading lines: what one chunk of the file holds ([`Chunk`]: objects,
//! references, types, roots and section events in line order, with
//! chunk-local line numbers), the blank-separated tokens of a line, hex
//! numbers, and the per-line records with their skip reasons. Well-formed
//! `o` lines take the word-at-a-time path of [`super::swar`] first.

use super::column::Column;
use super::swar::parse_object_fast;
use super::MAX_OBJECT_BYTES;
use crate::mem::spill::Spill;
use crate::mem::Array;
use crate::model::text::printable;
use crate::model::MAX_MESSAGES;

/// An `a` or `c` record, in file order.
pub(super) enum SectionEvent {
    Open {
        version: String,
        name: String,
        stamp: Option<String>,
    },
    Close,
}

/// A `t` record before its section is known.
pub(super) struct RawType {
    pub(super) marker: u32,
    pub(super) id: u64,
    pub(super) name: Box<str>,
    pub(super) line: u32,
}

/// An `r` record before its object and section are resolved.
pub(super) struct RawRoot {
    pub(super) marker: u32,
    pub(super) object: u64,
    pub(super) kind: u32,
    pub(super) flags: u32,
    pub(super) container: Option<u64>,
    pub(super) line: u32,
}

/// The per-object vectors a chunk's parse grows ([`Chunk::open`]), moved
/// into the chunk's arrays when it ends.
#[derive(Default)]
pub(super) struct Records {
    pub(super) ids: Vec<u64>,
    pub(super) type_ids: Vec<u64>,
    /// Sizes below [`SIZE_ESCAPE`]; the others are in `big_sizes`.
    pub(super) sizes: Vec<u16>,
    /// `index, size` pairs (by index) of the sizes of [`SIZE_ESCAPE`] or
    /// more.
    pub(super) big_sizes: Vec<u64>,
    /// Degrees below [`DEGREE_ESCAPE`]; the others are in `big_degrees`.
    pub(super) degrees: Vec<u16>,
    /// `index, degree` pairs (by index) of the degrees of
    /// [`DEGREE_ESCAPE`] or more.
    pub(super) big_degrees: Vec<u32>,
    pub(super) refs: Vec<u64>,
    pub(super) obj_lines: Vec<u32>,
}

/// A chunk's sizes are held in 2 bytes an object while the import runs
/// (6 fewer than a `u64` at its peak): this value marks one of this size
/// or more, found in the chunk's side table.
pub(super) const SIZE_ESCAPE: u16 = u16::MAX;

/// Likewise for the objects' numbers of references (2 bytes, not 4).
pub(super) const DEGREE_ESCAPE: u16 = u16::MAX;

/// What one chunk holds. Lines are local to the chunk (1-based); `marker`
/// counts the section events seen in the chunk before a record. The
/// per-object arrays are read-only once parsed: in memory, or in spill
/// files ([`Chunk::spill`]) when the heap is over its memory budget.
#[derive(Default)]
pub(super) struct Chunk {
    pub(super) lines: u32,
    pub(super) events: Vec<SectionEvent>,
    pub(super) types: Vec<RawType>,
    /// The objects' records while the chunk is parsed.
    pub(super) open: Records,
    pub(super) ids: Array<u64>,
    /// Per object its type id.
    pub(super) type_ids: Column,
    /// As [`Records::sizes`].
    pub(super) sizes: Array<u16>,
    /// As [`Records::big_sizes`].
    pub(super) big_sizes: Array<u64>,
    /// As [`Records::degrees`].
    pub(super) degrees: Array<u16>,
    /// As [`Records::big_degrees`].
    pub(super) big_degrees: Array<u32>,
    /// The objects' references' target ids, one object's after another.
    pub(super) refs: Column,
    /// Per object `j` its line less `j` (read by [`Chunk::obj_line`]):
    /// the lines before it that are not objects, a small number.
    pub(super) obj_lines: Column,
    /// `(first object, marker)`: objects from `first` on have this marker.
    pub(super) obj_markers: Vec<(u32, u32)>,
    pub(super) roots: Vec<RawRoot>,
    pub(super) skipped: u64,
    /// Roots kept with their kind or flags cut to 32 bits.
    pub(super) clamped_roots: u64,
    pub(super) messages: Vec<(u32, String)>,
}

impl Chunk {
    /// Ends the parse: the records' vectors become the chunk's arrays.
    fn close(&mut self) {
        let r = std::mem::take(&mut self.open);
        self.ids = r.ids.into();
        self.type_ids = Column::pack(r.type_ids);
        self.sizes = r.sizes.into();
        self.big_sizes = r.big_sizes.into();
        self.degrees = r.degrees.into();
        self.big_degrees = r.big_degrees.into();
        self.refs = Column::pack(r.refs);
        let mut lines = r.obj_lines;
        for (j, line) in (0..).zip(lines.iter_mut()) {
            *line -= j;
        }
        self.obj_lines = Column::pack_u32(lines);
    }

    /// Puts the per-object arrays in spill files (`mem::spill`).
    pub(super) fn spill(&mut self, to: &Spill) {
        to.array(&mut self.ids);
        self.type_ids.spill(to);
        to.array(&mut self.sizes);
        to.array(&mut self.big_sizes);
        to.array(&mut self.degrees);
        to.array(&mut self.big_degrees);
        self.refs.spill(to);
        self.obj_lines.spill(to);
    }

    /// The bytes of its per-object arrays (a memory log's account).
    pub(super) fn bytes(&self) -> usize {
        self.ids.len() * 8
            + self.type_ids.bytes()
            + self.sizes.len() * 2
            + self.big_sizes.len() * 8
            + self.degrees.len() * 2
            + self.big_degrees.len() * 4
            + self.refs.bytes()
            + self.obj_lines.bytes()
    }

    /// The chunk-local line of object `j`.
    #[inline]
    pub(super) fn obj_line(&self, j: usize) -> u32 {
        (self.obj_lines.get(j) + j as u64) as u32
    }

    fn skip(&mut self, line: u32, why: impl FnOnce() -> String) {
        self.skipped += 1;
        self.explain(line, why);
    }

    /// A root kept with its kind or flags cut to 32 bits.
    fn note(&mut self, line: u32, why: impl FnOnce() -> String) {
        self.clamped_roots += 1;
        self.explain(line, why);
    }

    /// The chunk's messages are in line order: its first [`MAX_MESSAGES`]
    /// hold all it can contribute to the first overall.
    fn explain(&mut self, line: u32, why: impl FnOnce() -> String) {
        if self.messages.len() < MAX_MESSAGES {
            self.messages.push((line, why()));
        }
    }
}

#[inline]
pub(super) fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

/// Splits a line into blank-separated tokens without allocating.
struct Tokens<'a> {
    line: &'a [u8],
    pos: usize,
}

impl<'a> Tokens<'a> {
    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let l = self.line;
        let mut p = self.pos;
        while p < l.len() && is_blank(l[p]) {
            p += 1;
        }
        if p == l.len() {
            self.pos = p;
            return None;
        }
        let start = p;
        while p < l.len() && !is_blank(l[p]) {
            p += 1;
        }
        self.pos = p;
        Some(&l[start..p])
    }

    /// The rest of the line with surrounding blanks removed.
    fn rest(&self) -> &'a [u8] {
        let l = &self.line[self.pos..];
        let start = l.iter().position(|&b| !is_blank(b)).unwrap_or(l.len());
        let end = l
            .iter()
            .rposition(|&b| !is_blank(b))
            .map_or(start, |e| e + 1);
        &l[start..end]
    }
}

pub(super) const HEX: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// Parses hexadecimal without `0x`; `None` on a bad digit or overflow.
#[inline]
pub(super) fn hex(tok: &[u8]) -> Option<u64> {
    if tok.is_empty() {
        return None;
    }
    let digits = match tok.iter().position(|&b| b != b'0') {
        Some(i) => &tok[i..],
        None => return Some(0),
    };
    if digits.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    for &b in digits {
        let d = HEX[b as usize];
        if d == 0xff {
            return None;
        }
        v = (v << 4) | d as u64;
    }
    Some(v)
}

pub(super) fn show(tok: &[u8]) -> String {
    let s = printable(&tok[..tok.len().min(40)]);
    if tok.len() > 40 {
        format!("{s}…")
    } else {
        s.into()
    }
}

#[inline(never)]
pub(super) fn parse_chunk(text: &[u8]) -> Chunk {
    let mut c = Chunk::default();
    // Typical dumps have a line per ~50 bytes and a reference per ~15:
    // reserving avoids most regrowth copies.
    // Large parts ask for huge pages (fewer page faults on first touch).
    let lines = text.len() / 48;
    c.open = Records {
        ids: crate::mem::with_capacity(lines),
        type_ids: crate::mem::with_capacity(lines),
        sizes: crate::mem::with_capacity(lines),
        big_sizes: Vec::new(),
        degrees: crate::mem::with_capacity(lines),
        big_degrees: Vec::new(),
        obj_lines: crate::mem::with_capacity(lines),
        refs: crate::mem::with_capacity(text.len() / 16),
    };
    let mut line_no: u32 = 0;
    let mut marker: u32 = 0;
    let mut start = 0;
    while start < text.len() {
        line_no += 1;
        if let Some(next) = parse_object_fast(&mut c, text, start, line_no, marker) {
            start = next;
            continue;
        }
        let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |i| start + i);
        parse_line(&mut c, &text[start..end], line_no, &mut marker);
        start = end + 1;
    }
    c.lines = line_no;
    c.close();
    c
}

#[inline]
fn parse_line(c: &mut Chunk, line: &[u8], no: u32, marker: &mut u32) {
    let mut t = Tokens { line, pos: 0 };
    let Some(kind) = t.next() else { return };
    match kind {
        b"o" => parse_object(c, &mut t, no, *marker),
        b"r" => parse_root(c, &mut t, no, *marker),
        b"t" => {
            let Some(id_tok) = t.next() else {
                return c.skip(no, || "type record without a type id".into());
            };
            let Some(id) = hex(id_tok) else {
                return c.skip(no, || format!("bad hex in type id `{}`", show(id_tok)));
            };
            let name = t.rest();
            if name.is_empty() {
                return c.skip(no, || "type record without a name".into());
            }
            c.types.push(RawType {
                marker: *marker,
                id,
                // Escaped once shortened (`import::make_printable`): a
                // name of megabytes is not escaped whole.
                name: String::from_utf8_lossy(name).into(),
                line: no,
            });
        }
        b"a" => {
            let (Some(version), Some(name)) = (t.next(), t.next()) else {
                return c.skip(no, || "AppDomain record needs a version and a name".into());
            };
            let text = |s: &[u8]| String::from_utf8_lossy(s).into_owned();
            let stamp = t.next().map(text);
            c.events.push(SectionEvent::Open {
                version: text(version),
                name: text(name),
                stamp,
            });
            *marker += 1;
        }
        b"c" => {
            if t.next().is_none() {
                return c.skip(no, || "end-AppDomain record without a name".into());
            }
            c.events.push(SectionEvent::Close);
            *marker += 1;
        }
        other => c.skip(no, || format!("unknown record kind `{}`", show(other))),
    }
}

#[inline]
fn parse_object(c: &mut Chunk, t: &mut Tokens, no: u32, marker: u32) {
    let (Some(id_tok), Some(type_tok), Some(size_tok)) = (t.next(), t.next(), t.next()) else {
        return c.skip(no, || {
            "object record needs an id, a type id and a size".into()
        });
    };
    let Some(id) = hex(id_tok) else {
        return c.skip(no, || format!("bad hex in object id `{}`", show(id_tok)));
    };
    let Some(type_id) = hex(type_tok) else {
        return c.skip(no, || format!("bad hex in type id `{}`", show(type_tok)));
    };
    let Some(size) = hex(size_tok) else {
        return c.skip(no, || format!("bad hex in size `{}`", show(size_tok)));
    };
    if size > MAX_OBJECT_BYTES {
        return c.skip(no, || {
            format!("size {size:x} is larger than any object can be (2^48 bytes)")
        });
    }
    let before = c.open.refs.len();
    let mut n = 0u32;
    while let Some(r) = t.next() {
        match hex(r) {
            Some(v) => c.open.refs.push(v),
            None => {
                c.open.refs.truncate(before);
                let i = n + 1;
                return c.skip(no, || format!("bad hex in reference {i} `{}`", show(r)));
            }
        }
        n += 1;
    }
    push_object(c, [id, type_id, size], n, no, marker);
}

#[inline]
pub(super) fn push_object(
    c: &mut Chunk,
    [id, type_id, size]: [u64; 3],
    refs: u32,
    no: u32,
    marker: u32,
) {
    let index = c.open.ids.len() as u32;
    if c.obj_markers.last().is_none_or(|&(_, m)| m != marker) {
        c.obj_markers.push((index, marker));
    }
    let r = &mut c.open;
    r.ids.push(id);
    r.type_ids.push(type_id);
    if size < SIZE_ESCAPE as u64 {
        r.sizes.push(size as u16);
    } else {
        r.sizes.push(SIZE_ESCAPE);
        r.big_sizes.extend([index as u64, size]);
    }
    if refs < DEGREE_ESCAPE as u32 {
        r.degrees.push(refs as u16);
    } else {
        r.degrees.push(DEGREE_ESCAPE);
        r.big_degrees.extend([index, refs]);
    }
    r.obj_lines.push(no);
}

fn parse_root(c: &mut Chunk, t: &mut Tokens, no: u32, marker: u32) {
    let (Some(obj_tok), Some(kind_tok), Some(flags_tok)) = (t.next(), t.next(), t.next()) else {
        return c.skip(no, || {
            "root record needs an object id, a kind and flags".into()
        });
    };
    let Some(object) = hex(obj_tok) else {
        return c.skip(no, || {
            format!("bad hex in root object id `{}`", show(obj_tok))
        });
    };
    let Some(kind) = hex(kind_tok) else {
        return c.skip(no, || format!("bad hex in root kind `{}`", show(kind_tok)));
    };
    let Some(flags) = hex(flags_tok) else {
        return c.skip(no, || {
            format!("bad hex in root flags `{}`", show(flags_tok))
        });
    };
    let container = match t.next() {
        None => None,
        Some(tok) => match hex(tok) {
            Some(v) => Some(v),
            None => {
                return c.skip(no, || format!("bad hex in root container `{}`", show(tok)));
            }
        },
    };
    let (kind, flags) = fit_root(c, no, kind, flags);
    c.roots.push(RawRoot {
        marker,
        object,
        kind,
        flags,
        container,
        line: no,
    });
}

/// Kinds and flags are kept whatever they are (docs/formats.md), but the model holds
/// 32 bits of each: a larger kind is kept as the largest (`ffffffff`, an
/// unknown kind like any other), larger flags keep their low 32 bits (where
/// pinned, weak and interior are, so reachability is unchanged); either is
/// counted and explained.
fn fit_root(c: &mut Chunk, no: u32, kind: u64, flags: u64) -> (u32, u32) {
    let fitted = (
        u32::try_from(kind).unwrap_or(u32::MAX),
        (flags & u64::from(u32::MAX)) as u32,
    );
    let kind_cut = u64::from(fitted.0) != kind;
    let flags_cut = u64::from(fitted.1) != flags;
    if kind_cut || flags_cut {
        c.note(no, || {
            let (what, kept) = match (kind_cut, flags_cut) {
                (true, false) => (format!("kind {kind:x} is"), "kind ffffffff".to_string()),
                (false, _) => (
                    format!("flags {flags:x} are"),
                    format!("flags {:x}", fitted.1),
                ),
                (true, true) => (
                    format!("kind {kind:x} and flags {flags:x} are"),
                    format!("kind ffffffff, flags {:x}", fitted.1),
                ),
            };
            format!("root {what} out of range (over 32 bits); kept as {kept}")
        });
    }
    fitted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_rules() {
        assert_eq!(hex(b"1ce056"), Some(0x1ce056));
        assert_eq!(hex(b"FFFFFFFFFFFFFFFF"), Some(u64::MAX));
        assert_eq!(hex(b"0000000000000000001"), Some(1));
        assert_eq!(hex(b"10000000000000000"), None);
        assert_eq!(hex(b"0x10"), None);
        assert_eq!(hex(b"1g"), None);
        assert_eq!(hex(b""), None);
    }
}
