//! The verification's per-thread scratch ([`Workspace`]) and the work
//! allowance of one type ([`Budget`]).

use std::sync::Arc;

use super::hubs::{Hub, Hubs};
use crate::progress::Progress;

/// Why verification of a block stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    Budget,
    Cancelled,
}

/// The backstop: a type whose work, counted as done (a marking walk's
/// objects walked, not its settled price), passes this many times its
/// budget stops too. Where hubs work, a type's walks do far less than
/// that; where they fail (say more huge regions than [`super::hubs::MAX_HUBS`]),
/// walks charged a capped price could otherwise go on for
/// the square of the heap. Only this cut depends on the thread count (the
/// work done does, through the hubs made by then), and only where the
/// hubs failed.
const BACKSTOP: u64 = 16;

/// Work allowance of one type (object pairs and objects visited).
pub(crate) struct Budget<'p> {
    pub used: u64,
    pub limit: Option<u64>,
    pub(super) progress: &'p Progress,
    /// Units of work done so far, charged or not: what the checks and the
    /// backstop count.
    ticked: u64,
    pub(super) next_check: u64,
    /// Units between two checks: fewer where a memory limit is kept, whose
    /// watcher each check helps ([`crate::mem::pace`]).
    check_every: u64,
}

impl<'p> Budget<'p> {
    pub fn new(limit: Option<u64>, progress: &'p Progress) -> Self {
        Budget {
            used: 0,
            limit,
            progress,
            ticked: 0,
            next_check: 0,
            check_every: if crate::mem::watch::limited() {
                64
            } else {
                4096
            },
        }
    }

    #[inline]
    pub(super) fn spend(&mut self, units: u64) -> Result<(), Stop> {
        self.used += units;
        self.check(units)?;
        match self.limit {
            Some(l) if self.used > l => Err(Stop::Budget),
            _ => Ok(()),
        }
    }

    /// Work whose charge is settled afterwards (a marking walk, charged its
    /// reach's size whatever the hubs made it skip, see [`Budget::settle`]):
    /// counts towards the next look at the memory watcher and the
    /// cancellation and towards the backstop only, and stops the walk once
    /// `pending` units would already be over the limit.
    #[inline]
    pub(super) fn tick(&mut self, units: u64, pending: u64) -> Result<(), Stop> {
        self.check(units)?;
        match self.limit {
            Some(l) if self.used.saturating_add(pending) > l => Err(Stop::Budget),
            Some(l) if self.ticked > l.saturating_mul(BACKSTOP) => Err(Stop::Budget),
            _ => Ok(()),
        }
    }

    /// Charges the settled price of work already ticked.
    #[inline]
    pub(super) fn settle(&mut self, units: u64) -> Result<(), Stop> {
        self.used += units;
        match self.limit {
            Some(l) if self.used > l => Err(Stop::Budget),
            _ => Ok(()),
        }
    }

    /// Every `check_every` units: a look for the memory watcher
    /// ([`crate::mem::pace`]) and at the cancellation.
    #[inline]
    fn check(&mut self, units: u64) -> Result<(), Stop> {
        self.ticked += units;
        if self.ticked >= self.next_check {
            self.next_check = self.ticked + self.check_every;
            crate::mem::pace();
            if self.progress.is_cancelled() {
                return Err(Stop::Cancelled);
            }
        }
        Ok(())
    }
}

impl Drop for Budget<'_> {
    fn drop(&mut self) {
        crate::work::add_budgeted(self.used);
    }
}

/// Per-object `u32` values of one walk, `NONE` where unset: an
/// open-addressing table (linear probing, Fibonacci hashing) holding only
/// the objects the walk touched. Its memory follows the walk, not the
/// heap: a dense per-object array per thread cost each thread a page per
/// scattered object touched (4 KiB for 4 bytes), so verification's memory
/// grew with the thread count (10M heap: 1.19 GB with one thread, 1.74 GB
/// with sixteen). [`ScratchMap::clear`] is O(1): every entry carries the
/// generation that wrote it, and only the current generation's entries
/// count, so clearing starts a new generation.
///
/// A walk that touches a large part of the heap (one that crosses a hub
/// reaching everything) would grow the table past a plain array of the
/// heap's objects (12 bytes an entry at most half full): so when it would,
/// the walk goes on in such an array ([`Dense`]), which `clear` drops. A
/// walk that writes at most three values (the marking walks' stamps) takes
/// two bits an object, as soon as the table outgrows those; others take 4
/// bytes an object, when the table would outgrow that (the HPROF test
/// dump's 9.8 M-object walk made a 400 MB table and set its peak).
pub(super) struct ScratchMap {
    entries: Vec<Entry>,
    generation: u32,
    len: usize,
    shift: u32,
    /// Every key is below this: the heap's object count.
    keys: usize,
    dense: Dense,
}

