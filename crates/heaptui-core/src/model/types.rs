//! [`ObjectTypes`]: each object's type in 1 byte where the heap has at
//! most 256 types, in 2 where it has at most 65,536 (nearly every heap),
//! in 4 otherwise. Read one at a time through [`ObjectTypes::get`]; a
//! pass over all of them (type statistics, the duplicates' refinement)
//! takes the slice of the width at hand once through
//! [`with_types!`](crate::model::with_types), so that nothing branches on the
//! width per object.

use rayon::prelude::*;

use super::TypeIdx;
use crate::mem::spill::Spill;
use crate::mem::Array;

/// An element of one of the widths: read as a type index.
pub trait TypeWord: bytemuck::Pod + Send + Sync + Copy {
    /// The type it stands for.
    fn ty(self) -> TypeIdx;
    /// The type's position in `Model::type_names`.
    #[inline]
    fn index(self) -> usize {
        self.ty().index()
    }
}

impl TypeWord for u8 {
    #[inline]
    fn ty(self) -> TypeIdx {
        TypeIdx(self as u32)
    }
}

impl TypeWord for u16 {
    #[inline]
    fn ty(self) -> TypeIdx {
        TypeIdx(self as u32)
    }
}

impl TypeWord for TypeIdx {
    #[inline]
    fn ty(self) -> TypeIdx {
        self
    }
}

/// Each object's type, in the narrowest width its type indices fit.
#[derive(Debug, Clone)]
pub enum ObjectTypes {
    /// Every type index is below 256.
    Byte(Array<u8>),
    /// Every type index is below 65,536.
    Half(Array<u16>),
    /// Any type index.
    Full(Array<TypeIdx>),
}

/// Runs `$body` with `$s` bound to the types as a slice of their own width
/// (`&[u8]`, `&[u16]` or `&[TypeIdx]`, each element a
/// [`TypeWord`]): one branch for a whole pass.
#[macro_export]
macro_rules! with_types {
    ($types:expr, |$s:ident| $body:expr) => {
        match $types {
            $crate::model::ObjectTypes::Byte(a) => {
                let $s: &[u8] = &a[..];
                $body
            }
            $crate::model::ObjectTypes::Half(a) => {
                let $s: &[u16] = &a[..];
                $body
            }
            $crate::model::ObjectTypes::Full(a) => {
                let $s: &[$crate::model::TypeIdx] = &a[..];
                $body
            }
        }
    };
}

impl Default for ObjectTypes {
    fn default() -> ObjectTypes {
        ObjectTypes::Byte(Array::default())
    }
}

/// Equal when every object's type is, whatever the width.
impl PartialEq for ObjectTypes {
    fn eq(&self, other: &ObjectTypes) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for ObjectTypes {}

impl From<Vec<TypeIdx>> for ObjectTypes {
    /// The narrowest width the largest index fits (made in parallel; the
    /// vector is freed when narrowed).
    fn from(types: Vec<TypeIdx>) -> ObjectTypes {
        let max = types.par_iter().map(|t| t.raw()).max().unwrap_or(0);
        ObjectTypes::with_count(types, max as usize + 1)
    }
}

impl From<Array<TypeIdx>> for ObjectTypes {
    /// As [`From<Vec<TypeIdx>>`]; a mapped array is copied when narrowed.
    fn from(types: Array<TypeIdx>) -> ObjectTypes {
        let max = types.par_iter().map(|t| t.raw()).max().unwrap_or(0);
        if max > u16::MAX as u32 {
            return ObjectTypes::Full(types);
        }
        ObjectTypes::narrowed(&types, max as usize + 1).unwrap_or_else(|| ObjectTypes::Full(types))
    }
}

impl ObjectTypes {
    /// `types`, every one below `count` (the heap's number of types), in
    /// the width `count` fits.
    pub fn with_count(types: Vec<TypeIdx>, count: usize) -> ObjectTypes {
        ObjectTypes::narrowed(&types, count).unwrap_or_else(|| ObjectTypes::Full(types.into()))
    }

    fn narrowed(types: &[TypeIdx], count: usize) -> Option<ObjectTypes> {
        if count <= 1 << 8 {
            let v: Vec<u8> = types.par_iter().map(|t| t.raw() as u8).collect();
            Some(ObjectTypes::Byte(v.into()))
        } else if count <= 1 << 16 {
            let v: Vec<u16> = types.par_iter().map(|t| t.raw() as u16).collect();
            Some(ObjectTypes::Half(v.into()))
        } else {
            None
        }
    }

