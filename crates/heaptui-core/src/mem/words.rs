//! [`Words`]: an array of `u64` values kept in 4 bytes each when every one
//! fits a `u32`, in 8 otherwise, and ascending ones (the CSR offsets,
//! `model::Offsets`) in about 2 bytes each where they rise slowly
//! ([`Words::Short`]): 2 bytes an object less than 4-byte offsets for the
//! references, through the whole analysis.

use std::ops::Range;

use rayon::prelude::*;

use super::spill::Spill;
use super::{Array, Scratch};

/// `u64` values in the narrowest of two widths; read through
/// [`Words::get`].
#[derive(Debug, Clone)]
pub enum Words {
    /// Every value fits a `u32`.
    Narrow(Array<u32>),
    /// Some value does not.
    Wide(Array<u64>),
    /// Ascending values (cut points) by blocks of [`SHORT_BLOCK`]: entry
    /// `i` is `bases[i / SHORT_BLOCK] + within[i]`, the base being the
    /// block's first value. A block whose values span more than
    /// `u16::MAX` (64 entries cutting 65,536 references or more: a big
    /// array) is an escape: its base is [`ESCAPE`] with the block's number
    /// among the escapes, `k`, and its values are
    /// `side[k * SHORT_BLOCK..][..SHORT_BLOCK]` (its `within` are 0).
    /// Made only where it takes fewer bytes than the narrow (or wide)
    /// form: 2.1 bytes an entry where escapes are rare.
    Short {
        /// One per block: its first value, or an escape.
        bases: Array<u64>,
        /// One per entry: its value less its block's base.
        within: Array<u16>,
        /// [`SHORT_BLOCK`] values per escaped block, in block order.
        side: Array<u64>,
    },
}

/// Entries per block of [`Words::Short`].
pub const SHORT_BLOCK: usize = 64;

/// The bit of a [`Words::Short`] base that marks an escaped block.
pub const ESCAPE: u64 = 1 << 63;

impl Default for Words {
    fn default() -> Words {
        Words::Narrow(Array::default())
    }
}

/// Equal when every value is, whatever the width.
impl PartialEq for Words {
    fn eq(&self, other: &Words) -> bool {
        match (self, other) {
            (Words::Narrow(a), Words::Narrow(b)) => a[..] == b[..],
            (Words::Wide(a), Words::Wide(b)) => a[..] == b[..],
            _ => self.len() == other.len() && (0..self.len()).all(|i| self.get(i) == other.get(i)),
        }
    }
}

impl Eq for Words {}

impl From<Vec<u64>> for Words {
    /// The narrow form where every value fits (made in parallel; the
    /// vector is freed), else the vector itself.
    fn from(wide: Vec<u64>) -> Words {
        let fits = !wide.par_iter().any(|&x| x > u32::MAX as u64);
        Words::narrowed(wide, fits)
    }
}

impl Words {
    /// [`From`] for values that never decrease (offsets): the short form
    /// where it takes fewer bytes, else the narrow one where the last
    /// fits a `u32`, else the wide one.
    pub fn from_ascending(wide: Vec<u64>) -> Words {
        if let Some(n) = wide.len().checked_sub(1) {
            let len = |i: usize| wide[i + 1].saturating_sub(wide[i]);
            if let Some(short) = Words::short_from_lengths(n, &len, None, &|_| {}) {
                return short;
            }
        }
        Words::plain_ascending(wide)
    }

    /// [`Words::from_ascending`] without the short form (offsets read
    /// once and dropped: no need to narrow them further).
    pub fn plain_ascending(wide: Vec<u64>) -> Words {
        let fits = wide.last().is_none_or(|&l| l <= u32::MAX as u64);
        Words::narrowed(wide, fits)
    }

