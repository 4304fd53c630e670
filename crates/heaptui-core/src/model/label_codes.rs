//! [`LabelCodes`]: the references' labels (see [`super::Labels`]) in the
//! narrowest of three forms, chosen per heap by the bytes it takes:
//!
//! - 1 byte a reference: a code into a dictionary of the heap's 254 most
//!   frequent labels; [`Code::AT`] for an array index equal to the
//!   reference's position among its object's references (derived, not
//!   stored: an array's elements before its first null); [`Code::ESCAPE`]
//!   for the rest, whose labels are in a side table of (reference, label)
//!   pairs sorted by reference (16 bytes each);
//! - 2 bytes a reference, likewise with 65,534 labels in the dictionary;
//! - 4 bytes a reference: the label itself.
//!
//! A heap has few distinct field and property names (a Java heap a few
//! hundred in use, half its references `<class>`) and array indices mostly
//! at their position, so nearly every heap gets 1 or 2 bytes a reference
//! where a `u32` each took 4. The choice counts a side table entry at 16
//! bytes plus 8 for the binary search a read of it costs, so a heap whose
//! labels are mostly rare (an array of millions of elements with nulls
//! among them) keeps a wider form. A row's labels are read in sequence
//! ([`LabelRow`]) with one search of the side table per row at most, in
//! the stretch of it a small jump index points at.

use std::ops::Range;

use rayon::prelude::*;

use crate::mem::Array;

/// The stored label of no label (`Labels::NONE`).
const NONE: u32 = u32::MAX;
/// The top bit that marks an array index.
const INDEX: u32 = 1 << 31;

/// The label of the reference at position `edge`, `start` being its
/// object's first: an array index equal to its position.
#[inline]
fn at(start: usize, edge: usize) -> u32 {
    super::Labels::index(edge.wrapping_sub(start) as u64)
}

/// A narrow code: an index into the dictionary, or one of two escapes.
pub trait Code: bytemuck::Pod + Send + Sync + Copy + Eq + std::fmt::Debug {
    /// An array index equal to the reference's position in its row.
    const AT: Self;
    /// A label in the side table.
    const ESCAPE: Self;
    /// How many dictionary codes there are (all below [`Code::AT`]).
    const DICT: usize;
    /// Dictionary code `i` (below [`Code::DICT`]).
    fn code(i: usize) -> Self;
    /// The code as a dictionary index.
    fn index(self) -> usize;
}

/// [`Code`] for an unsigned integer: the two highest values are
/// [`Code::ESCAPE`] and [`Code::AT`], the rest dictionary codes.
macro_rules! code_for {
    ($t:ty) => {
        impl Code for $t {
            const AT: $t = <$t>::MAX - 1;
            const ESCAPE: $t = <$t>::MAX;
            const DICT: usize = <$t>::MAX as usize - 1;
            #[inline]
            fn code(i: usize) -> $t {
                i as $t
            }
            #[inline]
            fn index(self) -> usize {
                self as usize
            }
        }
    };
}

code_for!(u8);
code_for!(u16);

/// References per entry of [`Side`]'s jump index.
const JUMP: usize = 1024;

/// A side table: `reference, label` pairs (two words each) by reference,
/// and where the pairs of each [`JUMP`] references start (8 bytes per
/// 1,024 references, derived, so that a look-up searches the few pairs of
/// its stretch instead of the whole table: a V8 snapshot's had a million).
#[derive(Debug, Clone, Default)]
pub struct Side {
    pairs: Array<u64>,
    jump: Vec<u64>,
}

/// Equal when the pairs are.
impl PartialEq for Side {
    fn eq(&self, other: &Side) -> bool {
        self.pairs == other.pairs
    }
}

impl Eq for Side {}

impl Side {
    /// The side table of `pairs` for `edges` references (the jump index
    /// made in one pass; pairs out of order, refused by [`check`], make a
    /// wrong index, never a panic).
    pub fn new(pairs: Array<u64>, edges: usize) -> Side {
        let n = pairs.len() / 2;
        let mut jump = Vec::with_capacity(edges.div_ceil(JUMP) + 1);
        let mut k = 0;
        for b in 0..=edges.div_ceil(JUMP) {
            while k < n && pairs[2 * k] < (b * JUMP) as u64 {
                k += 1;
            }
            jump.push(k as u64);
        }
        Side { pairs, jump }
    }

