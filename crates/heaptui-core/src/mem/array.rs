//! [`Array`]: a read-only array of plain numbers that either owns its
//! memory (a `Vec`, as an analysis builds it) or lies in a mapped file (a
//! reopened cache section, read in place with no copy). Readers see a
//! slice either way, at the cost of a `Vec`'s deref.

use std::fmt;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::Arc;

use bytemuck::Pod;
use memmap2::{Mmap, MmapMut};

/// A slice of `T` owned by a vector or by a shared file map.
pub struct Array<T: Pod> {
    /// Start of the elements: the vector's buffer or a place in the map.
    ptr: NonNull<T>,
    len: usize,
    owner: Owner<T>,
}

enum Owner<T> {
    Vec(Vec<T>),
    Map(Keep),
}

/// The map an array's elements lie in, kept alive with it.
#[derive(Clone)]
enum Keep {
    /// A file mapped read-only (a cache section, a spilled array).
    Read(#[allow(dead_code)] Arc<Mmap>),
    /// A spill file mapped writable, written before it became an array
    /// (a sealed [`super::Scratch`]); no longer written.
    Written(#[allow(dead_code)] Arc<MmapMut>),
}

// SAFETY: an `Array` hands out only shared slices of its elements; the
// memory behind `ptr` is owned by `owner` (a vector, a read-only map, or a
// written spill map that nothing writes any more, all Send and Sync) and
// never written while the array lives.
unsafe impl<T: Pod + Send> Send for Array<T> {}
// SAFETY: as above; `&Array` gives `&[T]` only.
unsafe impl<T: Pod + Sync> Sync for Array<T> {}

impl<T: Pod> Array<T> {
    /// `len` elements of `map` from byte `offset`; `None` when they do not
    /// lie inside the map or are not aligned for `T`.
    pub fn mapped(map: &Arc<Mmap>, offset: usize, len: usize) -> Option<Array<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>())?;
        let end = offset.checked_add(bytes)?;
        let region: &[u8] = map.get(offset..end)?;
        let elements: &[T] = bytemuck::try_cast_slice(region).ok()?;
        Some(Array {
            ptr: NonNull::from(elements).cast(),
            len,
            owner: Owner::Map(Keep::Read(map.clone())),
        })
    }

    /// The first `len` elements of a written spill map, as an array: the
    /// map is kept, and never written again (the scratch it came from is
    /// gone). `None` when they do not lie inside it or are misaligned.
    pub(super) fn written(map: Arc<MmapMut>, len: usize) -> Option<Array<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>())?;
        if bytes > map.len() || map.as_ptr().align_offset(std::mem::align_of::<T>()) != 0 {
            return None;
        }
        let ptr = NonNull::new(map.as_ptr() as *mut T)?;
        Some(Array {
            ptr,
            len,
            owner: Owner::Map(Keep::Written(map)),
        })
    }

    /// The same elements seen as `U`, of the same size and alignment (an
    /// index type over its `u32`), without a copy.
    pub fn cast<U: Pod>(self) -> Array<U> {
        assert!(
            std::mem::size_of::<U>() == std::mem::size_of::<T>()
                && std::mem::align_of::<U>() == std::mem::align_of::<T>(),
            "a cast keeps size and alignment"
        );
        match self.owner {
            Owner::Vec(v) => Array::from(bytemuck::allocation::cast_vec::<T, U>(v)),
            Owner::Map(m) => Array {
                ptr: self.ptr.cast(),
                len: self.len,
                owner: Owner::Map(m),
            },
        }
    }

    /// Whether the elements lie in a file map.
    pub fn is_mapped(&self) -> bool {
        matches!(self.owner, Owner::Map(_))
    }

    /// The elements as a vector: the owned one, or a copy of mapped ones.
    pub fn into_vec(self) -> Vec<T> {
        match self.owner {
            Owner::Vec(v) => v,
            Owner::Map(_) => self.as_slice().to_vec(),
        }
    }

    /// The elements for writing; mapped ones are copied into a vector
    /// first. Explicit (there is no `DerefMut`), so a write cannot copy a
    /// mapped array unnoticed.
    pub fn make_mut(&mut self) -> &mut [T] {
        if let Owner::Map(_) = self.owner {
            *self = Array::from(self.as_slice().to_vec());
        }
        match &mut self.owner {
            Owner::Vec(v) => v.as_mut_slice(),
            Owner::Map(_) => unreachable!("copied above"),
        }
    }

    /// The elements, however they are held.
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: `ptr` and `len` describe elements owned by `owner`, which
        // lives as long as `self` and does not move them: a vector's buffer
        // stays put when the vector is moved (it is never grown after
        // construction), and a map's bytes stay put while the Arc is held.
        // `mapped` checked bounds and alignment; a vector's buffer is
        // aligned by construction.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Pod> From<Vec<T>> for Array<T> {
    fn from(v: Vec<T>) -> Array<T> {
        let mut v = v;
        let ptr = NonNull::new(v.as_mut_ptr()).unwrap_or(NonNull::dangling());
        Array {
            ptr,
            len: v.len(),
            owner: Owner::Vec(v),
        }
    }
}

