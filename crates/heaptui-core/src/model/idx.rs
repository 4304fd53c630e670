//! Dense indices into the model, one newtype per space: an [`ObjectIdx`]
//! indexes the per-object arrays (`ids`, `types`, `sizes`, the rows of
//! `refs`), a [`TypeIdx`] indexes `type_names`. Both are a `u32` in memory
//! (`#[repr(transparent)]`, `bytemuck::Pod`): a slice of them is cast to
//! `&[u32]` for free where an algorithm wants raw indices, and back.
//!
//! A type index is refused where an object index is meant:
//!
//! ```compile_fail,E0308
//! use heaptui_core::model::{Model, TypeIdx};
//! let m = Model::default();
//! let _ = m.type_name(TypeIdx::new(0)); // expects an ObjectIdx
//! ```
//!
//! and an object index where a type index is meant:
//!
//! ```compile_fail,E0308
//! use heaptui_core::model::{ObjectIdx, TypeIdx};
//! let t: TypeIdx = ObjectIdx::new(0);
//! ```
//!
//! while the right one is taken:
//!
//! ```
//! use heaptui_core::model::{Model, ObjectIdx, TypeIdx};
//! let mut m = Model::default();
//! m.type_names.push("T".into());
//! m.types = vec![TypeIdx::new(0)].into();
//! assert_eq!(m.type_name(ObjectIdx::new(0)), "T");
//! ```

macro_rules! dense_index {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        // Pod: a transparent wrapper of a u32 (no padding, every bit
        // pattern valid); bytemuck's derive checks that, so the crate
        // writes no `unsafe` for it.
        #[derive(
            Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, bytemuck::Pod, bytemuck::Zeroable,
        )]
        #[repr(transparent)]
        pub struct $name(pub u32);

        impl $name {
            /// The index of the raw `u32`.
            #[inline]
            pub const fn new(raw: u32) -> $name {
                $name(raw)
            }

            /// The index of a `usize` position; panics past `u32::MAX`
            /// (the model never holds that many).
            #[inline]
            pub fn from_usize(i: usize) -> $name {
                match u32::try_from(i) {
                    Ok(raw) => $name(raw),
                    Err(_) => panic!(concat!($what, " index {} past u32::MAX"), i),
                }
            }

            /// The position in the arrays it indexes.
            #[inline]
            pub const fn index(self) -> usize {
                self.0 as usize
            }

            /// The raw value, for arrays and algorithms that use raw
            /// indices (see the module doc for where).
            #[inline]
            pub const fn raw(self) -> u32 {
                self.0
            }

            /// `&[u32]` seen as indices of this kind, without a copy.
            #[inline]
            pub fn cast_slice(raw: &[u32]) -> &[$name] {
                bytemuck::cast_slice(raw)
            }

            /// A vector of raw indices taken as indices of this kind,
            /// without a copy (an importer's output).
            #[inline]
            pub fn cast_vec(raw: Vec<u32>) -> Vec<$name> {
                bytemuck::allocation::cast_vec(raw)
            }

            /// Indices of this kind seen as `&[u32]`, without a copy.
            #[inline]
            pub fn raw_slice(slice: &[$name]) -> &[u32] {
                bytemuck::cast_slice(slice)
            }
        }

        /// The bare number, as a `u32` was shown before the newtype.
        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Debug::fmt(&self.0, f)
            }
        }

        /// The bare number, as a `u32` was shown before the newtype.
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                std::fmt::Display::fmt(&self.0, f)
            }
        }
    };
}

dense_index!(
    /// An object's dense index: its position in `Model::ids`, `types`,
    /// `sizes` and the rows of `refs` (the order the importer met the
    /// objects).
    ObjectIdx,
    "object"
);

dense_index!(
    /// A type's dense index: its position in `Model::type_names` (names
    /// are interned, so two sections' types with one name share one).
    TypeIdx,
    "type"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_cast_both_ways_and_show_the_bare_number() {
        let raw = [3u32, 0, 7];
        let objects = ObjectIdx::cast_slice(&raw);
        assert_eq!(objects, &[ObjectIdx(3), ObjectIdx(0), ObjectIdx(7)]);
        assert_eq!(ObjectIdx::raw_slice(objects), &raw);
        assert_eq!(format!("{} {:?}", objects[2], objects), "7 [3, 0, 7]");
        assert_eq!(TypeIdx::from_usize(5).index(), 5);
    }

    #[test]
    #[should_panic(expected = "object index")]
    fn from_usize_refuses_what_does_not_fit() {
        let _ = ObjectIdx::from_usize(u32::MAX as usize + 1);
    }
}
