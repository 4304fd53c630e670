//! [`Nodes`]: per-object node numbers of the dominator tree, bit-packed.
//!
//! The tree holds three arrays of one `u32` an object: each object's
//! immediate dominator, its preorder number and the preorder's inverse
//! (`crate::graph::DominatorTree`). Their values are object indices or
//! preorder numbers, below the object count, and two sentinels at the top
//! of the `u32`s: `u32::MAX - 1` (the super-root) and `u32::MAX` (not
//! reachable, not numbered). Held as they are in a [`Bits`], the sentinels
//! would take all 32 bits; so each value is stored plus 2, wrapping: the
//! sentinels become 0 and 1, an index `i` becomes `i + 2`, and the width is
//! that of the object count plus one, `⌈log2 (objects + 2)⌉` bits. On
//! heaps of 6 to 10 million objects that is 23 or 24 bits, 2.9 or 3 bytes
//! an object where a `u32` took 4: 12 bytes an object for the three became
//! 8.6 on the 6.62 M-object V8 snapshot and 9 on the 9.76 M-object HPROF.
//!
//! A read is [`Bits::get`]'s one unaligned load, a shift, a mask and the
//! subtraction; a run of values ([`Nodes::range`]) decodes sequentially.
//! Made from `u32`s in a [`Scratch`] ([`Nodes::pack`]), shifted and then
//! packed in place, so that building one never holds two copies; or
//! written straight in packed form where the values come at random from
//! many threads, each slot once ([`Nodes::scattered`]: each write an atomic
//! exclusive-or of its bits into the one or two words that hold them,
//! the slots filled with a sentinel first), so that no `u32` array of them
//! is ever alive: the dominators' `idom` and preorder numbers, the
//! preorder's inverse and the arrays made again after a set-aside were each
//! a `u32` array (4 bytes an object) beside everything else alive.

use rayon::prelude::*;

use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

use super::{BitIter, Bits, Scratch};

/// What is added to each value before it is packed (so the two sentinels
/// at the top of the `u32`s come first).
const SHIFT: u32 = 2;

/// Node numbers and the tree's two sentinels, packed (see the module doc).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Nodes {
    bits: Bits,
}

/// The values of a run of [`Nodes`], in order (or backwards).
pub type NodeIter<'a> = std::iter::Map<BitIter<'a, u32>, fn(u32) -> u32>;

#[inline(always)]
fn unshift(v: u32) -> u32 {
    v.wrapping_sub(SHIFT)
}

impl Nodes {
    /// Packs `values` in place (see [`Bits::pack`]: a vector is cut to the
    /// packed length, a spill file's pages dropped as the pass goes).
    pub fn pack(mut values: Scratch<u32>) -> Nodes {
        values
            .par_chunks_mut(1 << 16)
            .for_each(|c| c.iter_mut().for_each(|v| *v = v.wrapping_add(SHIFT)));
        Nodes {
            bits: Bits::pack(values),
        }
    }

    /// Packed values as a cache holds them (each plus 2).
    pub fn from_bits(bits: Bits) -> Nodes {
        Nodes { bits }
    }

    /// The packed form (for a cache: its words and width).
    pub fn bits(&self) -> &Bits {
        &self.bits
    }

    /// How many values.
    #[inline]
    pub fn len(&self) -> usize {
        self.bits.len()
    }

    /// Whether there is none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }

    /// Value `i`; panics past the end.
    #[inline]
    pub fn get(&self, i: usize) -> u32 {
        unshift(self.bits.get(i))
    }

    /// Value `i`, or `None` past the end.
    #[inline]
    pub fn get_checked(&self, i: usize) -> Option<u32> {
        self.bits.get_checked(i).map(unshift)
    }

