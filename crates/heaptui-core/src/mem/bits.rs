//! [`Bits`]: an array of `u32` held at a fixed width of `w` bits each,
//! `w` the bits the largest value needs (at least 1, at most 32), packed
//! back to back: value `i` is bits `i*w .. i*w + w` of the array read as
//! one little-endian bit string. A read ([`Bits::get`], a [`BitRow`]'s
//! iterator) loads the 8 bytes from byte `(i*w)/8` unaligned, shifts right
//! by `(i*w)%8` and masks `w` bits: as `w ≤ 32` and the shift is below 8,
//! those 8 bytes always hold the whole value, so one load suffices. The
//! words are padded so that this load never passes their end: `⌈len·w/32⌉
//! + 2` words of 4 bytes ([`words_for`]).
//!
//! The heap's references ([`crate::model::Csr`]'s targets) are these: an
//! object index needs `⌈log2 objects⌉` bits, 23 or 24 on heaps of 6 to 10
//! million objects, so a reference takes `w/8` bytes (2.9–3 where a `u32`
//! took 4): 13.0 bytes an object became 9.34 on the 519 MB V8 snapshot,
//! 7.18 became 5.39 on the 406 MB HPROF, 10.52 became 7.89 on the 10.1 M
//! text heap.
//!
//! Made from `u32` values in a [`Scratch`] ([`Bits::pack`]) in place: the
//! packed value `i` ends at bit `(i + 1)·w ≤ 32·(i + 1)`, so the words
//! written never pass the value being read, and the buffer is then cut to
//! the packed length (a vector's tail given back to the allocator, a spill
//! file's pages dropped from the resident set as the pass goes). A row is
//! read as a [`BitRow`]: its start bit, its length and the width, `Copy`,
//! decoded sequentially (the bit position kept, one unaligned load per
//! value).

use std::marker::PhantomData;

use rayon::prelude::*;

use super::{Array, Scratch};

/// `len` values of `width` bits each; read through [`Bits::get`] and
/// [`Bits::row`].
#[derive(Clone, Default)]
pub struct Bits {
    /// The packed values and at least 8 bytes of zero padding (little
    /// endian in each word, so the bytes are the bit string in order).
    words: Array<u32>,
    len: usize,
    /// 1 to 32; 0 only when `len` is 0 and nothing was packed.
    width: u32,
}

/// The words [`Bits`] of `len` values of `width` bits take, padding
/// included (none for no value).
pub fn words_for(len: usize, width: u32) -> usize {
    if len == 0 {
        return 0;
    }
    (len as u128 * width as u128).div_ceil(32) as usize + 2
}

/// The bits `value` needs: at least 1.
pub fn width_of(value: u32) -> u32 {
    (32 - value.leading_zeros()).max(1)
}

/// The value of `width` bits at bit `bit` of `bytes`.
///
/// Safety: `bit / 8 + 8 <= bytes.len()`.
#[inline(always)]
unsafe fn load(bytes: &[u8], bit: usize, width: u32) -> u32 {
    debug_assert!(bit / 8 + 8 <= bytes.len());
    // SAFETY: the caller keeps the 8 bytes from `bit / 8` inside `bytes`.
    let word = unsafe { std::ptr::read_unaligned(bytes.as_ptr().add(bit / 8) as *const u64) };
    let x = u64::from_le(word) >> (bit % 8);
    (x & ((1u64 << width) - 1)) as u32
}

/// The panic of a read past the end, kept out of the readers (small
/// enough to inline where rows are read in hot loops).
#[cold]
#[inline(never)]
#[track_caller]
fn past_the_end(at: usize, len: usize) -> ! {
    panic!("{at} past the end of {len} packed values")
}

impl Bits {
    /// Packs the values of `values` in place, at the width of the largest
    /// one, and takes its buffer: a vector is cut to the packed length,
    /// a spill file's pages are dropped as the pass goes.
    pub fn pack(values: Scratch<u32>) -> Bits {
        let width = width_of(max_of(&values));
        Bits::pack_with(values, width)
    }

