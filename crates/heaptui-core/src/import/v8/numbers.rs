//! The numeric arrays (`nodes`, `edges`), read straight from the file's
//! bytes in parallel. The array is taken in windows of a few chunks; in each
//! window the chunks first count their commas (a vectorised byte count), so
//! each knows the index of its first number, hence which record and field
//! it starts in; then each parses the records that start in it (reading on
//! into the next chunk to finish the last one) and the results are merged in
//! file order. The window's pages are then given back, so the mapped file
//! never sits whole in memory.
//!
//! The array's end need not be known: read from just after its `[`, the
//! comma count also looks for the first `]`, and the window it falls in is
//! the last. So the array's bytes are mapped and read once; searching the
//! end first read 1.5 GB a second time on a 1.6 GB snapshot.
//!
//! The scanner is strict where it is cheap: digits only (the arrays hold
//! non-negative integers), exactly one comma between numbers, whitespace
//! anywhere; anything else is an error with its byte offset.
//!
//! Numbers are read by the AVX2 fast path (`simd`) where the CPU has it,
//! 64 bytes at a time into a look-ahead of parsed numbers; the byte reader
//! here ([`Cursor`]) takes whatever that path leaves (unusual spacing,
//! long numbers, errors, an array's last bytes, CPUs without AVX2) and is
//! the one that reports errors.

use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;

use rayon::prelude::*;

use super::layout::NumberArray;
use super::simd::{self, Simd};
use crate::import::source::Source;
use crate::progress::Progress;

/// Records hold at most this many fields (V8 writes 3 to 7).
pub const MAX_FIELDS: usize = 32;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScanError {
    Bad { offset: usize, why: &'static str },
    Cancelled,
}

#[inline]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// Per byte of `w`: non-zero unless the byte is an ASCII digit. A byte
/// carries into the next only when it is 0xFA or more (not a digit), so the
/// lowest non-zero byte is always the first non-digit.
#[inline(always)]
fn non_digits(w: u64) -> u64 {
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const THREES: u64 = 0x3030_3030_3030_3030;
    ((w & HIGH) ^ THREES) | ((w.wrapping_add(0x0606_0606_0606_0606) & HIGH) ^ THREES)
}

/// The value of up to 8 digits in `w`'s bytes, the first digit in the
/// lowest byte, the bytes before the first digit zero (Lemire's
/// eight-digit SWAR conversion, on the digits' low nibbles).
#[inline(always)]
fn eight_digits(w: u64) -> u64 {
    let v = w & 0x0F0F_0F0F_0F0F_0F0F;
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    const MASK: u64 = 0x0000_00FF_0000_00FF;
    const MUL1: u64 = 100 + (1_000_000 << 32);
    const MUL2: u64 = 1 + (10_000 << 32);
    ((v & MASK)
        .wrapping_mul(MUL1)
        .wrapping_add(((v >> 16) & MASK).wrapping_mul(MUL2)))
        >> 32
}

const POW10: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// The digits of `rest` from `i` on: their value (wrapped past 19 digits,
/// which the caller rejects) and their count. Eight bytes at a time while
/// eight are left, then byte by byte.
#[inline(always)]
fn digits(rest: &[u8], mut i: usize) -> (u64, usize) {
    let start = i;
    let mut v = 0u64;
    while let Some(w) = rest.get(i..i + 8) {
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        let stop = non_digits(w);
        let n = if stop == 0 {
            8
        } else {
            (stop.trailing_zeros() / 8) as usize
        };
        if n == 0 {
            return (v, i - start);
        }
        let w = if n == 8 { w } else { w << (8 * (8 - n)) };
        v = v.wrapping_mul(POW10[n]).wrapping_add(eight_digits(w));
        i += n;
        if n < 8 {
            return (v, i - start);
        }
    }
    while let Some(&c) = rest.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(d as u64);
        i += 1;
    }
    (v, i - start)
}

/// Reads numbers from a position of the file onwards.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    end: usize,
    first: bool,
}