    /// Values `range`, in order; panics where it passes the end.
    #[inline]
    pub fn range(&self, range: std::ops::Range<usize>) -> NodeIter<'_> {
        self.bits.row::<u32>(range).iter().map(unshift)
    }

    /// Every value, in order.
    pub fn iter(&self) -> NodeIter<'_> {
        self.range(0..self.len())
    }

    /// Hints the CPU to fetch value `i` (none past the end).
    #[inline]
    pub fn prefetch(&self, i: usize) {
        self.bits.prefetch(i);
    }

    /// The values as `u32`s.
    pub fn to_vec(&self) -> Vec<u32> {
        self.iter().collect()
    }

    /// Changes the values through `f` on them as `u32`s, packed again
    /// (for tests that forge a tree: a copy of the whole array).
    pub fn edit(&mut self, f: impl FnOnce(&mut Vec<u32>)) {
        let mut v = self.to_vec();
        f(&mut v);
        *self = Nodes::from(v);
    }

    /// The bytes held.
    pub fn bytes(&self) -> usize {
        self.bits.bytes()
    }

    /// Whether the words lie in a file map.
    pub fn is_mapped(&self) -> bool {
        self.bits.is_mapped()
    }

    /// Puts the words on disk (`mem::spill`).
    pub fn spill(&mut self, to: &super::spill::Spill) {
        self.bits.spill(to);
    }
}

/// The slots of a [`Nodes`] being written at random (see
/// [`Nodes::scattered`]).
pub struct Slots<'a> {
    words: &'a [AtomicU32],
    len: usize,
    width: u32,
    /// The fill, stored (plus 2).
    fill: u32,
}

impl Slots<'_> {
    /// Writes `value` (below the bound, or a sentinel) at slot `i`, which
    /// holds the fill: written at most once. Panics past the end.
    #[inline]
    pub fn set(&self, i: usize, value: u32) {
        if i >= self.len {
            panic!("slot {i} past the end of {} nodes", self.len);
        }
        let x = value.wrapping_add(SHIFT) ^ self.fill;
        let bit = i * self.width as usize;
        let (word, at) = (bit / 32, bit % 32);
        let wide = (x as u64) << at;
        self.words[word].fetch_xor(wide as u32, Relaxed);
        let high = (wide >> 32) as u32;
        if high != 0 {
            self.words[word + 1].fetch_xor(high, Relaxed);
        }
    }

    /// Hints the CPU to fetch slot `i` (none past the end).
    #[inline]
    pub fn prefetch(&self, i: usize) {
        if i < self.len {
            super::prefetch(&self.words[i * self.width as usize / 32]);
        }
    }
}

