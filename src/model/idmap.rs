//! Object id → dense index: open addressing with linear probing over slots
//! that hold a u32 index (keys are read from the ids array), load ≤ 2/3.
//!
//! While references are resolved (tens of millions of lookups) a wide form
//! keeps the id beside the index in each 16-byte slot, so a lookup costs one
//! cache miss instead of two; it is then narrowed to 4 bytes a slot. Built in
//! parallel with compare-and-swap; when an id occurs twice the lowest index
//! (the first record in the file) wins.
//!
//! Ids come from the dump, so an attacker can pick them: with a fixed hash,
//! ids chosen to share one slot (`j × 0x9E37…7C15⁻¹`) would make every
//! insert walk one probe run, quadratic in the objects. The id is mixed with
//! a random key chosen per index before the multiply: the key is unknown to
//! whoever wrote the dump, and an xor keeps aligned blocks of ids together,
//! so clustered ids spread as evenly as before.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rayon::prelude::*;

const EMPTY: u32 = u32::MAX;

/// Keyed Fibonacci hashing: ids are address-like (aligned, clustered), so
/// the slot comes from the top bits of the product, where every id bit
/// counts; the key makes the slots of crafted ids unpredictable.
#[inline]
fn slot(id: u64, key: u64, shift: u32) -> usize {
    ((id ^ key).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> shift) as usize
}

/// A fresh random key (std's per-process random seed, advanced per call).
fn random_key() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0x6964_6d61_7020_6b65);
    h.finish()
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
    key: u64,
    /// Records whose id an earlier record already had.
    pub repeated: u64,
}

impl WideIdIndex {
    pub fn build(ids: &[u64]) -> WideIdIndex {
        assert!(ids.len() < EMPTY as usize, "more than 2^32-1 objects");
        let (capacity, shift) = geometry(ids.len());
        let mask = capacity - 1;
        let key = random_key();
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
                    crate::mem::prefetch(&slots[slot(ahead, key, shift)]);
                }
                let i = i as u32;
                let mut s = slot(id, key, shift);
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
            key,
            repeated,
        }
    }

    /// Hints the CPU to fetch the slot of `id` (a later `get`).
    #[inline]
    pub fn prefetch(&self, id: u64) {
        crate::mem::prefetch(&self.slots[slot(id, self.key, self.shift)]);
    }

    #[inline]
    pub fn get(&self, id: u64) -> Option<u32> {
        let mut s = slot(id, self.key, self.shift);
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

    /// The compact form.
    pub fn narrow(self) -> IdIndex {
        let mut slots = crate::mem::with_capacity(self.slots.len());
        slots.par_extend(
            self.slots
                .par_iter()
                .map(|e| e.index.load(Ordering::Relaxed)),
        );
        IdIndex {
            built: std::sync::OnceLock::from(Slots {
                slots,
                mask: self.mask,
                shift: self.shift,
                key: self.key,
            }),
        }
    }
}

/// How many of `ids` repeat an id that comes before them, without a hash
/// table when the ids fall into a few strictly increasing runs (V8 numbers
/// its objects in snapshot order: a 20-million-node snapshot had three
/// runs): each pair of runs is compared by binary searches of the shorter
/// one's ids in the longer, and a repeat is counted once, in the later
/// run. More than [`MAX_RUNS`] runs: the index counts them.
pub fn count_repeats(ids: &[u64]) -> u64 {
    const MAX_RUNS: usize = 16;
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    let mut start = 0;
    for (i, w) in ids.windows(2).enumerate() {
        if w[0] >= w[1] {
            runs.push(start..i + 1);
            start = i + 1;
            if runs.len() >= MAX_RUNS {
                return IdIndex::build_counting(ids).1;
            }
        }
    }
    if !ids.is_empty() {
        runs.push(start..ids.len());
    }
    // Positions (in the later run) whose id an earlier run holds.
    let mut repeat = vec![false; ids.len()];
    for (j, later) in runs.iter().enumerate() {
        for earlier in &runs[..j] {
            let (a, b) = (&ids[earlier.clone()], &ids[later.clone()]);
            if a.len() <= b.len() {
                for &id in a {
                    if let Ok(k) = b.binary_search(&id) {
                        repeat[later.start + k] = true;
                    }
                }
            } else {
                for (k, id) in b.iter().enumerate() {
                    if a.binary_search(id).is_ok() {
                        repeat[later.start + k] = true;
                    }
                }
            }
        }
    }
    repeat.iter().filter(|&&r| r).count() as u64
}

