//! [`Packed`]: one `u64` per object in the narrowest of four forms, the
//! one that takes the fewest bytes for the values at hand:
//!
//! - 1 byte an object, the values of 255 or more in a side table
//!   ([`Escapes`]: the values in index order, 4 or 8 bytes each, and a
//!   count per 64 objects), the byte holding [`u8::MAX`] there;
//! - 2 bytes an object, likewise from 65,535;
//! - 4 bytes an object, likewise from `u32::MAX`;
//! - 8 bytes an object.
//!
//! The objects' shallow sizes ([`crate::model::Sizes`]) and the dominator
//! tree's retained bytes and retained objects are these. Most values of
//! each are small: an object takes a few dozen bytes, and most objects
//! retain only themselves (a leaf) or a handful of others, so nearly
//! every heap gets 1 or 2 bytes an object where a `u32` each took 4. A
//! value in the side table costs a count of the escapes before it in its
//! block of 64 (a read of a small value stays one load); the choice
//! counts the table's bytes ([`Counts::form`]). On V8 snapshots one
//! object in eight retains 255 bytes or more: their retained bytes take
//! a byte each and 4 more in the table, 1.56 bytes an object in all on
//! the 1.60 GB snapshot (2.98 with (index, value) pairs of 16 bytes, the
//! table until 2026-11-28).
//!
//! Three ways in: from a vector in object order ([`From`]), from a
//! [`Scratch`] within a memory budget ([`Packed::from_scratch`], block
//! by block in a spill file), and by a scatter from another order
//! ([`Packed::scattered`]: the dominators' preorder arrays, read in order
//! and stored at each object's place, so that no wide array in object
//! order is made first). A cache's arrays come back through
//! [`Packed::checked_byte`] and its kin, which refuse a side table that
//! disagrees with its escapes.

use rayon::prelude::*;

use super::spill::Spill;
use super::{Array, Permutation, Scratch, Words};

/// One `u64` per object in the narrowest form; read through
/// [`Packed::get`].
#[derive(Debug, Clone)]
pub enum Packed {
    /// One byte each; [`u8::MAX`] for the values in `big`.
    Byte {
        /// Every value below 255, or 255 for those in `big`.
        small: Array<u8>,
        /// The values of 255 or more.
        big: Escapes,
    },
    /// Two bytes each; [`u16::MAX`] for the values in `big`.
    Half {
        /// Every value below 65,535, or 65,535 for those in `big`.
        small: Array<u16>,
        /// The values of 65,535 or more.
        big: Escapes,
    },
    /// Four bytes each; [`u32::MAX`] for the values in `big`.
    Narrow {
        /// Every value below `u32::MAX`, or `u32::MAX` for those in `big`.
        small: Array<u32>,
        /// The values of `u32::MAX` or more.
        big: Escapes,
    },
    /// Eight bytes each.
    Wide(Array<u64>),
}

impl Default for Packed {
    fn default() -> Packed {
        Packed::Narrow {
            small: Array::default(),
            big: Escapes::default(),
        }
    }
}

/// Values per block of an [`Escapes`]'s count of escapes.
const SIDE_BLOCK: usize = 64;

/// The side table of a narrow form: the values at its limit or above (its
/// escapes), in index order, and per block of [`SIDE_BLOCK`] values how
/// many escapes the blocks before it hold. An escape's place among the
/// values is its block's count plus the escapes before it in its block
/// (at most 63 compared). 4 bytes an escaped value where each fits a
/// `u32` (8 otherwise) and 1/16 of a byte a value (nothing where none is
/// escaped), where (index, value) pairs took 16 bytes an escape and a
/// binary search: on the 1.60 GB V8 snapshot the retained bytes took 2.98
/// bytes an object, 2.5 M of its 20.2 M values escaped, and take 1.56.
#[derive(Debug, Clone, Default)]
pub struct Escapes {
    /// Per block, the escapes before it (empty where there is none).
    before: Array<u32>,
    /// The escaped values, in index order.
    values: Words,
}

impl Escapes {
    /// The escapes of `small` (the values `T::ESCAPE` marks), whose values
    /// are `values` in index order (as many).
    fn new<T: Small>(small: &[T], values: Words) -> Escapes {
        let before = match values.is_empty() {
            true => Array::default(),
            false => Array::from(counts_before(small).0),
        };
        Escapes { before, values }
    }

