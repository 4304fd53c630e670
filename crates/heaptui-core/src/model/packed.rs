//! Rows of ascending `u32` values (each object's retainers) packed as
//! variable-length deltas: a row's first value as the zigzag of its
//! distance from the row's own number, each next one as its distance from
//! the one before, in LEB128 bytes (7 bits a byte).
//!
//! Where a row starts is kept in an index of 32 bytes for every [`BLOCK`]
//! rows: the start of the block's first row (a `u64`, whose top bit says
//! the block has a long row), then each of its rows' byte lengths in one
//! byte (rows of [`LONG`] bytes or more in a side table, by row). A row is
//! found from one read of its block's 32 bytes (the lengths before it
//! summed a word at a time) and read in time proportional to its values,
//! whatever the other rows hold.
//!
//! On the 10.1 M-object text heap: about 5.7 bytes an object, against 14.5
//! for 4-byte offsets and 4-byte values.

use rayon::prelude::*;

use super::Csr;
use crate::mem::{Array, BitRow};

/// Rows per block: the start of a block's first row is stored, the others
/// are found by adding the lengths before them.
pub const BLOCK: usize = 24;
/// `u64` words of the index per block: the start, then the lengths.
const WORDS: usize = 1 + BLOCK / 8;
/// A row's entry in the lengths when its bytes number this or more (its
/// length is then in the side table).
pub const LONG: u8 = u8::MAX;
/// The bit of a block's start that says one of its rows is long.
const HAS_LONG: u64 = 1 << 63;
/// Rows encoded by one task of [`PackedRows::from_csr`].
const CHUNK: usize = BLOCK * 2048;

/// Rows of ascending `u32` values, packed (see the module's doc).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackedRows {
    /// How many rows.
    rows: usize,
    /// Per block, [`WORDS`] words: its first row's start in `bytes` (with
    /// [`HAS_LONG`]), then its rows' byte lengths, a byte each in little-
    /// endian order, [`LONG`] for one in `long_rows` (0 past the last row).
    index: Array<u64>,
    /// The rows of [`LONG`] bytes or more, ascending.
    long_rows: Array<u32>,
    /// Their byte lengths.
    long_lens: Array<u64>,
    /// Every row's values, encoded, row after row.
    bytes: Array<u8>,
    /// How many values in all.
    values: u64,
}

/// Why packed rows read back are refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRows(pub &'static str);

impl PackedRows {
    /// The rows of `csr`, each of which must be ascending (a transposed
    /// adjacency's are); in parallel over chunks of rows, each written in
    /// place: a first pass sizes every row and fills the index's lengths,
    /// a second encodes the rows into their share of the bytes.
    pub fn from_csr(csr: &Csr) -> PackedRows {
        let n = csr.nodes();
        build(n, std::slice::from_ref(&(0..n)), |_| {
            std::borrow::Cow::Borrowed(csr)
        })
    }

    /// The rows of `csr`'s transpose (each object's retainers, ascending),
    /// without the whole transpose at any time: made [`WINDOWS`] windows
    /// of rows at a time, each window's rows transposed
    /// ([`Csr::transpose_rows_in`]), packed and dropped before the next.
    /// The windows hold about as many values each (cut at chunks of rows,
    /// by a first pass that counts the values per chunk), so the most
    /// alive beside the result is half the transpose: on the 6.62 M-object
    /// V8 snapshot its 21.5 M values took 4 bytes each, 8 bytes of offsets
    /// and 8 of cursors an object (192 MB), where a window takes 96 MB
    /// (the graph's stage peaked 77 MiB lower, at 266 MiB, below the
    /// dominators' 341). The cost: each window reads every row of `csr`
    /// twice (counting, placing), where the whole transpose read them
    /// twice in all.
    pub fn transposed(csr: &Csr, spill: Option<&crate::mem::spill::Spill>) -> PackedRows {
        let n = csr.nodes();
        let windows = windows(&values_per_chunk(csr), WINDOWS, n);
        build(n, &windows, |rows| {
            std::borrow::Cow::Owned(csr.transpose_rows_in(rows, spill))
        })
    }

