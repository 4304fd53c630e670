//! [`Sizes`]: the objects' shallow sizes in the narrowest of four forms,
//! the one that takes the fewest bytes for the heap at hand:
//!
//! - 1 byte an object, the sizes of 255 or more in a side table of
//!   (index, value) pairs sorted by index (16 bytes each), the byte
//!   holding [`u8::MAX`] there;
//! - 2 bytes an object, likewise from 65,535;
//! - 4 bytes an object where every size is below 4 GiB;
//! - 8 bytes an object.
//!
//! Most objects of every format are small (a few dozen bytes; the arrays
//! and strings of a few KiB are the exceptions), so nearly every heap gets
//! 1 or 2 bytes an object where a `u32` each took 4. A size in the side
//! table costs a binary search; the choice counts each at 16 bytes plus 8
//! for that time ([`Sizes::from`]), so a form whose table would be large
//! is not taken. Built in memory from the importer's `u64` sizes, or in a
//! spill file ([`Sizes::from_scratch`]) within a memory budget; the HPROF
//! importer writes its sizes 2 bytes each as [`Sizes::Half`] keeps them
//! ([`Sizes::from_half`]), 6 bytes an object less at its peak.

use rayon::prelude::*;

use crate::mem::spill::Spill;
use crate::mem::{Array, Scratch};

/// Each object's shallow size in bytes; read through [`Sizes::get`].
#[derive(Debug, Clone)]
pub enum Sizes {
    /// One byte each; [`u8::MAX`] for the sizes in `big`.
    Byte {
        /// Every size below 255, or 255 for those in `big`.
        small: Array<u8>,
        /// `index, value` pairs (two words each), by index, for every size
        /// of 255 or more.
        big: Array<u64>,
    },
    /// Two bytes each; [`u16::MAX`] for the sizes in `big`.
    Half {
        /// Every size below 65,535, or 65,535 for those in `big`.
        small: Array<u16>,
        /// `index, value` pairs, by index, for every size of 65,535 or more.
        big: Array<u64>,
    },
    /// Four bytes each: every size is below 4 GiB.
    Narrow(Array<u32>),
    /// Eight bytes each.
    Wide(Array<u64>),
}

impl Default for Sizes {
    fn default() -> Sizes {
        Sizes::Narrow(Array::default())
    }
}

/// Equal when every size is, whatever the form.
impl PartialEq for Sizes {
    fn eq(&self, other: &Sizes) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Sizes {}

/// A narrow element with an escape value that sends a read to the side
/// table.
trait Small: bytemuck::Pod + Send + Sync + Copy + Eq {
    const ESCAPE: Self;
    const LIMIT: u64;
    fn cut(x: u64) -> Self;
    fn wide(self) -> u64;
}

impl Small for u8 {
    const ESCAPE: u8 = u8::MAX;
    const LIMIT: u64 = u8::MAX as u64;
    #[inline]
    fn cut(x: u64) -> u8 {
        x.min(Self::LIMIT) as u8
    }
    #[inline]
    fn wide(self) -> u64 {
        self as u64
    }
}

impl Small for u16 {
    const ESCAPE: u16 = u16::MAX;
    const LIMIT: u64 = u16::MAX as u64;
    #[inline]
    fn cut(x: u64) -> u16 {
        x.min(Self::LIMIT) as u16
    }
    #[inline]
    fn wide(self) -> u64 {
        self as u64
    }
}

/// Which form holds a heap's sizes the smallest, from how many there are
/// and how many reach each form's limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Byte,
    Half,
    Narrow,
    Wide,
}

/// What a side table's entry is counted at when choosing: its 16 bytes
/// and 8 for the binary search each read of it costs.
const ENTRY_COST: usize = 24;

/// How many sizes reach 255, 65,535 and 2^32.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    byte: usize,
    half: usize,
    wide: usize,
}

impl Counts {
    fn of(sizes: &[u64]) -> Counts {
        Counts::of_each(sizes.len(), &|i| sizes[i])
    }

    /// [`Counts::of`] the `len` sizes `at(i)`.
    fn of_each(len: usize, at: &(impl Fn(usize) -> u64 + Sync)) -> Counts {
        (0..len.div_ceil(1 << 16))
            .into_par_iter()
            .map(|b| {
                let mut k = Counts::default();
                for x in (b << 16..len.min((b + 1) << 16)).map(at) {
                    k.byte += (x >= u8::LIMIT) as usize;
                    k.half += (x >= u16::LIMIT) as usize;
                    k.wide += (x > u32::MAX as u64) as usize;
                }
                k
            })
            .reduce(Counts::default, |a, b| Counts {
                byte: a.byte + b.byte,
                half: a.half + b.half,
                wide: a.wide + b.wide,
            })
    }