/// The plain-array form of a [`ScratchMap`], for the rest of a walk.
enum Dense {
    /// Not in use: the table holds the values.
    Off,
    /// Two bits a key: 0 unset, else `values[code - 1]` (at most three).
    Codes { bits: Vec<u64>, values: Vec<u32> },
    /// Per key `!value` (0 = unset).
    Full(Vec<u32>),
}

/// Most values [`Dense::Codes`] holds.
const CODES: usize = 3;

impl Dense {
    /// The code of `key` in `bits`.
    #[inline(always)]
    fn code(bits: &[u64], key: u32) -> usize {
        (bits[key as usize / 32] >> (2 * (key % 32)) & 3) as usize
    }

    /// Sets the code of `key` in `bits`.
    #[inline(always)]
    fn put_code(bits: &mut [u64], key: u32, code: usize) {
        let (w, shift) = (&mut bits[key as usize / 32], 2 * (key % 32));
        *w = *w & !(3 << shift) | (code as u64) << shift;
    }

    /// The code of `value` among `values`, adding it where there is room
    /// (`NONE` is 0, unset); `None` when there is none.
    #[inline(always)]
    fn code_of(values: &mut Vec<u32>, value: u32) -> Option<usize> {
        if value == NONE {
            return Some(0);
        }
        match values.iter().position(|&v| v == value) {
            Some(i) => Some(i + 1),
            None if values.len() < CODES => {
                values.push(value);
                Some(values.len())
            }
            None => None,
        }
    }
}

#[derive(Clone, Copy, Default)]
struct Entry {
    key: u32,
    generation: u32,
    value: u32,
}

/// Smallest table, in entries (log2).
const MIN_BITS: u32 = 10;

impl ScratchMap {
    /// A map of keys below `keys`.
    pub(super) fn new(keys: usize) -> Self {
        ScratchMap {
            entries: vec![Entry::default(); 1 << MIN_BITS],
            generation: 1,
            len: 0,
            shift: 32 - MIN_BITS,
            keys,
            dense: Dense::Off,
        }
    }

    #[inline(always)]
    fn home(&self, key: u32) -> usize {
        (key.wrapping_mul(0x9e37_79b9) >> self.shift) as usize
    }

    /// The slot of `key`, and whether it holds `key` (else it is the free
    /// slot where `key` goes).
    #[inline(always)]
    fn find(&self, key: u32) -> (usize, bool) {
        let mask = self.entries.len() - 1;
        let mut i = self.home(key);
        loop {
            let e = &self.entries[i];
            if e.generation != self.generation {
                return (i, false);
            }
            if e.key == key {
                return (i, true);
            }
            i = (i + 1) & mask;
        }
    }

    #[inline(always)]
    pub(super) fn get(&self, key: u32) -> u32 {
        match &self.dense {
            Dense::Off => match self.find(key) {
                (i, true) => self.entries[i].value,
                _ => NONE,
            },
            Dense::Codes { bits, values } => match Dense::code(bits, key) {
                0 => NONE,
                c => values[c - 1],
            },
            Dense::Full(dense) => !dense[key as usize],
        }
    }

    #[inline(always)]
    pub(super) fn set(&mut self, key: u32, value: u32) {
        self.set_if_not(key, value);
    }