    /// From its parts read back (the reopen cache), for `rows` rows: every
    /// part checked, every row decoded once (its values below the rows'
    /// count); refused with what is wrong.
    pub fn from_parts(
        rows: usize,
        index: Array<u64>,
        long_rows: Array<u32>,
        long_lens: Array<u64>,
        bytes: Array<u8>,
    ) -> Result<PackedRows, BadRows> {
        if index.len() != rows.div_ceil(BLOCK) * WORDS {
            return Err(BadRows("an index of the wrong length"));
        }
        let mut packed = PackedRows {
            rows,
            index,
            long_rows,
            long_lens,
            bytes,
            values: 0,
        };
        packed.check_long_rows()?;
        packed.check_starts()?;
        let p = &packed;
        packed.values = (0..rows.div_ceil(BLOCK))
            .into_par_iter()
            .map(|b| {
                let first = b * BLOCK;
                let mut at = p.start_of(first);
                let mut count = 0u64;
                for row in first..(first + BLOCK).min(rows) {
                    let len = p.len_of(row);
                    count += check_row(row as u32, &p.bytes[at..at + len], rows)?;
                    at += len;
                }
                Ok(count)
            })
            .sum::<Result<u64, BadRows>>()?;
        Ok(packed)
    }

    /// The long rows' table against the lengths: ascending rows, each
    /// with [`LONG`] for its length and a length of at least [`LONG`] and
    /// at most the bytes', as many as the lengths' [`LONG`]s; no length
    /// past the last row.
    fn check_long_rows(&self) -> Result<(), BadRows> {
        let bad = || Err(BadRows("bad long rows"));
        if self.long_rows.len() != self.long_lens.len()
            || !self.long_rows.windows(2).all(|w| w[0] < w[1])
            || self.long_lens.iter().any(|&l| l < LONG as u64)
            || self.long_lens.iter().any(|&l| l > self.bytes.len() as u64)
        {
            return bad();
        }
        let mut longs = 0;
        for row in 0..self.index.len() / WORDS * BLOCK {
            let l = self.len_byte(row);
            if row >= self.rows && l != 0 {
                return Err(BadRows("a length past the last row"));
            }
            if l == LONG {
                if self.long_rows.get(longs) != Some(&(row as u32)) {
                    return bad();
                }
                longs += 1;
            }
        }
        if longs != self.long_rows.len() {
            return bad();
        }
        Ok(())
    }

    /// Every block's start (and its long-row bit) as its lengths give it,
    /// the last block's rows ending at the bytes' end.
    fn check_starts(&self) -> Result<(), BadRows> {
        let mut at = 0u64;
        let mut long = 0;
        for b in 0..self.index.len() / WORDS {
            let mut has_long = false;
            let mut len = 0u64;
            for row in b * BLOCK..(b + 1) * BLOCK {
                len += match self.len_byte(row) {
                    LONG => {
                        has_long = true;
                        long += 1;
                        self.long_lens[long - 1]
                    }
                    l => l as u64,
                };
            }
            let head = at | if has_long { HAS_LONG } else { 0 };
            if self.index[b * WORDS] != head || at >= HAS_LONG {
                return Err(BadRows("bad row starts"));
            }
            at = at.saturating_add(len);
        }
        if at != self.bytes.len() as u64 {
            return Err(BadRows("the rows' lengths do not add up to their bytes"));
        }
        Ok(())
    }

    /// Puts the index and the encoded values on disk (`mem::spill`); the
    /// long rows' table is small and stays.
    pub fn spill(&mut self, to: &crate::mem::spill::Spill) {
        to.array(&mut self.index);
        to.array(&mut self.bytes);
    }

    /// Whether the rows lie in a mapped file (the reopen cache, or
    /// spilled).
    pub fn is_mapped(&self) -> bool {
        self.index.is_mapped()
    }

    /// How many rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// How many values in all the rows.
    pub fn values(&self) -> u64 {
        self.values
    }