    /// Packs `values` in place at `width` bits a value (1 to 32), which
    /// each must fit (checked: panics otherwise): a width chosen for
    /// values that [`BitsMut::set`] writes later, above those packed now.
    pub fn pack_at(values: Scratch<u32>, width: u32) -> Bits {
        assert!((1..=32).contains(&width), "a width of {width} bits");
        let max = max_of(&values);
        assert!(width_of(max) <= width, "{max} does not fit in {width} bits");
        Bits::pack_with(values, width)
    }

    /// `len` zeros of `width` bits (1 to 32), to write ([`Bits::edit`]).
    pub fn zeroed(len: usize, width: u32) -> Bits {
        assert!((1..=32).contains(&width), "a width of {width} bits");
        Bits {
            words: Array::from(super::zeroed::<u32>(words_for(len, width))),
            len,
            width: if len == 0 { 0 } else { width },
        }
    }

    /// The values for reading and writing in place ([`BitsMut`]; a mapped
    /// array is copied to memory first, `Array::make_mut`).
    pub fn edit(&mut self) -> BitsMut<'_> {
        BitsMut {
            words: self.words.make_mut(),
            len: self.len,
            width: self.width,
        }
    }

    /// Packs `values` in place at `width` bits, which they fit.
    fn pack_with(mut values: Scratch<u32>, width: u32) -> Bits {
        let len = values.len();
        if len == 0 {
            return Bits::default();
        }
        let used = pack_in_place(&mut values, width);
        let need = words_for(len, width);
        let words = if need <= len {
            values[used..need].fill(0);
            values.release(0..need);
            values.truncate(need);
            if values.is_mapped() {
                values.into_array()
            } else {
                let mut v = values.into_vec();
                v.shrink_to_fit();
                Array::from(v)
            }
        } else {
            // A few values, or a width near 32: the padding needs more
            // words than the values had. Below 32 bits that is fewer than
            // 64 values (`len·(32 − w)/32 < 2`), copied to a vector even
            // from a spill file; at 32 bits (indices past 2^31) every
            // length is.
            let mut v = values[..used].to_vec();
            v.resize(need, 0);
            Array::from(v)
        };
        Bits { words, len, width }
    }

    /// From packed words as a cache holds them; refused unless they are
    /// exactly as long as `len` values of `width` bits take.
    pub fn from_words(words: Array<u32>, len: usize, width: u32) -> Result<Bits, String> {
        let width_ok = if len == 0 {
            width <= 32
        } else {
            (1..=32).contains(&width)
        };
        if !width_ok {
            return Err(format!("a packed width of {width} bits"));
        }
        if words.len() != words_for(len, width) {
            return Err(format!(
                "{} packed words for {len} values of {width} bits, not {}",
                words.len(),
                words_for(len, width)
            ));
        }
        Ok(Bits { words, len, width })
    }

    /// Packed words taken as they are, unchecked (tests of the checks
    /// that refuse them: such a value is only written, never read).
    #[doc(hidden)]
    pub fn from_words_unchecked(words: Array<u32>, len: usize, width: u32) -> Bits {
        Bits { words, len, width }
    }

    /// How many values.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bits each value takes.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// The packed words, padding included (for a cache).
    pub fn words(&self) -> &Array<u32> {
        &self.words
    }

    /// The bytes held.
    pub fn bytes(&self) -> usize {
        self.words.len() * 4
    }

    /// Whether the words lie in a file map.
    pub fn is_mapped(&self) -> bool {
        self.words.is_mapped()
    }

    /// Puts the words on disk (`mem::spill`).
    pub fn spill(&mut self, to: &super::spill::Spill) {
        to.array(&mut self.words);
    }

    #[inline]
    fn as_bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.words)
    }

    /// Value `i`; panics past the end.
    #[inline]
    pub fn get(&self, i: usize) -> u32 {
        if i >= self.len {
            past_the_end(i, self.len);
        }
        // SAFETY: `i < len`, and the words hold `words_for(len, width)`
        // (checked where made), 8 bytes past value `len - 1`'s first byte.
        unsafe { load(self.as_bytes(), i * self.width as usize, self.width) }
    }

    /// Value `i`, or `None` past the end.
    #[inline]
    pub fn get_checked(&self, i: usize) -> Option<u32> {
        (i < self.len).then(|| self.get(i))
    }

    /// Values `range` as a row; panics where it passes the end.
    #[inline]
    pub fn row<T: bytemuck::Pod>(&self, range: std::ops::Range<usize>) -> BitRow<'_, T> {
        if range.start > range.end || range.end > self.len {
            past_the_end(range.end.max(range.start), self.len);
        }
        BitRow {
            bytes: self.as_bytes(),
            start: range.start * self.width as usize,
            len: range.end - range.start,
            width: self.width,
            step: self.width,
            kind: PhantomData,
        }
    }

    /// Every value, in order.
    pub fn iter(&self) -> BitIter<'_, u32> {
        self.row(0..self.len).iter()
    }

    /// Hints the CPU to fetch the word that holds value `i` (none past the
    /// end).
    #[inline]
    pub fn prefetch(&self, i: usize) {
        if i < self.len {
            let bytes = self.as_bytes();
            super::prefetch(&bytes[i * self.width as usize / 8]);
        }
    }

    /// The values as `u32`s.
    pub fn to_vec(&self) -> Vec<u32> {
        self.iter().collect()
    }
}

