//! Object id → dense index: an open-addressing table of u32 indices whose
//! keys live in the ids array itself (4 bytes a slot, load ≤ 2/3). Built in
//! parallel with compare-and-swap; when an id occurs twice the lowest index
//! (the first record in the file) wins.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

const EMPTY: u32 = u32::MAX;

#[derive(Debug, Clone, Default)]
pub struct IdIndex {
    slots: Vec<u32>,
    mask: usize,
}

#[inline]
fn hash(id: u64) -> u64 {
    // Ids are address-like (aligned, clustered): mix all bits into the top.
    let h = id.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^ (h >> 29)
}

impl IdIndex {
    pub fn build(ids: &[u64]) -> IdIndex {
        assert!(ids.len() < EMPTY as usize, "more than 2^32-1 objects");
        let capacity = (ids.len() * 3 / 2 + 2).next_power_of_two();
        let mask = capacity - 1;
        let mut slots = vec![EMPTY; capacity];
        {
            // SAFETY: AtomicU32 has the same layout as u32 and we hold the
            // only reference to `slots` for the duration of this block.
            let atomic: &[AtomicU32] =
                unsafe { &*(slots.as_mut_slice() as *mut [u32] as *const [AtomicU32]) };
            ids.par_iter().enumerate().for_each(|(i, &id)| {
                let i = i as u32;
                let mut s = hash(id) as usize & mask;
                loop {
                    let cur = atomic[s].load(Ordering::Acquire);
                    if cur == EMPTY {
                        match atomic[s].compare_exchange(
                            EMPTY,
                            i,
                            Ordering::AcqRel,
                            Ordering::Acquire,
                        ) {
                            Ok(_) => return,
                            Err(_) => continue,
                        }
                    }
                    if ids[cur as usize] == id {
                        if i < cur
                            && atomic[s]
                                .compare_exchange(cur, i, Ordering::AcqRel, Ordering::Acquire)
                                .is_err()
                        {
                            continue;
                        }
                        return;
                    }
                    s = (s + 1) & mask;
                }
            });
        }
        IdIndex { slots, mask }
    }

    #[inline]
    pub fn get(&self, ids: &[u64], id: u64) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mut s = hash(id) as usize & self.mask;
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

    /// Renumbers the stored indices (after objects were removed); `map[old]`
    /// is the new index of every index still stored.
    pub fn remap(&mut self, map: &[u32]) {
        self.slots.par_iter_mut().for_each(|s| {
            if *s != EMPTY {
                *s = map[*s as usize];
            }
        });
    }

    pub fn heap_bytes(&self) -> usize {
        self.slots.len() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_record_wins_and_missing_ids_are_absent() {
        let ids = vec![0x10, 0x20, 0x10, 0x30, 0x20, 0x10];
        let index = IdIndex::build(&ids);
        assert_eq!(index.get(&ids, 0x10), Some(0));
        assert_eq!(index.get(&ids, 0x20), Some(1));
        assert_eq!(index.get(&ids, 0x30), Some(3));
        assert_eq!(index.get(&ids, 0x40), None);
    }

    #[test]
    fn many_clustered_ids() {
        let ids: Vec<u64> = (0..100_000u64).map(|i| 0x1c_0000 + i * 8).collect();
        let index = IdIndex::build(&ids);
        for (i, &id) in ids.iter().enumerate() {
            assert_eq!(index.get(&ids, id), Some(i as u32));
        }
        assert_eq!(index.get(&ids, 0x1c_0004), None);
    }
}