    fn form(self, n: usize) -> Form {
        let byte = n.saturating_add(self.byte.saturating_mul(ENTRY_COST));
        let half = n
            .saturating_mul(2)
            .saturating_add(self.half.saturating_mul(ENTRY_COST));
        let plain = if self.wide == 0 {
            (n.saturating_mul(4), Form::Narrow)
        } else {
            (n.saturating_mul(8), Form::Wide)
        };
        [(byte, Form::Byte), (half, Form::Half), plain]
            .into_iter()
            .min_by_key(|&(b, _)| b)
            .map_or(Form::Wide, |(_, f)| f)
    }
}

impl From<Vec<u64>> for Sizes {
    /// The smallest form (the vector is freed).
    fn from(wide: Vec<u64>) -> Sizes {
        match Counts::of(&wide).form(wide.len()) {
            Form::Byte => {
                let (small, big) = escaped::<u8>(&wide, None);
                Sizes::Byte { small, big }
            }
            Form::Half => {
                let (small, big) = escaped::<u16>(&wide, None);
                Sizes::Half { small, big }
            }
            Form::Narrow => Sizes::Narrow(
                wide.par_iter()
                    .map(|&x| x as u32)
                    .collect::<Vec<u32>>()
                    .into(),
            ),
            Form::Wide => Sizes::Wide(wide.into()),
        }
    }
}

/// `wide` cut to `T` (made in `spill` where given, each block's pages
/// released after it), and the side table of those at `T`'s limit or
/// above.
fn escaped<T: Small>(wide: &[u64], spill: Option<&Spill>) -> (Array<T>, Array<u64>) {
    escaped_each(wide.len(), &|i| wide[i], spill)
}

/// [`escaped`] for the `len` sizes `at(i)`.
fn escaped_each<T: Small>(
    len: usize,
    at: &(impl Fn(usize) -> u64 + Sync),
    spill: Option<&Spill>,
) -> (Array<T>, Array<u64>) {
    const BLOCK: usize = 1 << 20;
    let mut small: Scratch<T> = Scratch::zeroed(len, spill);
    let blocks = len.div_ceil(BLOCK);
    let lens = (0..blocks).map(|b| BLOCK.min(len - b * BLOCK));
    let big: Vec<Vec<u64>> = small
        .parts(lens)
        .into_par_iter()
        .enumerate()
        .map(|(b, mut out)| {
            let first = b * BLOCK;
            let mut big = Vec::new();
            for (i, o) in (first..).zip(out.iter_mut()) {
                let x = at(i);
                *o = T::cut(x);
                if x >= T::LIMIT {
                    big.extend([i as u64, x]);
                }
            }
            out.release();
            big
        })
        .collect();
    (small.into_array(), big.concat().into())
}

