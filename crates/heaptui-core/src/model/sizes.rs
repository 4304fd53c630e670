//! [`Sizes`]: the objects' shallow sizes in 4 bytes each where every one
//! is below 4 GiB (every heap seen: only an array of half a billion longs
//! or more is larger), in 8 otherwise. 4 bytes an object less through the
//! whole analysis than a `u64` each.

use rayon::prelude::*;

use crate::mem::Array;

/// Each object's shallow size in bytes; read through [`Sizes::get`].
#[derive(Debug, Clone)]
pub enum Sizes {
    /// Every size below 4 GiB.
    Narrow(Array<u32>),
    /// Some object of 4 GiB or more.
    Wide(Array<u64>),
}

impl Default for Sizes {
    fn default() -> Sizes {
        Sizes::Narrow(Array::default())
    }
}

/// Equal when every object's size is, whatever the width.
impl PartialEq for Sizes {
    fn eq(&self, other: &Sizes) -> bool {
        match (self, other) {
            (Sizes::Narrow(a), Sizes::Narrow(b)) => a[..] == b[..],
            (Sizes::Wide(a), Sizes::Wide(b)) => a[..] == b[..],
            _ => self.len() == other.len() && (0..self.len()).all(|i| self.get(i) == other.get(i)),
        }
    }
}

impl Eq for Sizes {}

impl From<Vec<u64>> for Sizes {
    /// The narrow form where every size fits (made in parallel; the vector
    /// is freed), else the vector itself.
    fn from(wide: Vec<u64>) -> Sizes {
        if wide.par_iter().any(|&s| s > u32::MAX as u64) {
            return Sizes::Wide(wide.into());
        }
        let mut narrow: Vec<u32> = crate::mem::zeroed(wide.len());
        narrow
            .par_chunks_mut(1 << 16)
            .zip(wide.par_chunks(1 << 16))
            .for_each(|(out, w)| {
                for (o, &x) in out.iter_mut().zip(w) {
                    *o = x as u32;
                }
            });
        Sizes::Narrow(narrow.into())
    }
}

impl Sizes {
    /// Object `i`'s size (panics past the end, as indexing does).
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        match self {
            Sizes::Narrow(s) => s[i] as u64,
            Sizes::Wide(s) => s[i],
        }
    }

    /// How many objects.
    pub fn len(&self) -> usize {
        match self {
            Sizes::Narrow(s) => s.len(),
            Sizes::Wide(s) => s.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes the sizes take.
    pub fn bytes(&self) -> usize {
        match self {
            Sizes::Narrow(s) => s.len() * 4,
            Sizes::Wide(s) => s.len() * 8,
        }
    }

    /// Whether they lie in a file map (a reopened cache).
    pub fn is_mapped(&self) -> bool {
        match self {
            Sizes::Narrow(s) => s.is_mapped(),
            Sizes::Wide(s) => s.is_mapped(),
        }
    }

    /// Every size, in object order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }

    /// The sizes of objects `range`, added up.
    pub fn sum_of(&self, range: std::ops::Range<usize>) -> u64 {
        match self {
            Sizes::Narrow(s) => s[range].iter().map(|&x| x as u64).sum(),
            Sizes::Wide(s) => s[range].iter().sum(),
        }
    }

    /// Every size added up (in parallel).
    pub fn total(&self) -> u64 {
        match self {
            Sizes::Narrow(s) => s.par_iter().map(|&x| x as u64).sum(),
            Sizes::Wide(s) => s.par_iter().sum(),
        }
    }

    /// Every size added up without overflow (in parallel): what an
    /// importer checks fits a `u64` before any sum of sizes is made.
    pub fn total_wide(&self) -> u128 {
        match self {
            Sizes::Narrow(s) => s.par_iter().map(|&x| x as u128).sum(),
            Sizes::Wide(s) => s.par_iter().map(|&x| x as u128).sum(),
        }
    }

    /// Every size as a `u64` (tests, small heaps).
    pub fn to_vec(&self) -> Vec<u64> {
        self.iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Sizes;

    #[test]
    fn sizes_are_narrow_below_4_gib_and_wide_from_it() {
        let max = u32::MAX as u64;
        for (big, narrow) in [(0, true), (max, true), (max + 1, false), (1 << 48, false)] {
            let s = Sizes::from(vec![7, big, 0]);
            assert_eq!(matches!(s, Sizes::Narrow(_)), narrow, "{big}");
            assert_eq!(s.to_vec(), [7, big, 0]);
            assert_eq!(
                (s.get(1), s.len(), s.bytes()),
                (big, 3, if narrow { 12 } else { 24 })
            );
            assert_eq!(
                (s.total(), s.sum_of(0..2), s.sum_of(2..3)),
                (7 + big, 7 + big, 0)
            );
        }
        assert!(Sizes::from(Vec::new()).is_empty());
        assert_eq!(Sizes::default(), Sizes::from(Vec::new()));
    }

    #[test]
    fn the_two_widths_compare_by_value() {
        let narrow = Sizes::from(vec![1, 2, 3]);
        let wide = Sizes::Wide(vec![1, 2, 3].into());
        assert_eq!(narrow, wide);
        assert_ne!(narrow, Sizes::Wide(vec![1, 2, 4].into()));
        assert_ne!(narrow, Sizes::from(vec![1, 2]));
    }
}