impl<'a> Cursor<'a> {
    /// A cursor at `pos`, reading up to `end`. Chunks start at the array's
    /// start or after a comma, so the first number needs no comma before it.
    fn at(bytes: &'a [u8], pos: usize, end: usize) -> Cursor<'a> {
        Cursor {
            bytes,
            pos,
            end,
            first: true,
        }
    }

    /// The next number. The fast path takes the common shape, `,` or `\n,`
    /// (nothing before a chunk's first number) then at most 19 digits; anything else
    /// (whitespace, a line break, an error) takes the careful path.
    #[inline(always)]
    fn number(&mut self) -> Result<u64, ScanError> {
        let rest = &self.bytes[self.pos..self.end];
        let mut i = 0;
        if !self.first {
            // V8 ends each record's line before the comma: `\n,`.
            if rest.first() == Some(&b'\n') {
                i = 1;
            }
            if rest.get(i) != Some(&b',') {
                return self.number_slow();
            }
            i += 1;
        }
        let start = i;
        let (v, n) = digits(rest, i);
        i += n;
        // 19 digits never overflow; longer numbers are checked slowly.
        if i == start || i - start > 19 {
            return self.number_slow();
        }
        self.pos += i;
        self.first = false;
        Ok(v)
    }

    #[inline(never)]
    fn number_slow(&mut self) -> Result<u64, ScanError> {
        let b = self.bytes;
        let mut p = self.pos;
        let mut commas = 0u32;
        while p < self.end && (is_ws(b[p]) || b[p] == b',') {
            commas += (b[p] == b',') as u32;
            p += 1;
        }
        if commas != u32::from(!self.first) {
            return Err(ScanError::Bad {
                offset: p,
                why: "expected one comma between numbers",
            });
        }
        self.first = false;
        let start = p;
        let mut v: u64 = 0;
        while p < self.end {
            let d = b[p].wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            v = match v.checked_mul(10).and_then(|v| v.checked_add(d as u64)) {
                Some(v) => v,
                None => {
                    return Err(ScanError::Bad {
                        offset: start,
                        why: "number too large",
                    })
                }
            };
            p += 1;
        }
        if p == start {
            return Err(ScanError::Bad {
                offset: p,
                why: "expected a non-negative integer",
            });
        }
        self.pos = p;
        Ok(v)
    }
}

/// Numbers parsed ahead by the fast path, at most.
const AHEAD: usize = 256;

/// The records of one chunk, handed to the caller's chunk function.
pub struct Chunk<'a> {
    /// Index of the chunk's first record in the array.
    pub first_record: u64,
    /// How many records the chunk holds.
    pub records: u64,
    pub fields: usize,
    skip: usize,
    /// Whether the chunk ends the array.
    last: bool,
    cursor: Cursor<'a>,
    /// Where the CPU has it, the fast path (see `simd`).
    simd: Option<Simd>,
    /// Numbers the fast path parsed ahead, `ahead[next..parsed]` not yet
    /// read: all whole numbers in the grammar, so reading on past the
    /// chunk's records finds no error the byte reader would not.
    ahead: [u64; AHEAD],
    next: usize,
    parsed: usize,
    /// A record read number by number.
    spill: [u64; MAX_FIELDS],
}