    /// Ascending values in memory in the short form where it takes fewer
    /// bytes; mapped ones (spilled, or a reopened cache's) as they are.
    pub fn shortened(self) -> Words {
        let short = match &self {
            Words::Short { .. } => None,
            w if w.is_mapped() || w.is_empty() => None,
            Words::Narrow(o) => {
                let len = |i: usize| o[i + 1].saturating_sub(o[i]) as u64;
                Words::short_from_lengths(o.len() - 1, &len, None, &|_| {})
            }
            Words::Wide(o) => {
                let len = |i: usize| o[i + 1].saturating_sub(o[i]);
                Words::short_from_lengths(o.len() - 1, &len, None, &|_| {})
            }
        };
        short.unwrap_or(self)
    }

    /// A [`Words::Short`] from its parts (a reopened cache), its blocks and
    /// escapes checked to be in range (not the order of its values: see
    /// [`Words::ascending`]).
    pub fn checked_short(
        bases: Array<u64>,
        within: Array<u16>,
        side: Array<u64>,
    ) -> Result<Words, String> {
        let escapes = (side.len() / SHORT_BLOCK) as u64;
        let ok = bases.len() == within.len().div_ceil(SHORT_BLOCK)
            && side.len().is_multiple_of(SHORT_BLOCK)
            && bases
                .par_iter()
                .all(|&b| b & ESCAPE == 0 || b & !ESCAPE < escapes);
        match ok {
            true => Ok(Words::Short {
                bases,
                within,
                side,
            }),
            false => Err("the offsets' blocks do not match their entries".into()),
        }
    }

    /// [`From`] for values built in a [`Scratch`]: the narrow form where
    /// every value fits, made in `spill` where given (block by block, the
    /// pages of each block read and written released after it), else
    /// the values as they are.
    pub fn from_scratch(wide: Scratch<u64>, spill: Option<&Spill>) -> Words {
        if !wide.is_mapped() && spill.is_none() {
            return Words::from(wide.into_vec());
        }
        if wide.par_iter().any(|&x| x > u32::MAX as u64) {
            return Words::Wide(wide.into_array());
        }
        const BLOCK: usize = 1 << 20;
        let mut narrow: Scratch<u32> = Scratch::zeroed(wide.len(), spill);
        let blocks = wide.len().div_ceil(BLOCK);
        let lens = (0..blocks).map(|b| BLOCK.min(wide.len() - b * BLOCK));
        narrow
            .parts(lens)
            .into_par_iter()
            .enumerate()
            .for_each(|(b, mut out)| {
                let from = b * BLOCK..b * BLOCK + out.len();
                for (o, &x) in out.iter_mut().zip(&wide[from.clone()]) {
                    *o = x as u32;
                }
                out.release();
                wide.release(from);
            });
        Words::Narrow(narrow.into_array())
    }

    fn narrowed(wide: Vec<u64>, fits: bool) -> Words {
        if !fits {
            return Words::Wide(wide.into());
        }
        let mut narrow: Vec<u32> = super::zeroed(wide.len());
        narrow
            .par_chunks_mut(1 << 16)
            .zip(wide.par_chunks(1 << 16))
            .for_each(|(out, w)| {
                for (o, &x) in out.iter_mut().zip(w) {
                    *o = x as u32;
                }
            });
        Words::Narrow(narrow.into())
    }

