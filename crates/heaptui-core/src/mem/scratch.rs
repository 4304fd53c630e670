//! [`Scratch`]: an array an analysis writes, held in memory (a zeroed
//! vector) or, when the analysis is over its memory budget, in a spill
//! file ([`super::spill::Spill::scratch`]): an unlinked file with its space
//! reserved (`posix_fallocate`, so a full disk is an error when the file is
//! made, never a SIGBUS at a later write), mapped shared and writable. Its
//! dirty pages belong to the page cache, not to the process: dropping them
//! from the resident set ([`super::checkpoint`], [`Scratch::release`])
//! keeps their contents, which the kernel writes back to the file or
//! keeps cached, and a later read faults them in again.
//!
//! Written through `DerefMut`; made a read-only [`Array`] with
//! [`Scratch::into_array`] when it becomes part of a result, without a
//! copy either way (a spilled one keeps its map, no longer written).

use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::Arc;

use bytemuck::Pod;
use memmap2::MmapMut;

use super::Array;

/// An array of `T`, in memory or in a spill file; read and written as a
/// slice.
pub struct Scratch<T: Pod> {
    /// Start of the elements: the vector's buffer or the map's.
    ptr: NonNull<T>,
    len: usize,
    owner: Owner<T>,
}

enum Owner<T> {
    Vec(Vec<T>),
    /// The map; the spill keeps a weak reference to drop its pages at
    /// checkpoints.
    Map(Arc<MmapMut>),
}

// SAFETY: the elements behind `ptr` are owned by `owner` (a vector or a
// shared writable map, both Send and Sync); `&Scratch` gives `&[T]` only and
// `&mut Scratch` `&mut [T]`, so the borrow rules of a `Vec` hold. The spill's
// registry never reads or writes the elements: it only drops the map's
// resident pages, which keeps their contents (a shared file map).
unsafe impl<T: Pod + Send> Send for Scratch<T> {}
// SAFETY: as above.
unsafe impl<T: Pod + Sync> Sync for Scratch<T> {}

impl<T: Pod> Scratch<T> {
    /// `len` zeroed elements in memory (huge pages where the kernel allows).
    pub fn in_memory(len: usize) -> Scratch<T> {
        Scratch::from(super::zeroed::<T>(len))
    }

    /// `len` zeroed elements in `map` (at least that long, page-aligned).
    pub(super) fn in_map(mut map: MmapMut, len: usize) -> Option<Scratch<T>> {
        let bytes = len.checked_mul(std::mem::size_of::<T>())?;
        if map.len() < bytes || map.as_ptr().align_offset(std::mem::align_of::<T>()) != 0 {
            return None;
        }
        let ptr = NonNull::new(map.as_mut_ptr().cast::<T>())?;
        Some(Scratch {
            ptr,
            len,
            owner: Owner::Map(Arc::new(map)),
        })
    }

    /// `len` zeroed elements: in a spill file where `spill` is given (in
    /// memory if that fails; the spill records why), else in memory.
    pub fn zeroed(len: usize, spill: Option<&super::spill::Spill>) -> Scratch<T> {
        match spill {
            Some(s) => s.scratch(len),
            None => Scratch::in_memory(len),
        }
    }

    /// Whether the elements lie in a spill file.
    pub fn is_mapped(&self) -> bool {
        matches!(self.owner, Owner::Map(_))
    }

    /// The map, for the spill's registry.
    pub(super) fn map(&self) -> Option<&Arc<MmapMut>> {
        match &self.owner {
            Owner::Map(m) => Some(m),
            Owner::Vec(_) => None,
        }
    }

    /// Drops from the resident set the pages of elements `range` of a
    /// spilled array (whole pages only; their contents stay in the file);
    /// nothing in memory. For a walk that is done with a part early.
    pub fn release(&self, range: std::ops::Range<usize>) {
        if self.is_mapped() {
            release_elements(&self[range]);
        }
    }

    /// Cuts the elements into consecutive parts of the given lengths
    /// (which must not add up to more than its length), each to be written
    /// on its own (in parallel) and released when done ([`Part::release`]).
    pub fn parts(&mut self, lens: impl IntoIterator<Item = usize>) -> Vec<Part<'_, T>> {
        let spilled = self.is_mapped();
        super::split_by(&mut self[..], lens)
            .into_iter()
            .map(|slice| Part { slice, spilled })
            .collect()
    }

    /// Keeps the first `len` elements (no effect when there are fewer).
    pub fn truncate(&mut self, len: usize) {
        if let Owner::Vec(v) = &mut self.owner {
            v.truncate(len);
        }
        self.len = self.len.min(len);
    }

    /// The elements as a read-only [`Array`], without a copy: the vector,
    /// or the same map, which nothing writes any more.
    pub fn into_array(self) -> Array<T> {
        let len = self.len;
        match self.owner {
            Owner::Vec(v) => Array::from(v),
            Owner::Map(m) => super::spill::seal(m, len),
        }
    }

    /// The elements as a vector: the owned one, or a copy of spilled ones
    /// (for the few that callers must own).
    pub fn into_vec(self) -> Vec<T> {
        match self.owner {
            Owner::Vec(v) => v,
            Owner::Map(_) => self.to_vec(),
        }
    }
}

