//! What native formats carry beyond the graph (docs/formats.md): a label per
//! reference (field name, array index, V8 property name) and value bytes per
//! object (primitive fields, primitive array contents, string contents).
//! Both are compact: labels are interned u32 ids parallel to the
//! references' targets, held in 1 or 2 bytes each where they fit
//! (`label_codes`); values live in one shared byte arena with an offsets
//! array, never an allocation per object.

use rayon::prelude::*;

use super::label_codes::{LabelCodes, LabelRow};
use super::ObjectIdx;
use crate::mem::{Array, BitRow, Scratch};

/// A reference's label as stored: an interned name, an array index, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label<'a> {
    /// A field or property name (`table`, `next`, `__proto__`).
    Name(&'a str),
    /// An element index of an array (`[3]`).
    Index(u32),
}

impl std::fmt::Display for Label<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Label::Name(n) => write!(f, ".{n}"),
            Label::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// Per-reference labels, parallel to `Model::refs.targets`.
///
/// Each label is a u32: [`Labels::NONE`] for no label, an index into
/// `names` below 2^31, or an array index with the top bit set. Array indices
/// up to 2^31 − 1 are kept as numbers; larger ones (never seen in a real
/// array) are stored as no label. They are held in the narrowest
/// [`LabelCodes`] form the heap allows ([`Labels::narrow`]); a read names
/// the reference's object's first reference, from which an array index at
/// its position is derived.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels {
    /// Interned label names.
    pub names: Vec<Box<str>>,
    /// One label per reference, in the order of `refs.targets`.
    pub codes: LabelCodes,
    /// Each object's reference positions ordered by (target, position),
    /// built once on demand (`Model::index_labels`).
    pub(super) by_target: TargetOrder,
}

/// Rows of more references than this are indexed by
/// [`super::Model::index_labels`]; shorter ones are scanned, at most this
/// many comparisons, less than a search costs to set up. On the 406 MB
/// HPROF measured, 18 objects of 9.76 M have more (2.75 M references of
/// 17.5 M, 1.1 bytes an object indexed); on the 519 MB V8 snapshot 109
/// of 6.62 M (0.44 M references of 21.5 M, 0.27 bytes an object), where an
/// index of every row took 7.2 and 13 bytes an object.
pub const SHORT_ROW: usize = 64;

/// For the objects with more than [`SHORT_ROW`] references, each one's
/// reference positions ordered by (target, position): where such an
/// object refers to `to` first is a binary search in its row. Derived
/// data: it takes no part in equality.
#[derive(Clone, Default)]
pub(super) struct TargetOrder(pub(super) std::sync::OnceLock<LongRows>);

/// The index of [`TargetOrder`]: 4 bytes a reference of the long rows, 8
/// bytes a long row.
#[derive(Clone, Default)]
pub(super) struct LongRows {
    /// The objects with more than [`SHORT_ROW`] references, ascending.
    objects: Box<[u32]>,
    /// Where each one's row starts in `order`, and its end last.
    starts: Box<[u32]>,
    /// Per long object, its reference positions (from its row's start)
    /// ordered by (target, position).
    order: Box<[u32]>,
}

impl LongRows {
    /// The index of `refs`' rows longer than [`SHORT_ROW`], which hold
    /// at most `u32::MAX` references in all (the caller checks).
    pub(super) fn of(refs: &super::Csr) -> LongRows {
        let long: Vec<u32> = (0..refs.nodes() as u32)
            .filter(|&o| refs.degree(o) > SHORT_ROW)
            .collect();
        let mut starts = Vec::with_capacity(long.len() + 1);
        let mut order = Vec::new();
        for &o in &long {
            starts.push(order.len() as u32);
            let row = refs.neighbors(o);
            let from = order.len();
            order.extend(0..row.len() as u32);
            order[from..].sort_unstable_by_key(|&i| (row.get(i as usize), i));
        }
        starts.push(order.len() as u32);
        LongRows {
            objects: long.into_boxed_slice(),
            starts: starts.into_boxed_slice(),
            order: order.into_boxed_slice(),
        }
    }