    /// The pairs, two words each.
    pub fn pairs(&self) -> &Array<u64> {
        &self.pairs
    }

    /// Bytes held (the pairs and the jump index).
    pub fn bytes(&self) -> usize {
        self.pairs.len() * 8 + self.jump.len() * 8
    }

    /// The first pair at reference `edge` or after.
    #[inline]
    fn from(&self, edge: usize) -> usize {
        let b = edge / JUMP;
        let n = self.pairs.len() / 2;
        let lo = self.jump.get(b).map_or(n, |&k| k as usize);
        let hi = self.jump.get(b + 1).map_or(n, |&k| k as usize);
        side_from(&self.pairs, edge, lo.min(n), hi.min(n))
    }
}

/// The labels of every reference, parallel to `refs.targets`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LabelCodes {
    /// One byte a reference.
    Byte {
        /// A code per reference.
        codes: Array<u8>,
        /// The label of each dictionary code.
        dict: Vec<u32>,
        /// The labels of every [`Code::ESCAPE`].
        side: Side,
    },
    /// Two bytes a reference.
    Half {
        /// A code per reference.
        codes: Array<u16>,
        /// The label of each dictionary code.
        dict: Vec<u32>,
        /// The labels of every escape.
        side: Side,
    },
    /// Four bytes a reference: the labels themselves.
    Full(Array<u32>),
}

impl Default for LabelCodes {
    fn default() -> LabelCodes {
        LabelCodes::Full(Array::default())
    }
}

/// The label of `edge` from a narrow form's parts.
#[inline]
fn decode<C: Code>(codes: &[C], dict: &[u32], side: &Side, start: usize, edge: usize) -> u32 {
    let Some(&c) = codes.get(edge) else {
        return NONE;
    };
    if c == C::AT {
        at(start, edge)
    } else if c == C::ESCAPE {
        side_label(&side.pairs, side.from(edge), edge)
    } else {
        dict.get(c.index()).copied().unwrap_or(NONE)
    }
}