/// A part of a [`Scratch`], written as a slice.
pub struct Part<'a, T> {
    slice: &'a mut [T],
    spilled: bool,
}

impl<T> Part<'_, T> {
    /// Drops the part's pages from the resident set where it is spilled
    /// (whole pages only; their contents stay in the file): for a writer
    /// done with it, so that the parts written so far do not add up.
    pub fn release(&self) {
        if self.spilled {
            release_elements(self.slice);
        }
    }
}

impl<T> Deref for Part<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.slice
    }
}

impl<T> DerefMut for Part<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.slice
    }
}

/// Drops the resident pages wholly inside `elements`, which must lie in a
/// shared file map (a spilled [`Scratch`] or [`Array`]): their contents
/// stay in the file.
pub(super) fn release_elements<T>(elements: &[T]) {
    release_region(elements.as_ptr() as usize, std::mem::size_of_val(elements));
}

/// Drops the resident pages wholly inside `len` bytes from address
/// `start`, which must lie in a live shared file map.
pub(super) fn release_region(start: usize, len: usize) {
    let end = start + len;
    let page = 4096;
    let (begin, end) = (start.div_ceil(page) * page, end / page * page);
    if end > begin {
        // SAFETY: the caller guarantees a live shared file mapping; dropping
        // its pages keeps their contents in the file, and the next access
        // faults them back in. No data is read or written here.
        unsafe {
            libc::madvise(begin as *mut libc::c_void, end - begin, libc::MADV_DONTNEED);
        }
    }
}

impl<T: Pod> From<Vec<T>> for Scratch<T> {
    fn from(mut v: Vec<T>) -> Scratch<T> {
        let ptr = NonNull::new(v.as_mut_ptr()).unwrap_or(NonNull::dangling());
        Scratch {
            ptr,
            len: v.len(),
            owner: Owner::Vec(v),
        }
    }
}

impl<T: Pod> Default for Scratch<T> {
    fn default() -> Scratch<T> {
        Scratch::from(Vec::new())
    }
}

impl<T: Pod> Deref for Scratch<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` and `len` describe elements owned by `owner`, which
        // lives as long as `self` and never moves them (a vector's buffer
        // is never grown after construction, only truncated; a map stays
        // put while its Arc is held). Alignment and bounds were checked when
        // the map was taken; a vector's buffer is aligned by construction.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Pod> DerefMut for Scratch<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as for `deref`; `&mut self` makes this the only access
        // to the elements while the slice lives.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Pod + std::fmt::Debug> std::fmt::Debug for Scratch<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Scratch({} elements{})",
            self.len,
            if self.is_mapped() { ", spilled" } else { "" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::spill::{release_all, Spill};

    #[test]
    fn a_spilled_scratch_keeps_what_was_written_when_its_pages_go() {
        let dir = tempfile::tempdir().unwrap();
        let s = Spill::open(dir.path(), 1 << 20).unwrap();
        let n = 100_000;
        let mut a: Scratch<u64> = Scratch::zeroed(n, Some(&s));
        assert!(a.is_mapped(), "{:?}", s.failure());
        assert!(a.iter().all(|&x| x == 0), "reserved space reads as zeros");
        for (i, x) in a.iter_mut().enumerate() {
            *x = (i * i) as u64;
        }
        a.release(0..n / 2);
        release_all();
        assert!(a.iter().enumerate().all(|(i, &x)| x == (i * i) as u64));
        a.truncate(10);
        let frozen = a.into_array();
        assert!(frozen.is_mapped());
        assert_eq!(frozen.len(), 10);
        assert_eq!(frozen[9], 81);
        assert_eq!(s.written(), 8 * n as u64);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn in_memory_scratch_is_a_plain_vector() {
        let mut a: Scratch<u32> = Scratch::zeroed(5, None);
        assert!(!a.is_mapped());
        a[4] = 9;
        a.release(0..5);
        assert_eq!(a[4], 9, "releasing memory that is not spilled is a no-op");
        assert_eq!(a.into_array(), [0, 0, 0, 0, 9]);
        let empty: Scratch<u32> = Scratch::default();
        assert!(empty.is_empty());
    }

    #[test]
    fn a_spill_that_cannot_make_its_file_leaves_the_scratch_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let s = Spill::open(dir.path(), 0).unwrap();
        drop(dir);
        let mut a: Scratch<u32> = Scratch::zeroed(1000, Some(&s));
        assert!(!a.is_mapped());
        a[999] = 1;
        assert_eq!(a.iter().sum::<u32>(), 1);
        assert!(s
            .failure()
            .unwrap()
            .starts_with("cannot make a spill file: "));
    }
}