impl Chunk<'_> {
    /// The next record's `fields` numbers.
    #[inline]
    pub fn record(&mut self) -> Result<&[u64], ScanError> {
        let f = self.fields;
        if self.skip == 0 && self.parsed - self.next >= f {
            // The common case: a whole record parsed ahead, read in place.
            let at = self.next;
            self.next += f;
            return Ok(&self.ahead[at..at + f]);
        }
        self.record_by_number()
    }

    #[inline(never)]
    fn record_by_number(&mut self) -> Result<&[u64], ScanError> {
        while self.skip > 0 {
            self.number()?;
            self.skip -= 1;
        }
        for i in 0..self.fields {
            self.spill[i] = self.number()?;
        }
        Ok(&self.spill[..self.fields])
    }

    #[inline(always)]
    fn number(&mut self) -> Result<u64, ScanError> {
        if self.next == self.parsed {
            self.parse_ahead();
            if self.next == self.parsed {
                return self.cursor.number();
            }
        }
        let v = self.ahead[self.next];
        self.next += 1;
        Ok(v)
    }

    /// Lets the fast path parse what it can from the cursor on.
    #[inline(never)]
    fn parse_ahead(&mut self) {
        let Some(simd) = self.simd else {
            return;
        };
        let c = &mut self.cursor;
        self.next = 0;
        self.parsed = simd::numbers(
            simd,
            c.bytes,
            &mut c.pos,
            &mut c.first,
            c.end,
            &mut self.ahead,
        );
    }

    /// Reads what is left up to the array's end (the numbers of a cut last
    /// record), so a malformed tail is an error too.
    fn finish(&mut self) -> Result<(), ScanError> {
        self.next = self.parsed;
        loop {
            let c = &self.cursor;
            if c.bytes[c.pos..c.end].iter().all(|&b| is_ws(b) || b == b',') {
                return Ok(());
            }
            self.cursor.number()?;
        }
    }
}

/// What a whole array held, and where it lay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scanned {
    pub numbers: u64,
    /// Complete records (a cut last record is not one).
    pub records: u64,
    /// From just after the array's `[` to its `]`, or to the end of the
    /// file when the array was cut (`closed` false).
    pub start: usize,
    pub end: usize,
    pub closed: bool,
}

impl Scanned {
    /// The array's extent, as the layout walk records it.
    pub fn array(&self) -> NumberArray {
        NumberArray {
            range: self.start..self.end,
            closed: self.closed,
        }
    }
}

/// Where the array to read lies.
#[derive(Debug, Clone)]
pub enum Extent {
    /// As the layout walk found it.
    Known(NumberArray),
    /// From this byte (just after the `[`) to the first `]`, or to the end
    /// of the file: the end is found while the commas are counted, so the
    /// array's bytes are read once, not once to find the end and again to
    /// read the numbers.
    Open(usize),
}

impl Extent {
    /// The most bytes the array can span in a file of `file_len` bytes (a
    /// bound for capacity hints).
    pub fn room(&self, file_len: usize) -> usize {
        match self {
            Extent::Known(array) => array.range.len(),
            Extent::Open(start) => file_len.saturating_sub(*start),
        }
    }
}

/// Bytes of one window at most (chunks of the chosen size, or smaller ones
/// where many threads share it), whatever the thread count. The window's
/// pages of the file and its chunks' buffers (8 bytes an edge) are
/// resident at once: 64 MiB windows held about 100 MiB at the 519 MB
/// snapshot's peak, 16 MiB ones about 25 (sixteen 1 MiB chunks at two
/// threads).
const WINDOW: usize = 16 << 20;

/// A window's last record may run on past it. When the array ends within
/// this many bytes after a window, that tail joins the window, so a cut
/// last record (which may start in the window) is read knowing where the
/// array ends. 32 fields of 20 digits, a comma and a line break fit.
const TAIL: usize = 1024;

/// Up to `count` chunk byte ranges of about `size` bytes from `s` on, each
/// but the array's last ending just after a comma, none past `limit`. When
/// `search`, a `]` met while looking for a chunk's comma ends the array
/// there: it is returned too, and no more chunks follow.
fn window_ranges(
    bytes: &[u8],
    mut s: usize,
    limit: usize,
    size: usize,
    count: usize,
    search: bool,
) -> (Vec<(usize, usize)>, Option<usize>) {
    let mut out = Vec::with_capacity(count);
    while out.len() < count && s < limit {
        let target = (s + size).min(limit);
        let rest = &bytes[target..limit];
        let found = match search {
            true => memchr::memchr2(b',', b']', rest),
            false => memchr::memchr(b',', rest),
        };
        let e = match found {
            Some(k) if rest[k] == b',' => target + k + 1,
            Some(k) => {
                out.push((s, target + k));
                return (out, Some(target + k));
            }
            None => limit,
        };
        out.push((s, e));
        s = e;
    }
    // A short tail joins the window (see `TAIL`).
    let mut close = None;
    if let Some(last) = out.last_mut().filter(|l| l.1 < limit) {
        let peek = &bytes[last.1..(last.1 + TAIL).min(limit)];
        if let Some(k) = memchr::memchr(b']', peek).filter(|_| search) {
            last.1 += k;
            close = Some(last.1);
        } else if last.1 + peek.len() == limit {
            last.1 = limit;
        }
    }
    (out, close)
}