    /// Escaped values taken as they are, unchecked and with no count of
    /// escapes (tests of the checks that refuse a cache's: such a table is
    /// only written, never read).
    #[doc(hidden)]
    pub fn forged(values: Words) -> Escapes {
        Escapes {
            before: Array::default(),
            values,
        }
    }

    /// The value of escape `i` of `small`.
    #[inline]
    fn get<T: Small>(&self, small: &[T], i: usize) -> u64 {
        let b = i / SIDE_BLOCK;
        let within = small[b * SIDE_BLOCK..i]
            .iter()
            .filter(|&&x| x == T::ESCAPE)
            .count();
        self.values.get(self.before[b] as usize + within)
    }

    /// How many values are escaped.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The escaped values, in index order (what a cache stores).
    pub fn values(&self) -> &Words {
        &self.values
    }

    /// The bytes held.
    pub fn bytes(&self) -> usize {
        self.before.len() * 4 + self.values.bytes()
    }

    /// What a side table of `large` values of `each` bytes takes beside
    /// `n` values.
    fn cost(n: usize, large: usize, each: usize) -> usize {
        match large {
            0 => 0,
            _ => n.div_ceil(SIDE_BLOCK) * 4 + large.saturating_mul(each),
        }
    }

    /// Puts its arrays on disk (`mem::spill`).
    fn spill(&mut self, to: &Spill) {
        to.array(&mut self.before);
        to.words(&mut self.values);
    }
}

/// Equal when every value is, whatever the form.
impl PartialEq for Packed {
    fn eq(&self, other: &Packed) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Packed {}

/// A narrow element with an escape value that sends a read to the side
/// table, and its atomic twin for the scatter.
trait Small: bytemuck::Pod + Send + Sync + Copy + Eq {
    const ESCAPE: Self;
    const LIMIT: u64;
    type Atomic: Sync;
    fn cut(x: u64) -> Self;
    fn wide(self) -> u64;
    fn atomic(v: &mut [Self]) -> &[Self::Atomic];
    fn store(slot: &Self::Atomic, x: Self);
}

macro_rules! small {
    ($t:ty, $atomic:ty, $view:path) => {
        impl Small for $t {
            const ESCAPE: $t = <$t>::MAX;
            const LIMIT: u64 = <$t>::MAX as u64;
            type Atomic = $atomic;
            #[inline]
            fn cut(x: u64) -> $t {
                x.min(Self::LIMIT) as $t
            }
            #[inline]
            fn wide(self) -> u64 {
                self as u64
            }
            fn atomic(v: &mut [$t]) -> &[$atomic] {
                $view(v)
            }
            #[inline]
            fn store(slot: &$atomic, x: $t) {
                slot.store(x, std::sync::atomic::Ordering::Relaxed)
            }
        }
    };
}

small!(u8, std::sync::atomic::AtomicU8, super::as_atomic_u8);
small!(u16, std::sync::atomic::AtomicU16, super::as_atomic_u16);
small!(u32, std::sync::atomic::AtomicU32, super::as_atomic);

/// Which form holds the values the smallest, from how many there are and
/// how many reach each form's limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Byte,
    Half,
    Narrow,
    Wide,
}

/// Parallel passes take blocks of this many values.
const BLOCK: usize = 1 << 16;

/// How many values reach 255, 65,535 and `u32::MAX`.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    byte: usize,
    half: usize,
    narrow: usize,
}

impl Counts {
    /// Of `value(k)` for `k` in `0..len`, in parallel.
    fn of(len: usize, value: &(impl Fn(usize) -> u64 + Sync)) -> Counts {
        (0..len)
            .into_par_iter()
            .with_min_len(BLOCK)
            .fold(Counts::default, |mut k, i| {
                let x = value(i);
                k.byte += (x >= u8::LIMIT) as usize;
                k.half += (x >= u16::LIMIT) as usize;
                k.narrow += (x >= u32::LIMIT) as usize;
                k
            })
            .reduce(Counts::default, |a, b| Counts {
                byte: a.byte + b.byte,
                half: a.half + b.half,
                narrow: a.narrow + b.narrow,
            })
    }