impl<T: Pod> FromIterator<T> for Array<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Array<T> {
        Array::from(iter.into_iter().collect::<Vec<T>>())
    }
}

impl<T: Pod> Deref for Array<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        self.as_slice()
    }
}

impl<T: Pod> Default for Array<T> {
    fn default() -> Array<T> {
        Array::from(Vec::new())
    }
}

impl<T: Pod> Clone for Array<T> {
    fn clone(&self) -> Array<T> {
        match &self.owner {
            Owner::Vec(v) => Array::from(v.clone()),
            Owner::Map(m) => Array {
                ptr: self.ptr,
                len: self.len,
                owner: Owner::Map(m.clone()),
            },
        }
    }
}

impl<T: Pod + fmt::Debug> fmt::Debug for Array<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_slice().fmt(f)
    }
}

impl<T: Pod + PartialEq> PartialEq for Array<T> {
    fn eq(&self, other: &Array<T>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Pod + Eq> Eq for Array<T> {}

impl<T: Pod + PartialEq> PartialEq<Vec<T>> for Array<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Pod + PartialEq, const N: usize> PartialEq<[T; N]> for Array<T> {
    fn eq(&self, other: &[T; N]) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl<T: Pod + PartialEq> PartialEq<[T]> for Array<T> {
    fn eq(&self, other: &[T]) -> bool {
        self.as_slice() == other
    }
}

impl<'a, T: Pod> IntoIterator for &'a Array<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map_of(bytes: &[u8]) -> Arc<Mmap> {
        let mut m = memmap2::MmapMut::map_anon(bytes.len().max(1)).unwrap();
        m[..bytes.len()].copy_from_slice(bytes);
        Arc::new(m.make_read_only().unwrap())
    }

    #[test]
    fn owned_and_mapped_arrays_read_alike() {
        let v: Vec<u64> = vec![1, 2, u64::MAX];
        let owned = Array::from(v.clone());
        let mut bytes = vec![0u8; 8];
        bytes.extend_from_slice(bytemuck::cast_slice(&v));
        let map = map_of(&bytes);
        let mapped = Array::<u64>::mapped(&map, 8, 3).unwrap();
        assert!(mapped.is_mapped() && !owned.is_mapped());
        assert_eq!(&owned[..], &v[..]);
        assert_eq!(&mapped[..], &v[..]);
        assert_eq!(owned, mapped);
        let moved = owned;
        assert_eq!(moved.iter().fold(0u64, |a, &b| a.wrapping_add(b)), 2);
        let copy = mapped.clone();
        drop(mapped);
        drop(map);
        assert_eq!(copy.into_vec(), v, "the map outlives its first array");
    }

    #[test]
    fn out_of_bounds_or_misaligned_sections_are_refused() {
        let map = map_of(&[0u8; 64]);
        assert!(Array::<u64>::mapped(&map, 0, 8).is_some());
        assert!(Array::<u64>::mapped(&map, 0, 9).is_none(), "past the end");
        assert!(Array::<u64>::mapped(&map, 4, 1).is_none(), "misaligned");
        assert!(Array::<u32>::mapped(&map, 60, 1).is_some());
        assert!(Array::<u32>::mapped(&map, usize::MAX - 2, 1).is_none());
        assert!(Array::<u32>::mapped(&map, 0, usize::MAX).is_none());
    }

    #[test]
    fn writing_a_mapped_array_copies_it_first() {
        let map = map_of(bytemuck::cast_slice(&[5u32, 6]));
        let mut a = Array::<u32>::mapped(&map, 0, 2).unwrap();
        a.make_mut()[0] = 7;
        assert!(!a.is_mapped());
        assert_eq!(&a[..], &[7, 6]);
        assert_eq!(&map[..4], &5u32.to_ne_bytes(), "the map is untouched");
    }
}
