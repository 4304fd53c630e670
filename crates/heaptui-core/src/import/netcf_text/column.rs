//! A chunk's column of 64-bit values (references' target ids, type ids,
//! line numbers) held in the narrowest width that keeps them exact while
//! the import runs: each value stored as `(value - base) >> shift`, with
//! `base` the chunk's smallest and `shift` the trailing zero bits all
//! their differences share (ids are addresses: aligned, and a heap's span
//! mostly fits 32 bits), in 2, 4 or 8 bytes. The chunks' columns are what
//! the import holds at its peak, beside the id index.

use crate::mem::spill::Spill;
use crate::mem::Array;

/// The words the values were read in, now holding the stored values
/// laid end to end in the first bytes (narrowed in place and the vector
/// shrunk: no second block, so no free of a large block while the chunks
/// are parsed, which would raise glibc's mmap threshold and leave the
/// later blocks in arenas that keep their pages).
enum Words {
    U32(Array<u32>),
    U64(Array<u64>),
}

/// A column of `u64` values: see the module doc.
pub(super) struct Column {
    base: u64,
    shift: u32,
    /// Bytes per stored value: 2, 4 or 8.
    width: usize,
    len: usize,
    words: Words,
}

impl Default for Column {
    fn default() -> Column {
        Column {
            base: 0,
            shift: 0,
            width: 8,
            len: 0,
            words: Words::U64(Array::default()),
        }
    }
}

/// The narrowing of a column's values: base, shift and width.
fn narrowing(values: impl Iterator<Item = u64> + Clone) -> (u64, u32, usize) {
    let (low, high) = values
        .clone()
        .fold((u64::MAX, 0), |(l, h), v| (l.min(v), h.max(v)));
    if low > high {
        return (0, 0, 2);
    }
    let bits = values.fold(0, |bits, v| bits | (v - low));
    let shift = if bits == 0 { 0 } else { bits.trailing_zeros() };
    let span = (high - low) >> shift;
    let width = if span <= u16::MAX as u64 {
        2
    } else if span <= u32::MAX as u64 {
        4
    } else {
        8
    };
    (low, shift, width)
}

/// Rewrites `words` so that their first bytes hold `store(value)` of each
/// in `width` bytes (native order), then cuts and shrinks the vector to
/// those bytes. Value `i` goes to bytes `width * i ..`, which hold no word
/// not yet read (`width` is at most a word's size), so one pass in order
/// does it.
fn narrow_in_place<W: bytemuck::Pod>(words: &mut Vec<W>, width: usize, store: impl Fn(W) -> u64) {
    let len = words.len();
    for i in 0..len {
        let value = store(words[i]).to_ne_bytes();
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(words.as_mut_slice());
        #[cfg(target_endian = "little")]
        bytes[i * width..(i + 1) * width].copy_from_slice(&value[..width]);
        #[cfg(target_endian = "big")]
        bytes[i * width..(i + 1) * width].copy_from_slice(&value[8 - width..]);
    }
    words.truncate((len * width).div_ceil(std::mem::size_of::<W>()));
    words.shrink_to_fit();
}

impl Column {
    /// The values in the narrowest width that keeps them exact.
    pub(super) fn pack(mut values: Vec<u64>) -> Column {
        let len = values.len();
        let (base, shift, width) = narrowing(values.iter().copied());
        if width < 8 {
            narrow_in_place(&mut values, width, |v| (v - base) >> shift);
        }
        let (base, shift) = if width < 8 { (base, shift) } else { (0, 0) };
        Column {
            base,
            shift,
            width,
            len,
            words: Words::U64(values.into()),
        }
    }

    /// [`Column::pack`] of 32-bit values.
    pub(super) fn pack_u32(mut values: Vec<u32>) -> Column {
        let len = values.len();
        let (base, shift, width) = narrowing(values.iter().map(|&v| v as u64));
        if width < 4 {
            narrow_in_place(&mut values, width, |v| (v as u64 - base) >> shift);
        }
        let (base, shift, width) = if width < 4 {
            (base, shift, width)
        } else {
            (0, 0, 4)
        };
        Column {
            base,
            shift,
            width,
            len,
            words: Words::U32(values.into()),
        }
    }