/// [`Bits`] open for writing ([`Bits::edit`]): values read and written
/// one at a time, in place.
pub struct BitsMut<'a> {
    words: &'a mut [u32],
    len: usize,
    width: u32,
}

impl BitsMut<'_> {
    /// Value `i`; panics past the end (one load, as [`Bits::get`]).
    #[inline]
    pub fn get(&self, i: usize) -> u32 {
        if i >= self.len {
            past_the_end(i, self.len);
        }
        // SAFETY: as in `Bits::get`: the words are those of `len` values.
        unsafe {
            load(
                bytemuck::cast_slice(self.words),
                i * self.width as usize,
                self.width,
            )
        }
    }

    /// The word and bit where value `i` starts.
    #[inline]
    fn place(&self, i: usize) -> (usize, usize) {
        let bit = i * self.width as usize;
        (bit / 32, bit % 32)
    }

    /// Words `word` and `word + 1` as one number.
    #[inline]
    fn pair(&self, word: usize) -> u64 {
        debug_assert!(word + 1 < self.words.len());
        // SAFETY: `word` holds the start of a value below `len`, and the
        // words of `len` values are padded past it (`words_for`).
        let (lo, hi) = unsafe {
            (
                *self.words.get_unchecked(word),
                *self.words.get_unchecked(word + 1),
            )
        };
        u64::from(u32::from_le(lo)) | u64::from(u32::from_le(hi)) << 32
    }

    /// Writes `value` at `i`; panics past the end or where `value` needs
    /// more bits than the width.
    #[inline]
    pub fn set(&mut self, i: usize, value: u32) {
        if i >= self.len {
            past_the_end(i, self.len);
        }
        let width = self.width;
        if width < 32 && value >> width != 0 {
            too_wide(value, width);
        }
        let (word, at) = self.place(i);
        let mask = ((1u64 << width) - 1) << at;
        let new = (self.pair(word) & !mask) | (u64::from(value) << at);
        // SAFETY: as in `pair`.
        unsafe {
            *self.words.get_unchecked_mut(word) = (new as u32).to_le();
            *self.words.get_unchecked_mut(word + 1) = ((new >> 32) as u32).to_le();
        }
    }
}

/// The panic of a write of a value wider than the width.
#[cold]
#[inline(never)]
#[track_caller]
fn too_wide(value: u32, width: u32) -> ! {
    panic!("{value} does not fit in {width} bits")
}

/// The largest of `values` (0 for none), in parallel; the pages of a
/// spill file dropped after.
fn max_of(values: &Scratch<u32>) -> u32 {
    let max = values
        .par_chunks(1 << 16)
        .map(|c| c.iter().copied().max().unwrap_or(0))
        .max()
        .unwrap_or(0);
    values.release(0..values.len());
    max
}

