//! [`Ids`]: the objects' ids in about 1.5–2.5 bytes each instead of 8,
//! with exact random access ([`Ids::get`]).
//!
//! Ids are cut into blocks of [`BLOCK`] objects. A block keeps its smallest
//! id (`base`), the trailing zero bits every `id - base` shares (`shift`:
//! the ids' common alignment, 3 for 8-byte aligned addresses) and each id's
//! `(id - base) >> shift` in the narrowest of 1, 2 or 4 bytes that holds
//! the block's largest; a block where even 4 bytes do not suffice (ids
//! spread over more than 2^32 aligned steps, descending by much, hostile)
//! keeps its ids whole, 8 bytes each. Any order, repeats and `u64::MAX`
//! included, reads back exactly; only the width changes.
//!
//! Dumps list objects in address order over long stretches (a JVM region
//! by region, the text format's heaps allocation by allocation, V8 by
//! node id), so a block's 32 ids usually lie within 64 KiB: the 10.1 M
//! text heap takes 1.6 bytes an object, the header of a block (16 bytes)
//! included.
//!
//! The form is what the reopen cache stores, and reading it back maps
//! both arrays in place ([`Ids::from_parts`] checks a block's place and
//! width against the bytes before any read).

use rayon::prelude::*;

use crate::mem::Array;

/// Objects a block holds (the last may hold fewer).
pub const BLOCK: usize = 32;

/// Bytes of an id in each width code.
const WIDTH: [usize; 4] = [1, 2, 4, 8];

/// The objects' ids, read through [`Ids::get`] (see the module doc).
#[derive(Clone, Default)]
pub struct Ids {
    len: usize,
    /// Per block: its base id, then `offset << 8 | shift << 2 | width
    /// code` (offset: where its ids begin in `bytes`).
    heads: Array<u64>,
    /// Every block's ids, each `width` bytes little-endian.
    bytes: Array<u8>,
}

impl std::fmt::Debug for Ids {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ids")
            .field("len", &self.len)
            .field("bytes", &self.bytes())
            .finish()
    }
}

/// Equal when every id is (whatever the blocks' widths).
impl PartialEq for Ids {
    fn eq(&self, other: &Ids) -> bool {
        self.len == other.len && (0..self.len).all(|i| self.get(i) == other.get(i))
    }
}

impl Eq for Ids {}

/// A block's base, shift and width code.
fn head_of(block: &[u64]) -> (u64, u32, u8) {
    let min = block.iter().copied().min().unwrap_or(0);
    let (mut or, mut max) = (0u64, 0u64);
    for &id in block {
        let d = id - min;
        or |= d;
        max = max.max(d);
    }
    let shift = if or == 0 { 0 } else { or.trailing_zeros() };
    match max >> shift {
        0..=0xff => (min, shift, 0),
        0x100..=0xffff => (min, shift, 1),
        0x1_0000..=0xffff_ffff => (min, shift, 2),
        _ => (0, 0, 3),
    }
}

impl From<Vec<u64>> for Ids {
    /// The blocks of `ids` (made in parallel; the vector is freed).
    fn from(ids: Vec<u64>) -> Ids {
        Ids::from(&ids[..])
    }
}

impl From<&[u64]> for Ids {
    fn from(ids: &[u64]) -> Ids {
        let heads: Vec<(u64, u32, u8)> = ids.par_chunks(BLOCK).map(head_of).collect();
        let mut packed: Vec<u64> = Vec::with_capacity(heads.len() * 2);
        let mut sizes = Vec::with_capacity(heads.len());
        let mut offset = 0u64;
        for (b, &(base, shift, code)) in heads.iter().enumerate() {
            let count = BLOCK.min(ids.len() - b * BLOCK);
            packed.push(base);
            packed.push(offset << 8 | (shift as u64) << 2 | code as u64);
            let size = count * WIDTH[code as usize];
            sizes.push(size);
            offset += size as u64;
        }
        let mut bytes: Vec<u8> = crate::mem::zeroed(offset as usize);
        crate::mem::split_by(&mut bytes, sizes)
            .into_par_iter()
            .zip(ids.par_chunks(BLOCK))
            .zip(heads.par_iter())
            .for_each(|((out, block), &(base, shift, code))| {
                let w = WIDTH[code as usize];
                for (o, &id) in out.chunks_exact_mut(w).zip(block) {
                    let d = (id - base) >> shift;
                    o.copy_from_slice(&d.to_le_bytes()[..w]);
                }
            });
        Ids {
            len: ids.len(),
            heads: packed.into(),
            bytes: bytes.into(),
        }
    }
}

