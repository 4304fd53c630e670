//! The RPM text importer (SPEC §1), the parallel parser. The file is cut into chunks at line boundaries and
//! each chunk is parsed on its own (rayon); section boundaries, line numbers
//! and object indices are then stitched together in file order, so results
//! and messages are exactly those of a sequential parse.

use std::collections::HashMap;
use std::path::Path;

use rayon::prelude::*;

use super::source::Source;
use super::{ImportError, InputError};
use crate::model::{
    AppDomain, Csr, Diagnostics, Model, RecordCounts, Root, WideIdIndex, MAX_MESSAGES,
};
use crate::progress::{Cancelled, Progress, Stage};

/// How many references ahead the resolver prefetches id-index slots.
const PREFETCH_DISTANCE: usize = 16;

/// Target size of one parse chunk.
const CHUNK: usize = 8 << 20;

/// No object can be larger than a 48-bit address space. Bigger sizes are
/// corrupt lines (skipped); the bound also keeps every sum of sizes in u64
/// for all realistic object counts (see the total check in `parse_source`).
pub const MAX_OBJECT_BYTES: u64 = 1 << 48;

/// Parses a text dump whose bytes are open (see `import::import_file`).
pub fn import(path: &Path, source: &Source, progress: &Progress) -> Result<Model, ImportError> {
    parse_source(path, source, progress, CHUNK)
}

/// Parses dump text held in memory (tests, the built-in demo heap).
pub fn parse_bytes(path: &Path, bytes: &[u8]) -> Result<Model, InputError> {
    parse_bytes_with_chunk(path, bytes, CHUNK)
}

/// [`parse_bytes`] with a chosen chunk size, so tests can check that chunk
/// boundaries change nothing (results, counts, message line numbers).
#[doc(hidden)]
pub fn parse_bytes_with_chunk(
    path: &Path,
    bytes: &[u8],
    chunk_size: usize,
) -> Result<Model, InputError> {
    let chunk_size = chunk_size.max(1);
    match parse_source(
        path,
        &Source::Owned(bytes.to_vec()),
        &Progress::new(),
        chunk_size,
    ) {
        Ok(d) => Ok(d),
        Err(ImportError::Input(e)) => Err(e),
        Err(ImportError::Cancelled) => unreachable!("nobody can cancel this progress"),
    }
}

fn parse_source(
    path: &Path,
    source: &Source,
    progress: &Progress,
    chunk_size: usize,
) -> Result<Model, ImportError> {
    let bytes = source.bytes();
    if bytes.is_empty() {
        return Err(InputError::new(path, "the file is empty").into());
    }
    let head = &bytes[..bytes.len().min(64 << 10)];
    if head.starts_with(b"\xff\xfe") || head.starts_with(b"\xfe\xff") {
        return Err(InputError::new(
            path,
            "UTF-16 text (byte order mark FF FE or FE FF); convert it to UTF-8 or ASCII first",
        )
        .into());
    }
    if looks_binary(head) {
        return Err(InputError::new(
            path,
            "binary data, not a text heap dump (expected lines like `o 1c15d2 3 1c …`)",
        )
        .into());
    }
    // Reading the chunks is the first half of the stage, stitching them
    // together (ids, references, roots) the second.
    let len = bytes.len() as u64;
    progress.start(Stage::Parse, 2 * len);
    let mut laps = crate::progress::Laps::new("parse");

    let mut ranges = chunk_ranges(bytes, chunk_size);
    // A UTF-8 byte order mark (an editor's re-save) is not part of line 1:
    // left in, it would make the first record, usually `a`, unparsable.
    if bytes.starts_with(b"\xef\xbb\xbf") {
        ranges[0].0 = ranges[0].1.min(3);
    }
    let chunks: Vec<Chunk> = ranges
        .par_iter()
        .map(|&(start, end)| {
            progress.check()?;
            let chunk = parse_chunk(&bytes[start..end]);
            source.release(start, end - start);
            progress.advance((end - start) as u64);
            Ok(chunk)
        })
        .collect::<Result<_, Cancelled>>()?;

    laps.lap("chunks");
    progress.set_done(len);
    let dump = assemble(path, bytes.len() as u64, chunks, progress)?;
    laps.lap("assemble");
    if dump.ids.is_empty() {
        let reason = if dump.diagnostics.skipped_lines > 0 {
            format!(
                "no object records (`o …`) found; {} lines could not be parsed, first: {}",
                dump.diagnostics.skipped_lines,
                dump.diagnostics
                    .messages
                    .first()
                    .map(String::as_str)
                    .unwrap_or("")
            )
        } else {
            "no object records (`o …`) found".to_string()
        };
        return Err(InputError::new(path, reason).into());
    }
    // Retained sizes, type totals and the like are sums of distinct objects'
    // sizes, so a total that fits in u64 keeps them all from overflowing.
    let total: u128 = dump.sizes.par_iter().map(|&s| s as u128).sum();
    if total > u64::MAX as u128 {
        return Err(InputError::new(
            path,
            "object sizes add up to more than 2^64 bytes; not a heap dump",
        )
        .into());
    }
    Ok(dump)
}