/// The side table's value for index `i` (which holds an escape).
#[inline]
fn side(big: &[u64], i: usize) -> u64 {
    let pairs = big.len() / 2;
    let (mut lo, mut hi) = (0, pairs);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if big[2 * mid] < i as u64 {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    big[2 * lo + 1]
}

/// `out[i] = at(i)` for every `i` (in parallel).
fn fill<T: bytemuck::Pod + Send>(out: &mut [T], at: impl Fn(usize) -> T + Sync) {
    out.par_chunks_mut(1 << 16)
        .enumerate()
        .for_each(|(b, out)| {
            for (i, o) in (b << 16..).zip(out.iter_mut()) {
                *o = at(i);
            }
        });
}

/// The value paired with index `i` in `big` (pairs by index), if any.
fn pair_of(big: &[u64], i: usize) -> Option<u64> {
    let (pairs, _) = big.as_chunks::<2>();
    let k = pairs.binary_search_by_key(&(i as u64), |p| p[0]).ok()?;
    Some(pairs[k][1])
}

/// `small` and its side table checked as a cache's are: pairs by index,
/// each at an escape and at the limit or above, as many as the escapes.
fn check<T: Small>(small: &[T], big: &[u64]) -> Result<(), String> {
    if !big.len().is_multiple_of(2) {
        return Err("an odd side table of sizes".into());
    }
    let pairs_ok = big.chunks_exact(2).enumerate().all(|(k, p)| {
        let (i, x) = (p[0], p[1]);
        (i as usize) < small.len()
            && small[i as usize] == T::ESCAPE
            && x >= T::LIMIT
            && (k == 0 || big[2 * k - 2] < i)
    });
    let escapes = small.par_iter().filter(|&&x| x == T::ESCAPE).count();
    if !pairs_ok || escapes != big.len() / 2 {
        return Err("the sizes' side table disagrees with the sizes".into());
    }
    Ok(())
}

impl Sizes {
    /// [`From`] for sizes built in a [`Scratch`]: the smallest form, made
    /// in `spill` where given (block by block, the pages of each block
    /// read and written released after it).
    pub fn from_scratch(wide: Scratch<u64>, spill: Option<&Spill>) -> Sizes {
        if !wide.is_mapped() && spill.is_none() {
            return Sizes::from(wide.into_vec());
        }
        let sizes = match Counts::of(&wide).form(wide.len()) {
            Form::Byte => {
                let (small, big) = escaped::<u8>(&wide, spill);
                Sizes::Byte { small, big }
            }
            Form::Half => {
                let (small, big) = escaped::<u16>(&wide, spill);
                Sizes::Half { small, big }
            }
            Form::Narrow => {
                let mut narrow: Scratch<u32> = Scratch::zeroed(wide.len(), spill);
                narrow
                    .par_chunks_mut(1 << 16)
                    .zip(wide.par_chunks(1 << 16))
                    .for_each(|(out, w)| {
                        for (o, &x) in out.iter_mut().zip(w) {
                            *o = x as u32;
                        }
                    });
                Sizes::Narrow(narrow.into_array())
            }
            Form::Wide => return Sizes::Wide(wide.into_array()),
        };
        wide.release(0..wide.len());
        sizes
    }

    /// The smallest form (the one [`From`] takes for the same sizes) of
    /// sizes written as [`Sizes::Half`]'s are: `small[i]`, or where it
    /// holds [`u16::MAX`], the size paired with `i` in `big` (index, size
    /// pairs by index; every size of 65,535 or more has one). An importer
    /// writes these at a quarter of the bytes of `u64`s; made in `spill`
    /// where given.
    pub fn from_half(small: Scratch<u16>, big: Vec<u64>, spill: Option<&Spill>) -> Sizes {
        let len = small.len();
        let at = |i: usize| match small[i] {
            u16::MAX => pair_of(&big, i).unwrap_or(u16::MAX as u64),
            x => x as u64,
        };
        let sizes = match Counts::of_each(len, &at).form(len) {
            Form::Byte => {
                let (small, big) = escaped_each::<u8>(len, &at, spill);
                Sizes::Byte { small, big }
            }
            // The form they were written in.
            Form::Half => {
                return Sizes::Half {
                    small: small.into_array(),
                    big: big.into(),
                }
            }
            Form::Narrow => {
                let mut narrow: Scratch<u32> = Scratch::zeroed(len, spill);
                fill(&mut narrow, |i| at(i) as u32);
                Sizes::Narrow(narrow.into_array())
            }
            Form::Wide => {
                let mut wide: Scratch<u64> = Scratch::zeroed(len, spill);
                fill(&mut wide, at);
                Sizes::Wide(wide.into_array())
            }
        };
        small.release(0..len);
        sizes
    }

    /// [`Sizes::Byte`] from a cache's arrays, checked (every escape has
    /// its pair, in order of index, each at 255 or above).
    pub fn checked_byte(small: Array<u8>, big: Array<u64>) -> Result<Sizes, String> {
        check(&small, &big)?;
        Ok(Sizes::Byte { small, big })
    }

    /// [`Sizes::Half`] from a cache's arrays, checked likewise.
    pub fn checked_half(small: Array<u16>, big: Array<u64>) -> Result<Sizes, String> {
        check(&small, &big)?;
        Ok(Sizes::Half { small, big })
    }

    /// Asks the CPU to bring size `i`'s cache line in (a hint for walks
    /// that read at random; nothing past the end).
    #[inline]
    pub fn prefetch(&self, i: usize) {
        use crate::mem::prefetch;
        match self {
            Sizes::Byte { small, .. } => small.get(i).map(prefetch),
            Sizes::Half { small, .. } => small.get(i).map(prefetch),
            Sizes::Narrow(s) => s.get(i).map(prefetch),
            Sizes::Wide(s) => s.get(i).map(prefetch),
        };
    }

    /// Size `i` (panics past the end, as indexing does).
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        match self {
            Sizes::Byte { small, big } => match small[i] {
                u8::MAX => side(big, i),
                x => x as u64,
            },
            Sizes::Half { small, big } => match small[i] {
                u16::MAX => side(big, i),
                x => x as u64,
            },
            Sizes::Narrow(s) => s[i] as u64,
            Sizes::Wide(s) => s[i],
        }
    }

    /// How many sizes.
    pub fn len(&self) -> usize {
        match self {
            Sizes::Byte { small, .. } => small.len(),
            Sizes::Half { small, .. } => small.len(),
            Sizes::Narrow(s) => s.len(),
            Sizes::Wide(s) => s.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many sizes the side table holds (none in the plain forms).
    pub fn large(&self) -> usize {
        match self {
            Sizes::Byte { big, .. } | Sizes::Half { big, .. } => big.len() / 2,
            Sizes::Narrow(_) | Sizes::Wide(_) => 0,
        }
    }

    /// The bytes the sizes take, side table included.
    pub fn bytes(&self) -> usize {
        match self {
            Sizes::Byte { small, big } => small.len() + big.len() * 8,
            Sizes::Half { small, big } => small.len() * 2 + big.len() * 8,
            Sizes::Narrow(s) => s.len() * 4,
            Sizes::Wide(s) => s.len() * 8,
        }
    }

    /// Whether they lie in a file map (a reopened cache, a spill).
    pub fn is_mapped(&self) -> bool {
        match self {
            Sizes::Byte { small, .. } => small.is_mapped(),
            Sizes::Half { small, .. } => small.is_mapped(),
            Sizes::Narrow(s) => s.is_mapped(),
            Sizes::Wide(s) => s.is_mapped(),
        }
    }

    /// Puts the sizes on disk (`mem::spill`), side table included.
    pub fn spill(&mut self, to: &Spill) {
        match self {
            Sizes::Byte { small, big } => {
                to.array(small);
                to.array(big);
            }
            Sizes::Half { small, big } => {
                to.array(small);
                to.array(big);
            }
            Sizes::Narrow(a) => to.array(a),
            Sizes::Wide(a) => to.array(a),
        }
    }

    /// Every size, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }

    /// The sizes `range`, added up.
    pub fn sum_of(&self, range: std::ops::Range<usize>) -> u64 {
        range.map(|i| self.get(i)).sum()
    }

    /// Every size added up (in parallel).
    pub fn total(&self) -> u64 {
        self.total_wide() as u64
    }

    /// Every size added up without overflow (in parallel): what an
    /// importer checks fits a `u64` before any sum of sizes is made.
    pub fn total_wide(&self) -> u128 {
        fn escaped_total<T: Small>(small: &[T], big: &[u64]) -> u128 {
            let plain: u128 = small
                .par_iter()
                .map(|&x| if x == T::ESCAPE { 0 } else { x.wide() as u128 })
                .sum();
            plain + big.chunks_exact(2).map(|p| p[1] as u128).sum::<u128>()
        }
        match self {
            Sizes::Byte { small, big } => escaped_total(small, big),
            Sizes::Half { small, big } => escaped_total(small, big),
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
    use proptest::prelude::*;

    fn form(s: &Sizes) -> &'static str {
        match s {
            Sizes::Byte { .. } => "byte",
            Sizes::Half { .. } => "half",
            Sizes::Narrow(_) => "narrow",
            Sizes::Wide(_) => "wide",
        }
    }

    #[test]
    fn the_smallest_form_is_taken() {
        let max = u32::MAX as u64;
        let small = vec![8u64; 1000];
        let with = |x: u64, k: usize| {
            let mut v = small.clone();
            for j in 0..k {
                v[j * 3] = x;
            }
            v
        };
        for (v, want) in [
            (small.clone(), "byte"),
            (with(255, 5), "byte"),
            (with(300, 200), "half"),
            (with(70_000, 5), "byte"),
            (with(70_000, 200), "narrow"),
            (with(max + 1, 1), "byte"),
            (with(max + 1, 300), "wide"),
            (vec![1 << 40], "wide"),
        ] {
            let s = Sizes::from(v.clone());
            assert_eq!(form(&s), want, "{:?}", &v[..3]);
            assert_eq!(s.to_vec(), v);
            assert_eq!(s.total_wide(), v.iter().map(|&x| x as u128).sum::<u128>());
            let part = 3.min(v.len())..700.min(v.len());
            assert_eq!(s.sum_of(part.clone()), v[part].iter().sum::<u64>());
        }
        assert!(Sizes::from(Vec::new()).is_empty());
        assert_eq!(Sizes::default(), Sizes::from(Vec::new()));
        let s = Sizes::from(with(300, 2));
        assert_eq!((s.len(), s.large(), s.bytes()), (1000, 2, 1000 + 32));
    }

    #[test]
    fn the_forms_compare_by_value() {
        let byte = Sizes::from(vec![1, 2, 3]);
        let wide = Sizes::Wide(vec![1, 2, 3].into());
        assert_eq!(byte, wide);
        assert_ne!(byte, Sizes::Wide(vec![1, 2, 4].into()));
        assert_ne!(byte, Sizes::from(vec![1, 2]));
    }

    #[test]
    fn a_side_table_that_disagrees_is_refused() {
        let ok = |small: Vec<u8>, big: Vec<u64>| Sizes::checked_byte(small.into(), big.into());
        assert!(ok(vec![1, 255, 3], vec![1, 300]).is_ok());
        assert!(
            ok(vec![1, 255, 3], vec![]).is_err(),
            "an escape without pair"
        );
        assert!(ok(vec![1, 255, 3], vec![1]).is_err(), "an odd table");
        assert!(
            ok(vec![1, 255, 3], vec![2, 300]).is_err(),
            "no escape there"
        );
        assert!(ok(vec![1, 255, 3], vec![1, 20]).is_err(), "a small value");
        assert!(ok(vec![1, 255, 3], vec![9, 300]).is_err(), "past the end");
        assert!(
            ok(vec![255, 255], vec![1, 300, 0, 300]).is_err(),
            "out of order"
        );
        assert!(ok(vec![255, 255], vec![0, 300, 0, 300]).is_err(), "twice");
        let half = |small: Vec<u16>, big: Vec<u64>| Sizes::checked_half(small.into(), big.into());
        assert!(half(vec![65535, 4], vec![0, 65535]).is_ok());
        assert!(half(vec![65535, 4], vec![0, 65534]).is_err());
    }

    proptest! {
        /// Every form reads back what it was made of, by index, in order
        /// and added up; and within a spill file alike.
        #[test]
        fn every_form_reads_back_its_sizes(
            v in proptest::collection::vec(
                prop_oneof![8 => 0u64..300, 2 => 0u64..100_000, 1 => any::<u64>().prop_map(|x| x >> 20)],
                0..400,
            )
        ) {
            let s = Sizes::from(v.clone());
            prop_assert_eq!(s.len(), v.len());
            for (i, &x) in v.iter().enumerate() {
                prop_assert_eq!(s.get(i), x);
            }
            prop_assert_eq!(s.to_vec(), v.clone());
            let dir = tempfile::tempdir().unwrap();
            let spill = crate::mem::spill::Spill::open(dir.path(), 1 << 20).unwrap();
            let mut scratch: crate::mem::Scratch<u64> = crate::mem::Scratch::zeroed(v.len(), Some(&spill));
            scratch.copy_from_slice(&v);
            let mut spilled = Sizes::from_scratch(scratch, Some(&spill));
            prop_assert_eq!(&spilled, &s);
            spilled.spill(&spill);
            prop_assert_eq!(spilled.to_vec(), v);
        }

        /// Sizes written 2 bytes each with the large ones paired on the
        /// side ([`Sizes::from_half`]) take the form, and read back the
        /// sizes, that the `u64`s do; in memory and in a spill file.
        #[test]
        fn half_sizes_take_the_form_of_the_wide(
            v in proptest::collection::vec(
                prop_oneof![
                    8 => 0u64..300,
                    2 => 0u64..100_000,
                    1 => 65_533u64..65_538,
                    1 => (u32::MAX as u64 - 2)..(u32::MAX as u64 + 2),
                    1 => any::<u64>().prop_map(|x| x >> 20),
                ],
                0..400,
            )
        ) {
            let mut small: crate::mem::Scratch<u16> = crate::mem::Scratch::zeroed(v.len(), None);
            let mut big = Vec::new();
            for (i, &x) in v.iter().enumerate() {
                small[i] = u16::try_from(x).unwrap_or(u16::MAX);
                if x >= u16::MAX as u64 {
                    big.extend([i as u64, x]);
                }
            }
            let want = Sizes::from(v.clone());
            let spilled = {
                let dir = tempfile::tempdir().unwrap();
                let spill = crate::mem::spill::Spill::open(dir.path(), 1 << 20).unwrap();
                let mut in_file: crate::mem::Scratch<u16> = crate::mem::Scratch::zeroed(v.len(), Some(&spill));
                in_file.copy_from_slice(&small);
                Sizes::from_half(in_file, big.clone(), Some(&spill)).to_vec()
            };
            let got = Sizes::from_half(small, big, None);
            prop_assert_eq!(form(&got), form(&want));
            prop_assert_eq!(&got, &want);
            prop_assert_eq!(got.to_vec(), v.clone());
            prop_assert_eq!(spilled, v);
        }
    }
}