/// The lasting form of the index, kept with the dump for id look-ups. An
/// index made with [`IdIndex::lazy`] (a dump read back from the reopen
/// cache, where nothing needs ids until someone asks) is built from the ids
/// at the first look-up.
#[derive(Debug, Clone, Default)]
pub struct IdIndex {
    built: std::sync::OnceLock<Slots>,
}

#[derive(Debug, Clone)]
struct Slots {
    slots: Vec<u32>,
    mask: usize,
    shift: u32,
    key: u64,
}

impl IdIndex {
    pub fn build(ids: &[u64]) -> IdIndex {
        WideIdIndex::build(ids).narrow()
    }

    /// The compact form built directly (4 bytes a slot, never 16: for
    /// importers that look nothing up while building), with the count of
    /// records whose id an earlier record already had. The same index as
    /// `WideIdIndex::build(ids).narrow()`: the first record of an id wins.
    pub fn build_counting(ids: &[u64]) -> (IdIndex, u64) {
        assert!(ids.len() < EMPTY as usize, "more than 2^32-1 objects");
        let (capacity, shift) = geometry(ids.len());
        let mask = capacity - 1;
        let key = random_key();
        let mut slots = vec![EMPTY; capacity];
        let atomic = crate::mem::as_atomic(&mut slots);
        let repeated: u64 = ids
            .par_iter()
            .enumerate()
            .map(|(i, &id)| {
                if let Some(&ahead) = ids.get(i + 16) {
                    crate::mem::prefetch(&atomic[slot(ahead, key, shift)]);
                }
                let i = i as u32;
                let mut s = slot(id, key, shift);
                loop {
                    let e = &atomic[s];
                    let cur = e.load(Ordering::Acquire);
                    if cur == EMPTY {
                        match e.compare_exchange(EMPTY, i, Ordering::AcqRel, Ordering::Acquire) {
                            Ok(_) => return 0u64,
                            Err(_) => continue,
                        }
                    }
                    if ids[cur as usize] == id {
                        if i < cur
                            && e.compare_exchange(cur, i, Ordering::AcqRel, Ordering::Acquire)
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
        let index = IdIndex {
            built: std::sync::OnceLock::from(Slots {
                slots,
                mask,
                shift,
                key,
            }),
        };
        (index, repeated)
    }

    /// An index built from the ids at its first look-up (where an id
    /// repeats, the first object with it wins, as in every index here).
    pub fn lazy() -> IdIndex {
        IdIndex::default()
    }

    fn slots(&self, ids: &[u64]) -> &Slots {
        self.built.get_or_init(|| {
            let built = IdIndex::build(ids).built;
            built.into_inner().expect("narrow builds the slots")
        })
    }

    #[inline]
    pub fn get(&self, ids: &[u64], id: u64) -> Option<u32> {
        let Slots {
            slots,
            mask,
            shift,
            key,
        } = self.slots(ids);
        let (mask, shift, key) = (*mask, *shift, *key);
        if slots.is_empty() {
            return None;
        }
        let mut s = slot(id, key, shift);
        loop {
            let cur = slots[s];
            if cur == EMPTY {
                return None;
            }
            if ids[cur as usize] == id {
                return Some(cur);
            }
            s = (s + 1) & mask;
        }
    }
}

impl IdIndex {
    /// How many slots the look-ups of all `ids` read together: about
    /// 1.5 per id for a well-spread index (a test aid: crafted ids must
    /// cost what ordinary ones do).
    #[doc(hidden)]
    pub fn probes(&self, ids: &[u64]) -> u64 {
        let t = self.slots(ids);
        ids.iter()
            .map(|&id| {
                let mut s = slot(id, t.key, t.shift);
                let mut n = 1;
                while t.slots[s] != EMPTY && ids[t.slots[s] as usize] != id {
                    s = (s + 1) & t.mask;
                    n += 1;
                }
                n
            })
            .sum()
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
        let index = wide.narrow();
        assert_eq!(index.get(&ids, 0x10), Some(0));
        let (direct, repeated) = IdIndex::build_counting(&ids);
        assert_eq!(repeated, 3);
        for id in [0x10, 0x20, 0x30, 0x40] {
            assert_eq!(direct.get(&ids, id), index.get(&ids, id), "{id:x}");
        }
        assert_eq!(index.get(&ids, 0x20), Some(1));
        assert_eq!(index.get(&ids, 0x30), Some(3));
        assert_eq!(index.get(&ids, 0x40), None);
    }

    #[test]
    fn repeats_are_counted_as_the_index_counts_them() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut rand = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for case in 0..400 {
            let n = rand(200) as usize;
            let ids: Vec<u64> = match case % 4 {
                // A few increasing runs, ids drawn from a small range.
                0 | 1 => {
                    let mut v: Vec<u64> = (0..n).map(|_| rand(64)).collect();
                    let cuts = 1 + rand(5) as usize;
                    for part in v.chunks_mut(n / cuts + 1) {
                        part.sort_unstable();
                    }
                    v.dedup_by(|a, b| a == b && rand(2) == 0);
                    v
                }
                // Many runs: the index counts.
                2 => (0..n).map(|_| rand(40)).collect(),
                _ => (0..n as u64).map(|i| i * 3).collect(),
            };
            let want = IdIndex::build_counting(&ids).1;
            assert_eq!(count_repeats(&ids), want, "{ids:?}");
        }
        assert_eq!(count_repeats(&[]), 0);
        assert_eq!(count_repeats(&[5, 5, 5]), 2);
        assert_eq!(count_repeats(&[1, 2, 3, 1, 2, 9, 2]), 3);
    }

    #[test]
    fn many_clustered_ids() {
        let ids: Vec<u64> = (0..100_000u64).map(|i| 0x1c_0000 + i * 8).collect();
        let wide = WideIdIndex::build(&ids);
        assert_eq!(wide.repeated, 0);
        for (i, &id) in ids.iter().enumerate() {
            assert_eq!(wide.get(id), Some(i as u32));
        }
        let index = wide.narrow();
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

    /// Ids that the unkeyed multiplicative hash sends to one slot: `j ×
    /// inverse(0x9E37_79B9_7F4A_7C15)`, so `id × constant = j`, whose top
    /// bits are all zero.
    fn crafted(n: u64) -> Vec<u64> {
        const INVERSE: u64 = {
            // Newton's iteration for the inverse of an odd number mod 2^64.
            let c: u64 = 0x9E37_79B9_7F4A_7C15;
            let mut x = c;
            let mut i = 0;
            while i < 6 {
                x = x.wrapping_mul(2u64.wrapping_sub(c.wrapping_mul(x)));
                i += 1;
            }
            x
        };
        assert_eq!(INVERSE.wrapping_mul(0x9E37_79B9_7F4A_7C15), 1);
        (1..=n).map(|j| j.wrapping_mul(INVERSE)).collect()
    }

    #[test]
    fn crafted_ids_cost_about_what_ordinary_ones_do() {
        let n = 20_000;
        let crafted = crafted(n);
        let clustered: Vec<u64> = (0..n).map(|i| 0x1c_0000 + i * 8).collect();
        let random: Vec<u64> = (0..n)
            .map(|i| (i + 1).wrapping_mul(0xD1B5_4A32_D192_ED03).rotate_left(29))
            .collect();
        let cost = |ids: &[u64]| IdIndex::build(ids).probes(ids);
        let ordinary = cost(&clustered).max(cost(&random));
        let crafted = cost(&crafted);
        // An unkeyed index reads about n²/2 = 2·10^8 slots here.
        assert!(
            crafted <= 3 * ordinary,
            "crafted ids read {crafted} slots, ordinary ones {ordinary}"
        );
        assert!(ordinary <= 4 * n, "{ordinary} slots for {n} ordinary ids");
    }

    #[test]
    fn crafted_ids_are_all_found() {
        let ids = crafted(5_000);
        let index = IdIndex::build(&ids);
        for (i, &id) in ids.iter().enumerate() {
            assert_eq!(index.get(&ids, id), Some(i as u32));
        }
    }
}