    /// Entry `i` (panics past the end, as indexing does).
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        match self {
            Words::Narrow(s) => s[i] as u64,
            Words::Wide(s) => s[i],
            Words::Short {
                bases,
                within,
                side,
            } => {
                let (b, w) = (bases[i / SHORT_BLOCK], within[i]);
                match b & ESCAPE {
                    0 => b + w as u64,
                    _ => escaped(side, b, i),
                }
            }
        }
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        match self {
            Words::Narrow(s) => s.len(),
            Words::Wide(s) => s.len(),
            Words::Short { within, .. } => within.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes the entries take.
    pub fn bytes(&self) -> usize {
        match self {
            Words::Narrow(s) => s.len() * 4,
            Words::Wide(s) => s.len() * 8,
            Words::Short {
                bases,
                within,
                side,
            } => bases.len() * 8 + within.len() * 2 + side.len() * 8,
        }
    }

    /// Whether they lie in a file map (a reopened cache).
    pub fn is_mapped(&self) -> bool {
        match self {
            Words::Narrow(s) => s.is_mapped(),
            Words::Wide(s) => s.is_mapped(),
            Words::Short { within, .. } => within.is_mapped(),
        }
    }

    /// Every entry, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }

    /// The entries `range`, added up.
    pub fn sum_of(&self, range: std::ops::Range<usize>) -> u64 {
        match self {
            Words::Narrow(s) => s[range].iter().map(|&x| x as u64).sum(),
            Words::Wide(s) => s[range].iter().sum(),
            Words::Short { .. } => range.map(|i| self.get(i)).sum(),
        }
    }

    /// Every entry added up (in parallel).
    pub fn total(&self) -> u64 {
        match self {
            Words::Narrow(s) => s.par_iter().map(|&x| x as u64).sum(),
            Words::Wide(s) => s.par_iter().sum(),
            Words::Short { .. } => (0..self.len()).into_par_iter().map(|i| self.get(i)).sum(),
        }
    }

    /// Every entry added up without overflow (in parallel): what an
    /// importer checks fits a `u64` before any sum of sizes is made.
    pub fn total_wide(&self) -> u128 {
        match self {
            Words::Narrow(s) => s.par_iter().map(|&x| x as u128).sum(),
            Words::Wide(s) => s.par_iter().map(|&x| x as u128).sum(),
            Words::Short { .. } => (0..self.len())
                .into_par_iter()
                .map(|i| self.get(i) as u128)
                .sum(),
        }
    }

    /// Whether every consecutive pair is in order (`w[0] <= w[1]`).
    pub fn ascending(&self) -> bool {
        match self {
            Words::Narrow(o) => o.par_windows(2).all(|w| w[0] <= w[1]),
            Words::Wide(o) => o.par_windows(2).all(|w| w[0] <= w[1]),
            Words::Short { .. } => (1..self.len())
                .into_par_iter()
                .all(|i| self.get(i - 1) <= self.get(i)),
        }
    }

    /// Every entry as a `u64` (tests, small heaps).
    pub fn to_vec(&self) -> Vec<u64> {
        self.iter().collect()
    }
}

/// Entry `i` of an escaped block of [`Words::Short`] whose base is `base`.
#[cold]
#[inline(never)]
pub fn escaped(side: &[u64], base: u64, i: usize) -> u64 {
    side[(base & !ESCAPE) as usize * SHORT_BLOCK + i % SHORT_BLOCK]
}

/// Entries per parallel part of a [`Words::Short`] being made.
const SHORT_PART: usize = SHORT_BLOCK * 4096;

impl Words {
    /// The `n + 1` running totals of `len(0..n)` from 0 in the short form,
    /// its entries made in `spill` where given (`done(range)` is told once
    /// the lengths `range` are read for the last time, to release their
    /// pages); `None` where it would not take fewer bytes than the narrow
    /// form (the wide one where the total passes `u32::MAX`).
    pub fn short_from_lengths(
        n: usize,
        len: &(impl Fn(usize) -> u64 + Sync),
        spill: Option<&Spill>,
        done: &(impl Fn(Range<usize>) + Sync),
    ) -> Option<Words> {
        let entries = n + 1;
        let spans = block_spans(n, len);
        let escapes = spans.iter().filter(|s| s.1).count();
        let total: u64 = spans.iter().map(|s| s.0).sum();
        let plain = entries * if total <= u32::MAX as u64 { 4 } else { 8 };
        let short = entries * 2 + spans.len() * 8 + escapes * SHORT_BLOCK * 8;
        if short >= plain {
            return None;
        }
        let (bases, side) = bases_and_side(n, &spans, len);
        let mut within: Scratch<u16> = Scratch::zeroed(entries, spill);
        let parts = entries.div_ceil(SHORT_PART);
        within
            .parts((0..parts).map(|p| SHORT_PART.min(entries - p * SHORT_PART)))
            .into_par_iter()
            .enumerate()
            .for_each(|(p, mut out)| {
                let first = p * SHORT_PART;
                for (k, block) in out.chunks_mut(SHORT_BLOCK).enumerate() {
                    let from = first + k * SHORT_BLOCK;
                    if bases[from / SHORT_BLOCK] & ESCAPE != 0 {
                        continue;
                    }
                    let mut acc = 0u64;
                    for (slot, i) in block.iter_mut().zip(from..) {
                        *slot = acc as u16;
                        if i < n {
                            acc += len(i);
                        }
                    }
                }
                out.release();
                done(first.min(n)..(first + out.len()).min(n));
            });
        Some(Words::Short {
            bases: bases.into(),
            within: within.into_array(),
            side: side.into(),
        })
    }
}

/// Per block of [`SHORT_BLOCK`] of the `n + 1` running totals of
/// `len(0..n)`: the lengths it adds (to the next block's base), and whether
/// its values span more than a `u16` (an escape).
fn block_spans(n: usize, len: &(impl Fn(usize) -> u64 + Sync)) -> Vec<(u64, bool)> {
    (0..(n + 1).div_ceil(SHORT_BLOCK))
        .into_par_iter()
        .map(|b| {
            let from = b * SHORT_BLOCK;
            let to = (from + SHORT_BLOCK).min(n);
            let (mut total, mut last) = (0u64, 0u64);
            for i in from..to {
                last = len(i);
                total += last;
            }
            // A whole block's last value leaves out its own length; the
            // last block's is the end, after every length.
            let span = if to == from + SHORT_BLOCK {
                total - last
            } else {
                total
            };
            (total, span > u16::MAX as u64)
        })
        .collect()
}

/// The blocks' bases (an escape for an escaped block) and the escaped
/// blocks' values.
fn bases_and_side(
    n: usize,
    spans: &[(u64, bool)],
    len: &(impl Fn(usize) -> u64 + Sync),
) -> (Vec<u64>, Vec<u64>) {
    let mut bases = Vec::with_capacity(spans.len());
    let mut side = Vec::new();
    let mut at = 0u64;
    for (b, &(total, escape)) in spans.iter().enumerate() {
        if escape {
            bases.push(ESCAPE | (side.len() / SHORT_BLOCK) as u64);
            let mut acc = at;
            for i in b * SHORT_BLOCK..(b + 1) * SHORT_BLOCK {
                side.push(acc);
                if i < n {
                    acc += len(i);
                }
            }
        } else {
            bases.push(at);
        }
        at += total;
    }
    (bases, side)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{Words, ESCAPE, SHORT_BLOCK};

    /// The running totals of `lens` from 0.
    fn cuts(lens: &[u64]) -> Vec<u64> {
        let mut out = vec![0];
        for &l in lens {
            out.push(out[out.len() - 1] + l);
        }
        out
    }

    /// Reads back as `want` entry by entry and in sums, and compares
    /// equal to the plain form of the same values.
    fn check(w: &Words, want: &[u64]) {
        assert_eq!(w.len(), want.len());
        assert_eq!(w.to_vec(), want);
        assert!(w.ascending());
        assert_eq!(w.total(), want.iter().sum::<u64>());
        assert_eq!(*w, Words::plain_ascending(want.to_vec()));
    }

    /// Lengths mostly small, some empty, some huge (a big array's
    /// references: an escaped block).
    fn lengths() -> impl Strategy<Value = Vec<u64>> {
        let one = prop_oneof![
            8 => 0u64..40,
            3 => Just(0u64),
            1 => 0u64..70_000,
            1 => 65_000u64..1 << 20,
        ];
        prop::collection::vec(one, 0..700)
    }

    proptest! {
        #[test]
        fn every_form_reads_as_the_plain_cut_points(lens in lengths()) {
            let want = cuts(&lens);
            let len = |i: usize| lens[i];
            let built = Words::short_from_lengths(lens.len(), &len, None, &|_| {});
            if let Some(short) = &built {
                check(short, &want);
            }
            let from = Words::from_ascending(want.clone());
            check(&from, &want);
            prop_assert_eq!(matches!(from, Words::Short { .. }), built.is_some());
            check(&Words::plain_ascending(want.clone()).shortened(), &want);
            let dir = tempfile::tempdir().unwrap();
            let spill = super::Spill::open(dir.path(), 1 << 20).unwrap();
            if let Some(mut spilled) =
                Words::short_from_lengths(lens.len(), &len, Some(&spill), &|_| {})
            {
                check(&spilled, &want);
                spill.words(&mut spilled);
                check(&spilled, &want);
            }
        }
    }

    /// Small rows take the short form, 2 bytes an entry and a base per
    /// block; a block of 65,536 references or more is an escape, read
    /// from the side; where escapes are common, the plain form.
    #[test]
    fn short_form_escapes_and_fallback() {
        let small: Vec<u64> = (0..10_000).map(|i| i % 7).collect();
        let w = Words::from_ascending(cuts(&small));
        let blocks = 10_001usize.div_ceil(SHORT_BLOCK);
        assert!(matches!(&w, Words::Short { side, .. } if side.is_empty()));
        assert_eq!(w.bytes(), 10_001 * 2 + blocks * 8);
        let mut one_big = small.clone();
        one_big[300] = 1 << 40;
        let w = Words::from_ascending(cuts(&one_big));
        let Words::Short { bases, side, .. } = &w else {
            panic!("{w:?}")
        };
        assert_eq!(bases[300 / SHORT_BLOCK], ESCAPE);
        assert_eq!(side.len(), SHORT_BLOCK);
        check(&w, &cuts(&one_big));
        // The block ending at the huge row, not the one that starts with
        // it, is escaped when the row is its last.
        let mut last = small.clone();
        last[SHORT_BLOCK - 1] = 1 << 20;
        let Words::Short { bases, .. } = Words::from_ascending(cuts(&last)) else {
            panic!()
        };
        assert_eq!((bases[0], bases[1]), (0, cuts(&last)[SHORT_BLOCK]));
        let every: Vec<u64> = (0..10_000).map(|i| (i % 64 == 0) as u64 * 70_000).collect();
        assert!(matches!(
            Words::from_ascending(cuts(&every)),
            Words::Narrow(_)
        ));
        let none = Words::from_ascending(vec![0]);
        assert!(matches!(none, Words::Narrow(_)) && none.len() == 1);
        assert!(Words::from_ascending(Vec::new()).is_empty());
    }

    /// A forged short form is refused when its blocks or escapes are out
    /// of range; in range but out of order is for `ascending` to tell.
    #[test]
    fn checked_short_refuses_bad_blocks() {
        let ok = |b: Vec<u64>, w: Vec<u16>, s: Vec<u64>| {
            Words::checked_short(b.into(), w.into(), s.into()).is_ok()
        };
        assert!(ok(vec![0], vec![0, 1, 2], vec![]));
        assert!(!ok(vec![0, 3], vec![0, 1, 2], vec![]));
        assert!(!ok(vec![ESCAPE], vec![0, 1, 2], vec![]));
        assert!(ok(vec![ESCAPE], vec![0; 3], (0..64).collect()));
        assert!(!ok(vec![ESCAPE | 1], vec![0; 3], (0..64).collect()));
        assert!(!ok(vec![ESCAPE], vec![0; 3], (0..63).collect()));
        let bad = Words::checked_short(vec![0].into(), vec![0, 5, 3].into(), Vec::new().into());
        assert!(!bad.unwrap().ascending());
    }
}