    /// Logs the bytes an object each form takes for `n` values, side
    /// table included (target `heaptui::memory`).
    fn log(self, what: &str, n: usize) {
        let per = |width: usize, large: usize| {
            (n * width + Escapes::cost(n, large, self.escape_bytes())) as f64 / n.max(1) as f64
        };
        tracing::debug!(
            target: "heaptui::memory",
            "{what}: bytes an object by form: 1 byte {:.2} ({} in the side table), \
             2 bytes {:.2} ({}), 4 bytes {:.2} ({}), 8 bytes 8",
            per(1, self.byte),
            self.byte,
            per(2, self.half),
            self.half,
            per(4, self.narrow),
            self.narrow,
        );
    }

    /// The bytes each escaped value takes in a side table: 8 where one
    /// passes a `u32`.
    fn escape_bytes(self) -> usize {
        if self.narrow > 0 {
            8
        } else {
            4
        }
    }

    /// The smallest form for `n` values (those not counted are 0).
    fn form(self, n: usize) -> Form {
        let escaped = |width: usize, large: usize| {
            n.saturating_mul(width)
                .saturating_add(Escapes::cost(n, large, self.escape_bytes()))
        };
        [
            (escaped(1, self.byte), Form::Byte),
            (escaped(2, self.half), Form::Half),
            (escaped(4, self.narrow), Form::Narrow),
            (n.saturating_mul(8), Form::Wide),
        ]
        .into_iter()
        .min_by_key(|&(b, _)| b)
        .map_or(Form::Wide, |(_, f)| f)
    }
}

impl From<Vec<u64>> for Packed {
    /// The smallest form (the vector is freed).
    fn from(wide: Vec<u64>) -> Packed {
        match Counts::of(wide.len(), &|i| wide[i]).form(wide.len()) {
            Form::Wide => Packed::Wide(wide.into()),
            form => escaped_form(form, &wide, None),
        }
    }
}

/// `wide` in `form` (not [`Form::Wide`]), made in `spill` where given.
fn escaped_form(form: Form, wide: &[u64], spill: Option<&Spill>) -> Packed {
    escaped_form_of(form, wide.len(), &|i| wide[i], spill)
}

/// The `len` values `value(i)` in `form` (not [`Form::Wide`]), made in
/// `spill` where given.
fn escaped_form_of(
    form: Form,
    len: usize,
    value: &(impl Fn(usize) -> u64 + Sync),
    spill: Option<&Spill>,
) -> Packed {
    match form {
        Form::Byte => {
            let (small, big) = escaped::<u8>(len, value, spill);
            Packed::Byte { small, big }
        }
        Form::Half => {
            let (small, big) = escaped::<u16>(len, value, spill);
            Packed::Half { small, big }
        }
        Form::Narrow | Form::Wide => {
            let (small, big) = escaped::<u32>(len, value, spill);
            Packed::Narrow { small, big }
        }
    }
}

/// The `len` values `value(i)` cut to `T` (made in `spill` where given,
/// each block's pages released after it), and the side table of those at
/// `T`'s limit or above.
fn escaped<T: Small>(
    len: usize,
    value: &(impl Fn(usize) -> u64 + Sync),
    spill: Option<&Spill>,
) -> (Array<T>, Escapes) {
    const PART: usize = 1 << 20;
    let mut small: Scratch<T> = Scratch::zeroed(len, spill);
    let blocks = len.div_ceil(PART);
    let lens = (0..blocks).map(|b| PART.min(len - b * PART));
    let big: Vec<Vec<u64>> = small
        .parts(lens)
        .into_par_iter()
        .enumerate()
        .map(|(b, mut out)| {
            let mut big = Vec::new();
            for (i, o) in (b * PART..).zip(out.iter_mut()) {
                let x = value(i);
                *o = T::cut(x);
                if x >= T::LIMIT {
                    big.push(x);
                }
            }
            out.release();
            big
        })
        .collect();
    let small = small.into_array();
    let big = Escapes::new(&small, Words::from(big.concat()));
    (small, big)
}