    /// The values of `row`, ascending.
    #[inline(always)]
    pub fn row(&self, row: u32) -> Row<'_> {
        let (start, len) = self.locate(row as usize);
        Row::new(&self.bytes[start..start + len], row)
    }

    /// The rows of `rows` in order, each with its values: found once for
    /// the first row, then by adding lengths (for passes over many rows in
    /// order, cheaper than [`PackedRows::row`] for each).
    pub fn rows_in(&self, rows: std::ops::Range<u32>) -> impl Iterator<Item = Row<'_>> + '_ {
        let mut at = if rows.start < rows.end {
            self.start_of(rows.start as usize)
        } else {
            0
        };
        rows.map(move |row| {
            let len = self.len_of(row as usize);
            let bytes = &self.bytes[at..at + len];
            at += len;
            Row::new(bytes, row)
        })
    }

    /// Whether `row` has no values.
    #[inline]
    pub fn is_empty_row(&self, row: u32) -> bool {
        self.len_byte(row as usize) == 0
    }

    /// `row`'s entry in the lengths.
    #[inline(always)]
    fn len_byte(&self, row: usize) -> u8 {
        let (b, j) = (row / BLOCK, row % BLOCK);
        (self.index[b * WORDS + 1 + j / 8] >> (8 * (j % 8))) as u8
    }

    #[inline]
    fn len_of(&self, row: usize) -> usize {
        match self.len_byte(row) {
            LONG => self.long_len(row),
            l => l as usize,
        }
    }

    #[cold]
    fn long_len(&self, row: usize) -> usize {
        let i = self
            .long_rows
            .binary_search(&(row as u32))
            .expect("a long row is listed (checked when read back)");
        self.long_lens[i] as usize
    }

    /// Where `row` starts in the bytes, and its byte length: one read of
    /// its block's index, the lengths before it summed a word at a time.
    #[inline(always)]
    fn locate(&self, row: usize) -> (usize, usize) {
        let (b, j) = (row / BLOCK, row % BLOCK);
        let block: &[u64; WORDS] = self.index[b * WORDS..(b + 1) * WORDS]
            .try_into()
            .expect("a block's words");
        let head = block[0];
        if head & HAS_LONG != 0 {
            return (self.start_of_long(row), self.len_of(row));
        }
        const EVEN: u64 = 0x00FF_00FF_00FF_00FF;
        // Each word's lengths before the row, as four 16-bit lanes of
        // pairs' sums (at most 3 × 510 a lane, whose total fits in 16 bits).
        let mut lanes = 0u64;
        for (k, &w) in block[1..].iter().enumerate() {
            let before = j.saturating_sub(8 * k).min(8);
            let w = w & ((1u128 << (8 * before)) - 1) as u64;
            lanes += (w & EVEN) + (w >> 8 & EVEN);
        }
        let sum = (lanes.wrapping_mul(0x0001_0001_0001_0001) >> 48) as usize;
        let len = (block[1 + j / 8] >> (8 * (j % 8))) as u8;
        (head as usize + sum, len as usize)
    }

    #[inline]
    fn start_of(&self, row: usize) -> usize {
        self.locate(row).0
    }

    /// [`PackedRows::locate`]'s start in a block with a long row.
    #[cold]
    fn start_of_long(&self, row: usize) -> usize {
        let first = row / BLOCK * BLOCK;
        let head = self.index[row / BLOCK * WORDS] & !HAS_LONG;
        (first..row).map(|r| self.len_of(r)).sum::<usize>() + head as usize
    }

    /// Hints the CPU to fetch what finds `row`: its block's index (for a
    /// later [`PackedRows::prefetch`]).
    #[inline]
    pub fn prefetch_index(&self, row: u32) {
        if let Some(w) = self.index.get(row as usize / BLOCK * WORDS) {
            crate::mem::prefetch(w);
        }
    }

    /// Hints the CPU to fetch the start of `row`'s bytes (finds the row:
    /// see [`PackedRows::prefetch_index`] to fetch what that reads first).
    #[inline]
    pub fn prefetch(&self, row: u32) {
        if let Some(b) = self.bytes.get(self.start_of(row as usize)) {
            crate::mem::prefetch(b);
        }
    }

    /// The sizes of its parts in bytes: the index, the long rows' table and
    /// the encoded values.
    pub fn part_bytes(&self) -> [(&'static str, usize); 3] {
        [
            ("index", self.index.len() * 8),
            ("long", self.long_rows.len() * 4 + self.long_lens.len() * 8),
            ("bytes", self.bytes.len()),
        ]
    }

    /// Its parts, for the reopen cache: the index, the long rows, their
    /// lengths, the encoded values ([`PackedRows::from_parts`] takes them
    /// back, with the rows' count).
    pub fn parts(&self) -> (&Array<u64>, &Array<u32>, &Array<u64>, &Array<u8>) {
        (&self.index, &self.long_rows, &self.long_lens, &self.bytes)
    }
}

/// Windows [`PackedRows::transposed`] cuts the rows into.
const WINDOWS: usize = 2;

/// The values of `csr` that fall in each chunk of [`CHUNK`] rows (its
/// transpose's values per chunk): one parallel pass over the values.
fn values_per_chunk(csr: &Csr) -> Vec<u64> {
    const PIECE: usize = 1 << 20;
    let chunks = csr.nodes().div_ceil(CHUNK);
    let values = csr.edges();
    (0..values.div_ceil(PIECE))
        .into_par_iter()
        .fold(
            || vec![0u64; chunks],
            |mut count, p| {
                let range = p * PIECE..((p + 1) * PIECE).min(values);
                for v in csr.targets.row::<u32>(range) {
                    count[v as usize / CHUNK] += 1;
                }
                count
            },
        )
        .reduce(
            || vec![0u64; chunks],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                a
            },
        )
}

