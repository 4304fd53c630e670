//! [`Capped`]: `u64` values in 4 bytes each, the few that do not fit
//! (`u32::MAX` and above) in a side table of (index, value) sorted by
//! index; or 8 bytes each where so many do not fit that the table would
//! cost more. The dominator tree's retained bytes are these: only the
//! subtrees of 4 GiB or more (the few near the roots of a big heap) are
//! wide.
//!
//! Unlike [`super::Words`], one value past `u32::MAX` does not widen them
//! all: a heap of 5 GB has its super-root's children and their dominators
//! above 4 GiB, and its millions of other objects below.

use rayon::prelude::*;

use super::Array;

/// A value in the narrow array that says "see the side table".
const ESCAPE: u32 = u32::MAX;

/// `u64` values in 4 bytes each with a side table for the large ones, or
/// in 8 bytes each; read through [`Capped::get`].
#[derive(Debug, Clone)]
pub enum Capped {
    /// Values below `u32::MAX` in place; the others [`ESCAPE`] there and
    /// in `big` as `index, value` pairs (two words each), by index.
    Narrow {
        /// Every value, or `u32::MAX` for those in `big`.
        small: Array<u32>,
        /// `index, value`, by index, for every value of `u32::MAX` or more.
        big: Array<u64>,
    },
    /// Every value in 8 bytes.
    Wide(Array<u64>),
}

impl Default for Capped {
    fn default() -> Capped {
        Capped::Wide(Array::default())
    }
}

/// Equal when every value is, whatever the form.
impl PartialEq for Capped {
    fn eq(&self, other: &Capped) -> bool {
        self.len() == other.len() && (0..self.len()).all(|i| self.get(i) == other.get(i))
    }
}

impl Eq for Capped {}

impl From<Vec<u64>> for Capped {
    /// The narrow form unless more than a third of the values are large.
    fn from(wide: Vec<u64>) -> Capped {
        let large = wide.par_iter().filter(|&&x| x >= ESCAPE as u64).count();
        if Capped::prefers_wide(wide.len(), large) {
            return Capped::Wide(wide.into());
        }
        let small: Vec<u32> = wide
            .par_iter()
            .map(|&x| x.min(ESCAPE as u64) as u32)
            .collect();
        let big: Vec<u64> = wide
            .iter()
            .enumerate()
            .filter(|&(_, &x)| x >= ESCAPE as u64)
            .flat_map(|(i, &x)| [i as u64, x])
            .collect();
        Capped::Narrow {
            small: small.into(),
            big: big.into(),
        }
    }
}

impl Capped {
    /// Whether `len` values of which `large` are `u32::MAX` or more take
    /// less room in 8 bytes each than in 4 with a table of 16 a large one.
    pub fn prefers_wide(len: usize, large: usize) -> bool {
        large.saturating_mul(16) > len.saturating_mul(4)
    }

    /// The narrow form from its parts: `small` with [`u32::MAX`] where a
    /// value is in `big` (`(index, value)` pairs, any order; sorted here).
    /// `Err` where the two disagree (an escape without its pair, a pair
    /// that is not large or whose place holds no escape, an index twice).
    pub fn from_parts(small: Array<u32>, big: Vec<(u32, u64)>) -> Result<Capped, String> {
        let mut big = big;
        big.par_sort_unstable();
        Capped::checked(
            small,
            big.iter().flat_map(|&(i, x)| [i as u64, x]).collect(),
        )
    }

    /// [`Capped::Narrow`] from a cache's arrays, checked as
    /// [`Capped::from_parts`] says (pairs by index, each once).
    pub fn checked(small: Array<u32>, big: Array<u64>) -> Result<Capped, String> {
        if !big.len().is_multiple_of(2) {
            return Err("an odd side table".into());
        }
        let pairs_ok = big.chunks_exact(2).enumerate().all(|(k, p)| {
            let (i, x) = (p[0], p[1]);
            (i as usize) < small.len()
                && small[i as usize] == ESCAPE
                && x >= ESCAPE as u64
                && (k == 0 || big[2 * k - 2] < i)
        });
        let escapes = small.par_iter().filter(|&&x| x == ESCAPE).count();
        if !pairs_ok || escapes != big.len() / 2 {
            return Err("the side table disagrees with the values".into());
        }
        Ok(Capped::Narrow { small, big })
    }

    /// Asks the CPU to bring value `i`'s cache line in (a hint for walks
    /// that read at random; nothing past the end).
    #[inline]
    pub fn prefetch(&self, i: usize) {
        match self {
            Capped::Narrow { small, .. } => small.get(i).map(crate::mem::prefetch),
            Capped::Wide(w) => w.get(i).map(crate::mem::prefetch),
        };
    }