    /// The first position of `to` in `row`, `from`'s references; `None`
    /// when it is not there or `from`'s row is not indexed.
    pub(super) fn position(&self, from: u32, row: BitRow<'_>, to: u32) -> Option<usize> {
        let k = self.objects.binary_search(&from).ok()?;
        let sorted = self
            .order
            .get(self.starts[k] as usize..self.starts[k + 1] as usize)?;
        let target = |i: u32| ((i as usize) < row.len()).then(|| row.get(i as usize));
        let at = sorted.partition_point(|&i| target(i) < Some(to));
        let &i = sorted.get(at)?;
        (target(i) == Some(to)).then_some(i as usize)
    }

    /// The bytes it holds.
    pub(super) fn bytes(&self) -> usize {
        (self.objects.len() + self.starts.len() + self.order.len()) * 4
    }
}

impl PartialEq for TargetOrder {
    fn eq(&self, _: &TargetOrder) -> bool {
        true
    }
}

impl Eq for TargetOrder {}

impl std::fmt::Debug for TargetOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.get() {
            Some(long) => write!(f, "TargetOrder {{ built: {} bytes }}", long.bytes()),
            None => write!(f, "TargetOrder {{ built: false }}"),
        }
    }
}

impl Labels {
    /// The entry of a reference with no label.
    pub const NONE: u32 = u32::MAX;
    const INDEX: u32 = 1 << 31;

    /// Labels of the references (`of_ref`, parallel to `refs.targets`)
    /// naming into `names`, 4 bytes each ([`Labels::narrow`] narrows them).
    pub fn new(names: Vec<Box<str>>, of_ref: impl Into<Array<u32>>) -> Labels {
        Labels::with_codes(names, LabelCodes::Full(of_ref.into()))
    }

    /// Labels in a given form (a cache's, checked).
    pub fn with_codes(names: Vec<Box<str>>, codes: LabelCodes) -> Labels {
        Labels {
            names,
            codes,
            by_target: TargetOrder::default(),
        }
    }

    /// Puts the labels in the narrowest form for the references `refs`
    /// whose labels they are (see [`LabelCodes`]); the same labels.
    pub fn narrow(&mut self, refs: &super::Csr) {
        if let LabelCodes::Full(raw) = &mut self.codes {
            let raw = std::mem::take(raw);
            self.codes = super::label_codes::narrow::narrowed(raw, self.names.len(), refs);
        }
    }

    /// [`Labels::narrow`] for labels in any form (an importer's
    /// provisional codes): the form re-chosen and the codes made again
    /// for the references `refs`, as from the same labels as `u32`s.
    pub fn narrow_any(&mut self, refs: &super::Csr) {
        let codes = std::mem::replace(&mut self.codes, LabelCodes::Full(Array::default()));
        let names = self.names.len();
        self.codes = super::label_codes::narrow::narrowed_from(codes, names, refs);
    }

    /// The stored form of an array index.
    pub fn index(i: u64) -> u32 {
        if i < (Self::INDEX - 1) as u64 {
            Self::INDEX | i as u32
        } else {
            Self::NONE
        }
    }

    /// How many references.
    pub fn len(&self) -> usize {
        self.codes.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    /// The stored label (see [`Labels`]) of the reference at position
    /// `edge` of the targets array, `start` being the first reference of
    /// its object; `None` past the end.
    #[inline]
    pub fn raw(&self, start: usize, edge: usize) -> Option<u32> {
        self.codes.raw(start, edge)
    }

    /// The name index of the reference at `edge` where its label is a
    /// name.
    #[inline]
    pub fn name_id(&self, edge: usize) -> Option<u32> {
        // An array index at its position decodes as an index whatever
        // the start, and is no name.
        self.codes
            .raw(edge, edge)
            .filter(|&l| l != Self::NONE && l & Self::INDEX == 0)
    }

    /// The stored labels of the references in `span`, all of the object
    /// whose first reference is `start`.
    #[inline]
    pub fn row(&self, start: usize, span: std::ops::Range<usize>) -> LabelRow<'_> {
        self.codes.row(start, span)
    }