/// How many bytes of `hay` are `needle`. Blocks of 128 bytes are summed
/// into one byte per lane, which the compiler turns into 16-byte compares
/// at the baseline target; `filter().count()` counted into 64-bit lanes,
/// four bytes at a time, and was a tenth of a V8 import.
fn count_byte(hay: &[u8], needle: u8) -> u64 {
    let mut blocks = hay.chunks_exact(128);
    let mut n = 0u64;
    for block in &mut blocks {
        n += block
            .iter()
            .fold(0u8, |a, &b| a.wrapping_add((b == needle) as u8)) as u64;
    }
    n + blocks.remainder().iter().filter(|&&b| b == needle).count() as u64
}

/// The commas of `hay` before its first `]`, and where that `]` is: one
/// pass, summed in blocks as [`count_byte`] sums.
fn commas_before_close(hay: &[u8]) -> (u64, Option<usize>) {
    let mut n = 0u64;
    let mut at = 0;
    for block in hay.chunks(128) {
        let (commas, closes) = block.iter().fold((0u8, 0u8), |(c, z), &b| {
            (c.wrapping_add((b == b',') as u8), z | (b == b']') as u8)
        });
        if closes != 0 {
            let k = memchr::memchr(b']', block).expect("a `]` in the block");
            return (n + count_byte(&block[..k], b','), Some(at + k));
        }
        n += commas as u64;
        at += block.len();
    }
    (n, None)
}

/// Whether a number follows the last comma of `chunk` (the array's last
/// number, which no comma follows).
fn ends_in_number(chunk: &[u8]) -> bool {
    let tail = match memchr::memrchr(b',', chunk) {
        Some(k) => &chunk[k + 1..],
        None => chunk,
    };
    tail.iter().any(|&b| !is_ws(b))
}

/// A numeric array to read as records of `fields` numbers, in chunks of
/// about `chunk_size` bytes.
pub struct Scan<'a> {
    pub bytes: &'a [u8],
    pub extent: Extent,
    pub fields: usize,
    pub chunk_size: usize,
    pub source: &'a Source,
    pub progress: &'a Progress,
}

/// The array's end as far as it is known: `(end, closed)`.
type End = Option<(usize, bool)>;