/// The first side table pair at reference `edge` or after, among pairs
/// `lo..hi`.
#[inline]
fn side_from(side: &[u64], edge: usize, mut lo: usize, mut hi: usize) -> usize {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if side[2 * mid] < edge as u64 {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Pair `k`'s label where it is `edge`'s.
#[inline]
fn side_label(side: &[u64], k: usize, edge: usize) -> u32 {
    match side.get(2 * k..2 * k + 2) {
        Some(&[e, l]) if e == edge as u64 => l as u32,
        _ => NONE,
    }
}

impl LabelCodes {
    /// How many references.
    pub fn len(&self) -> usize {
        match self {
            LabelCodes::Byte { codes, .. } => codes.len(),
            LabelCodes::Half { codes, .. } => codes.len(),
            LabelCodes::Full(a) => a.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held (codes, dictionary and side table).
    pub fn bytes(&self) -> usize {
        match self {
            LabelCodes::Byte { codes, dict, side } => codes.len() + dict.len() * 4 + side.bytes(),
            LabelCodes::Half { codes, dict, side } => {
                codes.len() * 2 + dict.len() * 4 + side.bytes()
            }
            LabelCodes::Full(a) => a.len() * 4,
        }
    }

    /// The stored label of the reference at `edge` (`start` is the first
    /// reference of its object); `None` past the end.
    #[inline]
    pub fn raw(&self, start: usize, edge: usize) -> Option<u32> {
        if edge >= self.len() {
            return None;
        }
        Some(match self {
            LabelCodes::Byte { codes, dict, side } => decode(codes, dict, side, start, edge),
            LabelCodes::Half { codes, dict, side } => decode(codes, dict, side, start, edge),
            LabelCodes::Full(a) => a[edge],
        })
    }

    /// The labels of the references in `span` (clamped to the end), whose
    /// object's first reference is `start`.
    #[inline]
    pub fn row(&self, start: usize, span: Range<usize>) -> LabelRow<'_> {
        let end = span.end.min(self.len());
        let span = span.start.min(end)..end;
        match self {
            LabelCodes::Byte { codes, dict, side } => LabelRow::Byte(Coded::new(
                &codes[span.clone()],
                dict,
                side,
                start,
                span.start,
            )),
            LabelCodes::Half { codes, dict, side } => LabelRow::Half(Coded::new(
                &codes[span.clone()],
                dict,
                side,
                start,
                span.start,
            )),
            LabelCodes::Full(a) => LabelRow::Raw(&a[span]),
        }
    }

    /// Puts the codes and the side table on disk (`mem::spill`).
    pub fn spill(&mut self, to: &crate::mem::spill::Spill) {
        match self {
            LabelCodes::Byte { codes, side, .. } => {
                to.array(codes);
                to.array(&mut side.pairs);
            }
            LabelCodes::Half { codes, side, .. } => {
                to.array(codes);
                to.array(&mut side.pairs);
            }
            LabelCodes::Full(a) => to.array(a),
        }
    }

    /// [`LabelCodes::Byte`] from a cache's arrays, checked against the
    /// `names` label names (see [`check`]).
    pub fn checked_byte(
        codes: Array<u8>,
        dict: Vec<u32>,
        side: Array<u64>,
        names: usize,
    ) -> Result<LabelCodes, String> {
        check(&codes, &dict, &side, names)?;
        let side = Side::new(side, codes.len());
        Ok(LabelCodes::Byte { codes, dict, side })
    }

    /// [`LabelCodes::Half`] from a cache's arrays, checked likewise.
    pub fn checked_half(
        codes: Array<u16>,
        dict: Vec<u32>,
        side: Array<u64>,
        names: usize,
    ) -> Result<LabelCodes, String> {
        check(&codes, &dict, &side, names)?;
        let side = Side::new(side, codes.len());
        Ok(LabelCodes::Half { codes, dict, side })
    }

    /// [`LabelCodes::Full`] from a cache's array, checked likewise.
    pub fn checked_full(labels: Array<u32>, names: usize) -> Result<LabelCodes, String> {
        if labels.par_iter().any(|&l| !valid(l, names)) {
            return Err("labels: index out of range".into());
        }
        Ok(LabelCodes::Full(labels))
    }
}

/// Whether `l` is a label of a heap with `names` names.
fn valid(l: u32, names: usize) -> bool {
    l == NONE || l & INDEX != 0 || (l as usize) < names
}

/// A narrow form checked as a cache's is: every label valid, every code in
/// the dictionary or an escape, the side table's pairs by reference, each
/// at an escape, as many as the escapes.
fn check<C: Code>(codes: &[C], dict: &[u32], side: &[u64], names: usize) -> Result<(), String> {
    if dict.len() > C::DICT || !dict.iter().all(|&l| valid(l, names)) {
        return Err("labels: a dictionary entry out of range".into());
    }
    if !side.len().is_multiple_of(2) {
        return Err("labels: an odd side table".into());
    }
    let pairs_ok = side.chunks_exact(2).enumerate().all(|(k, p)| {
        let (e, l) = (p[0], p[1]);
        (e as usize) < codes.len()
            && codes[e as usize] == C::ESCAPE
            && u32::try_from(l).is_ok_and(|l| valid(l, names))
            && (k == 0 || side[2 * k - 2] < e)
    });
    let bad_code = codes
        .par_iter()
        .any(|&c| c != C::AT && c != C::ESCAPE && c.index() >= dict.len());
    let escapes = codes.par_iter().filter(|&&c| c == C::ESCAPE).count();
    if bad_code || !pairs_ok || escapes != side.len() / 2 {
        return Err("labels: the codes disagree with their tables".into());
    }
    Ok(())
}

/// The labels of one object's references (or of some of them), read in
/// sequence: as stored, or decoded from a narrow form.
#[derive(Debug, Clone, Copy)]
pub enum LabelRow<'a> {
    /// The labels themselves.
    Raw(&'a [u32]),
    /// One-byte codes.
    Byte(Coded<'a, u8>),
    /// Two-byte codes.
    Half(Coded<'a, u16>),
}

/// A row of narrow codes with what decodes them.
#[derive(Debug, Clone, Copy)]
pub struct Coded<'a, C> {
    codes: &'a [C],
    dict: &'a [u32],
    side: &'a Side,
    /// The object's first reference.
    start: usize,
    /// The position of `codes[0]`.
    first: usize,
}

impl<'a, C: Code> Coded<'a, C> {
    pub(crate) fn new(
        codes: &'a [C],
        dict: &'a [u32],
        side: &'a Side,
        start: usize,
        first: usize,
    ) -> Self {
        Coded {
            codes,
            dict,
            side,
            start,
            first,
        }
    }
}

impl<'a> LabelRow<'a> {
    /// How many labels.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            LabelRow::Raw(r) => r.len(),
            LabelRow::Byte(c) => c.codes.len(),
            LabelRow::Half(c) => c.codes.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls `f` with each label, in order (the form matched once).
    #[inline]
    pub fn for_each(&self, f: impl FnMut(u32)) {
        match *self {
            LabelRow::Raw(r) => r.iter().copied().for_each(f),
            LabelRow::Byte(c) => CodedIter::new(c).for_each(f),
            LabelRow::Half(c) => CodedIter::new(c).for_each(f),
        }
    }

    /// The labels, in order.
    #[inline]
    pub fn iter(&self) -> RowIter<'a> {
        match *self {
            LabelRow::Raw(r) => RowIter::Raw(r.iter().copied()),
            LabelRow::Byte(c) => RowIter::Byte(CodedIter::new(c)),
            LabelRow::Half(c) => RowIter::Half(CodedIter::new(c)),
        }
    }
}

/// Equal when the labels are, whatever their form (each side's form
/// matched once, not per label).
impl PartialEq for LabelRow<'_> {
    fn eq(&self, other: &LabelRow<'_>) -> bool {
        if self.len() != other.len() {
            return false;
        }
        fn same(a: impl Iterator<Item = u32>, b: &LabelRow<'_>) -> bool {
            match *b {
                LabelRow::Raw(r) => a.eq(r.iter().copied()),
                LabelRow::Byte(c) => a.eq(CodedIter::new(c)),
                LabelRow::Half(c) => a.eq(CodedIter::new(c)),
            }
        }
        match *self {
            LabelRow::Raw(a) => match other {
                LabelRow::Raw(b) => a == *b,
                _ => same(a.iter().copied(), other),
            },
            LabelRow::Byte(c) => same(CodedIter::new(c), other),
            LabelRow::Half(c) => same(CodedIter::new(c), other),
        }
    }
}

impl Eq for LabelRow<'_> {}

/// The labels of a [`LabelRow`].
#[derive(Debug, Clone)]
pub enum RowIter<'a> {
    /// As stored.
    Raw(std::iter::Copied<std::slice::Iter<'a, u32>>),
    /// Decoded from one-byte codes.
    Byte(CodedIter<'a, u8>),
    /// Decoded from two-byte codes.
    Half(CodedIter<'a, u16>),
}

impl Iterator for RowIter<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        match self {
            RowIter::Raw(i) => i.next(),
            RowIter::Byte(i) => i.next(),
            RowIter::Half(i) => i.next(),
        }
    }
}

/// Decodes a row of codes; the side table is searched once, at the row's
/// first escape, and then followed.
#[derive(Debug, Clone)]
pub struct CodedIter<'a, C> {
    row: Coded<'a, C>,
    i: usize,
    /// The next side table pair to look at (`usize::MAX` before the
    /// first escape).
    side_at: usize,
}

impl<'a, C: Code> CodedIter<'a, C> {
    fn new(row: Coded<'a, C>) -> Self {
        CodedIter {
            row,
            i: 0,
            side_at: usize::MAX,
        }
    }
}

impl<C: Code> Iterator for CodedIter<'_, C> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        let r = &self.row;
        let &c = r.codes.get(self.i)?;
        let edge = r.first + self.i;
        self.i += 1;
        Some(if c == C::AT {
            at(r.start, edge)
        } else if c == C::ESCAPE {
            let pairs = &r.side.pairs;
            if self.side_at == usize::MAX {
                self.side_at = r.side.from(edge);
            }
            while pairs
                .get(2 * self.side_at)
                .is_some_and(|&e| e < edge as u64)
            {
                self.side_at += 1;
            }
            side_label(pairs, self.side_at, edge)
        } else {
            r.dict.get(c.index()).copied().unwrap_or(NONE)
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.row.codes.len() - self.i;
        (left, Some(left))
    }
}

pub(super) mod narrow;