    /// The label of the reference at position `edge` of the targets array,
    /// `start` being the first reference of its object.
    pub fn get(&self, start: usize, edge: usize) -> Option<Label<'_>> {
        let raw = self.raw(start, edge)?;
        if raw == Self::NONE {
            None
        } else if raw & Self::INDEX != 0 {
            Some(Label::Index(raw & !Self::INDEX))
        } else {
            self.names.get(raw as usize).map(|n| Label::Name(n))
        }
    }
}

/// How an object's value bytes are read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, bytemuck::Zeroable)]
#[repr(u8)]
pub enum ValueKind {
    /// No value.
    #[default]
    None = 0,
    /// Text in UTF-8 (V8 strings, gcdump strings).
    Utf8 = 1,
    /// Text in UTF-16, little-endian (Java `char[]` of a `String`).
    Utf16Le = 2,
    /// Text in UTF-16, big-endian (HPROF writes arrays big-endian).
    Utf16Be = 3,
    /// Text in Latin-1 (a compact Java 9+ `String`'s `byte[]`).
    Latin1 = 4,
    /// Primitive field bytes or primitive array contents, compared as bytes.
    Bytes = 5,
    /// A value the dump does not hold (a V8 sliced string's text): no
    /// bytes, and equal to no other object's value.
    Unknown = 6,
    /// Text made of the texts of the object's `first` and `second`
    /// references (a V8 concatenated string): no bytes of its own; equal
    /// parts make equal values, which duplicates compare as references.
    Joined = 7,
}

/// Per-object value bytes in one arena.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Values {
    offsets: Offsets,
    /// Every object's value bytes, one after the other (cut by the offsets).
    pub bytes: Array<u8>,
    /// One per object.
    kinds: Kinds,
}

impl ValueKind {
    /// Every kind, at its number.
    const ALL: [ValueKind; 8] = [
        ValueKind::None,
        ValueKind::Utf8,
        ValueKind::Utf16Le,
        ValueKind::Utf16Be,
        ValueKind::Latin1,
        ValueKind::Bytes,
        ValueKind::Unknown,
        ValueKind::Joined,
    ];

    /// The kind numbered `k` (`kind as u8`), `None` for no kind.
    pub fn from_u8(k: u8) -> Option<ValueKind> {
        Self::ALL.get(k as usize).copied()
    }
}

/// One [`ValueKind`] an object, two a byte (a kind needs 3 bits; a byte
/// each was a twelfth of a V8 snapshot's arrays at the analysis's end).
/// Nibbles rather than a `mem::Bits`, which is packed from `u32`s: the
/// importers hand the kinds over as a byte each, and a `u32` copy of them
/// would be 4 bytes an object at the import's end.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Kinds {
    nibbles: Vec<u8>,
    len: usize,
}

impl Kinds {
    fn new(kinds: &[ValueKind]) -> Kinds {
        let nibbles = kinds
            .par_chunks(2 * 4096)
            .flat_map_iter(|c| {
                c.chunks(2)
                    .map(|p| p[0] as u8 | p.get(1).map_or(0, |&k| (k as u8) << 4))
            })
            .collect();
        Kinds {
            nibbles,
            len: kinds.len(),
        }
    }

    /// Object `i`'s kind as its number; `i` below `len`.
    #[inline]
    fn number(&self, i: usize) -> u8 {
        self.nibbles[i / 2] >> (4 * (i % 2)) & 15
    }

    #[inline]
    fn get(&self, i: usize) -> Option<ValueKind> {
        (i < self.len).then(|| ValueKind::from_u8(self.number(i)))?
    }
}

/// Objects per block of [`Offsets::Narrow`].
const OFFSET_BLOCK: usize = 1024;

/// Objects per block of [`Offsets::Short`].
const SHORT_BLOCK: usize = 64;

/// What an entry of [`Offsets::Short`]'s side table is counted at when
/// choosing: its 16 bytes and 8 for the binary search a read of it costs.
const SHORT_ENTRY_COST: usize = 24;