/// Packs `v` in place at `width` bits a value (each below `2^width`):
/// how many words the packed values fill.
fn pack_in_place(v: &mut Scratch<u32>, width: u32) -> usize {
    const BLOCK: usize = 1 << 20;
    let (mut acc, mut bits, mut out) = (0u64, 0u32, 0usize);
    let mut i = 0;
    while i < v.len() {
        let end = (i + BLOCK).min(v.len());
        for k in i..end {
            acc |= (v[k] as u64) << bits;
            bits += width;
            if bits >= 32 {
                // Word `out` ends at bit 32·(out + 1) ≤ (k + 1)·width ≤
                // 32·(k + 1): out ≤ k, a value already read.
                v[out] = (acc as u32).to_le();
                out += 1;
                acc >>= 32;
                bits -= 32;
            }
        }
        v.release(0..out);
        i = end;
    }
    if bits > 0 {
        v[out] = (acc as u32).to_le();
        out += 1;
    }
    out
}

/// Equal when the values are, whatever the width.
impl PartialEq for Bits {
    fn eq(&self, other: &Bits) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl Eq for Bits {}

impl std::fmt::Debug for Bits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl From<Vec<u32>> for Bits {
    fn from(v: Vec<u32>) -> Bits {
        Bits::pack(Scratch::from(v))
    }
}

impl From<Array<u32>> for Bits {
    /// An owned array packed in place; a mapped one copied first.
    fn from(a: Array<u32>) -> Bits {
        Bits::from(a.into_vec())
    }
}

/// Values of a [`Bits`] at a fixed distance, seen as `T` (`u32` or an
/// index type over one): a start bit, a length, the width and the bits
/// from one value to the next (the width for consecutive values, twice
/// it for every other one: [`BitRow::every_other`]), `Copy`.
#[derive(Clone, Copy)]
pub struct BitRow<'a, T = u32> {
    /// The whole array's bytes, padding included.
    bytes: &'a [u8],
    /// The first value's bit.
    start: usize,
    len: usize,
    width: u32,
    /// Bits from one value's start to the next's (at least `width`).
    step: u32,
    kind: PhantomData<T>,
}

impl<'a, T: bytemuck::Pod> BitRow<'a, T> {
    /// How many values.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is none.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Value `i`; panics past the end.
    #[inline]
    pub fn get(&self, i: usize) -> T {
        if i >= self.len {
            past_the_end(i, self.len);
        }
        let bit = self.start + i * self.step as usize;
        // SAFETY: a value of the row, so of the array (see `Bits::get`).
        bytemuck::cast(unsafe { load(self.bytes, bit, self.width) })
    }

    /// Value `i`, or `None` past the end.
    #[inline]
    pub fn get_checked(&self, i: usize) -> Option<T> {
        (i < self.len).then(|| self.get(i))
    }