    /// Sets `key` to `value` unless it already holds it; true if it did not.
    #[inline(always)]
    pub(super) fn set_if_not(&mut self, key: u32, value: u32) -> bool {
        match &mut self.dense {
            Dense::Off => {}
            Dense::Codes { bits, values } => {
                let Some(code) = Dense::code_of(values, value) else {
                    self.widen();
                    return self.set_if_not(key, value);
                };
                if Dense::code(bits, key) == code {
                    return false;
                }
                Dense::put_code(bits, key, code);
                return true;
            }
            Dense::Full(dense) => {
                let slot = &mut dense[key as usize];
                if *slot == !value {
                    return false;
                }
                *slot = !value;
                return true;
            }
        }
        match self.find(key) {
            (i, true) if self.entries[i].value == value => false,
            (i, true) => {
                self.entries[i].value = value;
                true
            }
            (i, false) => {
                self.put(i, key, value);
                true
            }
        }
    }

    #[inline(always)]
    fn put(&mut self, i: usize, key: u32, value: u32) {
        self.entries[i] = Entry {
            key,
            generation: self.generation,
            value,
        };
        self.len += 1;
        if self.len * 2 > self.entries.len() {
            self.resize(self.entries.len() * 2);
        }
    }

    /// Rehashes the current entries into a table of `size` entries, or
    /// moves them to a plain array where that is smaller.
    fn resize(&mut self, size: usize) {
        let table = size * std::mem::size_of::<Entry>();
        if table >= self.keys / 4 {
            let live = self
                .entries
                .iter()
                .filter(|e| e.generation == self.generation);
            let mut values: Vec<u32> = Vec::new();
            let few = live
                .clone()
                .all(|e| Dense::code_of(&mut values, e.value).is_some());
            if few {
                let mut bits = vec![0u64; self.keys.div_ceil(32)];
                for e in live {
                    let code = Dense::code_of(&mut values, e.value).expect("counted above");
                    Dense::put_code(&mut bits, e.key, code);
                }
                return self.go_dense(Dense::Codes { bits, values });
            }
        }
        if table >= self.keys * 4 {
            let mut dense: Vec<u32> = crate::mem::zeroed(self.keys);
            for e in &self.entries {
                if e.generation == self.generation {
                    dense[e.key as usize] = !e.value;
                }
            }
            return self.go_dense(Dense::Full(dense));
        }
        let old = std::mem::replace(&mut self.entries, vec![Entry::default(); size]);
        self.shift = 32 - size.trailing_zeros();
        let generation = self.generation;
        // The fresh table is all generation 0; keep the current one above it.
        let live: Vec<Entry> = old
            .into_iter()
            .filter(|e| e.generation == generation)
            .collect();
        self.generation = 1;
        self.len = 0;
        for e in live {
            let (i, _) = self.find(e.key);
            self.entries[i] = Entry { generation: 1, ..e };
            self.len += 1;
        }
    }

    /// Goes on in `dense`, with the table back to its smallest.
    fn go_dense(&mut self, dense: Dense) {
        self.dense = dense;
        self.entries = vec![Entry::default(); 1 << MIN_BITS];
        self.shift = 32 - MIN_BITS;
        self.generation = 1;
        self.len = 0;
    }

    /// Two-bit codes to a plain array, for a fourth value.
    fn widen(&mut self) {
        let Dense::Codes { bits, values } = std::mem::replace(&mut self.dense, Dense::Off) else {
            return;
        };
        let mut dense: Vec<u32> = crate::mem::zeroed(self.keys);
        for (w, &word) in bits.iter().enumerate().filter(|(_, &w)| w != 0) {
            for k in 0..32 {
                let code = (word >> (2 * k) & 3) as usize;
                if code != 0 {
                    dense[w * 32 + k] = !values[code - 1];
                }
            }
        }
        self.dense = Dense::Full(dense);
    }

    /// Unsets every key; a table grown far beyond what the last walk
    /// needed shrinks back.
    pub(super) fn clear(&mut self) {
        // The array's walk is over; its table is already the smallest.
        self.dense = Dense::Off;
        let used = self.len;
        self.len = 0;
        if self.entries.len() > 1 << 16 && used * 16 < self.entries.len() {
            self.entries =
                vec![Entry::default(); (used * 4).next_power_of_two().max(1 << MIN_BITS)];
            self.shift = 32 - self.entries.len().trailing_zeros();
            self.generation = 1;
        } else if self.generation == u32::MAX {
            self.entries.fill(Entry::default());
            self.generation = 1;
        } else {
            self.generation += 1;
        }
    }
}