/// NUL bytes or a high share of control bytes mean this is not our format.
fn looks_binary(head: &[u8]) -> bool {
    if head.contains(&0) {
        return true;
    }
    let control = head
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0b | 0x0c))
        .count();
    control * 20 > head.len()
}

/// Cuts `bytes` into ranges of about `target` bytes, each ending after a
/// newline (the last one at the end of the file).
fn chunk_ranges(bytes: &[u8], target: usize) -> Vec<(usize, usize)> {
    let mut ranges = Vec::with_capacity(bytes.len() / target + 1);
    let mut start = 0;
    while start < bytes.len() {
        let probe = (start + target).min(bytes.len());
        let end = match memchr::memchr(b'\n', &bytes[probe..]) {
            Some(i) => probe + i + 1,
            None => bytes.len(),
        };
        ranges.push((start, end));
        start = end;
    }
    ranges
}

enum SectionEvent {
    Open {
        version: String,
        name: String,
        stamp: Option<String>,
    },
    Close,
}

struct RawType {
    marker: u32,
    id: u64,
    name: Box<str>,
    line: u32,
}

struct RawRoot {
    marker: u32,
    object: u64,
    kind: u32,
    flags: u32,
    container: Option<u64>,
    line: u32,
}

/// What one chunk holds. Lines are local to the chunk (1-based); `marker`
/// counts the section events seen in the chunk before a record.
#[derive(Default)]
struct Chunk {
    lines: u32,
    events: Vec<SectionEvent>,
    types: Vec<RawType>,
    ids: Vec<u64>,
    type_ids: Vec<u64>,
    sizes: Vec<u64>,
    degrees: Vec<u32>,
    refs: Vec<u64>,
    obj_lines: Vec<u32>,
    /// `(first object, marker)`: objects from `first` on have this marker.
    obj_markers: Vec<(u32, u32)>,
    roots: Vec<RawRoot>,
    skipped: u64,
    messages: Vec<(u32, String)>,
}

impl Chunk {
    fn skip(&mut self, line: u32, why: impl FnOnce() -> String) {
        self.skipped += 1;
        if self.messages.len() < MAX_MESSAGES {
            self.messages.push((line, why()));
        }
    }
}