/// The `objects + 1` offsets into the arena (object `o`'s value is
/// `bytes[offsets[o]..offsets[o + 1]]`), in the first of these forms that
/// takes fewer bytes than the next:
///
/// - 2 bytes each: an offset from the start of its block of
///   [`SHORT_BLOCK`] entries (a sampled index, 8 bytes a block), those of
///   65,535 or more as [`u16::MAX`] with the offset itself in a side table
///   of (entry, offset) pairs by entry (a block after a value of 64 KiB or
///   more). Most values are a few dozen bytes or none (a Java instance's
///   fields, a V8 heap's strings), so nearly every heap takes this form.
/// - 4 bytes each: an offset from the start of its block of
///   [`OFFSET_BLOCK`] entries, whose values then span less than 4 GiB.
/// - 8 bytes each, which on a V8 snapshot (values on its strings only) was
///   a twentieth of the analysis's peak.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Offsets {
    Short {
        bases: Vec<u64>,
        within: Vec<u16>,
        side: Vec<u64>,
    },
    Narrow {
        bases: Vec<u64>,
        within: Vec<u32>,
    },
    Wide(Vec<u64>),
}

/// [`Offsets::Short`]'s entries of blocks `first..` (`out`, whole blocks
/// but maybe the last), entry `i`'s offset from its block's start being
/// `within(block, i)`; returns the side table's pairs.
fn short_blocks(
    first: usize,
    out: &mut [u16],
    bases: &[u64],
    mut within: impl FnMut(usize, usize) -> u64,
) -> Vec<u64> {
    let mut side = Vec::new();
    for (k, block) in out.chunks_mut(SHORT_BLOCK).enumerate() {
        let b = first + k;
        for (slot, i) in block.iter_mut().zip(b * SHORT_BLOCK..) {
            let at = within(b, i);
            *slot = match u16::try_from(at) {
                Ok(v) if v < u16::MAX => v,
                _ => {
                    side.extend([i as u64, bases[b] + at]);
                    u16::MAX
                }
            };
        }
    }
    side
}

/// Blocks of [`SHORT_BLOCK`] per parallel part.
const SHORT_PART: usize = 1024;

impl Default for Offsets {
    fn default() -> Self {
        Offsets::Wide(vec![0])
    }
}

impl Offsets {
    /// The short form of `entries` offsets from their blocks' starts
    /// `bases`, entry `i` of block `b` at `bases[b] + within(b, i)`; `None`
    /// where it would not take fewer bytes than the narrow one.
    fn short<F: FnMut(usize, usize) -> u64>(
        entries: usize,
        bases: Vec<u64>,
        within: impl Fn() -> F + Sync,
    ) -> Option<Offsets> {
        let mut out: Vec<u16> = crate::mem::zeroed(entries);
        let side: Vec<Vec<u64>> = out
            .par_chunks_mut(SHORT_BLOCK * SHORT_PART)
            .enumerate()
            .map(|(p, out)| short_blocks(p * SHORT_PART, out, &bases, within()))
            .collect();
        let pairs: usize = side.iter().map(|s| s.len() / 2).sum();
        let cost = entries * 2 + bases.len() * 8 + pairs * SHORT_ENTRY_COST;
        let narrow = entries * 4 + entries.div_ceil(OFFSET_BLOCK) * 8;
        (cost < narrow).then(|| Offsets::Short {
            bases,
            within: out,
            side: side.concat(),
        })
    }

    fn new(wide: Vec<u64>) -> Offsets {
        Offsets::narrowed(&wide).unwrap_or(Offsets::Wide(wide))
    }

    /// The short or narrow form of `wide`, `None` where only the wide one
    /// fits.
    /// The offsets may be `u64`s or `u32`s (an importer writes them 4
    /// bytes each where its value bytes number under 4 GiB).
    fn narrowed<T: Copy + Into<u64> + Sync>(wide: &[T]) -> Option<Offsets> {
        let short_bases = wide
            .iter()
            .step_by(SHORT_BLOCK)
            .map(|&w| w.into())
            .collect();
        let at = || |b: usize, i: usize| wide[i].into() - wide[b * SHORT_BLOCK].into();
        if let Some(short) = Offsets::short(wide.len(), short_bases, at) {
            return Some(short);
        }
        let bases: Vec<u64> = wide
            .iter()
            .step_by(OFFSET_BLOCK)
            .map(|&w| w.into())
            .collect();
        let fits = wide
            .par_chunks(OFFSET_BLOCK)
            .all(|b| b[b.len() - 1].into() - b[0].into() <= u32::MAX as u64);
        if !fits {
            return None;
        }
        let mut within: Vec<u32> = crate::mem::zeroed(wide.len());
        within
            .par_chunks_mut(OFFSET_BLOCK)
            .zip(wide.par_chunks(OFFSET_BLOCK))
            .for_each(|(out, block)| {
                for (o, &w) in out.iter_mut().zip(block) {
                    *o = (w.into() - block[0].into()) as u32;
                }
            });
        Some(Offsets::Narrow { bases, within })
    }

