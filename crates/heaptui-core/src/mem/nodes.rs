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
//! packed in place, so that building one never holds two copies.

use rayon::prelude::*;

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

    /// A tree's worth of indices takes the width of the object count.
    #[test]
    fn ten_million_indices_take_24_bits() {
        let n = 10_000_000u32;
        let p = Nodes::from(vec![n - 1, u32::MAX, u32::MAX - 1, 0]);
        assert_eq!(p.bits().width(), 24);
        assert_eq!(p.to_vec(), vec![n - 1, u32::MAX, u32::MAX - 1, 0]);
    }
}
