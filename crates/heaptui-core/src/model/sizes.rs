//! [`Sizes`]: the objects' shallow sizes in 4 bytes each where every one
//! is below 4 GiB (every heap seen: only an array of half a billion longs
//! or more is larger), in 8 otherwise. 4 bytes an object less through the
//! whole analysis than a `u64` each.

/// Each object's shallow size in bytes; read through `Sizes::get`.
pub type Sizes = crate::mem::Words;

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