    /// Value `i` (panics past the end, as indexing does).
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        match self {
            Capped::Narrow { small, big } => match small[i] {
                ESCAPE => {
                    let pairs = big.len() / 2;
                    let at = partition(pairs, |k| big[2 * k] < i as u64);
                    big[2 * at + 1]
                }
                x => x as u64,
            },
            Capped::Wide(w) => w[i],
        }
    }

    /// How many values.
    pub fn len(&self) -> usize {
        match self {
            Capped::Narrow { small, .. } => small.len(),
            Capped::Wide(w) => w.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many values the side table holds (0 in the wide form).
    pub fn large(&self) -> usize {
        match self {
            Capped::Narrow { big, .. } => big.len() / 2,
            Capped::Wide(_) => 0,
        }
    }

    /// The bytes the values take.
    pub fn bytes(&self) -> usize {
        match self {
            Capped::Narrow { small, big } => small.len() * 4 + big.len() * 8,
            Capped::Wide(w) => w.len() * 8,
        }
    }

    /// Whether the values lie in a file map (a reopened cache).
    pub fn is_mapped(&self) -> bool {
        match self {
            Capped::Narrow { small, .. } => small.is_mapped(),
            Capped::Wide(w) => w.is_mapped(),
        }
    }

    /// Every value, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }

    /// Every value as a `u64` (tests, small arrays).
    pub fn to_vec(&self) -> Vec<u64> {
        self.iter().collect()
    }
}

/// The first `k` in `0..len` where `before(k)` is false (`before` true on
/// a prefix).
#[inline]
fn partition(len: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const EDGE: u64 = u32::MAX as u64;

    fn round_trip(v: &[u64]) -> Capped {
        let c = Capped::from(v.to_vec());
        assert_eq!(c.to_vec(), v);
        assert_eq!(c.len(), v.len());
        if let Capped::Narrow { small, big } = &c {
            let back = Capped::checked(small.clone(), big.clone()).unwrap();
            assert_eq!(back, c);
            let pairs: Vec<(u32, u64)> = big.chunks(2).rev().map(|p| (p[0] as u32, p[1])).collect();
            assert_eq!(Capped::from_parts(small.clone(), pairs).unwrap(), c);
        }
        c
    }

    #[test]
    fn values_at_the_edge_of_4_bytes() {
        let mut v = vec![0, 1, EDGE - 1, EDGE, EDGE + 1, 1 << 40, u64::MAX];
        v.extend(0..13);
        let c = round_trip(&v);
        assert_eq!(c.large(), 4, "2^32-1 and above go to the table");
        assert_eq!(c.bytes(), 20 * 4 + 4 * 16);
        assert!(matches!(c, Capped::Narrow { .. }));
    }

    #[test]
    fn many_large_values_take_the_wide_form() {
        let v: Vec<u64> = (0..100)
            .map(|i| if i % 3 == 0 { EDGE + i } else { i })
            .collect();
        let c = round_trip(&v);
        assert!(matches!(c, Capped::Wide(_)));
        let v: Vec<u64> = (0..100)
            .map(|i| if i % 5 == 0 { EDGE + i } else { i })
            .collect();
        assert!(matches!(round_trip(&v), Capped::Narrow { .. }));
        assert!(round_trip(&[]).is_empty());
    }

    #[test]
    fn a_side_table_that_disagrees_is_refused() {
        let small: Array<u32> = vec![1, ESCAPE, 3, ESCAPE].into();
        let ok = |big: Vec<u64>| Capped::checked(small.clone(), big.into()).is_ok();
        assert!(ok(vec![1, EDGE, 3, 1 << 40]));
        assert!(!ok(vec![1, EDGE]), "an escape without its pair");
        assert!(!ok(vec![3, 1 << 40, 1, EDGE]), "out of order");
        assert!(!ok(vec![1, EDGE, 1, EDGE]), "an index twice");
        assert!(!ok(vec![1, EDGE, 2, 1 << 40]), "a pair where no escape is");
        assert!(
            !ok(vec![1, EDGE - 1, 3, 1 << 40]),
            "a small value in the table"
        );
        assert!(!ok(vec![1, EDGE, 9, 1 << 40]), "past the end");
        assert!(!ok(vec![1, EDGE, 3]), "odd");
        assert!(Capped::from_parts(small.clone(), vec![(3, 1 << 40), (1, EDGE)]).is_ok());
    }

    proptest! {
        #[test]
        fn any_values_read_back(
            v in prop::collection::vec(
                prop_oneof![
                    8 => 0u64..1 << 20,
                    1 => EDGE - 2..EDGE + 2,
                    1 => any::<u64>(),
                ],
                0..200,
            )
        ) {
            round_trip(&v);
        }
    }
}