/// Consecutive row ranges of whole chunks (the last cut at `n`), each
/// holding about `1/parts` of the values; at least one (`0..0` for no
/// row).
fn windows(per_chunk: &[u64], parts: usize, n: usize) -> Vec<std::ops::Range<usize>> {
    let total: u64 = per_chunk.iter().sum();
    let each = total.div_ceil(parts.max(1) as u64).max(1);
    let mut out = Vec::new();
    let (mut from, mut held) = (0, 0u64);
    for (c, &v) in per_chunk.iter().enumerate() {
        held += v;
        if held >= each {
            out.push(from * CHUNK..((c + 1) * CHUNK).min(n));
            (from, held) = (c + 1, 0);
        }
    }
    if from < per_chunk.len() || out.is_empty() {
        out.push((from * CHUNK).min(n)..n);
    }
    out
}

/// Packed rows of `n` rows made window by window: `windows` (row ranges
/// of whole chunks, in order, covering `0..n`), each window's rows as a
/// [`Csr`] of its own (row `r` of the window is row `windows[w].start +
/// r`) from `rows_of`, held only while the window is encoded. The index
/// is written in place; each window's bytes are kept apart until the
/// last, then moved into one array, each window's freed as it is copied.
fn build<'a>(
    n: usize,
    windows: &[std::ops::Range<usize>],
    rows_of: impl Fn(std::ops::Range<usize>) -> std::borrow::Cow<'a, Csr>,
) -> PackedRows {
    let blocks = n.div_ceil(BLOCK);
    let mut index: Vec<u64> = crate::mem::zeroed(blocks * WORDS);
    let mut parts: Vec<Vec<u8>> = Vec::with_capacity(windows.len());
    let mut long: Vec<(u32, u64)> = Vec::new();
    let (mut base, mut values) = (0u64, 0u64);
    for rows in windows {
        let t = rows_of(rows.clone());
        values += t.edges() as u64;
        let words = &mut index[rows.start / BLOCK * WORDS..rows.end.div_ceil(BLOCK) * WORDS];
        let (bytes, longs) = encode_window(&t, rows.clone(), words, base);
        base += bytes.len() as u64;
        parts.push(bytes);
        long.extend(longs);
    }
    let bytes = if parts.len() == 1 {
        parts.pop().unwrap_or_default()
    } else {
        let mut all: Vec<u8> = crate::mem::zeroed(base as usize);
        let mut at = 0;
        for part in parts {
            all[at..at + part.len()].copy_from_slice(&part);
            at += part.len();
        }
        all
    };
    let (long_rows, long_lens): (Vec<u32>, Vec<u64>) = long.into_iter().unzip();
    PackedRows {
        rows: n,
        index: index.into(),
        long_rows: long_rows.into(),
        long_lens: long_lens.into(),
        bytes: bytes.into(),
        values,
    }
}

/// Encodes the rows `rows` (whole chunks but the last), row `r` of them
/// `t`'s row `r - rows.start`, in parallel over chunks: sizes each row
/// into `words` (the rows' part of the index, their starts from `base`),
/// then writes each chunk's rows into its share of the window's bytes.
/// The bytes and the long rows.
fn encode_window(
    t: &Csr,
    rows: std::ops::Range<usize>,
    words: &mut [u64],
    base: u64,
) -> (Vec<u8>, Vec<(u32, u64)>) {
    let row_of = |row: usize| t.neighbors((row - rows.start) as u32);
    // Per chunk: its bytes' count and its long rows.
    let sized: Vec<(u64, Vec<(u32, u64)>)> = words
        .par_chunks_mut(CHUNK / BLOCK * WORDS)
        .enumerate()
        .map(|(c, words)| size_chunk(&row_of, rows.start + c * CHUNK, rows.end, words))
        .collect();
    let total: u64 = sized.iter().map(|s| s.0).sum();
    let mut bytes: Vec<u8> = crate::mem::zeroed(total as usize);
    let mut shares = Vec::with_capacity(sized.len());
    let mut rest = bytes.as_mut_slice();
    let mut at = base;
    for (len, _) in &sized {
        let (share, after) = rest.split_at_mut(*len as usize);
        shares.push((at, share));
        rest = after;
        at += len;
    }
    words
        .par_chunks_mut(CHUNK / BLOCK * WORDS)
        .zip(shares)
        .enumerate()
        .for_each(|(c, (words, (start, share)))| {
            for head in words.iter_mut().step_by(WORDS) {
                *head += start;
            }
            let first = rows.start + c * CHUNK;
            let mut at = 0;
            for row in first..(first + CHUNK).min(rows.end) {
                at += encode(row as u32, row_of(row), &mut share[at..]);
            }
        });
    (bytes, sized.into_iter().flat_map(|s| s.1).collect())
}

