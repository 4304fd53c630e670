//! [`Words`]: an array of `u64` values kept in 4 bytes each when every one
//! fits a `u32`, in 8 otherwise. The model's shallow sizes
//! (`model::Sizes`) and the CSR offsets (`model::Offsets`) are these: 4
//! bytes an object less, each, through the whole analysis.

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
}

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
    /// [`From`] for values that never decrease (offsets): the last tells
    /// whether all fit.
    pub fn from_ascending(wide: Vec<u64>) -> Words {
        let fits = wide.last().is_none_or(|&l| l <= u32::MAX as u64);
        Words::narrowed(wide, fits)
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
        }
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        match self {
            Words::Narrow(s) => s.len(),
            Words::Wide(s) => s.len(),
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
        }
    }

    /// Whether they lie in a file map (a reopened cache).
    pub fn is_mapped(&self) -> bool {
        match self {
            Words::Narrow(s) => s.is_mapped(),
            Words::Wide(s) => s.is_mapped(),
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
        }
    }

    /// Every entry added up (in parallel).
    pub fn total(&self) -> u64 {
        match self {
            Words::Narrow(s) => s.par_iter().map(|&x| x as u64).sum(),
            Words::Wide(s) => s.par_iter().sum(),
        }
    }

    /// Every entry added up without overflow (in parallel): what an
    /// importer checks fits a `u64` before any sum of sizes is made.
    pub fn total_wide(&self) -> u128 {
        match self {
            Words::Narrow(s) => s.par_iter().map(|&x| x as u128).sum(),
            Words::Wide(s) => s.par_iter().map(|&x| x as u128).sum(),
        }
    }

    /// Whether every consecutive pair is in order (`w[0] <= w[1]`).
    pub fn ascending(&self) -> bool {
        match self {
            Words::Narrow(o) => o.par_windows(2).all(|w| w[0] <= w[1]),
            Words::Wide(o) => o.par_windows(2).all(|w| w[0] <= w[1]),
        }
    }

    /// Every entry as a `u64` (tests, small heaps).
    pub fn to_vec(&self) -> Vec<u64> {
        self.iter().collect()
    }
}