impl Ids {
    /// Puts the blocks' heads and ids on disk (`mem::spill`).
    pub fn spill(&mut self, to: &crate::mem::spill::Spill) {
        to.array(&mut self.heads);
        to.array(&mut self.bytes);
    }

    /// The id of object `i` (panics past the end, as indexing does).
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        assert!(i < self.len, "id {i} of {}", self.len);
        let (b, j) = (i / BLOCK, i % BLOCK);
        let (base, head) = (self.heads[2 * b], self.heads[2 * b + 1]);
        let at = (head >> 8) as usize;
        let shift = (head >> 2 & 63) as u32;
        let bytes = &self.bytes[..];
        let d = match head & 3 {
            0 => bytes[at + j] as u64,
            1 => u16::from_le_bytes(word(bytes, at + 2 * j)) as u64,
            2 => u32::from_le_bytes(word(bytes, at + 4 * j)) as u64,
            _ => u64::from_le_bytes(word(bytes, at + 8 * j)),
        };
        base.wrapping_add(d << shift)
    }

    /// The id of object `i`, `None` past the end.
    pub fn try_get(&self, i: usize) -> Option<u64> {
        (i < self.len).then(|| self.get(i))
    }

    /// How many ids.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes the form takes (heads and ids).
    pub fn bytes(&self) -> usize {
        self.heads.len() * 8 + self.bytes.len()
    }

    /// Whether it lies in a file map (a reopened cache).
    pub fn is_mapped(&self) -> bool {
        self.heads.is_mapped() && self.bytes.is_mapped()
    }

    /// Every id, in object order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        (0..self.len).map(move |i| self.get(i))
    }

    /// Every id, in order, as a vector (made in parallel).
    pub fn to_vec(&self) -> Vec<u64> {
        let mut out: Vec<u64> = crate::mem::zeroed(self.len);
        out.par_chunks_mut(BLOCK)
            .enumerate()
            .for_each(|(b, chunk)| {
                for (j, o) in chunk.iter_mut().enumerate() {
                    *o = self.get(b * BLOCK + j);
                }
            });
        out
    }

    /// The two arrays the form is made of, as the cache stores them:
    /// the blocks' heads and their ids' bytes.
    pub fn parts(&self) -> (&Array<u64>, &Array<u8>) {
        (&self.heads, &self.bytes)
    }

    /// `len` ids from [`Ids::parts`] read back (a cache's, maybe mapped);
    /// `Err` where a head's place or width disagrees with the bytes, so
    /// that no [`Ids::get`] can read outside them.
    pub fn from_parts(len: usize, heads: Array<u64>, bytes: Array<u8>) -> Result<Ids, String> {
        let blocks = len.div_ceil(BLOCK);
        if heads.len() != blocks.saturating_mul(2) {
            return Err(format!(
                "{} id block heads for {len} objects",
                heads.len() / 2
            ));
        }
        let mut offset = 0u64;
        for b in 0..blocks {
            let (base, head) = (heads[2 * b], heads[2 * b + 1]);
            let code = (head & 3) as usize;
            if head >> 8 != offset || (code == 3 && (base != 0 || head >> 2 & 63 != 0)) {
                return Err(format!("id block {b} out of place"));
            }
            let count = BLOCK.min(len - b * BLOCK);
            offset += (count * WIDTH[code]) as u64;
        }
        if offset != bytes.len() as u64 {
            return Err(format!("id blocks of {offset} bytes in {}", bytes.len()));
        }
        Ok(Ids { len, heads, bytes })
    }
}