impl Nodes {
    /// `len` values, each `fill` unless `write` sets it (once) through the
    /// [`Slots`] it is handed, its values below `bound` or sentinels: packed
    /// from the start at the width `bound` needs, in `spill` where given.
    /// No `u32` array of them is made.
    pub fn scattered(
        len: usize,
        bound: u32,
        fill: u32,
        spill: Option<&super::spill::Spill>,
        write: impl FnOnce(&Slots<'_>),
    ) -> Nodes {
        if len == 0 {
            return Nodes::default();
        }
        let width = super::bits::width_of(bound.saturating_add(SHIFT - 1).max(1));
        let mut words: Scratch<u32> = Scratch::zeroed(super::bits::words_for(len, width), spill);
        let stored = fill.wrapping_add(SHIFT);
        if stored != 0 {
            fill_words(&mut words, len, width, stored);
        }
        write(&Slots {
            words: super::as_atomic(&mut words),
            len,
            width,
            fill: stored,
        });
        let bits = Bits::from_words(words.into_array(), len, width)
            .expect("the words made for these values");
        Nodes { bits }
    }
}

/// Fills the first `len` values of `width` bits of `words` with `value`
/// (below `2^width`), the bits past them left zero. 32 values take
/// exactly `width` words, so the words repeat every `width`.
fn fill_words(words: &mut [u32], len: usize, width: u32, value: u32) {
    let w = width as usize;
    let mut pattern = vec![0u32; w];
    for k in 0..32 {
        let bit = k * w;
        let wide = (value as u64) << (bit % 32);
        pattern[bit / 32] |= wide as u32;
        if bit / 32 + 1 < w {
            pattern[bit / 32 + 1] |= (wide >> 32) as u32;
        }
    }
    let bits = len * w;
    let full = bits / 32;
    words[..full].par_chunks_mut(w << 12).for_each(|c| {
        c.iter_mut()
            .zip(pattern.iter().cycle())
            .for_each(|(x, &p)| *x = p)
    });
    if !bits.is_multiple_of(32) {
        words[full] = pattern[full % w] & ((1u32 << (bits % 32)) - 1);
    }
}

impl From<Vec<u32>> for Nodes {
    fn from(v: Vec<u32>) -> Nodes {
        Nodes::pack(Scratch::from(v))
    }
}

impl std::fmt::Debug for Nodes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Values anywhere in the `u32`s, the two sentinels among them,
        /// read back as they were, one by one and in runs; the width is
        /// that of the largest value other than the sentinels, plus 2.
        #[test]
        fn node_numbers_and_sentinels_read_back(
            v in proptest::collection::vec(
                prop_oneof![
                    0u32..1000,
                    Just(u32::MAX),
                    Just(u32::MAX - 1),
                    0u32..u32::MAX - 1,
                ],
                0..300,
            ),
            cut in 0usize..300,
        ) {
            let p = Nodes::from(v.clone());
            prop_assert_eq!(p.len(), v.len());
            prop_assert_eq!(p.to_vec(), v.clone());
            for (i, &x) in v.iter().enumerate() {
                prop_assert_eq!(p.get(i), x);
            }
            prop_assert_eq!(p.get_checked(v.len()), None);
            let cut = cut.min(v.len());
            prop_assert!(p.range(cut..v.len()).eq(v[cut..].iter().copied()));
            prop_assert!(p.range(0..cut).rev().eq(v[..cut].iter().rev().copied()));
            let top = v
                .iter()
                .filter(|&&x| x < u32::MAX - 1)
                .map(|&x| x + 2)
                .max()
                .unwrap_or(1);
            if !v.is_empty() {
                prop_assert_eq!(p.bits().width(), super::super::bits::width_of(top));
            }
            let again = Bits::from_words(p.bits().words().clone(), v.len(), p.bits().width())
                .map(Nodes::from_bits);
            prop_assert_eq!(again.as_ref(), Ok(&p));
        }
    }

    proptest! {
        /// Values written at random slots from many threads, the rest the
        /// fill, read as the same values packed from a vector; the words
        /// past the values are zero.
        #[test]
        fn scattered_slots_read_as_packed_values(
            (bound, v) in (1u32..5000).prop_flat_map(|bound| (
                Just(bound),
                proptest::collection::vec(
                    prop_oneof![
                        (0..bound).prop_map(Some),
                        Just(Some(u32::MAX - 1)),
                        Just(None),
                    ],
                    0..700,
                ),
            )),
            fill in prop_oneof![Just(u32::MAX), Just(u32::MAX - 1), 0u32..5000],
        ) {
            // A sentinel, or a value below the bound.
            let fill = if fill < u32::MAX - 1 { fill.min(bound - 1) } else { fill };
            let want: Vec<u32> = v.iter().map(|x| x.unwrap_or(fill)).collect();
            let got = Nodes::scattered(v.len(), bound, fill, None, |slots| {
                (0..v.len()).into_par_iter().rev().for_each(|i| {
                    slots.prefetch(i);
                    if let Some(x) = v[i] {
                        slots.set(i, x);
                    }
                });
            });
            prop_assert_eq!(got.to_vec(), want.clone());
            prop_assert_eq!(got.len(), v.len());
            if !v.is_empty() {
                prop_assert_eq!(got.bits().width(), super::super::bits::width_of(bound + 1));
                let used = (v.len() * got.bits().width() as usize).div_ceil(32);
                let words = got.bits().words();
                let bits = v.len() * got.bits().width() as usize;
                if !bits.is_multiple_of(32) {
                    prop_assert_eq!(words[used - 1] >> (bits % 32), 0);
                }
                prop_assert!(words[used..].iter().all(|&w| w == 0));
            }
        }
    }

    #[test]
    #[should_panic(expected = "past the end")]
    fn a_slot_past_the_end_is_refused() {
        Nodes::scattered(3, 10, u32::MAX, None, |slots| slots.set(3, 1));
    }

    /// A tree's worth of indices takes the width of the object count.
    #[test]
    fn ten_million_indices_take_24_bits() {
        let n = 10_000_000u32;
        let p = Nodes::from(vec![n - 1, u32::MAX, u32::MAX - 1, 0]);
        assert_eq!(p.bits().width(), 24);
        assert_eq!(p.to_vec(), vec![n - 1, u32::MAX, u32::MAX - 1, 0]);
    }
}
