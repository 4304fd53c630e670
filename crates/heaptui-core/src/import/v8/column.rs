//! [`Column`]: a per-node or per-edge array the readers append to part by
//! part, in file order: a vector in memory, or, where the import spills
//! (`import::budget`), a spill file's array (`mem::Scratch`) made for the
//! count the snapshot declares, whose pages are given back as soon as a
//! part is written, so the column never sits whole in memory. A count
//! that was short makes a bigger file and copies what was written (a
//! snapshot whose header lies; never one V8 wrote).

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use bytemuck::Pod;
use rayon::prelude::*;

use crate::mem::spill::Spill;
use crate::mem::Scratch;

/// Elements copied per parallel task.
const COPY_BLOCK: usize = 1 << 16;

/// An array appended to in parts; read and written as a slice.
pub enum Column<T: Pod> {
    /// A vector (the import does not spill).
    Memory(Vec<T>),
    /// The first `len` elements of `scratch`, in a file of `spill`'s.
    Spilled {
        scratch: Scratch<T>,
        len: usize,
        /// Elements before this one have had their pages given back.
        released: usize,
        spill: Arc<Spill>,
    },
}

impl<T: Pod> Default for Column<T> {
    fn default() -> Column<T> {
        Column::Memory(Vec::new())
    }
}

impl<T: Pod + Send + Sync> Column<T> {
    /// An empty column with room for `capacity` elements: in a spill file
    /// where `spill` is given, else a vector (huge pages where the kernel
    /// allows, as the other importers' arrays).
    pub fn with_capacity(capacity: usize, spill: Option<&Arc<Spill>>) -> Column<T> {
        match spill {
            None => Column::Memory(crate::mem::with_capacity(capacity)),
            Some(s) => Column::Spilled {
                scratch: s.scratch(capacity),
                len: 0,
                released: 0,
                spill: s.clone(),
            },
        }
    }

    /// Appends `part`, copied in parallel; a spilled column then gives
    /// back the pages written so far.
    pub fn extend(&mut self, part: &[T]) {
        match self {
            Column::Memory(v) => v.par_extend(part.par_iter().copied()),
            Column::Spilled {
                scratch,
                len,
                released,
                spill,
            } => {
                if scratch.len() - *len < part.len() {
                    grow(scratch, *len, part.len(), spill);
                    *released = 0;
                }
                copy(&mut scratch[*len..*len + part.len()], part);
                *len += part.len();
                scratch.release(*released..*len);
                // The last page may hold elements of the next part.
                *released = *len - *len % (4096 / std::mem::size_of::<T>().max(1)).max(1);
            }
        }
    }

    /// The elements, as a scratch array (the vector, or the spill file's
    /// map cut to the elements written).
    pub fn into_scratch(self) -> Scratch<T> {
        match self {
            Column::Memory(v) => Scratch::from(v),
            Column::Spilled {
                mut scratch, len, ..
            } => {
                scratch.truncate(len);
                scratch
            }
        }
    }

    /// Whether the elements lie in a spill file.
    pub fn is_spilled(&self) -> bool {
        match self {
            Column::Memory(_) => false,
            Column::Spilled { scratch, .. } => scratch.is_mapped(),
        }
    }
}

/// Replaces `scratch` by one with room for `more` elements after its first
/// `len`, these copied.
#[cold]
fn grow<T: Pod + Send + Sync>(scratch: &mut Scratch<T>, len: usize, more: usize, spill: &Spill) {
    let room = (len + more).max(scratch.len().saturating_mul(2));
    let mut bigger: Scratch<T> = spill.scratch(room);
    copy(&mut bigger[..len], &scratch[..len]);
    bigger.release(0..len);
    *scratch = bigger;
}

/// `to` ← `from`, in parallel blocks.
fn copy<T: Pod + Send + Sync>(to: &mut [T], from: &[T]) {
    to.par_chunks_mut(COPY_BLOCK)
        .zip(from.par_chunks(COPY_BLOCK))
        .for_each(|(t, f)| t.copy_from_slice(f));
}

impl<T: Pod> Deref for Column<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Column::Memory(v) => v,
            Column::Spilled { scratch, len, .. } => &scratch[..*len],
        }
    }
}

impl<T: Pod> DerefMut for Column<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match self {
            Column::Memory(v) => v,
            Column::Spilled { scratch, len, .. } => &mut scratch[..*len],
        }
    }
}

impl<T: Pod + std::fmt::Debug> std::fmt::Debug for Column<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Column::Memory(v) => write!(f, "Column({} elements)", v.len()),
            Column::Spilled { len, .. } => write!(f, "Column({len} elements, spilled)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spilled_column_reads_as_a_vector_and_grows_past_its_count() {
        let dir = tempfile::tempdir().unwrap();
        let spill = Arc::new(Spill::open(dir.path(), 1 << 20).unwrap());
        let mut spilled: Column<u32> = Column::with_capacity(1000, Some(&spill));
        let mut memory: Column<u32> = Column::with_capacity(1000, None);
        assert!(spilled.is_spilled() && !memory.is_spilled());
        // Parts of odd lengths cross pages; the count (1000) is short.
        let mut next = 0u32;
        for n in [7usize, 1500, 0, 3, 4096, 999] {
            let part: Vec<u32> = (next..next + n as u32).map(|x| x * 3).collect();
            next += n as u32;
            spilled.extend(&part);
            memory.extend(&part);
            crate::mem::spill::release_all();
        }
        assert_eq!(spilled.len(), next as usize);
        assert_eq!(&spilled[..], &memory[..]);
        spilled[5] = 1;
        assert_eq!(spilled[5], 1);
        let s = spilled.into_scratch();
        assert!(s.is_mapped());
        assert_eq!(s.len(), next as usize);
        assert_eq!(s[next as usize - 1], (next - 1) * 3);
        assert!(!memory.into_scratch().is_mapped());
    }
}