    /// The number of values.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Value `i` (panics past the end, as indexing does).
    #[inline]
    pub(super) fn get(&self, i: usize) -> u64 {
        assert!(
            i < self.len,
            "column index {i} past its {} values",
            self.len
        );
        let bytes: &[u8] = match &self.words {
            Words::U32(w) => bytemuck::cast_slice(w),
            Words::U64(w) => bytemuck::cast_slice(w),
        };
        let at = i * self.width;
        let stored = match self.width {
            2 => u16::from_ne_bytes([bytes[at], bytes[at + 1]]) as u64,
            4 => u32::from_ne_bytes(bytes[at..at + 4].try_into().unwrap_or_default()) as u64,
            _ => u64::from_ne_bytes(bytes[at..at + 8].try_into().unwrap_or_default()),
        };
        self.base + (stored << self.shift)
    }

    /// The bytes it holds.
    pub(super) fn bytes(&self) -> usize {
        match &self.words {
            Words::U32(w) => w.len() * 4,
            Words::U64(w) => w.len() * 8,
        }
    }

    /// Puts the stored values in a spill file (`mem::spill`).
    pub(super) fn spill(&mut self, to: &Spill) {
        match &mut self.words {
            Words::U32(w) => to.array(w),
            Words::U64(w) => to.array(w),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(values: &[u64]) -> Column {
        let c = Column::pack(values.to_vec());
        assert_eq!(c.len(), values.len());
        for (i, &v) in values.iter().enumerate() {
            assert_eq!(c.get(i), v, "value {i} of {values:x?}");
        }
        c
    }

    #[test]
    fn values_come_back_exactly_in_the_narrowest_width() {
        assert_eq!(round_trip(&[]).bytes(), 0);
        assert_eq!(round_trip(&[7]).bytes(), 8);
        assert_eq!(round_trip(&[u64::MAX; 4]).bytes(), 8);
        assert_eq!(round_trip(&[u64::MAX; 5]).bytes(), 16);
        // Addresses 8 bytes apart over 512 KiB: 2 bytes each.
        let near: Vec<u64> = (0..1000)
            .map(|i| 0x7f3a_1c00_0000 + (i * 7919 % 65536) * 8)
            .collect();
        assert_eq!(round_trip(&near).bytes(), 2000);
        // A heap's span in 8-byte steps: 4 bytes (in whole words).
        let heap = [
            0x7f3a_1c00_0000,
            0x7f3b_1c00_0008,
            0x7f3a_1c00_0010,
            0x7f3a_1c00_0018,
        ];
        assert_eq!(round_trip(&heap).bytes(), 16);
        // Differences with no common alignment past 32 bits: 8 bytes.
        assert_eq!(round_trip(&[0, 1, u64::MAX]).bytes(), 24);
        assert_eq!(round_trip(&[1 << 40, 3, 1 << 33]).bytes(), 24);
        // 32-bit values: in 2 bytes where they fit.
        let lines: Vec<u32> = (0..1001).map(|j| 3 + j / 10).collect();
        let c = Column::pack_u32(lines.clone());
        assert_eq!(c.bytes(), 2004);
        assert!((0..lines.len()).all(|j| c.get(j) == lines[j] as u64));
        let wide = vec![0, u32::MAX, 7];
        let c = Column::pack_u32(wide.clone());
        assert_eq!((c.bytes(), c.get(1), c.get(2)), (12, u32::MAX as u64, 7));
        // Odd spans: every bit kept.
        round_trip(&[u64::MAX, 0, u64::MAX - 1, 1 << 63]);
        round_trip(&[5, 5 + (1 << 32), 5 + (3 << 32)]);
    }
}