#[inline]
fn is_blank(b: u8) -> bool {
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

const HEX: [u8; 256] = {
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
fn hex(tok: &[u8]) -> Option<u64> {
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

fn hex32(tok: &[u8]) -> Option<u32> {
    hex(tok).and_then(|v| u32::try_from(v).ok())
}

fn show(tok: &[u8]) -> String {
    let s = String::from_utf8_lossy(&tok[..tok.len().min(40)]).into_owned();
    if tok.len() > 40 {
        format!("{s}…")
    } else {
        s
    }
}

#[inline(never)]
fn parse_chunk(text: &[u8]) -> Chunk {
    let mut c = Chunk::default();
    // Typical dumps have a line per ~50 bytes and a reference per ~15:
    // reserving avoids most regrowth copies.
    // Large parts ask for huge pages (fewer page faults on first touch).
    let lines = text.len() / 48;
    c.ids = crate::mem::with_capacity(lines);
    c.type_ids = crate::mem::with_capacity(lines);
    c.sizes = crate::mem::with_capacity(lines);
    c.degrees = crate::mem::with_capacity(lines);
    c.obj_lines = crate::mem::with_capacity(lines);
    c.refs = crate::mem::with_capacity(text.len() / 16);
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
                name: String::from_utf8_lossy(name).into(),
                line: no,
            });
        }
        b"a" => {
            let (Some(version), Some(name)) = (t.next(), t.next()) else {
                return c.skip(no, || "AppDomain record needs a version and a name".into());
            };
            let stamp = t.next().map(|s| String::from_utf8_lossy(s).into_owned());
            c.events.push(SectionEvent::Open {
                version: String::from_utf8_lossy(version).into_owned(),
                name: String::from_utf8_lossy(name).into_owned(),
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
    let before = c.refs.len();
    let mut n = 0u32;
    while let Some(r) = t.next() {
        match hex(r) {
            Some(v) => c.refs.push(v),
            None => {
                c.refs.truncate(before);
                let i = n + 1;
                return c.skip(no, || format!("bad hex in reference {i} `{}`", show(r)));
            }
        }
        n += 1;
    }
    push_object(c, [id, type_id, size], n, no, marker);
}

#[inline]
fn push_object(c: &mut Chunk, [id, type_id, size]: [u64; 3], refs: u32, no: u32, marker: u32) {
    let index = c.ids.len() as u32;
    if c.obj_markers.last().is_none_or(|&(_, m)| m != marker) {
        c.obj_markers.push((index, marker));
    }
    c.ids.push(id);
    c.type_ids.push(type_id);
    c.sizes.push(size);
    c.degrees.push(refs);
    c.obj_lines.push(no);
}

/// One hexadecimal element scanned in place.
enum Scan {
    Value(u64),
    End,
    Bad,
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// Eight bytes as one little-endian word (the first byte lowest).
#[inline(always)]
fn word(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes[..8].try_into().unwrap())
}

/// The high bit of every byte of `w` below 0x21 (blanks, line ends and other
/// control bytes). Exact up to the first such byte, which is all we use.
#[inline(always)]
fn delimiters(w: u64) -> u64 {
    w.wrapping_sub(ONES * 0x21) & !w & HIGHS
}

/// The high bit of every byte of `w` that is a hexadecimal digit. Each step
/// stays within its byte: no carry or borrow crosses into the next one.
#[inline(always)]
fn hex_digits(w: u64) -> u64 {
    let lower = w | (ONES * 0x20); // 'A'..'F' → 'a'..'f'; digits unchanged
    let t = lower & !HIGHS;
    let ge = |c: u64| (t + ONES * (0x80 - c)) & HIGHS;
    let le = |c: u64| ((ONES * (0x80 + c)) - t) & HIGHS;
    ((ge(0x30) & le(0x39)) | (ge(0x61) & le(0x66))) & !(lower & HIGHS)
}

/// The value of the first `len` (1..=8) hexadecimal digits of `w`, which
/// `hex_digits` has checked.
#[inline(always)]
fn hex_value(w: u64, len: usize) -> u64 {
    // '0'..'9' keep their low nibble; letters have bit 6 set and add 9.
    let nibbles = (w & (ONES * 0x0f)) + ((w >> 6) & ONES) * 9;
    // Right-align: the last digit in the top byte, zeros (leading) below.
    let v = nibbles << ((8 - len) * 8);
    // Merge neighbours with one multiply each: bytes into 16-bit pairs,
    // pairs into 32-bit quads, quads into the result (the lower address is
    // the higher digit). The partial products never overlap, so no carry
    // crosses a lane; the mask drops the copies that land above it.
    let v = (v.wrapping_mul(1 + (16 << 8)) >> 8) & 0x00ff_00ff_00ff_00ff;
    let v = (v.wrapping_mul(1 + (256 << 16)) >> 16) & 0x0000_ffff_0000_ffff;
    (v.wrapping_mul(1 + (1 << 48)) >> 32) & 0xffff_ffff
}

/// A hexadecimal element of 1 to 16 digits at the start of `bytes` (at least
/// 16 bytes), eight bytes at a time: `(value, length)`, or `None` when the
/// element is longer or holds a byte that is not a digit (the byte-wise scan
/// then decides).
#[inline(always)]
fn hex_word(bytes: &[u8]) -> Option<(u64, usize)> {
    let w0 = word(bytes);
    let d0 = delimiters(w0);
    if d0 != 0 {
        let len = d0.trailing_zeros() as usize / 8;
        let mask = HIGHS & ((1u64 << (len * 8)) - 1);
        if len == 0 || hex_digits(w0) & mask != mask {
            return None;
        }
        return Some((hex_value(w0, len), len));
    }
    let w1 = word(&bytes[8..]);
    let d1 = delimiters(w1);
    if d1 == 0 || hex_digits(w0) != HIGHS {
        return None;
    }
    let len = d1.trailing_zeros() as usize / 8;
    if len == 0 {
        return Some((hex_value(w0, 8), 8));
    }
    let mask = HIGHS & ((1u64 << (len * 8)) - 1);
    if hex_digits(w1) & mask != mask {
        return None;
    }
    Some((hex_value(w0, 8) << (4 * len) | hex_value(w1, len), 8 + len))
}

/// Skips blanks, then reads one hexadecimal element of the line that `pos`
/// is in (a line ends at `\n` or at the end of `text`): the tokenizer and
/// the number parser in a single pass over the bytes.
#[inline(always)]
fn scan_hex(text: &[u8], pos: &mut usize) -> Scan {
    let mut p = *pos;
    while p < text.len() && is_blank(text[p]) {
        p += 1;
    }
    if p == text.len() || text[p] == b'\n' {
        *pos = p;
        return Scan::End;
    }
    if let Some(bytes) = text.get(p..p + 16) {
        if let Some((v, len)) = hex_word(bytes) {
            *pos = match bytes[len] {
                // The usual single blank: step over it here.
                b' ' => p + len + 1,
                next if is_blank(next) || next == b'\n' => p + len,
                _ => return Scan::Bad,
            };
            return Scan::Value(v);
        }
    }
    let start = p;
    let mut v = 0u64;
    while p < text.len() {
        let d = HEX[text[p] as usize];
        if d == 0xff {
            break;
        }
        if v > u64::MAX >> 4 {
            return Scan::Bad;
        }
        v = (v << 4) | d as u64;
        p += 1;
    }
    if p < text.len() && !is_blank(text[p]) && text[p] != b'\n' || p == start {
        return Scan::Bad;
    }
    *pos = p;
    Scan::Value(v)
}

/// The common case of an `o` line starting at `start`, well formed, without
/// building tokens: the position after its line end, or `None` (having
/// stored nothing) for anything unusual, which the general path then parses
/// and explains.
#[inline]
fn parse_object_fast(
    c: &mut Chunk,
    text: &[u8],
    start: usize,
    no: u32,
    marker: u32,
) -> Option<usize> {
    if text[start] != b'o' || !text.get(start + 1).is_some_and(|&b| is_blank(b)) {
        return None;
    }
    let mut pos = start + 1;
    let mut head = [0u64; 3];
    for h in &mut head {
        match scan_hex(text, &mut pos) {
            Scan::Value(v) => *h = v,
            _ => return None,
        }
    }
    if head[2] > MAX_OBJECT_BYTES {
        return None;
    }
    let before = c.refs.len();
    loop {
        match scan_hex(text, &mut pos) {
            Scan::Value(v) => c.refs.push(v),
            Scan::End => break,
            Scan::Bad => {
                c.refs.truncate(before);
                return None;
            }
        }
    }
    push_object(c, head, (c.refs.len() - before) as u32, no, marker);
    Some(pos + 1)
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
    let Some(kind) = hex32(kind_tok) else {
        return c.skip(no, || format!("bad hex in root kind `{}`", show(kind_tok)));
    };
    let Some(flags) = hex32(flags_tok) else {
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
    c.roots.push(RawRoot {
        marker,
        object,
        kind,
        flags,
        container,
        line: no,
    });
}

/// The chunks' parts laid end to end, copied in parallel (each part is
/// freed as soon as it is copied).
fn concat<T: Copy + Send + Sync>(parts: Vec<Vec<T>>) -> Vec<T> {
    let total = parts.iter().map(Vec::len).sum();
    let mut out: Vec<T> = crate::mem::with_capacity(total);
    let mut rest = &mut out.spare_capacity_mut()[..total];
    let mut slices = Vec::with_capacity(parts.len());
    for p in &parts {
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(p.len());
        slices.push(head);
        rest = tail;
    }
    slices.into_par_iter().zip(parts).for_each(|(dst, src)| {
        for (d, &s) in dst.iter_mut().zip(&src) {
            d.write(s);
        }
    });
    // SAFETY: the parts' lengths sum to `total` and every slot was written.
    unsafe { out.set_len(total) };
    out
}

/// Type id → type index within one section: dense when ids are small.
enum TypeTable {
    Dense(Vec<u32>),
    Sparse(HashMap<u64, u32>),
}

const NO_TYPE: u32 = u32::MAX;

impl TypeTable {
    fn build(pairs: &[(u64, u32)]) -> TypeTable {
        let max = pairs.iter().map(|p| p.0).max().unwrap_or(0);
        if max < (1 << 20) {
            let mut v = vec![NO_TYPE; max as usize + 1];
            for &(id, t) in pairs {
                v[id as usize] = t;
            }
            TypeTable::Dense(v)
        } else {
            TypeTable::Sparse(pairs.iter().copied().collect())
        }
    }

    #[inline]
    fn get(&self, id: u64) -> Option<u32> {
        match self {
            TypeTable::Dense(v) => v.get(id as usize).copied().filter(|&t| t != NO_TYPE),
            TypeTable::Sparse(m) => m.get(&id).copied(),
        }
    }
}

/// Global messages: (absolute line, text), merged and trimmed at the end.
#[derive(Default)]
struct Messages(Vec<(u64, String)>);

impl Messages {
    fn push(&mut self, line: u64, text: String) {
        self.0.push((line, text));
    }

    fn finish(mut self) -> Vec<String> {
        self.0.sort_by_key(|m| m.0);
        self.0.truncate(MAX_MESSAGES);
        self.0
            .into_iter()
            .map(|(l, m)| format!("line {l}: {m}"))
            .collect()
    }
}

fn assemble(
    path: &Path,
    file_bytes: u64,
    mut chunks: Vec<Chunk>,
    progress: &Progress,
) -> Result<Model, Cancelled> {
    let mut diag = Diagnostics::default();
    let mut messages = Messages::default();
    let mut records = RecordCounts::default();
    let mut laps = crate::progress::Laps::new("assemble");

    // Line and object offsets of each chunk.
    let mut first_line = Vec::with_capacity(chunks.len());
    let mut first_object = Vec::with_capacity(chunks.len());
    let (mut lines, mut objects) = (0u64, 0usize);
    for c in &chunks {
        first_line.push(lines);
        first_object.push(objects);
        lines += c.lines as u64;
        objects += c.ids.len();
        diag.skipped_lines += c.skipped;
        records.objects += c.ids.len() as u64;
        records.roots += c.roots.len() as u64;
        records.sections += c.events.len() as u64;
    }
    for (ci, c) in chunks.iter_mut().enumerate() {
        for (l, m) in c.messages.drain(..) {
            messages.push(first_line[ci] + l as u64, m);
        }
    }

    // Sections: `section_at[chunk][marker]` is the section in force.
    let mut app_domains = vec![AppDomain::default()];
    let mut current = 0usize;
    let mut section_at: Vec<Vec<u32>> = Vec::with_capacity(chunks.len());
    for c in &mut chunks {
        let mut at = Vec::with_capacity(c.events.len() + 1);
        at.push(current as u32);
        for e in c.events.drain(..) {
            match e {
                SectionEvent::Open {
                    version,
                    name,
                    stamp,
                } => {
                    app_domains.push(AppDomain {
                        version,
                        name,
                        stamp,
                        closed: false,
                        objects: 0,
                    });
                    current = app_domains.len() - 1;
                }
                SectionEvent::Close => {
                    if current != 0 {
                        app_domains[current].closed = true;
                    }
                    current = 0;
                }
            }
            at.push(current as u32);
        }
        section_at.push(at);
    }

    // Types: interned by name, ids scoped per section; the first definition
    // of an id in a section wins.
    let mut type_names: Vec<Box<str>> = Vec::new();
    let mut by_name: HashMap<Box<str>, u32> = HashMap::new();
    let mut section_pairs: Vec<Vec<(u64, u32)>> = vec![Vec::new(); app_domains.len()];
    let mut seen: HashMap<(u32, u64), ()> = HashMap::new();
    // The loops below visit records in line order, so keeping the first
    // MAX_MESSAGES messages of each keeps every one that can be among the
    // first MAX_MESSAGES overall; a doubled 10-million-object dump would
    // otherwise hold 10 million message strings.
    let mut redefined = 0usize;
    for (ci, c) in chunks.iter_mut().enumerate() {
        for t in c.types.drain(..) {
            let section = section_at[ci][t.marker as usize];
            if seen.insert((section, t.id), ()).is_some() {
                diag.skipped_lines += 1;
                redefined += 1;
                if redefined > MAX_MESSAGES {
                    continue;
                }
                messages.push(
                    first_line[ci] + t.line as u64,
                    format!(
                        "type id {:x} defined again in this section; the first definition is kept",
                        t.id
                    ),
                );
                continue;
            }
            let idx = *by_name.entry(t.name.clone()).or_insert_with(|| {
                type_names.push(t.name);
                (type_names.len() - 1) as u32
            });
            section_pairs[section as usize].push((t.id, idx));
            records.types += 1;
        }
    }
    drop(seen);
    let tables: Vec<TypeTable> = section_pairs.iter().map(|p| TypeTable::build(p)).collect();
    drop(section_pairs);
    progress.check()?;

    // Object ids → indices; repeated ids (first record wins) are removed.
    let mut ids = concat(
        chunks
            .iter_mut()
            .map(|c| std::mem::take(&mut c.ids))
            .collect(),
    );
    progress.set_done(file_bytes + file_bytes / 4);
    laps.lap("sections, types, ids");
    let wide = WideIdIndex::build(&ids);
    laps.lap("id index");
    let keep: Option<Vec<bool>> = if wide.repeated == 0 {
        None
    } else {
        diag.duplicate_objects = wide.repeated;
        let keep: Vec<bool> = ids
            .par_iter()
            .enumerate()
            .map(|(i, &id)| wide.get(id) == Some(i as u32))
            .collect();
        let mut repeated = 0usize;
        for (ci, c) in chunks.iter().enumerate() {
            for (j, &line) in c.obj_lines.iter().enumerate() {
                let g = first_object[ci] + j;
                if !keep[g] && repeated < MAX_MESSAGES {
                    repeated += 1;
                    messages.push(
                        first_line[ci] + line as u64,
                        format!(
                            "object {:x} appears again; the first record is kept",
                            ids[g]
                        ),
                    );
                }
            }
        }
        Some(keep)
    };
    // new index of each raw object (only for kept ones)
    let new_index: Option<Vec<u32>> = keep.as_ref().map(|keep| {
        let mut next = 0u32;
        keep.iter()
            .map(|&k| {
                let v = next;
                if k {
                    next += 1;
                }
                v
            })
            .collect()
    });
    progress.set_done(file_bytes + file_bytes * 2 / 4);
    progress.check()?;
    laps.lap("repeated ids");

    // Per chunk, in parallel: types, sizes and references resolved, each
    // chunk writing straight into its own part of the final arrays.
    struct Resolved {
        targets: usize,
        undefined: Vec<(usize, u32, u64)>, // (local object, section, type id)
        dangling: u64,
        messages: Vec<(u64, String)>,
        domain_counts: Vec<u64>,
    }
    let kept_counts: Vec<usize> = chunks
        .iter()
        .enumerate()
        .map(|(ci, c)| match &keep {
            None => c.type_ids.len(),
            Some(k) => k[first_object[ci]..first_object[ci] + c.type_ids.len()]
                .iter()
                .filter(|&&k| k)
                .count(),
        })
        .collect();
    let kept_total: usize = kept_counts.iter().sum();
    let kept_start: Vec<usize> = kept_counts
        .iter()
        .scan(0, |acc, &n| {
            let start = *acc;
            *acc += n;
            Some(start)
        })
        .collect();
    let reserved: Vec<usize> = chunks.iter().map(|c| c.refs.len()).collect();
    let refs_total: usize = reserved.iter().sum();
    let mut types: Vec<u32> = crate::mem::with_capacity(kept_total);
    let mut sizes: Vec<u64> = crate::mem::with_capacity(kept_total);
    let mut degrees: Vec<u32> = crate::mem::with_capacity(kept_total);
    let mut targets: Vec<u32> = crate::mem::with_capacity(refs_total);
    let parts = {
        let mut types = &mut types.spare_capacity_mut()[..kept_total];
        let mut sizes = &mut sizes.spare_capacity_mut()[..kept_total];
        let mut degrees = &mut degrees.spare_capacity_mut()[..kept_total];
        let mut targets = &mut targets.spare_capacity_mut()[..refs_total];
        let mut parts = Vec::with_capacity(chunks.len());
        for (c, &n) in chunks.iter().zip(&kept_counts) {
            let (t, rest) = std::mem::take(&mut types).split_at_mut(n);
            types = rest;
            let (s, rest) = std::mem::take(&mut sizes).split_at_mut(n);
            sizes = rest;
            let (d, rest) = std::mem::take(&mut degrees).split_at_mut(n);
            degrees = rest;
            let (g, rest) = std::mem::take(&mut targets).split_at_mut(c.refs.len());
            targets = rest;
            parts.push((t, s, d, g));
        }
        parts
    };
    let ids_ref = &ids;
    let wide_ref = &wide;
    let keep_ref = keep.as_deref();
    let new_index_ref = new_index.as_deref();
    let mut resolved: Vec<Resolved> = chunks
        .par_iter_mut()
        .zip(parts)
        .enumerate()
        .map(|(ci, (c, (types, sizes, degrees, targets)))| {
            let base = first_object[ci];
            let n = c.type_ids.len();
            let mut r = Resolved {
                targets: 0,
                undefined: Vec::new(),
                dangling: 0,
                messages: Vec::new(),
                domain_counts: vec![0; tables.len()],
            };
            let mut ref_pos = 0usize;
            let mut run = 0usize;
            let mut out = 0usize;
            for j in 0..n {
                while run + 1 < c.obj_markers.len() && c.obj_markers[run + 1].0 as usize <= j {
                    run += 1;
                }
                let degree = c.degrees[j] as usize;
                let refs = &c.refs[ref_pos..ref_pos + degree];
                ref_pos += degree;
                if keep_ref.is_some_and(|k| !k[base + j]) {
                    continue;
                }
                let section = section_at[ci][c.obj_markers[run].1 as usize];
                r.domain_counts[section as usize] += 1;
                let ty = match tables[section as usize].get(c.type_ids[j]) {
                    Some(t) => t,
                    None => {
                        r.undefined.push((out, section, c.type_ids[j]));
                        NO_TYPE
                    }
                };
                types[out].write(ty);
                sizes[out].write(c.sizes[j]);
                let before = r.targets;
                for (k, &target) in refs.iter().enumerate() {
                    // Look-ups miss the cache; ask for a later one's slot now
                    // so several misses are in flight at once.
                    if let Some(&ahead) = c.refs.get(ref_pos - degree + k + PREFETCH_DISTANCE) {
                        wide_ref.prefetch(ahead);
                    }
                    match wide_ref.get(target) {
                        Some(t) => {
                            targets[r.targets].write(match new_index_ref {
                                Some(m) => m[t as usize],
                                None => t,
                            });
                            r.targets += 1;
                        }
                        None => {
                            r.dangling += 1;
                            if r.messages.len() < MAX_MESSAGES {
                                r.messages.push((
                                    first_line[ci] + c.obj_lines[j] as u64,
                                    format!(
                                        "reference from {:x} to {target:x}, which is not in the dump; dropped",
                                        ids_ref[base + j]
                                    ),
                                ));
                            }
                        }
                    }
                }
                degrees[out].write((r.targets - before) as u32);
                out += 1;
            }
            debug_assert_eq!(out, types.len());
            c.refs = Vec::new();
            c.type_ids = Vec::new();
            c.sizes = Vec::new();
            c.degrees = Vec::new();
            r
        })
        .collect();
    // SAFETY: every chunk wrote each of its `kept` objects' type, size and
    // degree (one per kept object, `out` above), in its own part.
    unsafe {
        types.set_len(kept_total);
        sizes.set_len(kept_total);
        degrees.set_len(kept_total);
    }
    // Chunks with dangling references or repeated objects used less than
    // their part of `targets`: close the gaps (rare, sequential).
    let mut used = 0usize;
    let mut start = 0usize;
    for (&reserved, r) in reserved.iter().zip(&resolved) {
        if used != start {
            targets
                .spare_capacity_mut()
                .copy_within(start..start + r.targets, used);
        }
        used += r.targets;
        start += reserved;
    }
    // SAFETY: the first `used` slots are now the chunks' written targets,
    // in chunk order.
    unsafe { targets.set_len(used) };
    progress.set_done(file_bytes + file_bytes * 3 / 4);
    progress.check()?;
    laps.lap("resolve");

    // Undefined types get a name of their own; objects are counted.
    let mut undefined_names: HashMap<(u32, u64), u32> = HashMap::new();
    for (ci, r) in resolved.iter_mut().enumerate() {
        for &(j, section, type_id) in &r.undefined {
            let name = format!("<unknown type 0x{type_id:x}>");
            let idx = *undefined_names
                .entry((section, type_id))
                .or_insert_with(|| {
                    let idx = match by_name.get(name.as_str()) {
                        Some(&i) => i,
                        None => {
                            type_names.push(name.clone().into());
                            by_name.insert(name.clone().into(), (type_names.len() - 1) as u32);
                            (type_names.len() - 1) as u32
                        }
                    };
                    idx
                });
            types[kept_start[ci] + j] = idx;
            diag.undefined_types += 1;
        }
        if !r.undefined.is_empty() {
            let c = &chunks[ci];
            // Recover the lines of the first few undefined-type objects.
            let mut raw = 0usize;
            let mut kept = 0usize;
            for &(j, _, type_id) in r.undefined.iter().take(MAX_MESSAGES) {
                while kept < j || keep_ref.is_some_and(|k| !k[first_object[ci] + raw]) {
                    if keep_ref.is_none_or(|k| k[first_object[ci] + raw]) {
                        kept += 1;
                    }
                    raw += 1;
                }
                messages.push(
                    first_line[ci] + c.obj_lines[raw] as u64,
                    format!(
                        "object {:x} has type id {type_id:x}, which this section never defines",
                        ids[first_object[ci] + raw]
                    ),
                );
            }
        }
        for (d, n) in r.domain_counts.iter().enumerate() {
            app_domains[d].objects += n;
        }
        diag.dangling_references += r.dangling;
        for (l, m) in r.messages.drain(..) {
            messages.push(l, m);
        }
    }
    let refs = Csr::from_degrees(&degrees, targets);
    drop(degrees);
    laps.lap("offsets");

    let id_index = wide.narrow(new_index.as_deref());
    if let Some(keep) = &keep {
        let mut j = 0;
        ids.retain(|_| {
            let k = keep[j];
            j += 1;
            k
        });
    }

    // Roots: resolved to objects; missing ones counted.
    let mut roots = Vec::new();
    for (ci, c) in chunks.iter().enumerate() {
        for r in &c.roots {
            let line = first_line[ci] + r.line as u64;
            let section = section_at[ci][r.marker as usize];
            match id_index.get(&ids, r.object) {
                Some(object) => roots.push(Root {
                    object,
                    kind: r.kind,
                    flags: r.flags,
                    container: r.container,
                    container_type: r.container.and_then(|t| tables[section as usize].get(t)),
                    app_domain: section,
                    line,
                }),
                None => {
                    diag.missing_root_objects += 1;
                    if diag.missing_root_objects > MAX_MESSAGES as u64 {
                        continue;
                    }
                    messages.push(
                        line,
                        format!(
                            "root for object {:x}, which is not in the dump; ignored",
                            r.object
                        ),
                    );
                }
            }
        }
    }
    progress.set_done(file_bytes + file_bytes * 4 / 4);

    diag.messages = messages.finish();
    Ok(Model {
        path: path.to_path_buf(),
        file_bytes,
        app_domains,
        type_names,
        ids,
        types,
        sizes,
        refs,
        roots,
        id_index,
        diagnostics: diag,
        records,
        ..Model::default()
    })
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

    /// The element `scan_hex` must find: blanks skipped, then the bytes up
    /// to the next blank or line end, read by `hex`.
    fn scan_reference(text: &[u8], pos: usize) -> (Option<Option<u64>>, usize) {
        let mut p = pos;
        while p < text.len() && is_blank(text[p]) {
            p += 1;
        }
        if p == text.len() || text[p] == b'\n' {
            return (None, p);
        }
        let start = p;
        while p < text.len() && !is_blank(text[p]) && text[p] != b'\n' {
            p += 1;
        }
        (Some(hex(&text[start..p])), p)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]
        /// Eight bytes at a time and byte by byte agree, on elements of every
        /// length near the word sizes, with letters of both cases, bad
        /// digits, control bytes, non-ASCII bytes and line ends around them.
        #[test]
        fn word_scan_agrees_with_bytewise_scan(
            text in proptest::collection::vec(
                proptest::sample::select(&b"0123456789abcdefABCDEF0f0f0f \t\r\ngGxX@`/:\x00\x01\x0b\x1f\x20\x21\x7f\x80\xb0\xe6\xff"[..]),
                0..40,
            ),
            pad in 0usize..20,
        ) {
            let mut text = text;
            text.extend(std::iter::repeat_n(b' ', pad));
            for pos in 0..text.len() {
                let mut p = pos;
                let got = scan_hex(&text, &mut p);
                let (want, end) = scan_reference(&text, pos);
                match (got, want) {
                    (Scan::End, None) => proptest::prop_assert_eq!(p, end),
                    (Scan::Value(v), Some(Some(w))) => {
                        proptest::prop_assert_eq!(v, w);
                        // At the element's end, or past the one blank after it.
                        proptest::prop_assert!(p == end || p == end + 1 && text[end] == b' ');
                    }
                    (Scan::Bad, Some(None)) => {}
                    (got, want) => proptest::prop_assert!(
                        false,
                        "at {pos} of {text:?}: got {}, want {want:?}",
                        match got {
                            Scan::End => "end".to_string(),
                            Scan::Bad => "bad".to_string(),
                            Scan::Value(v) => format!("{v:x}"),
                        }
                    ),
                }
            }
        }
    }

    #[test]
    fn word_scan_reads_every_length() {
        for len in 1..=16 {
            let digits = &b"fedcba9876543210"[..len];
            let want = u64::from_str_radix(std::str::from_utf8(digits).unwrap(), 16).unwrap();
            let mut text = digits.to_vec();
            text.extend_from_slice(b" 1                ");
            let mut pos = 0;
            assert!(matches!(scan_hex(&text, &mut pos), Scan::Value(v) if v == want));
            assert!(pos == len || pos == len + 1, "{len}: {pos}");
            assert!(matches!(scan_hex(&text, &mut pos), Scan::Value(1)));
            assert!(matches!(scan_hex(&text, &mut pos), Scan::End));
        }
    }

    #[test]
    fn chunks_end_at_newlines_and_cover_everything() {
        let text = b"o 1 1 1\no 2 1 1\no 3 1 1\nlast";
        for target in 1..text.len() + 2 {
            let r = chunk_ranges(text, target);
            assert_eq!(r.first().unwrap().0, 0);
            assert_eq!(r.last().unwrap().1, text.len());
            for w in r.windows(2) {
                assert_eq!(w[0].1, w[1].0);
                assert_eq!(text[w[0].1 - 1], b'\n');
            }
        }
    }
}