    /// The offsets of objects `0..len` whose values are `value_len(o)`
    /// bytes long, built straight in the narrow form where it fits (no
    /// 8-byte array of them first).
    fn from_lengths(len: usize, value_len: &(impl Fn(usize) -> u64 + Sync)) -> Offsets {
        let entries = len + 1;
        if let Some(short) = Self::short_from_lengths(len, value_len) {
            return short;
        }
        let (mut bases, total) = crate::mem::block_starts(len, OFFSET_BLOCK, value_len);
        // Entry `len` (the end) opens a block of its own when `len` is a
        // multiple of the block.
        if bases.len() < entries.div_ceil(OFFSET_BLOCK) {
            bases.push(total);
        }
        let mut within: Vec<u32> = crate::mem::zeroed(entries);
        let fits = within
            .par_chunks_mut(OFFSET_BLOCK)
            .enumerate()
            .all(|(b, out)| {
                let mut at = 0u64;
                for (slot, o) in out.iter_mut().zip(b * OFFSET_BLOCK..) {
                    let Ok(v) = u32::try_from(at) else {
                        return false;
                    };
                    *slot = v;
                    if o < len {
                        at += value_len(o);
                    }
                }
                true
            });
        match fits {
            true => Offsets::Narrow { bases, within },
            false => Offsets::Wide(crate::mem::prefix_sums(len, value_len)),
        }
    }

    /// [`Offsets::short`] from the values' lengths.
    fn short_from_lengths(
        len: usize,
        value_len: &(impl Fn(usize) -> u64 + Sync),
    ) -> Option<Offsets> {
        let entries = len + 1;
        let (mut bases, total) = crate::mem::block_starts(len, SHORT_BLOCK, value_len);
        if bases.len() < entries.div_ceil(SHORT_BLOCK) {
            bases.push(total);
        }
        // Entry `i`'s offset in its block: the lengths of the block's
        // objects before it, summed as the entries are made in order.
        let within = || {
            let mut acc = 0u64;
            move |b: usize, i: usize| {
                if i == b * SHORT_BLOCK {
                    acc = 0;
                }
                let at = acc;
                if i < len {
                    acc += value_len(i);
                }
                at
            }
        };
        Offsets::short(entries, bases, within)
    }

    #[inline]
    fn get(&self, i: usize) -> Option<u64> {
        match self {
            Offsets::Short {
                bases,
                within,
                side,
            } => match *within.get(i)? {
                u16::MAX => crate::mem::paired(side, i),
                w => Some(bases[i / SHORT_BLOCK] + w as u64),
            },
            Offsets::Narrow { bases, within } => {
                Some(bases[i / OFFSET_BLOCK] + *within.get(i)? as u64)
            }
            Offsets::Wide(w) => w.get(i).copied(),
        }
    }

    fn len(&self) -> usize {
        match self {
            Offsets::Short { within, .. } => within.len(),
            Offsets::Narrow { within, .. } => within.len(),
            Offsets::Wide(w) => w.len(),
        }
    }
}

impl Values {
    /// Values from their arena and the `objects + 1` offsets into it
    /// (starting at 0, never decreasing, ending at `bytes.len()`: the
    /// caller checks) and one kind per object.
    pub fn new(offsets: Vec<u64>, bytes: Vec<u8>, kinds: Vec<ValueKind>) -> Values {
        debug_assert_eq!(offsets.len(), kinds.len() + 1);
        Values {
            offsets: Offsets::new(offsets),
            bytes: bytes.into(),
            kinds: Kinds::new(&kinds),
        }
    }