/// `n` values, 0 but at `places[k]`, which holds `value(k)`, cut to `T`
/// by a parallel scatter (made in `spill` where given), and the side
/// table of those at `T`'s limit or above, gathered and sorted by index.
fn scattered_escaped<T: Small>(
    n: usize,
    places: &(impl Permutation + ?Sized),
    value: &(impl Fn(usize) -> u64 + Sync),
    spill: Option<&Spill>,
) -> (Array<T>, Escapes) {
    let mut small: Scratch<T> = Scratch::zeroed(n, spill);
    {
        let slots = T::atomic(&mut small);
        super::each_place(places, |k, p| T::store(&slots[p], T::cut(value(k))));
    }
    let mut big: Vec<(u32, u64)> = (0..places.values().div_ceil(BLOCK))
        .into_par_iter()
        .flat_map_iter(|b| {
            let first = b * BLOCK;
            let run = first..(first + BLOCK).min(places.values());
            (first..).zip(places.run(run)).filter_map(|(k, p)| {
                let x = value(k);
                (x >= T::LIMIT).then_some((p, x))
            })
        })
        .collect();
    big.par_sort_unstable();
    let values: Vec<u64> = big.iter().map(|&(_, x)| x).collect();
    drop(big);
    let small = small.into_array();
    let big = Escapes::new(&small, Words::from(values));
    (small, big)
}