const NONE: u32 = u32::MAX;

/// Per-thread scratch of the verification walks, holding only what the
/// current walk touched (see [`ScratchMap`]): the memory of verification
/// grows with the walks in flight, not with the thread count times the heap.
pub(crate) struct Workspace {
    objects: usize,
    pub(super) fwd: ScratchMap,
    pub(super) bwd: ScratchMap,
    /// `2e` = in reach of the current representative, `2e + 1` = counted
    /// as additional for its class (e = epoch); cleared at each epoch.
    pub(super) stamp: ScratchMap,
    pub(super) epoch: u32,
    pub(super) pairs: Vec<(u32, u32)>,
    pub(super) stack: Vec<u32>,
    pub(super) explored: Vec<u32>,
    pub(super) deferred: Vec<u32>,
    /// Hubs entered by the current representative's walk.
    pub(super) reached: Vec<Arc<Hub>>,
    /// Whether this workspace holds a place among the hubs' big walks
    /// (given back with [`Workspace::leave_big`]).
    pub(super) big: bool,
}

impl Workspace {
    /// Scratch for walks over a heap of `objects` objects.
    pub fn new(objects: usize) -> Self {
        Workspace {
            objects,
            fwd: ScratchMap::new(objects),
            bwd: ScratchMap::new(objects),
            stamp: ScratchMap::new(objects),
            epoch: 0,
            pairs: Vec::new(),
            stack: Vec::new(),
            explored: Vec::new(),
            deferred: Vec::new(),
            reached: Vec::new(),
            big: false,
        }
    }

    /// After a big walk's representative: gives its place among the big
    /// walks back, with the scratch that grew to the heap's size.
    pub(super) fn leave_big(&mut self, hubs: &Hubs) {
        if self.big {
            self.big = false;
            let epoch = self.epoch;
            self.release();
            self.epoch = epoch;
            hubs.leave_big();
        }
    }

    /// Shrinks the tables and lists back to their smallest, for a workspace
    /// going back to the pool, or for a walk that gives its scratch back
    /// before it starts again (its stamp value is its own, not read back
    /// from the epoch).
    pub fn release(&mut self) {
        debug_assert!(!self.big, "a big walk's place is given back first");
        *self = Workspace::new(self.objects);
    }

    /// A new representative: its stamps start empty.
    pub(super) fn next_epoch(&mut self) -> u32 {
        self.stamp.clear();
        if self.epoch >= (u32::MAX >> 1) - 1 {
            self.epoch = 0;
        }
        self.epoch += 1;
        self.epoch
    }

    /// Whether `p` is in reach of the current representative.
    #[inline]
    pub(super) fn in_r0(&self, p: u32, in_r0: u32) -> bool {
        self.stamp.get(p) == in_r0 || self.reached.iter().any(|h| h.reach.get(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The table, its growth into a plain array and its clearing answer
        /// as a hash map does, whatever the number of keys touched.
        #[test]
        fn scratch_map_is_a_map(
            keys in prop_oneof![1usize..5000, 100_000usize..1_000_000],
            walks in proptest::collection::vec(
                proptest::collection::vec((any::<u32>(), 0u32..4, any::<bool>()), 0..3000),
                1..4,
            ),
        ) {
            let mut map = ScratchMap::new(keys);
            for walk in walks {
                let mut model = std::collections::HashMap::new();
                for (k, v, only_if_not) in walk {
                    let k = k % keys as u32;
                    if only_if_not {
                        let changed = model.get(&k) != Some(&v);
                        prop_assert_eq!(map.set_if_not(k, v), changed);
                    } else {
                        map.set(k, v);
                    }
                    model.insert(k, v);
                    prop_assert_eq!(map.get(k), v);
                }
                let few = keys.min(5000) as u32;
                for k in (0..few).chain(model.keys().copied()) {
                    prop_assert_eq!(map.get(k), model.get(&k).copied().unwrap_or(NONE));
                }
                map.clear();
                for k in (0..few).chain(model.keys().copied()) {
                    prop_assert_eq!(map.get(k), NONE);
                }
            }
        }
    }
}