/// Sizes the rows of the chunk from `first` (below `n`; row `r`'s values
/// `row_of(r)`) whose index is `words`: writes each block's start within
/// the chunk (with [`HAS_LONG`]) and its rows' lengths; the chunk's bytes'
/// count and its long rows.
fn size_chunk<'r>(
    row_of: &impl Fn(usize) -> BitRow<'r>,
    first: usize,
    n: usize,
    words: &mut [u64],
) -> (u64, Vec<(u32, u64)>) {
    let mut at = 0u64;
    let mut long = Vec::new();
    for (b, block) in words.chunks_mut(WORDS).enumerate() {
        let from = first + b * BLOCK;
        block[0] = at;
        for (j, row) in (from..(from + BLOCK).min(n)).enumerate() {
            let len = encoded_len(row as u32, row_of(row));
            let byte = if len >= LONG as u64 {
                long.push((row as u32, len));
                block[0] |= HAS_LONG;
                LONG
            } else {
                len as u8
            };
            block[1 + j / 8] |= (byte as u64) << (8 * (j % 8));
            at += len;
        }
    }
    (at, long)
}

/// One row's values, decoded as they are read.
#[derive(Debug, Clone)]
pub struct Row<'a> {
    bytes: &'a [u8],
    prev: u32,
    first: bool,
}

impl<'a> Row<'a> {
    #[inline(always)]
    fn new(bytes: &'a [u8], row: u32) -> Row<'a> {
        Row {
            bytes,
            prev: row,
            first: true,
        }
    }
}

impl Iterator for Row<'_> {
    type Item = u32;

    #[inline(always)]
    fn next(&mut self) -> Option<u32> {
        let (&b, rest) = self.bytes.split_first()?;
        let delta = if b < 0x80 {
            self.bytes = rest;
            b as u64
        } else {
            varint(&mut self.bytes)
        };
        self.prev = if self.first {
            self.first = false;
            (self.prev as i64 + unzigzag(delta)) as u32
        } else {
            self.prev.wrapping_add(delta as u32)
        };
        Some(self.prev)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.bytes.len();
        (left.div_ceil(5), Some(left))
    }

    /// The values left, without decoding them: each number ends with the
    /// one byte of it below 0x80.
    #[inline]
    fn count(self) -> usize {
        self.bytes.iter().filter(|&&b| b < 0x80).count()
    }
}

/// The bytes [`encode`] writes for `values` of row `row`.
fn encoded_len(row: u32, values: BitRow<'_>) -> u64 {
    let mut prev = row;
    let mut len = 0;
    for (i, v) in values.iter().enumerate() {
        let delta = if i == 0 {
            zigzag(v as i64 - row as i64)
        } else {
            (v - prev) as u64
        };
        len += varint_len(delta);
        prev = v;
    }
    len
}

/// Writes `values` (ascending) of row `row` at the start of `out`; how
/// many bytes.
fn encode(row: u32, values: BitRow<'_>, out: &mut [u8]) -> usize {
    let mut prev = row;
    let mut at = 0;
    for (i, v) in values.iter().enumerate() {
        let delta = if i == 0 {
            zigzag(v as i64 - row as i64)
        } else {
            debug_assert!(v >= prev, "rows must be ascending");
            (v - prev) as u64
        };
        at += put_varint(delta, &mut out[at..]);
        prev = v;
    }
    at
}

/// Decodes `bytes`, row `row`'s, checking every value: below `n`, each
/// number within the row and of at most 5 bytes. Its values' count.
fn check_row(row: u32, bytes: &[u8], n: usize) -> Result<u64, BadRows> {
    let mut pos = 0;
    let mut prev = row as i64;
    let mut count = 0;
    while pos < bytes.len() {
        let mut delta = 0u64;
        let mut shift = 0;
        loop {
            let Some(&b) = bytes.get(pos) else {
                return Err(BadRows("a number runs past its row"));
            };
            pos += 1;
            if shift > 28 {
                return Err(BadRows("a number too long"));
            }
            delta |= ((b & 0x7f) as u64) << shift;
            shift += 7;
            if b < 0x80 {
                break;
            }
        }
        let next = if count == 0 {
            prev + unzigzag(delta)
        } else {
            prev + delta as i64
        };
        if next < 0 || next as u64 >= n as u64 {
            return Err(BadRows("a value out of range"));
        }
        prev = next;
        count += 1;
    }
    Ok(count)
}

#[inline]
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

#[inline]
fn varint_len(v: u64) -> u64 {
    (64 - (v | 1).leading_zeros() as u64).div_ceil(7)
}

#[inline]
fn put_varint(mut v: u64, out: &mut [u8]) -> usize {
    let mut at = 0;
    while v >= 0x80 {
        out[at] = v as u8 | 0x80;
        v >>= 7;
        at += 1;
    }
    out[at] = v as u8;
    at + 1
}