/// The value paired with `i` in `table`, (index, value) pairs sorted by
/// index, if there is one: a binary search. The side tables of
/// [`Packed`] and of the narrow value offsets (`model::labels`).
#[inline]
pub(crate) fn paired(table: &[u64], i: usize) -> Option<u64> {
    let (mut lo, mut hi) = (0, table.len() / 2);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if table[2 * mid] < i as u64 {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    (table.get(2 * lo) == Some(&(i as u64))).then(|| table[2 * lo + 1])
}

/// Per block of [`SIDE_BLOCK`] values of `small`, the escapes in the
/// blocks before it (in parallel), and the escapes in all.
fn counts_before<T: Small>(small: &[T]) -> (Vec<u32>, usize) {
    let mut counts: Vec<u32> = small
        .par_chunks(SIDE_BLOCK)
        .map(|c| c.iter().filter(|&&x| x == T::ESCAPE).count() as u32)
        .collect();
    let mut total = 0usize;
    for c in &mut counts {
        let here = *c as usize;
        *c = total as u32;
        total += here;
    }
    (counts, total)
}

/// `small` and its escaped values checked as a cache's are: as many as
/// the escapes, each at the limit or above; then the [`Escapes`] of them
/// (one pass over `small` for both).
fn checked<T: Small>(small: &[T], values: Words) -> Result<Escapes, String> {
    let (before, escapes) = counts_before(small);
    let values_ok = (0..values.len()).all(|k| values.get(k) >= T::LIMIT);
    if !values_ok || escapes != values.len() {
        return Err("a side table disagrees with its values".into());
    }
    let before = match escapes {
        0 => Array::default(),
        _ => Array::from(before),
    };
    Ok(Escapes { before, values })
}

impl Packed {
    /// [`From`] for values built in a [`Scratch`]: the smallest form, made
    /// in `spill` where given (block by block, the pages of each block
    /// read and written released after it).
    pub fn from_scratch(wide: Scratch<u64>, spill: Option<&Spill>) -> Packed {
        if !wide.is_mapped() && spill.is_none() {
            return Packed::from(wide.into_vec());
        }
        let packed = match Counts::of(wide.len(), &|i| wide[i]).form(wide.len()) {
            Form::Wide => return Packed::Wide(wide.into_array()),
            form => escaped_form(form, &wide, spill),
        };
        wide.release(0..wide.len());
        packed
    }

    /// The smallest form (the one [`From`] takes for the same values) of
    /// values written as [`Packed::Half`] keeps them: `small[i]`, or
    /// where it holds [`u16::MAX`], the value paired with `i` in `big`
    /// (index, value pairs by index; every value of 65,535 or more has
    /// one). An importer writes these at a quarter of the bytes of `u64`s
    /// (the HPROF importer's sizes); made in `spill` where given.
    pub fn from_half(small: Scratch<u16>, big: Vec<u64>, spill: Option<&Spill>) -> Packed {
        let len = small.len();
        let value = |i: usize| match small[i] {
            u16::MAX => paired(&big, i).unwrap_or(u16::LIMIT),
            x => x as u64,
        };
        let packed = match Counts::of(len, &value).form(len) {
            // The form they were written in.
            Form::Half => {
                let values: Vec<u64> = big.chunks_exact(2).map(|p| p[1]).collect();
                let small = small.into_array();
                let big = Escapes::new(&small, Words::from(values));
                return Packed::Half { small, big };
            }
            Form::Wide => {
                let mut wide: Scratch<u64> = Scratch::zeroed(len, spill);
                wide.par_chunks_mut(BLOCK).enumerate().for_each(|(b, out)| {
                    for (i, o) in (b * BLOCK..).zip(out.iter_mut()) {
                        *o = value(i);
                    }
                });
                Packed::Wide(wide.into_array())
            }
            form => escaped_form_of(form, len, &value, spill),
        };
        small.release(0..len);
        packed
    }

    /// `n` values, 0 but at each `places[k]` (distinct, below `n`), which
    /// holds `value(k)`: the smallest form, scattered in parallel from
    /// the order of `places` (`u32`s, or packed `Nodes`, read in runs;
    /// made in `spill` where given). What it
    /// allocates is the result and its side table: nothing of 8 bytes an
    /// object.
    /// Logs (target `heaptui::memory`) what each form would take for
    /// them, `what` naming them.
    pub fn scattered(
        what: &str,
        n: usize,
        places: &(impl Permutation + ?Sized),
        value: &(impl Fn(usize) -> u64 + Sync),
        spill: Option<&Spill>,
    ) -> Packed {
        let counts = Counts::of(places.values(), value);
        counts.log(what, n);
        match counts.form(n) {
            Form::Byte => {
                let (small, big) = scattered_escaped::<u8>(n, places, value, spill);
                Packed::Byte { small, big }
            }
            Form::Half => {
                let (small, big) = scattered_escaped::<u16>(n, places, value, spill);
                Packed::Half { small, big }
            }
            Form::Narrow => {
                let (small, big) = scattered_escaped::<u32>(n, places, value, spill);
                Packed::Narrow { small, big }
            }
            Form::Wide => {
                let mut all: Scratch<u64> = Scratch::zeroed(n, spill);
                let slots = super::as_atomic_u64(&mut all);
                super::each_place(places, |k, p| {
                    slots[p].store(value(k), std::sync::atomic::Ordering::Relaxed)
                });
                Packed::Wide(all.into_array())
            }
        }
    }

    /// [`Packed::Byte`] from a cache's arrays, checked (every escape has
    /// its pair, in order of index, each at 255 or above).
    pub fn checked_byte(small: Array<u8>, values: Words) -> Result<Packed, String> {
        let big = checked(&small, values)?;
        Ok(Packed::Byte { small, big })
    }

    /// [`Packed::Half`] from a cache's arrays, checked likewise.
    pub fn checked_half(small: Array<u16>, values: Words) -> Result<Packed, String> {
        let big = checked(&small, values)?;
        Ok(Packed::Half { small, big })
    }

    /// [`Packed::Narrow`] from a cache's arrays, checked likewise.
    pub fn checked_narrow(small: Array<u32>, values: Words) -> Result<Packed, String> {
        let big = checked(&small, values)?;
        Ok(Packed::Narrow { small, big })
    }

    /// Asks the CPU to bring value `i`'s cache line in (a hint for walks
    /// that read at random; nothing past the end).
    #[inline]
    pub fn prefetch(&self, i: usize) {
        use crate::mem::prefetch;
        match self {
            Packed::Byte { small, .. } => small.get(i).map(prefetch),
            Packed::Half { small, .. } => small.get(i).map(prefetch),
            Packed::Narrow { small, .. } => small.get(i).map(prefetch),
            Packed::Wide(s) => s.get(i).map(prefetch),
        };
    }

    /// Value `i` (panics past the end, as indexing does): one load, and a
    /// binary search of the side table for an escaped one.
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        match self {
            Packed::Byte { small, big } => match small[i] {
                u8::MAX => big.get(small, i),
                x => x as u64,
            },
            Packed::Half { small, big } => match small[i] {
                u16::MAX => big.get(small, i),
                x => x as u64,
            },
            Packed::Narrow { small, big } => match small[i] {
                u32::MAX => big.get(small, i),
                x => x as u64,
            },
            Packed::Wide(s) => s[i],
        }
    }

    /// How many values.
    pub fn len(&self) -> usize {
        match self {
            Packed::Byte { small, .. } => small.len(),
            Packed::Half { small, .. } => small.len(),
            Packed::Narrow { small, .. } => small.len(),
            Packed::Wide(s) => s.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes each value takes in place: 1, 2, 4 or 8.
    pub fn width(&self) -> usize {
        match self {
            Packed::Byte { .. } => 1,
            Packed::Half { .. } => 2,
            Packed::Narrow { .. } => 4,
            Packed::Wide(_) => 8,
        }
    }

    /// The side table (none in the wide form).
    pub fn side(&self) -> Option<&Escapes> {
        match self {
            Packed::Byte { big, .. } | Packed::Half { big, .. } | Packed::Narrow { big, .. } => {
                Some(big)
            }
            Packed::Wide(_) => None,
        }
    }

    /// How many values the side table holds (none in the wide form).
    pub fn large(&self) -> usize {
        self.side().map_or(0, Escapes::len)
    }

    /// The bytes the values take, side table included.
    pub fn bytes(&self) -> usize {
        self.len() * self.width() + self.side().map_or(0, Escapes::bytes)
    }

    /// Whether they lie in a file map (a reopened cache, a spill).
    pub fn is_mapped(&self) -> bool {
        match self {
            Packed::Byte { small, .. } => small.is_mapped(),
            Packed::Half { small, .. } => small.is_mapped(),
            Packed::Narrow { small, .. } => small.is_mapped(),
            Packed::Wide(s) => s.is_mapped(),
        }
    }

    /// Puts the values on disk (`mem::spill`), side table included.
    pub fn spill(&mut self, to: &Spill) {
        match self {
            Packed::Byte { small, big } => {
                to.array(small);
                big.spill(to);
            }
            Packed::Half { small, big } => {
                to.array(small);
                big.spill(to);
            }
            Packed::Narrow { small, big } => {
                to.array(small);
                big.spill(to);
            }
            Packed::Wide(a) => to.array(a),
        }
    }

    /// Every value, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = u64> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }

    /// The values `range`, added up.
    pub fn sum_of(&self, range: std::ops::Range<usize>) -> u64 {
        range.map(|i| self.get(i)).sum()
    }

    /// Every value added up (in parallel).
    pub fn total(&self) -> u64 {
        self.total_wide() as u64
    }

    /// Every value added up without overflow (in parallel): what an
    /// importer checks fits a `u64` before any sum of sizes is made.
    pub fn total_wide(&self) -> u128 {
        fn escaped_total<T: Small>(small: &[T], big: &Escapes) -> u128 {
            let plain: u128 = small
                .par_iter()
                .map(|&x| if x == T::ESCAPE { 0 } else { x.wide() as u128 })
                .sum();
            plain + big.values.iter().map(u128::from).sum::<u128>()
        }
        match self {
            Packed::Byte { small, big } => escaped_total(small, big),
            Packed::Half { small, big } => escaped_total(small, big),
            Packed::Narrow { small, big } => escaped_total(small, big),
            Packed::Wide(s) => s.par_iter().map(|&x| x as u128).sum(),
        }
    }

    /// Every value as a `u64` (tests, small heaps).
    pub fn to_vec(&self) -> Vec<u64> {
        self.iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn form(s: &Packed) -> &'static str {
        match s {
            Packed::Byte { .. } => "byte",
            Packed::Half { .. } => "half",
            Packed::Narrow { .. } => "narrow",
            Packed::Wide(_) => "wide",
        }
    }

    const EDGE: u64 = u32::MAX as u64;

    #[test]
    fn the_smallest_form_is_taken() {
        let small = vec![8u64; 1000];
        let with = |x: u64, k: usize| {
            let mut v = small.clone();
            for j in 0..k {
                v[j * 3] = x;
            }
            v
        };
        // 1,000 values: a side table's count of escapes takes 64 bytes,
        // and each escaped value 4 (8 where one passes a `u32`).
        for (v, want) in [
            (small.clone(), "byte"),
            (with(255, 5), "byte"),
            // 1,000 + 64 + 4·200 bytes, under the 2,000 of 2 bytes each.
            (with(300, 200), "byte"),
            // 1,000 + 64 + 4·300, over them.
            (with(300, 300), "half"),
            (with(70_000, 5), "byte"),
            (with(70_000, 300), "byte"),
            (vec![70_000; 1000], "narrow"),
            (with(EDGE + 1, 1), "byte"),
            (
                // Every value past 2 bytes; one at 2^32 - 1 in the table.
                {
                    let mut v = vec![70_000; 1000];
                    v[1] = EDGE;
                    v
                },
                "narrow",
            ),
            (vec![EDGE + 1; 1000], "wide"),
            (vec![1 << 40], "wide"),
        ] {
            let s = Packed::from(v.clone());
            assert_eq!(form(&s), want, "{:?}", &v[..3]);
            assert_eq!(s.to_vec(), v);
            assert_eq!(s.total_wide(), v.iter().map(|&x| x as u128).sum::<u128>());
            let part = 3.min(v.len())..700.min(v.len());
            assert_eq!(s.sum_of(part.clone()), v[part].iter().sum::<u64>());
        }
        assert!(Packed::from(Vec::new()).is_empty());
        assert_eq!(Packed::default(), Packed::from(Vec::new()));
        let s = Packed::from(with(300, 2));
        assert_eq!((s.len(), s.large(), s.bytes()), (1000, 2, 1000 + 64 + 8));
        assert_eq!(s.width(), 1);
    }

    #[test]
    fn the_forms_compare_by_value() {
        let byte = Packed::from(vec![1, 2, 3]);
        let wide = Packed::Wide(vec![1, 2, 3].into());
        assert_eq!(byte, wide);
        assert_ne!(byte, Packed::Wide(vec![1, 2, 4].into()));
        assert_ne!(byte, Packed::from(vec![1, 2]));
    }

    #[test]
    fn a_side_table_that_disagrees_is_refused() {
        let ok = |small: Vec<u8>, big: Vec<u64>| {
            Packed::checked_byte(small.into(), Words::from(big)).map(|p| p.to_vec())
        };
        assert_eq!(ok(vec![1, 255, 3], vec![300]), Ok(vec![1, 300, 3]));
        assert!(
            ok(vec![1, 255, 3], vec![]).is_err(),
            "an escape without its value"
        );
        assert!(
            ok(vec![1, 255, 3], vec![300, 300]).is_err(),
            "a value too many"
        );
        assert!(ok(vec![1, 2, 3], vec![300]).is_err(), "no escape");
        assert!(ok(vec![1, 255, 3], vec![20]).is_err(), "a small value");
        assert_eq!(
            ok(vec![255, 255], vec![301, 300]),
            Ok(vec![301, 300]),
            "in index order"
        );
        let half =
            |small: Vec<u16>, big: Vec<u64>| Packed::checked_half(small.into(), Words::from(big));
        assert!(half(vec![65535, 4], vec![65535]).is_ok());
        assert!(half(vec![65535, 4], vec![65534]).is_err());
        let narrow =
            |small: Vec<u32>, big: Vec<u64>| Packed::checked_narrow(small.into(), Words::from(big));
        assert!(narrow(vec![4, u32::MAX], vec![EDGE]).is_ok());
        assert!(narrow(vec![4, u32::MAX], vec![EDGE - 1]).is_err());
        assert!(narrow(vec![4, u32::MAX], vec![]).is_err());
    }

    /// Escapes in many blocks of the count, read back by index: the count
    /// of each block and the escapes before each value in its block.
    #[test]
    fn escapes_across_blocks_read_back() {
        let v: Vec<u64> = (0..5_000u64)
            .map(|i| {
                if i % 7 == 0 || (130..200).contains(&i) {
                    1_000 + i
                } else {
                    i % 200
                }
            })
            .collect();
        let s = Packed::from(v.clone());
        assert_eq!(form(&s), "byte");
        assert!(s.large() > 700);
        assert_eq!(s.to_vec(), v);
    }

    /// Values at and around each form's limit, and any others.
    fn values() -> impl Strategy<Value = u64> {
        let limits = [0, u8::MAX as u64, u16::MAX as u64, EDGE, u64::MAX - 1];
        let near = proptest::sample::select(limits.to_vec())
            .prop_flat_map(|l| (l.saturating_sub(2)..=l.saturating_add(2)).boxed());
        prop_oneof![
            8 => 0u64..300,
            2 => 0u64..100_000,
            2 => near,
            1 => any::<u64>().prop_map(|x| x >> 20),
            1 => any::<u64>(),
        ]
    }

    proptest! {
        /// Values written 2 bytes each with the large ones paired on the
        /// side ([`Packed::from_half`]) take the form, and read back the
        /// values, that the `u64`s do; in memory and in a spill file.
        #[test]
        fn half_values_take_the_form_of_the_wide(
            v in proptest::collection::vec(values(), 0..400)
        ) {
            let mut small: Scratch<u16> = Scratch::zeroed(v.len(), None);
            let mut big = Vec::new();
            for (i, &x) in v.iter().enumerate() {
                small[i] = u16::try_from(x).unwrap_or(u16::MAX);
                if x >= u16::MAX as u64 {
                    big.extend([i as u64, x]);
                }
            }
            let want = Packed::from(v.clone());
            let spilled = {
                let dir = tempfile::tempdir().unwrap();
                let spill = Spill::open(dir.path(), 1 << 20).unwrap();
                let mut in_file: Scratch<u16> = Scratch::zeroed(v.len(), Some(&spill));
                in_file.copy_from_slice(&small);
                Packed::from_half(in_file, big.clone(), Some(&spill)).to_vec()
            };
            let got = Packed::from_half(small, big, None);
            prop_assert_eq!(form(&got), form(&want));
            prop_assert_eq!(&got, &want);
            prop_assert_eq!(got.to_vec(), v.clone());
            prop_assert_eq!(spilled, v);
        }

        /// Every form reads back what it was made of (a plain `u64` each,
        /// the wide oracle), by index, in order and added up; within a
        /// spill file alike; and scattered from another order.
        #[test]
        fn every_form_reads_back_its_values(
            v in proptest::collection::vec(values(), 0..400),
            seed in any::<u64>(),
        ) {
            let s = Packed::from(v.clone());
            prop_assert_eq!(s.len(), v.len());
            for (i, &x) in v.iter().enumerate() {
                prop_assert_eq!(s.get(i), x);
            }
            prop_assert_eq!(s.to_vec(), v.clone());
            let dir = tempfile::tempdir().unwrap();
            let spill = Spill::open(dir.path(), 1 << 20).unwrap();
            let mut scratch: Scratch<u64> = Scratch::zeroed(v.len(), Some(&spill));
            scratch.copy_from_slice(&v);
            let mut spilled = Packed::from_scratch(scratch, Some(&spill));
            prop_assert_eq!(&spilled, &s);
            prop_assert_eq!(spilled.width(), s.width());
            spilled.spill(&spill);
            prop_assert_eq!(spilled.to_vec(), v.clone());
            // A permutation of some of the places (the others stay 0).
            let mut places: Vec<u32> = (0..v.len() as u32).collect();
            let mut r = seed | 1;
            for i in (1..places.len()).rev() {
                r ^= r << 13;
                r ^= r >> 7;
                r ^= r << 17;
                places.swap(i, (r % (i as u64 + 1)) as usize);
            }
            places.truncate(places.len() - (seed % 4) as usize % (places.len() + 1));
            let mut want = vec![0; v.len()];
            for (k, &p) in places.iter().enumerate() {
                want[p as usize] = v[k];
            }
            let by = |k: usize| v[k];
            // The places as `u32`s and packed.
            let nodes = crate::mem::Nodes::from(places.clone());
            for spill in [None, Some(&spill)] {
                let got = Packed::scattered("test", v.len(), &places[..], &by, spill);
                prop_assert_eq!(got.to_vec(), want.clone());
                prop_assert_eq!(got.width(), Packed::from(want.clone()).width());
                let got = Packed::scattered("test", v.len(), &nodes, &by, spill);
                prop_assert_eq!(got.to_vec(), want.clone());
            }
        }
    }
}