    /// A row of no value.
    pub fn empty() -> BitRow<'a, T> {
        BitRow {
            bytes: &[],
            start: 0,
            len: 0,
            width: 1,
            step: 1,
            kind: PhantomData,
        }
    }

    /// The first value, if any.
    #[inline]
    pub fn first(&self) -> Option<T> {
        (!self.is_empty()).then(|| self.get(0))
    }

    /// The values, in order (or backwards), decoded one after the other.
    #[inline]
    pub fn iter(&self) -> BitIter<'a, T> {
        BitIter {
            bytes: self.bytes,
            front: self.start,
            back: self.start + self.len * self.step as usize,
            left: self.len,
            width: self.width,
            step: self.step,
            kind: PhantomData,
        }
    }

    /// Values 0, 2, 4, … of the row: a row of every other value, read in
    /// place.
    #[inline]
    pub fn every_other(self) -> BitRow<'a, T> {
        BitRow {
            len: self.len.div_ceil(2),
            step: self.step * 2,
            ..self
        }
    }

    /// Values `range` of the row; panics where it passes the end.
    #[inline]
    pub fn slice(&self, range: std::ops::Range<usize>) -> BitRow<'a, T> {
        if range.start > range.end || range.end > self.len {
            past_the_end(range.end.max(range.start), self.len);
        }
        BitRow {
            start: self.start + range.start * self.step as usize,
            len: range.end - range.start,
            ..*self
        }
    }

    /// The same values as `U` (of the same size).
    #[inline]
    pub fn cast<U: bytemuck::Pod>(self) -> BitRow<'a, U> {
        BitRow {
            bytes: self.bytes,
            start: self.start,
            len: self.len,
            width: self.width,
            step: self.step,
            kind: PhantomData,
        }
    }

    /// Whether `x` is among the values.
    pub fn contains(&self, x: &T) -> bool
    where
        T: PartialEq,
    {
        self.iter().any(|v| v == *x)
    }

    /// The values in a vector.
    pub fn to_vec(&self) -> Vec<T> {
        self.iter().collect()
    }
}

impl<'a, T: bytemuck::Pod> IntoIterator for BitRow<'a, T> {
    type Item = T;
    type IntoIter = BitIter<'a, T>;
    #[inline]
    fn into_iter(self) -> BitIter<'a, T> {
        self.iter()
    }
}

impl<T: bytemuck::Pod + std::fmt::Debug> std::fmt::Debug for BitRow<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: bytemuck::Pod + PartialEq> PartialEq for BitRow<'_, T> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<T: bytemuck::Pod + PartialEq> PartialEq<[T]> for BitRow<'_, T> {
    fn eq(&self, other: &[T]) -> bool {
        self.len == other.len() && self.iter().eq(other.iter().copied())
    }
}

impl<T: bytemuck::Pod + PartialEq> PartialEq<&[T]> for BitRow<'_, T> {
    fn eq(&self, other: &&[T]) -> bool {
        *self == **other
    }
}

impl<T: bytemuck::Pod + PartialEq, const N: usize> PartialEq<&[T; N]> for BitRow<'_, T> {
    fn eq(&self, other: &&[T; N]) -> bool {
        *self == other[..]
    }
}

impl<T: bytemuck::Pod + PartialEq> PartialEq<Vec<T>> for BitRow<'_, T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        *self == other[..]
    }
}

impl<T: bytemuck::Pod + PartialEq> PartialEq<&Vec<T>> for BitRow<'_, T> {
    fn eq(&self, other: &&Vec<T>) -> bool {
        *self == other[..]
    }
}

/// A [`BitRow`]'s values, decoded from the front (the next value's bit
/// kept) or from the back.
#[derive(Clone, Debug)]
pub struct BitIter<'a, T = u32> {
    bytes: &'a [u8],
    front: usize,
    /// The bit a step past the last value not yet taken.
    back: usize,
    left: usize,
    width: u32,
    step: u32,
    kind: PhantomData<T>,
}

impl<T: bytemuck::Pod> Iterator for BitIter<'_, T> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        // SAFETY: a value of the row (see `Bits::get`).
        let x = unsafe { load(self.bytes, self.front, self.width) };
        self.front += self.step as usize;
        Some(bytemuck::cast(x))
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }

    #[inline]
    fn nth(&mut self, n: usize) -> Option<T> {
        let skip = n.min(self.left);
        self.left -= skip;
        self.front += skip * self.step as usize;
        self.next()
    }
}

impl<T: bytemuck::Pod> DoubleEndedIterator for BitIter<'_, T> {
    #[inline]
    fn next_back(&mut self) -> Option<T> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        self.back -= self.step as usize;
        // SAFETY: a value of the row (see `Bits::get`).
        Some(bytemuck::cast(unsafe {
            load(self.bytes, self.back, self.width)
        }))
    }
}

impl<T: bytemuck::Pod> ExactSizeIterator for BitIter<'_, T> {}