/// The `N` bytes at `at`.
#[inline]
fn word<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    bytes[at..at + N].try_into().expect("N bytes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(ids: &[u64]) -> Ids {
        let c = Ids::from(ids);
        assert_eq!(c.len(), ids.len());
        for (i, &id) in ids.iter().enumerate() {
            assert_eq!(c.get(i), id, "id {i}");
        }
        assert_eq!(c.iter().collect::<Vec<_>>(), ids);
        assert_eq!(c.to_vec(), ids);
        let (heads, bytes) = c.parts();
        let back = Ids::from_parts(ids.len(), heads.clone(), bytes.clone()).unwrap();
        assert_eq!(back, c);
        c
    }

    #[test]
    fn hostile_ids_read_back_exactly() {
        let max = u64::MAX;
        let cases: Vec<Vec<u64>> = vec![
            vec![],
            vec![0],
            vec![max],
            vec![max, 0, max, 0],
            vec![7; 100],
            (0..100).rev().map(|i| 0x1000 + 8 * i).collect(),
            (0..100).map(|i| i << 40).collect(),
            (0..100).map(|i| max - i * 3).collect(),
            (0..65).map(|i| if i % 2 == 0 { max } else { 1 }).collect(),
            (0..100u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
                .collect(),
        ];
        for ids in cases {
            round_trip(&ids);
        }
    }

    #[test]
    fn widths_follow_the_blocks_spans() {
        // One block each: span 255, 256, 65535, 65536, 2^32-1, 2^32 (in
        // 8-byte steps: the shift takes the alignment out).
        for (span, width) in [
            (0xff, 1),
            (0x100, 2),
            (0xffff, 2),
            (0x1_0000, 4),
            (0xffff_ffff, 4),
            (0x1_0000_0000, 8),
        ] {
            let ids: Vec<u64> = (0..BLOCK as u64)
                .map(|j| 0x7f00_0000_0000 + 8 * if j == 5 { span } else { j % 2 })
                .collect();
            let c = round_trip(&ids);
            assert_eq!(c.bytes(), 16 + BLOCK * width, "span {span:x}");
        }
        // Addresses 8 bytes apart: one byte each.
        let dense: Vec<u64> = (0..1000).map(|i| 0x7f3a_0000_0000 + 24 * i).collect();
        let c = round_trip(&dense);
        assert!(c.bytes() <= 1000 * 2 + 32 * 16, "{}", c.bytes());
    }

    #[test]
    fn a_tampered_head_is_refused() {
        let ids: Vec<u64> = (0..100).map(|i| 0x1000 + 8 * i).collect();
        let c = Ids::from(&ids[..]);
        let (heads, bytes) = c.parts();
        assert!(Ids::from_parts(101, heads.clone(), bytes.clone()).is_err());
        assert!(Ids::from_parts(97, heads.clone(), bytes.clone()).is_err());
        let mut h = heads.to_vec();
        h[3] += 1 << 8;
        assert!(Ids::from_parts(100, h.into(), bytes.clone()).is_err());
        let mut h = heads.to_vec();
        h[1] |= 3; // wider than the bytes hold
        assert!(Ids::from_parts(100, h.into(), bytes.clone()).is_err());
        let short: Vec<u8> = bytes[..bytes.len() - 1].to_vec();
        assert!(Ids::from_parts(100, heads.clone(), short.into()).is_err());
    }

    #[test]
    #[should_panic]
    fn past_the_end_panics() {
        Ids::from(&[1u64, 2, 3][..]).get(3);
    }

    proptest! {
        #[test]
        fn any_ids_read_back(
            ids in prop::collection::vec(
                prop_oneof![
                    any::<u64>(),
                    0u64..300,
                    (0u64..1 << 20).prop_map(|x| 0x7f00_0000_0000 + 8 * x),
                    Just(u64::MAX),
                ],
                0..300,
            )
        ) {
            round_trip(&ids);
        }

        #[test]
        fn runs_with_gaps_read_back(
            start in any::<u64>(),
            steps in prop::collection::vec(prop_oneof![0u64..64, 0u64..1 << 20, any::<u64>()], 0..300),
        ) {
            let ids: Vec<u64> = steps
                .iter()
                .scan(start, |at, &s| { *at = at.wrapping_add(s); Some(*at) })
                .collect();
            round_trip(&ids);
        }
    }
}
