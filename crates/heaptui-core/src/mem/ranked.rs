//! A bitset over objects with each set bit's rank (its place among the set
//! bits in index order), for side arrays indexed by rank: a bit an object
//! and 4 bytes a word of 64 (0.19 bytes an object), where an array over
//! every object would take 4 or more bytes each.

/// Bits over `0..n` and, per word of 64, how many bits the words before it
/// hold. Built once from the finished bits; read-only after.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RankedBits {
    bits: Vec<u64>,
    before: Vec<u32>,
    ones: usize,
}

impl RankedBits {
    /// Ranks the finished `bits` (bit `i % 64` of word `i / 64` is `i`).
    pub fn new(bits: Vec<u64>) -> RankedBits {
        let mut before = Vec::with_capacity(bits.len());
        let mut total = 0u32;
        for w in &bits {
            before.push(total);
            total += w.count_ones();
        }
        RankedBits {
            bits,
            before,
            ones: total as usize,
        }
    }

    /// How many bits are set.
    pub fn ones(&self) -> usize {
        self.ones
    }

    /// The bytes its arrays hold, for the memory account.
    pub fn heap_bytes(&self) -> usize {
        self.bits.capacity() * 8 + self.before.capacity() * 4
    }

    /// The rank of `i` where its bit is set, else `None` (also past the
    /// end).
    #[inline]
    pub fn rank(&self, i: u32) -> Option<usize> {
        let (w, b) = (i as usize / 64, i % 64);
        let word = *self.bits.get(w)?;
        (word >> b & 1 != 0)
            .then(|| self.before[w] as usize + (word & ((1u64 << b) - 1)).count_ones() as usize)
    }

    /// How many bits below `i` are set (all of them past the end): the
    /// rank the first set bit at or after `i` has.
    #[inline]
    pub fn ones_before(&self, i: u32) -> usize {
        let (w, b) = (i as usize / 64, i % 64);
        match self.bits.get(w) {
            Some(word) => {
                self.before[w] as usize + (word & ((1u64 << b) - 1)).count_ones() as usize
            }
            None => self.ones,
        }
    }

    /// The set bits in index order (their ranks are 0, 1, 2, …).
    pub fn iter_ones(&self) -> impl Iterator<Item = u32> + '_ {
        self.bits.iter().enumerate().flat_map(|(w, &word)| {
            (0..64u32)
                .filter(move |b| word >> b & 1 != 0)
                .map(move |b| (w * 64) as u32 + b)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::RankedBits;

    #[test]
    fn ranks_are_places_among_the_set_bits() {
        let set = [0u32, 3, 63, 64, 65, 200, 1000];
        let mut bits = vec![0u64; 1001usize.div_ceil(64)];
        for &i in &set {
            bits[i as usize / 64] |= 1 << (i % 64);
        }
        let r = RankedBits::new(bits);
        assert_eq!(r.ones(), set.len());
        for i in 0..1100u32 {
            assert_eq!(r.rank(i), set.iter().position(|&s| s == i), "{i}");
        }
        assert_eq!(r.iter_ones().collect::<Vec<_>>(), set);
        for i in 0..1100u32 {
            assert_eq!(
                r.ones_before(i),
                set.iter().filter(|&&s| s < i).count(),
                "{i}"
            );
        }
    }
}