impl<T: bytemuck::Pod> std::iter::FusedIterator for BitIter<'_, T> {}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Values below `2^width`, many at the top.
    fn values(width: u32) -> impl Strategy<Value = Vec<u32>> {
        let top = if width == 32 {
            u32::MAX
        } else {
            (1u32 << width) - 1
        };
        proptest::collection::vec(
            prop_oneof![3 => 0..=top, 1 => Just(top), 1 => Just(0u32)],
            0..600,
        )
    }

    fn cases() -> impl Strategy<Value = (Vec<u32>, Vec<usize>)> {
        (1u32..=32).prop_flat_map(|w| {
            values(w).prop_flat_map(|v| {
                let n = v.len();
                (Just(v), proptest::collection::vec(0..=n, 0..8))
            })
        })
    }

    fn check(p: &Bits, v: &[u32], cuts: &[usize]) -> Result<(), TestCaseError> {
        prop_assert_eq!(p.len(), v.len());
        let want = v.iter().copied().max().map_or(0, width_of);
        prop_assert_eq!(p.width(), want);
        prop_assert_eq!(p.words().len(), words_for(v.len(), want));
        prop_assert_eq!(p.to_vec(), v.to_vec());
        for (i, &x) in v.iter().enumerate() {
            prop_assert_eq!(p.get(i), x);
        }
        prop_assert_eq!(p.get_checked(v.len()), None);
        let mut cuts = cuts.to_vec();
        cuts.push(0);
        cuts.push(v.len());
        cuts.sort_unstable();
        for w in cuts.windows(2) {
            let row: BitRow<'_> = p.row(w[0]..w[1]);
            let part = &v[w[0]..w[1]];
            prop_assert_eq!(row.to_vec(), part.to_vec());
            prop_assert_eq!(row.iter().len(), part.len());
            prop_assert!(row.iter().rev().eq(part.iter().rev().copied()));
            prop_assert!(row == part);
            if !part.is_empty() {
                let mid = part.len() / 2;
                prop_assert_eq!(row.get(mid), part[mid]);
                prop_assert_eq!(row.iter().nth(mid), Some(part[mid]));
                prop_assert_eq!(row.slice(mid..part.len()).to_vec(), part[mid..].to_vec());
                let mut it = row.iter();
                prop_assert_eq!(it.next_back(), part.last().copied());
                prop_assert_eq!(it.next(), part.first().copied().filter(|_| part.len() > 1));
            }
            // Every other value, read in place, as the values stepped by 2
            // (and every other of those, stepped by 4).
            let even: Vec<u32> = part.iter().copied().step_by(2).collect();
            let alt = row.every_other();
            prop_assert_eq!(alt.len(), even.len());
            prop_assert_eq!(alt.to_vec(), even.clone());
            prop_assert!(alt.iter().rev().eq(even.iter().rev().copied()));
            for (i, &x) in even.iter().enumerate() {
                prop_assert_eq!(alt.get(i), x);
                prop_assert_eq!(alt.iter().nth(i), Some(x));
                prop_assert_eq!(alt.slice(i..even.len()).to_vec(), even[i..].to_vec());
            }
            let fourth: Vec<u32> = part.iter().copied().step_by(4).collect();
            prop_assert_eq!(alt.every_other().to_vec(), fourth);
        }
        Ok(())
    }

    proptest! {
        /// Random widths (1 to 32) and lengths (0 included), values at
        /// `2^w - 1`: every value and row reads back as the `u32`s, in
        /// memory and packed in a spill file alike.
        #[test]
        fn packed_values_read_back_as_the_u32s((v, cuts) in cases()) {
            let p = Bits::from(v.clone());
            check(&p, &v, &cuts)?;
            prop_assert!(!p.is_mapped());
            let dir = tempfile::tempdir().unwrap();
            let spill = super::super::spill::Spill::open(dir.path(), 1 << 20).unwrap();
            let mut s = spill.scratch::<u32>(v.len());
            s.copy_from_slice(&v);
            let q = Bits::pack(s);
            check(&q, &v, &cuts)?;
            // In place in its file, unless the padding needs more words.
            let in_place = !v.is_empty() && words_for(v.len(), q.width()) <= v.len();
            prop_assert_eq!(q.is_mapped(), in_place);
            prop_assert_eq!(&q, &p);
            let again = Bits::from_words(q.words().clone(), v.len(), q.width());
            prop_assert_eq!(again.as_ref(), Ok(&p));
        }

        /// Values written one at a time in place ([`Bits::edit`]), over
        /// values packed at a wider width than theirs ([`Bits::pack_at`])
        /// or over zeros ([`Bits::zeroed`]), read back as a vector written
        /// alike; the padding stays zero.
        #[test]
        fn values_written_in_place_read_back(
            (v, writes) in cases().prop_flat_map(|(v, _)| {
                let n = v.len().max(1);
                (Just(v), proptest::collection::vec((0..n, any::<u32>()), 0..200))
            }),
            wider in 0u32..3,
        ) {
            let w = v.iter().copied().max().map_or(1, width_of);
            let width = (w + wider).min(32);
            let top = |x: u32| if width == 32 { x } else { x & ((1 << width) - 1) };
            let mut p = Bits::pack_at(Scratch::from(v.clone()), width);
            let mut z = Bits::zeroed(v.len(), width);
            prop_assert_eq!(p.width(), if v.is_empty() { 0 } else { width });
            let (mut want, mut zeros) = (v.clone(), vec![0u32; v.len()]);
            if !v.is_empty() {
                let (mut e, mut f) = (p.edit(), z.edit());
                for &(i, x) in &writes {
                    let x = top(x);
                    e.set(i, x);
                    f.set(i, x);
                    want[i] = x;
                    zeros[i] = x;
                    prop_assert_eq!(e.get(i), x);
                }
            }
            prop_assert_eq!(p.to_vec(), want);
            prop_assert_eq!(z.to_vec(), zeros);
            let used = (v.len() * width as usize).div_ceil(32);
            for b in [&p, &z] {
                prop_assert!(b.words().len() == words_for(v.len(), width) || v.is_empty());
                let tail_bits = v.len() * width as usize % 32;
                if tail_bits != 0 {
                    prop_assert_eq!(b.words()[used - 1] >> tail_bits, 0);
                }
                prop_assert!(b.words()[used.min(b.words().len())..].iter().all(|&x| x == 0));
            }
        }
    }

    #[test]
    #[should_panic(expected = "does not fit")]
    fn a_value_wider_than_the_width_is_refused() {
        let mut b = Bits::zeroed(10, 5);
        b.edit().set(3, 32);
    }

    #[test]
    fn a_million_values_at_every_width_near_the_top() {
        for width in [23, 24, 31, 32] {
            let top = if width == 32 {
                u32::MAX
            } else {
                (1u32 << width) - 1
            };
            let v: Vec<u32> = (0..1_000_003u32)
                .map(|i| i.wrapping_mul(2_654_435_761) & top)
                .chain([top])
                .collect();
            let p = Bits::from(v.clone());
            assert_eq!(p.width(), width);
            assert!(p.iter().eq(v.iter().copied()), "width {width}");
            assert_eq!(p.bytes(), words_for(v.len(), width) * 4);
        }
    }

    #[test]
    fn words_of_the_wrong_length_or_width_are_refused() {
        let p = Bits::from(vec![5u32, 0, 7, 1]);
        let w = p.words().clone();
        assert!(Bits::from_words(w.clone(), 4, 3).is_ok());
        for (len, width) in [(4, 0), (4, 33), (5, 3), (40, 3), (4, 2)] {
            let ok = Bits::from_words(w.clone(), len, width).is_ok();
            assert!(
                !ok || words_for(len, width) == w.len(),
                "{len} values of {width}"
            );
        }
        assert!(Bits::from_words(w.clone(), 4, 33).is_err());
        assert!(Bits::from_words(w, 400, 3).is_err());
        assert!(Bits::from_words(Array::default(), 0, 0).is_ok());
        assert!(Bits::from(Vec::new()).is_empty());
    }
}
