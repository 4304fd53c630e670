//! [`IdSet`]: an ascending list of distinct `u32`s (object indices) held in
//! the fewer bytes of two forms, both relative to the first value:
//!
//! - a bitmap of the span from the first value to the last, one bit a
//!   value in it: for a list that fills a good part of its span, as a
//!   type's instances do (a type cut short in the duplicates' verification
//!   has millions of instances spread over the whole heap, a few bits
//!   apart);
//! - the values less the first, packed at the width the last one needs
//!   ([`Bits`]): for a sparse list.
//!
//! Held for the heap's whole life where a `Vec<u32>` took 4 bytes a value
//! and up to as many again of growth: the possible duplicates of the
//! 1.60 GB V8 snapshot (9.2 M objects of four types) took 63 MiB, 3.1
//! bytes an object of the heap, read only for their count and first value
//! (and in order by the reopen cache).

use super::Bits;

/// Distinct `u32`s in ascending order, read in order.
#[derive(Clone, Default)]
pub struct IdSet {
    len: usize,
    /// The first value (0 when empty).
    base: u32,
    form: Form,
}

#[derive(Clone)]
enum Form {
    /// Bit `v - base` set for each value `v`.
    Span(Box<[u64]>),
    /// Each value less `base`.
    Packed(Bits),
}

impl Default for Form {
    fn default() -> Self {
        Form::Packed(Bits::default())
    }
}

impl IdSet {
    /// The set of `values`, which must ascend strictly (checked: the
    /// caller sorts; a repeated or descending value panics).
    pub fn from_sorted(values: Vec<u32>) -> IdSet {
        assert!(
            values.windows(2).all(|w| w[0] < w[1]),
            "IdSet values must ascend"
        );
        let (Some(&first), Some(&last)) = (values.first(), values.last()) else {
            return IdSet::default();
        };
        let len = values.len();
        let span = (last - first) as usize + 1;
        let width = super::bits::width_of(last - first);
        let packed = super::bits::words_for(len, width) * 4;
        let form = if span.div_ceil(64) * 8 < packed {
            let mut words = vec![0u64; span.div_ceil(64)];
            for &v in &values {
                let at = (v - first) as usize;
                words[at / 64] |= 1 << (at % 64);
            }
            Form::Span(words.into_boxed_slice())
        } else {
            let mut values = values;
            for v in &mut values {
                *v -= first;
            }
            Form::Packed(Bits::from(values))
        };
        IdSet {
            len,
            base: first,
            form,
        }
    }

    /// How many values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The smallest value.
    pub fn first(&self) -> Option<u32> {
        (self.len > 0).then_some(self.base)
    }

    /// The values, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let base = self.base;
        let (span, packed) = match &self.form {
            Form::Span(words) => (Some(words), None),
            Form::Packed(bits) => (None, Some(bits)),
        };
        let ones = span.into_iter().flat_map(move |words| {
            words.iter().enumerate().flat_map(move |(k, &w)| {
                let mut w = w;
                std::iter::from_fn(move || {
                    (w != 0).then(|| {
                        let bit = w.trailing_zeros();
                        w &= w - 1;
                        base + (k * 64) as u32 + bit
                    })
                })
            })
        });
        let packed = packed
            .into_iter()
            .flat_map(move |b| b.iter().map(move |v| base + v));
        ones.chain(packed)
    }

    /// The values as a vector.
    pub fn to_vec(&self) -> Vec<u32> {
        self.iter().collect()
    }

    /// The bytes held (for the memory account).
    pub fn bytes(&self) -> usize {
        match &self.form {
            Form::Span(words) => words.len() * 8,
            Form::Packed(bits) => bits.bytes(),
        }
    }
}

/// Equal when the values are, whatever the form.
impl PartialEq for IdSet {
    fn eq(&self, other: &IdSet) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl Eq for IdSet {}

impl std::fmt::Debug for IdSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Ascending distinct values: dense runs, sparse ones, or both.
    fn sets() -> impl Strategy<Value = Vec<u32>> {
        (
            prop::collection::vec(0u32..200, 0..300),
            prop::collection::vec(any::<u32>(), 0..40),
            any::<u32>(),
        )
            .prop_map(|(dense, sparse, shift)| {
                let mut v: Vec<u32> = dense.iter().map(|&d| d.wrapping_add(shift)).collect();
                v.extend(sparse);
                v.sort_unstable();
                v.dedup();
                v
            })
    }

    proptest! {
        #[test]
        fn a_set_reads_back_its_values(values in sets()) {
            let s = IdSet::from_sorted(values.clone());
            prop_assert_eq!(s.len(), values.len());
            prop_assert_eq!(s.first(), values.first().copied());
            prop_assert_eq!(s.to_vec(), values.clone());
            // Never more than the packed form, nor than 4 bytes a value
            // and its padding.
            prop_assert!(s.bytes() <= values.len() * 4 + 8);
        }
    }

    #[test]
    fn a_dense_set_is_a_bitmap_and_a_sparse_one_packed() {
        let dense: Vec<u32> = (1_000_000..1_100_000).step_by(3).collect();
        let s = IdSet::from_sorted(dense.clone());
        assert!(matches!(s.form, Form::Span(_)));
        assert_eq!(s.bytes(), 100_000usize.div_ceil(64) * 8);
        assert_eq!(s.to_vec(), dense);
        let sparse: Vec<u32> = (0..1000).map(|i| i * 1_000_000).collect();
        let s = IdSet::from_sorted(sparse.clone());
        assert!(matches!(s.form, Form::Packed(_)));
        assert_eq!(s.to_vec(), sparse);
        assert_eq!(IdSet::from_sorted(Vec::new()), IdSet::default());
        assert_eq!(IdSet::from_sorted(vec![u32::MAX]).to_vec(), [u32::MAX]);
    }

    #[test]
    #[should_panic(expected = "ascend")]
    fn values_out_of_order_are_refused() {
        IdSet::from_sorted(vec![3, 2]);
    }
}