impl Scan<'_> {
    /// Runs `chunk_fn` on every chunk in parallel, filling an `R` it must
    /// first empty; `merge` gets them in file order. The `R`s are reused
    /// from window to window, so the chunks' buffers are allocated (and
    /// their pages first touched) once, not once per chunk.
    pub fn run<R: Send + Default>(
        self,
        chunk_fn: impl Fn(&mut Chunk, &mut R) -> Result<(), ScanError> + Sync,
        merge: impl FnMut(&mut R),
    ) -> Result<Scanned, ScanError> {
        self.run_with(Simd::detect(), chunk_fn, merge)
    }

    /// The chunks of one window: `window`'s byte ranges and `counts` their
    /// numbers, the array's first `numbers` numbers before them, and at
    /// most `complete` records in all where the array's end is in the window.
    fn chunks<'s>(
        &'s self,
        simd: Option<Simd>,
        (window, counts): (&[(usize, usize)], &[u64]),
        numbers: u64,
        complete: Option<u64>,
        array_end: Option<usize>,
    ) -> Vec<Chunk<'s>> {
        let (bytes, fields, f) = (self.bytes, self.fields, self.fields as u64);
        let mut first = numbers;
        window
            .iter()
            .zip(counts)
            .map(|(&(s, e), &n)| {
                let r0 = first.div_ceil(f);
                let mut r1 = (first + n).div_ceil(f);
                if let Some(c) = complete {
                    r1 = r1.min(c);
                }
                let skip = (r0 * f - first) as usize;
                first += n;
                Chunk {
                    first_record: r0,
                    records: r1.saturating_sub(r0),
                    fields,
                    skip,
                    last: Some(e) == array_end,
                    // Before the end is known, the window's last record
                    // may read on into the next window.
                    cursor: Cursor::at(bytes, s, array_end.unwrap_or(bytes.len())),
                    simd,
                    ahead: [0; AHEAD],
                    next: 0,
                    parsed: 0,
                    spill: [0; MAX_FIELDS],
                }
            })
            .collect()
    }

    /// Where the scan starts, and the array's end as far as it is known.
    fn bounds(&self) -> (usize, End) {
        match &self.extent {
            Extent::Open(start) => ((*start).min(self.bytes.len()), None),
            Extent::Known(array) if array.closed => {
                (array.range.start, Some((array.range.end, true)))
            }
            Extent::Known(array) => {
                // The number after the last comma may be cut short: leave it out.
                let range = array.range.clone();
                let cut = match memchr::memrchr(b',', &self.bytes[range.clone()]) {
                    Some(k) => range.start + k + 1,
                    None => range.start,
                };
                (range.start, Some((cut, false)))
            }
        }
    }

    /// The next window's chunks and their number counts, from `at` on;
    /// sets `end` when the array ends in it.
    fn window(&self, at: usize, end: &mut End) -> (Vec<(usize, usize)>, Vec<u64>) {
        let bytes = self.bytes;
        let search = end.is_none();
        let limit = end.map_or(bytes.len(), |e| e.0);
        // More threads take more, smaller chunks, not a larger window: the
        // window's pages and its chunks' buffers are resident at once (a
        // window of four 4 MiB chunks a thread took the 519 MB snapshot's
        // import from 396 to 699 MiB at sixteen threads).
        let per_window = (rayon::current_num_threads() * 4).max(16);
        let size = self.chunk_size.min(WINDOW / per_window).max(1);
        let (mut chunks, close) = window_ranges(bytes, at, limit, size, per_window, search);
        // Chunks after a `]` another chunk met are not counted.
        let met = AtomicUsize::new(usize::MAX);
        let counted: Vec<(u64, Option<usize>)> = chunks
            .par_iter()
            .map(|&(s, e)| {
                if search && met.load(Relaxed) < s {
                    return (0, None);
                }
                self.source.populate(s, e - s);
                if !search {
                    return (count_byte(&bytes[s..e], b','), None);
                }
                let (n, close) = commas_before_close(&bytes[s..e]);
                let close = close.map(|k| s + k);
                if let Some(c) = close {
                    met.fetch_min(c, Relaxed);
                }
                (n, close)
            })
            .collect();
        let mut counts: Vec<u64> = counted.iter().map(|c| c.0).collect();
        if search {
            if let Some(i) = counted.iter().position(|c| c.1.is_some()) {
                let close = counted[i].1.expect("a `]`");
                chunks.truncate(i + 1);
                counts.truncate(i + 1);
                chunks[i].1 = close;
                *end = Some((close, true));
            } else if let Some(close) = close {
                *end = Some((close, true));
            } else if chunks.last().is_none_or(|c| c.1 == bytes.len()) {
                // The file ends inside the array. The number after the last
                // comma may be cut short: leave it out (chunks but the last
                // end after a comma, so that comma is in the last).
                let cut = match chunks.last_mut() {
                    Some(last) => {
                        let chunk = &bytes[last.0..last.1];
                        last.1 = last.0 + memchr::memrchr(b',', chunk).map_or(0, |k| k + 1);
                        last.1
                    }
                    None => at,
                };
                *end = Some((cut, false));
            }
        }
        // The array's last number: no comma follows it.
        if let (Some((e, _)), Some(last)) = (*end, chunks.last()) {
            if last.1 == e {
                *counts.last_mut().expect("a count per chunk") +=
                    ends_in_number(&bytes[last.0..last.1]) as u64;
            }
        }
        (chunks, counts)
    }

    /// [`Self::run`] with the fast path on or off.
    fn run_with<R: Send + Default>(
        self,
        simd: Option<Simd>,
        chunk_fn: impl Fn(&mut Chunk, &mut R) -> Result<(), ScanError> + Sync,
        mut merge: impl FnMut(&mut R),
    ) -> Result<Scanned, ScanError> {
        let (bytes, fields) = (self.bytes, self.fields);
        assert!((1..=MAX_FIELDS).contains(&fields));
        let (start, mut end) = self.bounds();
        let f = fields as u64;
        let mut numbers = 0u64;
        let mut spare: Vec<R> = Vec::new();
        let mut at = start;
        loop {
            if self.progress.is_cancelled() {
                return Err(ScanError::Cancelled);
            }
            if end.is_some_and(|(e, _)| at >= e) {
                break;
            }
            let (window, counts) = self.window(at, &mut end);
            if window.is_empty() {
                break;
            }
            let array_end = end.map(|e| e.0);
            let last_window = array_end.is_some_and(|e| window[window.len() - 1].1 == e);
            let window_numbers: u64 = counts.iter().sum();
            // Records beyond the array's complete ones are not read.
            let complete = last_window.then(|| (numbers + window_numbers) / f);
            let jobs: Vec<(Chunk, R)> = self
                .chunks(simd, (&window, &counts), numbers, complete, array_end)
                .into_iter()
                .map(|c| (c, spare.pop().unwrap_or_default()))
                .collect();
            // The first error in file order, whichever thread met it first.
            let results: Vec<Result<R, ScanError>> = jobs
                .into_par_iter()
                .map(|(mut chunk, mut out)| {
                    chunk_fn(&mut chunk, &mut out)?;
                    if chunk.last {
                        chunk.finish()?;
                    }
                    Ok(out)
                })
                .collect();
            for r in results {
                let mut out = r?;
                merge(&mut out);
                spare.push(out);
            }
            numbers += window_numbers;
            let (ws, we) = (window[0].0, window[window.len() - 1].1);
            self.source.release(ws, we - ws);
            self.progress.advance((we - ws) as u64);
            at = we;
        }
        let (end, closed) = match end {
            Some((_, false)) | None => (bytes.len(), false),
            Some((e, true)) => (e, true),
        };
        Ok(Scanned {
            numbers,
            records: numbers / f,
            start,
            end,
            closed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Records = Result<(Vec<u64>, Scanned), ScanError>;

    fn records(text: &[u8], fields: usize, chunk: usize) -> Records {
        records_with(text, fields, chunk, Simd::detect())
    }

    /// The records both ways, which must agree: with the end the layout
    /// walk searched, and with the end found while reading.
    fn records_with(text: &[u8], fields: usize, chunk: usize, simd: Option<Simd>) -> Records {
        let array = super::super::layout::find(text, &Source::Owned(Vec::new()))
            .nodes
            .unwrap();
        let open = Extent::Open(array.range.start);
        let known = read_extent(text, Extent::Known(array), fields, chunk, simd);
        let found = read_extent(text, open, fields, chunk, simd);
        assert_eq!(known, found, "{fields} fields, chunk {chunk}");
        known
    }

    fn read_extent(
        text: &[u8],
        extent: Extent,
        fields: usize,
        chunk: usize,
        simd: Option<Simd>,
    ) -> Records {
        let mut out = Vec::new();
        let (source, progress) = (Source::Owned(Vec::new()), Progress::new());
        let scan = Scan {
            bytes: text,
            extent,
            fields,
            chunk_size: chunk,
            source: &source,
            progress: &progress,
        };
        let scanned = scan.run_with(
            simd,
            |c, v: &mut Vec<u64>| {
                v.clear();
                for _ in 0..c.records {
                    v.extend_from_slice(c.record()?);
                }
                Ok(())
            },
            |v| out.extend_from_slice(v),
        )?;
        Ok((out, scanned))
    }

    #[test]
    fn the_eight_byte_digit_scan_agrees_with_a_byte_loop() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for len in 0..=24 {
            for _ in 0..200 {
                let mut t = Vec::new();
                for _ in 0..len {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    t.push(b'0' + (x % 10) as u8);
                }
                // Every kind of byte after the digits, 0xFA+ (carries) too.
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                t.push((x >> 8) as u8 | if x.is_multiple_of(3) { 0xF0 } else { 0 });
                t.extend_from_slice(&[b'9'; 9]);
                t.push(b']');
                cases.push(t);
            }
        }
        for t in &cases {
            let end = t.iter().position(|b| !b.is_ascii_digit()).unwrap();
            for lead in 0..3 {
                let mut u = vec![b','; lead];
                u.extend_from_slice(t);
                let want_n = end;
                let want = t[..end].iter().fold(0u64, |v, &c| {
                    v.wrapping_mul(10).wrapping_add((c - b'0') as u64)
                });
                assert_eq!(
                    digits(&u, lead),
                    (want, want_n),
                    "{:?}",
                    String::from_utf8_lossy(&u)
                );
                // Cut right after the digits: the byte loop finishes.
                assert_eq!(digits(&u[..lead + end], lead), (want, want_n));
            }
        }
    }

    #[test]
    fn the_byte_count_agrees_with_a_filter() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let text: Vec<u8> = (0..1000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                [b',', b'1', b'\n', b' '][(x % 4) as usize]
            })
            .collect();
        for start in 0..3 {
            for end in [start, 127, 128, 129, 255, 256, 600, 1000] {
                let hay = &text[start..end.max(start)];
                let want = hay.iter().filter(|&&b| b == b',').count() as u64;
                assert_eq!(count_byte(hay, b','), want, "{start}..{end}");
            }
        }
        // 128 equal bytes: the per-block byte sum must not overflow.
        assert_eq!(count_byte(&[b','; 128 * 3 + 5], b','), 128 * 3 + 5);
    }

    /// A `nodes` array of `count` numbers as V8 writes them (one record a
    /// line), with whitespace, long numbers and now and then a fault.
    fn random_array(x: &mut u64, count: usize, faults: bool) -> Vec<u8> {
        let mut next = |m: u64| {
            *x ^= *x << 13;
            *x ^= *x >> 7;
            *x ^= *x << 17;
            *x % m
        };
        let mut t = b"{\"nodes\":[".to_vec();
        for k in 0..count {
            if k > 0 {
                match next(40) {
                    0 => t.extend_from_slice(b" , "),
                    1 => t.extend_from_slice(b"\r\n\t,"),
                    2..=12 => t.extend_from_slice(b"\n,"),
                    _ => t.push(b','),
                }
            }
            let len = match next(100) {
                0 => 15 + next(5) as usize,
                _ => 1 + next(10) as usize,
            };
            for _ in 0..len {
                t.push(b'0' + next(10) as u8);
            }
            if faults && next(3000) == 0 {
                let fault: &[u8] = [
                    &b",,"[..],
                    b" ",
                    b"-",
                    b"x",
                    b".5",
                    b"\n",
                    b"99999999999999999999",
                ][next(7) as usize];
                t.extend_from_slice(fault);
            }
        }
        // What follows has commas and numbers too, which must not be read.
        t.extend_from_slice(b"],\"edges\":[1,2,3,\n4,5]}");
        t
    }

    #[test]
    fn the_fast_path_reads_what_the_byte_reader_reads() {
        let Some(simd) = Simd::detect() else {
            return; // nothing to compare on this CPU
        };
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let (mut errors, mut cases) = (0, 0);
        for round in 0..120 {
            let text = random_array(&mut x, 50 + round * 40, round % 3 != 0);
            for (fields, chunk) in [(1, 5000), (3, 64), (7, 300), (5, 4096), (2, 100_000)] {
                let slow = records_with(&text, fields, chunk, None);
                let fast = records_with(&text, fields, chunk, Some(simd));
                assert_eq!(fast, slow, "round {round}, {fields} fields, chunk {chunk}");
                errors += slow.is_err() as usize;
                cases += 1;
            }
        }
        // Both kinds of text were read.
        assert!(errors > 20 && cases - errors > 20, "{errors} errors");
    }

    #[test]
    fn every_chunk_size_reads_the_same_records() {
        let text = b"{\"nodes\":[ 1,22,333 ,\n4444,5,66,\n7,8 ],\"edges\":[1,2,3]}";
        for chunk in 1..40 {
            let (v, s) = records(text, 3, chunk).unwrap();
            assert_eq!(v, [1, 22, 333, 4444, 5, 66], "chunk {chunk}");
            assert_eq!(
                s,
                Scanned {
                    numbers: 8,
                    records: 2,
                    start: 10,
                    end: 37,
                    closed: true,
                }
            );
        }
    }

    #[test]
    fn a_cut_last_record_may_start_in_the_window_before_the_last() {
        // Chunks of one number, windows of 16 or more chunks: the cut
        // record starts in one window and its numbers run into the next.
        let windows = (rayon::current_num_threads() * 4).max(16);
        for fields in 2..=7 {
            for count in windows - 8..3 * windows + 8 {
                let numbers = vec!["7"; count].join(",");
                for tail in ["]}", "\n]}", "],\"x\":[1,2]}", ""] {
                    let text = format!("{{\"nodes\":[{numbers}{tail}");
                    let (v, s) = records(text.as_bytes(), fields, 1)
                        .unwrap_or_else(|e| panic!("{e:?} {fields} {count} {tail}"));
                    // A cut file's last number may be cut short: it is left out.
                    let numbers = count - tail.is_empty() as usize;
                    assert_eq!(s.numbers, numbers as u64, "{fields} fields, {count}");
                    assert_eq!(s.records, (numbers / fields) as u64);
                    assert_eq!(v.len(), numbers / fields * fields);
                    assert_eq!(s.closed, !tail.is_empty());
                }
            }
        }
    }

    #[test]
    fn the_end_is_found_wherever_it_lies() {
        // `]` at a chunk's start, inside it, or where a chunk's comma is
        // looked for; an empty array; the file ending at `[`.
        let cases: [(&[u8], &[u64]); 5] = [
            (b"{\"nodes\":[]}", &[]),
            (b"{\"nodes\":[\n]}", &[]),
            (b"{\"nodes\":[1,2]}", &[1, 2]),
            (b"{\"nodes\":[1,2,3,4 ],\"e\":[5,6,7,8]}", &[1, 2, 3, 4]),
            (b"{\"nodes\":[", &[]),
        ];
        for (text, want) in cases {
            for chunk in 1..12 {
                let (v, s) = records(text, 2, chunk).unwrap();
                assert_eq!(v, want, "{} chunk {chunk}", String::from_utf8_lossy(text));
                assert_eq!(s.numbers, want.len() as u64);
            }
        }
    }

    #[test]
    fn a_cut_array_drops_its_last_number() {
        let text = b"{\"nodes\":[1,2,3,4,5";
        let (v, s) = records(text, 2, 3).unwrap();
        assert_eq!(v, [1, 2, 3, 4]);
        assert_eq!(s.numbers, 4);
    }

    #[test]
    fn bad_bytes_are_errors_with_their_offset() {
        for (text, why) in [
            (
                &b"{\"nodes\":[1,-2]}"[..],
                "expected a non-negative integer",
            ),
            (b"{\"nodes\":[1,2.5]}", "expected one comma between numbers"),
            (b"{\"nodes\":[1 2]}", "expected one comma between numbers"),
            (
                b"{\"nodes\":[1,99999999999999999999999]}",
                "number too large",
            ),
        ] {
            match records(text, 2, 4) {
                Err(ScanError::Bad { why: w, .. }) => assert_eq!(w, why),
                other => panic!("{other:?}"),
            }
        }
    }
}