    /// [`Values::new`] with the offsets and the arena built in
    /// [`Scratch`]es: the arena stays where it is (in its spill file where
    /// spilled), the offsets (`u64`s, or `u32`s where they fit) are
    /// narrowed from where they are.
    pub fn from_scratch<T: bytemuck::Pod + Into<u64> + Sync>(
        offsets: Scratch<T>,
        bytes: Scratch<u8>,
        kinds: Vec<ValueKind>,
    ) -> Values {
        debug_assert_eq!(offsets.len(), kinds.len() + 1);
        let narrowed = Offsets::narrowed(&offsets)
            .unwrap_or_else(|| Offsets::Wide(offsets.iter().map(|&o| o.into()).collect()));
        offsets.release(0..offsets.len());
        Values {
            offsets: narrowed,
            bytes: bytes.into_array(),
            kinds: Kinds::new(&kinds),
        }
    }

    /// Values of `kinds.len()` objects, object `o`'s `value_len(o)` bytes
    /// long, written by `fill` into the arena: it gets consecutive ranges
    /// of objects, in parallel, each with the arena bytes of its objects'
    /// values to fill in object order.
    pub fn build(
        kinds: Vec<ValueKind>,
        value_len: impl Fn(usize) -> u64 + Sync,
        fill: impl Fn(std::ops::Range<usize>, &mut [u8]) + Sync,
    ) -> Values {
        let n = kinds.len();
        let offsets = Offsets::from_lengths(n, &value_len);
        let at = |o: usize| offsets.get(o).expect("in range") as usize;
        let mut bytes: Vec<u8> = crate::mem::zeroed(at(n));
        const FILL: usize = 64 * OFFSET_BLOCK;
        let ranges: Vec<_> = (0..n).step_by(FILL).map(|b| b..(b + FILL).min(n)).collect();
        let parts =
            crate::mem::split_by(&mut bytes, ranges.iter().map(|r| at(r.end) - at(r.start)));
        ranges
            .into_par_iter()
            .zip(parts)
            .for_each(|(r, out)| fill(r, out));
        Values {
            offsets,
            bytes: bytes.into(),
            kinds: Kinds::new(&kinds),
        }
    }