/// A number of two to five bytes (checked when read back; built here
/// otherwise) at the start of `bytes`, which are moved past it.
#[inline]
fn varint(bytes: &mut &[u8]) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    for (i, &b) in bytes.iter().enumerate() {
        v |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            *bytes = &bytes[i + 1..];
            return v;
        }
        shift += 7;
    }
    *bytes = &[];
    v
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The rows of `lists` (each sorted here), as a CSR.
    fn csr_of(mut lists: Vec<Vec<u32>>) -> Csr {
        let mut offsets = vec![0u64];
        let mut targets = Vec::new();
        for l in &mut lists {
            l.sort_unstable();
            targets.extend_from_slice(l);
            offsets.push(targets.len() as u64);
        }
        Csr::from_offsets(offsets, targets)
    }

    /// A graph of `n` objects whose references are random (a fixed
    /// generator), with a hub that every 7th object refers to and rows of
    /// up to 5 references.
    fn random_refs(n: usize, seed: u64) -> Csr {
        let mut x = seed | 1;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let lists: Vec<Vec<u32>> = (0..n)
            .map(|o| {
                let mut l: Vec<u32> = (0..next() % 5)
                    .map(|_| (next() % n as u64) as u32)
                    .collect();
                if o % 7 == 0 {
                    l.push((n / 2) as u32);
                }
                l
            })
            .collect();
        let mut offsets = vec![0u64];
        let mut targets = Vec::new();
        for l in lists {
            targets.extend_from_slice(&l);
            offsets.push(targets.len() as u64);
        }
        Csr::from_offsets(offsets, targets)
    }

    /// The transpose packed window by window is the whole transpose
    /// packed, in memory and with its scratch in spill files: on a graph
    /// of several chunks, cut into several windows (one of them holding
    /// the hub), and on an empty one.
    #[test]
    fn the_transpose_packed_in_windows_is_the_whole_one() {
        let n = 3 * CHUNK + 1234;
        let g = random_refs(n, 0x5eed);
        assert!(windows(&values_per_chunk(&g), WINDOWS, n).len() > 1);
        let whole = PackedRows::from_csr(&g.transpose());
        let windowed = PackedRows::transposed(&g, None);
        assert_eq!(windowed, whole);
        assert_eq!(back(&windowed).as_ref(), Ok(&whole));
        let dir = tempfile::tempdir().unwrap();
        let spill = crate::mem::spill::Spill::open(dir.path(), 0).unwrap();
        assert_eq!(PackedRows::transposed(&g, Some(&spill)), whole);
        let empty = csr_of(Vec::new());
        assert_eq!(
            PackedRows::transposed(&empty, None),
            PackedRows::from_csr(&empty)
        );
    }

    proptest! {
        /// Windows cover the rows in order, each of whole chunks but the
        /// last, none empty but for no row, each holding at most its
        /// share of the values and one chunk more.
        #[test]
        fn windows_cut_the_rows_into_shares(
            per_chunk in proptest::collection::vec(0u64..1000, 0..40),
            parts in 1usize..9,
            short in 0usize..CHUNK,
        ) {
            let chunks = per_chunk.len();
            let n = (chunks * CHUNK).saturating_sub(short.min(CHUNK - 1) * (chunks > 0) as usize);
            let w = windows(&per_chunk, parts, n);
            prop_assert!(!w.is_empty());
            prop_assert_eq!(w[0].start, 0);
            prop_assert_eq!(w[w.len() - 1].end, n);
            let total: u64 = per_chunk.iter().sum();
            let each = total.div_ceil(parts as u64).max(1);
            let top = per_chunk.iter().copied().max().unwrap_or(0);
            for (k, r) in w.iter().enumerate() {
                prop_assert!(r.start % CHUNK == 0);
                prop_assert!(r.start < r.end || n == 0);
                if k + 1 < w.len() {
                    prop_assert_eq!(r.end, w[k + 1].start);
                }
                let held: u64 = per_chunk[r.start / CHUNK..r.end.div_ceil(CHUNK)].iter().sum();
                prop_assert!(held < each + top);
            }
            prop_assert!(w.len() <= parts + 1);
        }
    }

    /// Its parts read back through `from_parts`.
    fn back(p: &PackedRows) -> Result<PackedRows, BadRows> {
        let (index, long_rows, long_lens, bytes) = p.parts();
        PackedRows::from_parts(
            p.rows(),
            index.clone(),
            long_rows.clone(),
            long_lens.clone(),
            bytes.clone(),
        )
    }

    /// Every row reads back as it was, in any order of access; the parts
    /// read back through `from_parts` give the same rows.
    fn round_trip(csr: &Csr) -> PackedRows {
        let p = PackedRows::from_csr(csr);
        assert_eq!(p.rows(), csr.nodes());
        assert_eq!(p.values(), csr.edges() as u64);
        for row in (0..csr.nodes() as u32).rev() {
            let got: Vec<u32> = p.row(row).collect();
            assert_eq!(got, csr.neighbors(row).to_vec(), "row {row}");
            assert_eq!(p.is_empty_row(row), got.is_empty());
            assert_eq!(p.row(row).count(), got.len());
            let mut partly = p.row(row);
            if partly.next().is_some() {
                assert_eq!(partly.count(), got.len() - 1);
            }
        }
        let n = csr.nodes() as u32;
        for from in [0, 1, n / 3, n.saturating_sub(1), n] {
            for (row, got) in (from..n).zip(p.rows_in(from..n)) {
                assert!(got.eq(csr.neighbors(row).iter()), "row {row}");
            }
        }
        assert_eq!(back(&p).expect("its own parts"), p);
        p
    }

    #[test]
    fn no_rows_and_empty_rows() {
        round_trip(&csr_of(Vec::new()));
        round_trip(&csr_of(vec![Vec::new(); 1]));
        let p = round_trip(&csr_of(vec![Vec::new(); 3 * BLOCK + 1]));
        assert_eq!(p.part_bytes()[2].1, 0);
    }

    /// Every row of a block at every place, rows of every length a byte
    /// holds (the lengths before a row summed a word at a time).
    #[test]
    fn every_place_in_a_block() {
        let n = 3 * BLOCK + 5;
        let lists = (0..n)
            .map(|r| {
                (0..(r * 37 % 120) as u32)
                    .map(|k| (k * 13) % n as u32)
                    .collect()
            })
            .collect();
        round_trip(&csr_of(lists));
    }

    /// Rows whose lengths sit at the long rows' bound (254, 255 and 256
    /// bytes: one-byte deltas after a first value), at the first and last
    /// places of blocks.
    #[test]
    fn rows_at_the_long_bound_and_the_blocks_edges() {
        let n = 4 * BLOCK + 3;
        let mut lists = vec![Vec::new(); n];
        let places = [0, BLOCK - 1, BLOCK, 2 * BLOCK + 1, 3 * BLOCK - 1, n - 1];
        for (k, &row) in places.iter().enumerate() {
            // The first value is the row itself (one byte), then steps of 1.
            let len = 253 + k as u32 % 4;
            lists[row] = (0..len)
                .map(|i| (row as u32 + i).min(n as u32 - 1))
                .collect();
            // A short row after it in its block.
            if row + 1 < n {
                lists[row + 1] = vec![1, 2, 3];
            }
        }
        let csr = csr_of(lists);
        let p = round_trip(&csr);
        let (_, long_rows, long_lens, _) = p.parts();
        for &row in &places {
            let bytes = csr.neighbors(row as u32).len();
            assert_eq!(p.len_byte(row) == LONG, bytes >= LONG as usize, "row {row}");
        }
        assert!(!long_rows.is_empty());
        assert!(long_lens.iter().all(|&l| l >= LONG as u64));
    }

    /// One object retained by millions (a V8 hidden class): found in
    /// constant time, its neighbours' rows too.
    #[test]
    fn one_row_of_millions() {
        let n = 3_000_000u32;
        let mut lists = vec![vec![]; 70];
        lists[33] = (0..n).collect();
        lists[34] = vec![n - 1, n - 1];
        lists[35] = vec![0];
        lists[69] = vec![5];
        let csr = csr_of(lists);
        // Values beyond the rows' count are fine in memory; `from_parts`
        // (the cache) takes values below the rows' count only.
        let p = PackedRows::from_csr(&csr);
        assert_eq!(p.row(33).count(), n as usize);
        assert!(p.row(33).eq(0..n));
        assert_eq!(p.row(34).collect::<Vec<_>>(), [n - 1, n - 1]);
        assert_eq!(p.row(35).collect::<Vec<_>>(), [0]);
        assert_eq!(p.row(69).collect::<Vec<_>>(), [5]);
        assert_eq!(p.values(), n as u64 + 4);
        assert!(back(&p).is_err(), "values past the rows' count");
    }

    /// Values far from their row and far apart: numbers of up to 5 bytes.
    #[test]
    fn far_values() {
        let big = u32::MAX - 1;
        let csr = csr_of(vec![vec![big], vec![0, big], vec![], vec![1, 2, big]]);
        let p = PackedRows::from_csr(&csr);
        for row in 0..4 {
            assert_eq!(p.row(row).collect::<Vec<_>>(), csr.neighbors(row).to_vec());
        }
    }

    /// Hostile parts are refused, never read out of bounds.
    #[test]
    fn bad_parts_are_refused() {
        let csr = csr_of(vec![vec![1, 2], vec![0], vec![], vec![0, 0, 3]]);
        let p = PackedRows::from_csr(&csr);
        let (index, long_rows, long_lens, bytes) = p.parts();
        let with = |rows: usize, index: Vec<u64>, bytes: Vec<u8>| {
            PackedRows::from_parts(
                rows,
                index.into(),
                long_rows.clone(),
                long_lens.clone(),
                bytes.into(),
            )
        };
        let (ix, b) = (index.to_vec(), bytes.to_vec());
        assert!(with(4, ix.clone(), b.clone()).is_ok());
        // The wrong rows' count for the index.
        assert!(with(4 + BLOCK, ix.clone(), b.clone()).is_err());
        // A length past the last row.
        assert!(with(2, ix.clone(), b.clone()).is_err());
        // A value past the rows' count.
        let mut high = b.clone();
        high[0] = 40; // zigzag 20: row 0's first value 20
        assert!(with(4, ix.clone(), high).is_err());
        // A number that runs past its row.
        let mut open = b.clone();
        open[0] |= 0x80;
        assert!(with(4, ix.clone(), open).is_err());
        // Lengths that no longer add up to the bytes.
        let mut longer = ix.clone();
        longer[1] += 1 << 16; // row 2: one byte
        assert!(with(4, longer, b.clone()).is_err());
        // A long entry without its row in the table, with or without its
        // block's bit.
        let mut long = ix.clone();
        long[1] |= 0xFF << 8;
        assert!(with(4, long.clone(), b.clone()).is_err());
        long[0] |= HAS_LONG;
        assert!(with(4, long, b.clone()).is_err());
        // A block's bit without a long row.
        let mut bit = ix.clone();
        bit[0] |= HAS_LONG;
        assert!(with(4, bit, b.clone()).is_err());
        // A start that does not match the lengths.
        let mut start = ix.clone();
        start[0] = 1;
        assert!(with(4, start, b.clone()).is_err());
        // A number of more than 5 bytes.
        let six = vec![0x80, 0x80, 0x80, 0x80, 0x80, 0x00];
        let mut ix6 = vec![0u64; WORDS];
        ix6[1] = 6;
        assert!(with(1, ix6.clone(), six).is_err());
        ix6[1] = 0;
        assert!(with(1, ix6, Vec::new()).is_ok());
        // A long row's table out of order or with a short length.
        let rows = vec![vec![0u32; 300], vec![], vec![0u32; 300]];
        let p = PackedRows::from_csr(&csr_of(rows));
        let (index, long_rows, long_lens, bytes) = p.parts();
        assert_eq!(long_rows.len(), 2);
        let table = |rows: Vec<u32>, lens: Vec<u64>| {
            PackedRows::from_parts(3, index.clone(), rows.into(), lens.into(), bytes.clone())
        };
        assert!(table(long_rows.to_vec(), long_lens.to_vec()).is_ok());
        assert!(table(vec![2, 0], long_lens.to_vec()).is_err());
        assert!(table(long_rows.to_vec(), vec![10, 590]).is_err());
        assert!(table(vec![0], vec![300]).is_err());
    }

    proptest! {
        /// Random rows (clustered near their row, spread far, repeated
        /// values, long ones) read back exactly.
        #[test]
        fn rows_read_back(
            lists in proptest::collection::vec(
                proptest::collection::vec(0u32..200_000, 0..40), 0..300),
            near in proptest::collection::vec(0u32..300, 0..300),
            long in proptest::collection::vec(0usize..300, 0..3),
        ) {
            let n = lists.len() as u32;
            let mut lists = lists;
            for (i, l) in lists.iter_mut().enumerate() {
                for (k, &d) in near.iter().enumerate() {
                    if k % 7 == i % 7 {
                        l.push((i as u32 + d) % n.max(1));
                    }
                }
                if long.contains(&i) {
                    l.extend(0..n.min(280));
                    l.extend(std::iter::repeat_n(i as u32, 100));
                }
                l.retain(|&v| v < n.max(1) || i % 2 == 0);
            }
            let csr = csr_of(lists);
            let p = PackedRows::from_csr(&csr);
            for row in (0..n).rev() {
                prop_assert_eq!(p.row(row).collect::<Vec<_>>(), csr.neighbors(row).to_vec());
                prop_assert_eq!(p.row(row).count(), csr.neighbors(row).len());
            }
            for (row, got) in (0..n).zip(p.rows_in(0..n)) {
                prop_assert!(got.eq(csr.neighbors(row).iter()));
            }
            let in_range = (0..n).all(|r| csr.neighbors(r).iter().all(|v| v < n));
            prop_assert_eq!(back(&p).is_ok(), in_range);
        }
    }
}
