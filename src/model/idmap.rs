//! Object id → dense index: open addressing with linear probing over slots
//! that hold a u32 index (keys are read from the ids array), load ≤ 2/3.
//!
//! While references are resolved (tens of millions of lookups) a wide form
//! keeps the id beside the index in each 16-byte slot, so a lookup costs one
//! cache miss instead of two; it is then narrowed to 4 bytes a slot. Built in
//! parallel with compare-and-swap; when an id occurs twice the lowest index
//! (the first record in the file) wins.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rayon::prelude::*;

const EMPTY: u32 = u32::MAX;

/// Fibonacci hashing: ids are address-like (aligned, clustered), so the
/// slot comes from the top bits of the product, where every id bit counts.
#[inline]
fn slot(id: u64, shift: u32) -> usize {
    (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

fn geometry(objects: usize) -> (usize, u32) {
    let capacity = (objects * 3 / 2 + 2).next_power_of_two();
    (capacity, 64 - capacity.trailing_zeros())
}

#[repr(C, align(16))]
struct WideSlot {
    id: AtomicU64,
    index: AtomicU32,
}

/// The resolving form of the index: id and index side by side.
pub struct WideIdIndex {
    slots: Vec<WideSlot>,
    mask: usize,
    shift: u32,
    /// Records whose id an earlier record already had.
    pub repeated: u64,
}

impl WideIdIndex {
    pub fn build(ids: &[u64]) -> WideIdIndex {
        assert!(ids.len() < EMPTY as usize, "more than 2^32-1 objects");
        let (capacity, shift) = geometry(ids.len());
        let mask = capacity - 1;
        let mut slots = crate::mem::with_capacity(capacity);
        slots.par_extend((0..capacity).into_par_iter().map(|_| WideSlot {
            id: AtomicU64::new(0),
            index: AtomicU32::new(EMPTY),
        }));
        let repeated: u64 = ids
            .par_iter()
            .enumerate()
            .map(|(i, &id)| {
                if let Some(&ahead) = ids.get(i + 16) {
                    crate::mem::prefetch(&slots[slot(ahead, shift)]);
                }
                let i = i as u32;
                let mut s = slot(id, shift);
                loop {
                    let e: &WideSlot = &slots[s];
                    let cur = e.index.load(Ordering::Acquire);
                    if cur == EMPTY {
                        match e.index.compare_exchange(
                            EMPTY,
                            i,
                            Ordering::AcqRel,
                            Ordering::Acquire,
                        ) {
                            Ok(_) => {
                                e.id.store(id, Ordering::Relaxed);
                                return 0u64;
                            }
                            Err(_) => continue,
                        }
                    }
                    // The id field may not be written yet: compare by array.
                    if ids[cur as usize] == id {
                        if i < cur
                            && e.index
                                .compare_exchange(cur, i, Ordering::AcqRel, Ordering::Acquire)
                                .is_err()
                        {
                            continue;
                        }
                        return 1;
                    }
                    s = (s + 1) & mask;
                }
            })
            .sum();
        WideIdIndex {
            slots,
            mask,
            shift,
            repeated,
        }
    }

    /// Hints the CPU to fetch the slot of `id` (a later `get`).
    #[inline]
    pub fn prefetch(&self, id: u64) {
        crate::mem::prefetch(&self.slots[slot(id, self.shift)]);
    }

    #[inline]
    pub fn get(&self, id: u64) -> Option<u32> {
        let mut s = slot(id, self.shift);
        loop {
            let e = &self.slots[s];
            let cur = e.index.load(Ordering::Relaxed);
            if cur == EMPTY {
                return None;
            }
            if e.id.load(Ordering::Relaxed) == id {
                return Some(cur);
            }
            s = (s + 1) & self.mask;
        }
    }

    /// The compact form, renumbering indices through `map` when objects
    /// were removed.
    pub fn narrow(self, map: Option<&[u32]>) -> IdIndex {
        let mut slots = crate::mem::with_capacity(self.slots.len());
        slots.par_extend(self.slots.par_iter().map(|e| {
            let i = e.index.load(Ordering::Relaxed);
            match (i, map) {
                (EMPTY, _) => EMPTY,
                (i, Some(m)) => m[i as usize],
                (i, None) => i,
            }
        }));
        IdIndex {
            slots,
            mask: self.mask,
            shift: self.shift,
        }
    }
}

/// The lasting form of the index, kept with the dump for id look-ups.
#[derive(Debug, Clone, Default)]
pub struct IdIndex {
    slots: Vec<u32>,
    mask: usize,
    shift: u32,
}

impl IdIndex {
    pub fn build(ids: &[u64]) -> IdIndex {
        WideIdIndex::build(ids).narrow(None)
    }

    #[inline]
    pub fn get(&self, ids: &[u64], id: u64) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mut s = slot(id, self.shift);
        loop {
            let cur = self.slots[s];
            if cur == EMPTY {
                return None;
            }
            if ids[cur as usize] == id {
                return Some(cur);
            }
            s = (s + 1) & self.mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_record_wins_and_missing_ids_are_absent() {
        let ids = vec![0x10, 0x20, 0x10, 0x30, 0x20, 0x10];
        let wide = WideIdIndex::build(&ids);
        assert_eq!(wide.repeated, 3);
        assert_eq!(wide.get(0x10), Some(0));
        assert_eq!(wide.get(0x40), None);
        let index = wide.narrow(None);
        assert_eq!(index.get(&ids, 0x10), Some(0));
        assert_eq!(index.get(&ids, 0x20), Some(1));
        assert_eq!(index.get(&ids, 0x30), Some(3));
        assert_eq!(index.get(&ids, 0x40), None);
    }

    #[test]
    fn many_clustered_ids() {
        let ids: Vec<u64> = (0..100_000u64).map(|i| 0x1c_0000 + i * 8).collect();
        let wide = WideIdIndex::build(&ids);
        assert_eq!(wide.repeated, 0);
        for (i, &id) in ids.iter().enumerate() {
            assert_eq!(wide.get(id), Some(i as u32));
        }
        let index = wide.narrow(None);
        for (i, &id) in ids.iter().enumerate() {
            assert_eq!(index.get(&ids, id), Some(i as u32));
        }
        assert_eq!(index.get(&ids, 0x1c_0004), None);
        assert_eq!(index.get(&ids, 0), None);
    }

    #[test]
    fn empty() {
        let index = IdIndex::build(&[]);
        assert_eq!(index.get(&[], 5), None);
    }
}