    /// Values built one object at a time (tests, small dumps).
    pub fn from_parts<'a>(parts: impl IntoIterator<Item = (&'a [u8], ValueKind)>) -> Values {
        let (mut offsets, mut bytes, mut kinds) = (vec![0], Vec::new(), Vec::new());
        for (b, k) in parts {
            bytes.extend_from_slice(b);
            offsets.push(bytes.len() as u64);
            kinds.push(k);
        }
        Values::new(offsets, bytes, kinds)
    }

    /// Bytes held by the offsets (the arena and kinds are `bytes` and
    /// `kinds`), for the memory account.
    pub fn offsets_bytes(&self) -> usize {
        match &self.offsets {
            Offsets::Short {
                bases,
                within,
                side,
            } => bases.len() * 8 + within.len() * 2 + side.len() * 8,
            Offsets::Narrow { bases, within } => bases.len() * 8 + within.len() * 4,
            Offsets::Wide(w) => w.len() * 8,
        }
    }

    /// The `objects + 1` offsets, 8 bytes each (for the reopen cache).
    pub fn offsets(&self) -> Vec<u64> {
        (0..self.offsets.len())
            .into_par_iter()
            .map(|i| self.offsets.get(i).expect("in range"))
            .collect()
    }

    /// How the object's value is read ([`ValueKind::None`] past the end).
    pub fn kind(&self, object: ObjectIdx) -> ValueKind {
        self.kinds.get(object.index()).unwrap_or_default()
    }

    /// How many objects there are values (or none) for.
    pub fn objects(&self) -> usize {
        self.kinds.len
    }

    /// Every object's kind as its number (`kind as u8`), in order (for
    /// the reopen cache).
    pub fn kind_numbers(&self) -> impl Iterator<Item = u8> + '_ {
        (0..self.kinds.len).map(|i| self.kinds.number(i))
    }

    /// Bytes held by the kinds, for the memory account.
    pub fn kinds_bytes(&self) -> usize {
        self.kinds.nibbles.len()
    }

    /// The object's value bytes and how to read them; `None` when it has none.
    pub fn get(&self, object: ObjectIdx) -> Option<(&[u8], ValueKind)> {
        let o = object.index();
        let kind = self.kinds.get(o)?;
        if kind == ValueKind::None {
            return None;
        }
        let start = self.offsets.get(o)? as usize;
        let end = self.offsets.get(o + 1)? as usize;
        Some((self.bytes.get(start..end)?, kind))
    }

    /// The value as text, at most `max_chars` characters (`…` when cut),
    /// control characters shown as `\xHH`; `None` for objects without a
    /// textual value.
    pub fn text(&self, object: ObjectIdx, max_chars: usize) -> Option<String> {
        let (bytes, kind) = self.get(object)?;
        Some(match kind {
            // Only the first `max_chars + 1` characters are needed, and
            // they lie within 4 bytes each.
            ValueKind::Utf8 => {
                let head = &bytes[..bytes.len().min(max_chars.saturating_mul(4) + 4)];
                cut(String::from_utf8_lossy(head).chars(), max_chars)
            }
            ValueKind::Latin1 => cut(bytes.iter().map(|&b| b as char), max_chars),
            ValueKind::Utf16Le | ValueKind::Utf16Be => {
                let be = kind == ValueKind::Utf16Be;
                let units = bytes.chunks_exact(2).map(move |p| {
                    if be {
                        u16::from_be_bytes([p[0], p[1]])
                    } else {
                        u16::from_le_bytes([p[0], p[1]])
                    }
                });
                let chars = char::decode_utf16(units).map(|c| c.unwrap_or('\u{fffd}'));
                cut(chars, max_chars)
            }
            ValueKind::None | ValueKind::Bytes | ValueKind::Unknown | ValueKind::Joined => {
                return None
            }
        })
    }
}