    /// Object `i`'s type (panics past the end, as indexing does).
    #[inline]
    pub fn get(&self, i: usize) -> TypeIdx {
        match self {
            ObjectTypes::Byte(a) => TypeIdx(a[i] as u32),
            ObjectTypes::Half(a) => TypeIdx(a[i] as u32),
            ObjectTypes::Full(a) => a[i],
        }
    }

    /// How many objects.
    pub fn len(&self) -> usize {
        with_types!(self, |s| s.len())
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes an object: 1, 2 or 4.
    pub fn width(&self) -> usize {
        match self {
            ObjectTypes::Byte(_) => 1,
            ObjectTypes::Half(_) => 2,
            ObjectTypes::Full(_) => 4,
        }
    }

    /// The bytes they take.
    pub fn bytes(&self) -> usize {
        self.len() * self.width()
    }

    /// Whether they lie in a file map (a reopened cache, a spill).
    pub fn is_mapped(&self) -> bool {
        match self {
            ObjectTypes::Byte(a) => a.is_mapped(),
            ObjectTypes::Half(a) => a.is_mapped(),
            ObjectTypes::Full(a) => a.is_mapped(),
        }
    }

    /// Puts them on disk (`mem::spill`).
    pub fn spill(&mut self, to: &Spill) {
        match self {
            ObjectTypes::Byte(a) => to.array(a),
            ObjectTypes::Half(a) => to.array(a),
            ObjectTypes::Full(a) => to.array(a),
        }
    }

    /// Every object's type, in order (a branch per object: passes that
    /// matter use [`with_types!`](crate::model::with_types)).
    pub fn iter(&self) -> impl ExactSizeIterator<Item = TypeIdx> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }

    /// Every object's type, as indices (tests, small heaps, writers).
    pub fn to_vec(&self) -> Vec<TypeIdx> {
        with_types!(self, |s| s.par_iter().map(|&t| t.ty()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_width_is_the_narrowest_the_types_fit() {
        for (max, width) in [(0u32, 1), (255, 1), (256, 2), (65_535, 2), (65_536, 4)] {
            let v = vec![TypeIdx(3), TypeIdx(max), TypeIdx(0)];
            let t = ObjectTypes::from(v.clone());
            assert_eq!(t.width(), width, "{max}");
            assert_eq!(t.to_vec(), v);
            assert_eq!(t.iter().collect::<Vec<_>>(), v);
            assert_eq!((t.get(1), t.len(), t.bytes()), (TypeIdx(max), 3, 3 * width));
            let from_array = ObjectTypes::from(Array::from(v.clone()));
            assert_eq!(from_array.width(), width);
            assert_eq!(from_array, t);
            let sum: usize = with_types!(&t, |s| s.iter().map(|w| w.index()).sum());
            assert_eq!(sum, 3 + max as usize);
        }
        assert_eq!(ObjectTypes::with_count(vec![TypeIdx(1)], 300).width(), 2);
        assert_eq!(ObjectTypes::with_count(vec![TypeIdx(1)], 70_000).width(), 4);
        assert!(ObjectTypes::from(Vec::new()).is_empty());
        assert_eq!(ObjectTypes::default(), ObjectTypes::from(Vec::new()));
    }

    #[test]
    fn the_widths_compare_by_value_and_spill() {
        let byte = ObjectTypes::from(vec![TypeIdx(1), TypeIdx(2)]);
        let full = ObjectTypes::Full(vec![TypeIdx(1), TypeIdx(2)].into());
        assert_eq!(byte, full);
        assert_ne!(byte, ObjectTypes::Full(vec![TypeIdx(1), TypeIdx(3)].into()));
        let dir = tempfile::tempdir().unwrap();
        let spill = Spill::open(dir.path(), 1 << 20).unwrap();
        let mut half = ObjectTypes::from(vec![TypeIdx(1000), TypeIdx(2)]);
        half.spill(&spill);
        assert!(half.is_mapped());
        assert_eq!(half.to_vec(), [TypeIdx(1000), TypeIdx(2)]);
    }
}