/// The first `max` characters, `…` when there were more; control
/// characters written visibly as `\xHH` (a string from a dump may hold
/// escape sequences or line breaks: see `model::text`).
fn cut(chars: impl Iterator<Item = char>, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in chars.enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_built_in_blocks_equal_values_built_one_by_one() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for n in [0, 1, 1023, 1024, 1025, 70_000] {
            let parts: Vec<(Vec<u8>, ValueKind)> = (0..n)
                .map(|o| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    match x % 3 {
                        0 => (Vec::new(), ValueKind::None),
                        _ => (vec![o as u8; (x >> 40) as usize % 9], ValueKind::Utf8),
                    }
                })
                .collect();
            let one_by_one = Values::from_parts(parts.iter().map(|(b, k)| (&b[..], *k)));
            let built = Values::build(
                parts.iter().map(|p| p.1).collect(),
                |o| parts[o].0.len() as u64,
                |range, out| {
                    let mut at = 0;
                    for (b, _) in &parts[range] {
                        out[at..at + b.len()].copy_from_slice(b);
                        at += b.len();
                    }
                },
            );
            assert_eq!(built, one_by_one, "{n} objects");
            assert!(matches!(built.offsets, Offsets::Short { .. }));
        }
    }

    #[test]
    fn offsets_past_what_a_block_holds_go_to_the_side_table_or_stay_wide() {
        // A value of 8 GiB among small ones: the rest of its short block
        // in the side table.
        let len = |o: usize| if o == 5 { 1 << 33 } else { o as u64 % 7 };
        let built = Offsets::from_lengths(3000, &len);
        assert!(matches!(&built, Offsets::Short { side, .. } if side.len() == 2 * 58));
        let wide = crate::mem::prefix_sums(3000, len);
        assert_eq!(built, Offsets::new(wide.clone()));
        for (i, &w) in wide.iter().enumerate() {
            assert_eq!(built.get(i), Some(w), "{i}");
        }
        assert_eq!(built.get(wide.len()), None);
        // Every value 2 GiB: no block of either narrow form holds them.
        let huge = |_: usize| 1 << 31;
        let built = Offsets::from_lengths(3000, &huge);
        assert!(matches!(built, Offsets::Wide(_)));
        assert_eq!(built, Offsets::new(crate::mem::prefix_sums(3000, huge)));
        // Values of 2 KiB: too many for the short blocks, not for the
        // narrow ones.
        let mid = |o: usize| 2048 + o as u64 % 7;
        let built = Offsets::from_lengths(3000, &mid);
        assert!(matches!(built, Offsets::Narrow { .. }));
        assert_eq!(built, Offsets::new(crate::mem::prefix_sums(3000, mid)));
    }

    #[test]
    fn labels_round_trip_names_and_indices() {
        let l = Labels::new(
            vec!["next".into()],
            vec![0, Labels::index(7), Labels::NONE, Labels::index(u64::MAX)],
        );
        assert_eq!(l.get(0, 0), Some(Label::Name("next")));
        assert_eq!(l.get(0, 1), Some(Label::Index(7)));
        assert_eq!(l.get(0, 2), None);
        assert_eq!(l.get(0, 3), None);
        assert_eq!(l.get(0, 4), None);
        assert_eq!(l.get(0, 0).unwrap().to_string(), ".next");
        assert_eq!(l.get(0, 1).unwrap().to_string(), "[7]");
    }

    #[test]
    fn offsets_are_narrow_where_blocks_fit_and_read_back_either_way() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut wide = vec![0u64];
        for i in 0..5000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let step = if i % 7 == 0 { x % 1_000_000 } else { x % 40 };
            wide.push(wide[wide.len() - 1] + step);
        }
        let narrow = Offsets::new(wide.clone());
        assert!(matches!(narrow, Offsets::Narrow { .. }));
        // A block whose values span 4 GiB or more keeps 8-byte offsets.
        let mut huge = wide.clone();
        for w in &mut huge[3000..] {
            *w += 1 << 32;
        }
        let kept = Offsets::new(huge.clone());
        assert!(matches!(kept, Offsets::Wide(_)));
        for (o, want) in [(&narrow, &wide), (&kept, &huge)] {
            assert_eq!(o.len(), want.len());
            for (i, &w) in want.iter().enumerate() {
                assert_eq!(o.get(i), Some(w), "{i}");
            }
            assert_eq!(o.get(want.len()), None);
        }
        // Exactly 4 GiB - 1 within a block still fits.
        let edge = Offsets::new(vec![0, u32::MAX as u64]);
        assert_eq!(edge.get(1), Some(u32::MAX as u64));
        assert!(matches!(edge, Offsets::Narrow { .. }));
    }

    #[test]
    fn values_read_every_text_kind_and_cut() {
        let parts: [(&[u8], ValueKind); 5] = [
            (b"hello", ValueKind::Utf8),
            (&[0, b'h', 0, b'i'], ValueKind::Utf16Be),
            (&[b'h', 0, b'i', 0], ValueKind::Utf16Le),
            (&[0xe9], ValueKind::Latin1),
            (&[1, 2, 3], ValueKind::Bytes),
        ];
        let v = Values::from_parts(parts);
        assert_eq!(v.text(ObjectIdx(0), 10).as_deref(), Some("hello"));
        assert_eq!(v.text(ObjectIdx(0), 2).as_deref(), Some("he…"));
        let e = Values::from_parts([(&b"a\x1b[2Jb"[..], ValueKind::Utf8)]);
        assert_eq!(e.text(ObjectIdx(0), 10).as_deref(), Some("a\\x1b[2Jb"));
        assert_eq!(v.text(ObjectIdx(1), 10).as_deref(), Some("hi"));
        assert_eq!(v.text(ObjectIdx(2), 10).as_deref(), Some("hi"));
        assert_eq!(v.text(ObjectIdx(3), 10).as_deref(), Some("é"));
        assert_eq!(v.text(ObjectIdx(4), 10), None);
        assert_eq!(
            v.get(ObjectIdx(4)),
            Some((&[1u8, 2, 3][..], ValueKind::Bytes))
        );
        assert_eq!(v.get(ObjectIdx(5)), None);
    }
}
