//! Object id → dense index: open addressing with linear probing over slots
//! that hold a u32 index (keys are read from the ids array), load ≤ 2/3.
//!
//! While references are resolved (tens of millions of lookups) a wide form
//! keeps the id beside the index in each slot, so a lookup costs one cache
//! miss instead of two: 8 bytes a slot where ids are addresses that fit 32
//! bits once rebased (a heap's usually do), 16 otherwise. Both are built in
//! parallel with compare-and-swap; when an id occurs twice the lowest index
//! (the first record in the file) wins. Where ids come in long ascending
//! runs (a JVM's heap dump), the resolving index can instead be bitmaps
//! over the runs' addresses (`idruns`, [`WideIdIndex::build_in_runs`]).
//!
//! Ids come from the dump, so an attacker can pick them: with a fixed hash,
//! ids chosen to share one slot (`j × 0x9E37…7C15⁻¹`) would make every
//! insert walk one probe run, quadratic in the objects. The id is mixed with
//! a random key chosen per index before the multiply: the key is unknown to
//! whoever wrote the dump, and an xor keeps aligned blocks of ids together,
//! so clustered ids spread as evenly as before.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use rayon::prelude::*;

use crate::mem::spill::Spill;
use crate::mem::Scratch;

use super::idruns::Runs;
use super::Ids;

/// Ids by object index, as [`IdIndex`] reads them: a slice (an importer's)
/// or the model's compact [`Ids`].
pub trait IdList {
    /// The id of object `i`.
    fn id_at(&self, i: usize) -> u64;
    /// How many ids.
    fn count(&self) -> usize;
    /// Every id as a slice (copied out of a compact form).
    fn as_wide(&self) -> std::borrow::Cow<'_, [u64]>;
}

impl IdList for [u64] {
    #[inline]
    fn id_at(&self, i: usize) -> u64 {
        self[i]
    }
    fn count(&self) -> usize {
        self.len()
    }
    fn as_wide(&self) -> std::borrow::Cow<'_, [u64]> {
        std::borrow::Cow::Borrowed(self)
    }
}

impl IdList for Ids {
    #[inline]
    fn id_at(&self, i: usize) -> u64 {
        self.get(i)
    }
    fn count(&self) -> usize {
        self.len()
    }
    fn as_wide(&self) -> std::borrow::Cow<'_, [u64]> {
        std::borrow::Cow::Owned(self.to_vec())
    }
}

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

/// The number of groups of a packed table for `objects` ids: 5 slots for
/// 3 ids (load 0.6), at least two groups. Not rounded up to a power of
/// two (a group's place is taken from the hash by a multiply, not a
/// shift): rounding left the load anywhere between 0.33 and 0.67, so the
/// table took 8 to 16 bytes an id, 21 on a heap of 100 million objects.
fn packed_groups(objects: usize) -> usize {
    (objects * 5 / 3).div_ceil(1 << GROUP).max(2)
}

#[repr(C, align(16))]
struct WideSlot {
    id: AtomicU64,
    index: AtomicU32,
}

/// The resolving form of the index: each slot holds the index beside the
/// id, or beside the id's 32-bit key where every id has one.
pub struct WideIdIndex {
    table: Table,
    mask: usize,
    shift: u32,
    key: u64,
    /// Records whose id an earlier record already had.
    pub repeated: u64,
}

enum Table {
    /// Ids are addresses: once the smallest is subtracted and their common
    /// alignment divided out, those of a heap of up to 32 GiB in 8-byte
    /// steps fit 32 bits. A slot is then `key << 32 | (index + 1)` in 8
    /// bytes (0: empty, so fresh zeroed memory is an empty table), half the
    /// memory of a wide slot, still one cache line a look-up.
    Packed {
        /// `groups << GROUP` slots.
        slots: Scratch<u64>,
        base: u64,
        align: u32,
        /// Keys go in groups of `2^GROUP` (see [`packed_slot`]).
        groups: usize,
    },
    Wide(Vec<WideSlot>),
    /// Ids in long ascending runs: bitmaps with running counts, and a
    /// hash table of the ids outside them with their indices (see
    /// `idruns`).
    Runs {
        runs: Runs,
        rest: Option<Box<(WideIdIndex, Vec<u32>)>>,
    },
}

/// The 32-bit key of `id` in a packed table, `None` for an id no object has.
#[inline]
fn packed_key(id: u64, base: u64, align: u32) -> Option<u64> {
    let d = id.checked_sub(base)?;
    if d & ((1u64 << align) - 1) != 0 {
        return None;
    }
    let k = d >> align;
    (k <= u32::MAX as u64).then_some(k)
}

/// What the index needs to know of all ids before it is built (their
/// range and common alignment), gathered by whoever reads them first so
/// the build needs no pass of its own: [`IdSpan::add`] each id, and
/// [`IdSpan::merge`] the spans of parts.
#[derive(Debug, Clone, Copy)]
pub struct IdSpan {
    min: u64,
    max: u64,
    /// The ids' bits ANDed and ORed: their XOR has the bits in which some
    /// two ids differ, and its trailing zeros are those every `id - min`
    /// shares (the lowest bit in which two numbers differ is the lowest
    /// of their difference).
    all: u64,
    any: u64,
}

impl Default for IdSpan {
    fn default() -> IdSpan {
        IdSpan {
            min: u64::MAX,
            max: 0,
            all: u64::MAX,
            any: 0,
        }
    }
}

impl IdSpan {
    /// Takes one id into the span.
    #[inline]
    pub fn add(&mut self, id: u64) {
        self.min = self.min.min(id);
        self.max = self.max.max(id);
        self.all &= id;
        self.any |= id;
    }

    /// The span of both spans' ids.
    pub fn merge(self, other: IdSpan) -> IdSpan {
        IdSpan {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
            all: self.all & other.all,
            any: self.any | other.any,
        }
    }

    /// The span of `ids`, read in parallel.
    pub fn of(ids: &[u64]) -> IdSpan {
        ids.par_chunks(1 << 16)
            .map(|part| {
                let mut s = IdSpan::default();
                part.iter().for_each(|&id| s.add(id));
                s
            })
            .reduce(IdSpan::default, IdSpan::merge)
    }

    /// The number of low bits in which no two ids differ, if there are ids.
    fn align(&self) -> Option<u32> {
        (self.min <= self.max).then(|| (self.all ^ self.any).trailing_zeros().min(63))
    }

    /// The base and alignment that give every id a 32-bit key, if they
    /// exist.
    fn packing(&self) -> Option<(u64, u32)> {
        let align = self.align()?;
        ((self.max - self.min) >> align <= u32::MAX as u64).then_some((self.min, align))
    }
}

impl WideIdIndex {
    /// The index of `ids` (position = object index), gathering their span first.
    pub fn build(ids: &[u64]) -> WideIdIndex {
        WideIdIndex::build_spanning(ids, IdSpan::of(ids))
    }

    /// [`WideIdIndex::build`] with the packed table (the form ids that are
    /// addresses take) in a spill file where `spill` is given: the text
    /// importer's index over the memory budget (16 bytes an object, read
    /// at random by the resolving, its pages dropped by the budget's
    /// watcher like any spilled array's).
    pub fn build_in(ids: &[u64], spill: Option<&Spill>) -> WideIdIndex {
        WideIdIndex::build_spanning_in(ids, IdSpan::of(ids), spill)
    }

    /// The index of `ids`, whose span the caller gathered as it read them:
    /// bitmaps over their runs where they come in long ascending runs (see
    /// `idruns`), the hash table otherwise. For a caller that resolves few
    /// references through the index (the HPROF importer finds three in
    /// four among the neighbouring records, and class references by
    /// class): a look-up in the runs takes more steps than a hash slot
    /// that is cached or fetched ahead, so where every reference is
    /// resolved through the index it costs more than the smaller build
    /// saves (the text importer's 10 M-object heap on the 16-core device,
    /// whose 300 MB cache held the whole hash table: index 167–178 → 56–59
    /// ms, resolving 585–645 → 792–809 ms).
    /// Where the ids do not come in runs, the hash table is made in
    /// `spill` where given (as [`WideIdIndex::build_in`]).
    pub fn build_in_runs(ids: &[u64], span: IdSpan, spill: Option<&Spill>) -> WideIdIndex {
        if let Some((runs, rest)) = span.align().and_then(|a| Runs::build(ids, a)) {
            let rest = (!rest.ids.is_empty()).then(|| {
                let index = WideIdIndex::build_spanning(&rest.ids, IdSpan::of(&rest.ids));
                Box::new((index, rest.index))
            });
            return WideIdIndex {
                repeated: rest.as_ref().map_or(0, |r| r.0.repeated),
                table: Table::Runs { runs, rest },
                mask: 0,
                shift: 0,
                key: 0,
            };
        }
        WideIdIndex::build_spanning_in(ids, span, spill)
    }

    /// Whether [`WideIdIndex::prefetch`] fetches anything: a caller may
    /// then resolve at once instead of queueing look-ups behind fetches.
    pub fn fetches_ahead(&self) -> bool {
        match &self.table {
            Table::Runs { runs, .. } => runs.fetches_ahead(),
            _ => true,
        }
    }

    /// The bytes its tables take.
    pub fn bytes(&self) -> usize {
        match &self.table {
            Table::Packed { slots, .. } => std::mem::size_of_val(&slots[..]),
            Table::Wide(slots) => std::mem::size_of_val(&slots[..]),
            Table::Runs { runs, rest } => {
                runs.bytes()
                    + rest
                        .as_ref()
                        .map_or(0, |r| r.0.bytes() + std::mem::size_of_val(&r.1[..]))
            }
        }
    }

    /// Whether the index took the form of runs (a test aid).
    #[cfg(test)]
    pub fn in_runs(&self) -> bool {
        matches!(self.table, Table::Runs { .. })
    }

    /// The index of `ids` as a hash table, whose span the caller gathered
    /// as it read them.
    pub fn build_spanning(ids: &[u64], span: IdSpan) -> WideIdIndex {
        WideIdIndex::build_spanning_in(ids, span, None)
    }

    /// [`WideIdIndex::build_spanning`], the packed table in `spill` where
    /// given.
    fn build_spanning_in(ids: &[u64], span: IdSpan, spill: Option<&Spill>) -> WideIdIndex {
        assert!(ids.len() < EMPTY as usize, "more than 2^32-1 objects");
        let (capacity, shift) = geometry(ids.len());
        let mask = capacity - 1;
        let key = random_key();
        let (table, repeated) = match span.packing() {
            Some((base, align)) => build_packed(ids, spill, key, base, align),
            None => build_wide(ids, capacity, (mask, shift, key)),
        };
        WideIdIndex {
            table,
            mask,
            shift,
            key,
            repeated,
        }
    }

    /// The slot where the search for `id` begins, `None` where a packed
    /// table cannot hold it.
    #[inline]
    fn home(&self, id: u64) -> Option<(usize, u64)> {
        match &self.table {
            Table::Packed {
                base,
                align,
                groups,
                ..
            } => {
                let k = packed_key(id, *base, *align)?;
                Some((packed_slot(k, self.key, *groups), k))
            }
            Table::Wide(_) => Some((slot(id, self.key, self.shift), id)),
            Table::Runs { .. } => None,
        }
    }

    /// Hints the CPU to fetch the slot of `id` (a later `get`).
    #[inline]
    pub fn prefetch(&self, id: u64) {
        if let Table::Runs { runs, .. } = &self.table {
            return runs.prefetch(id);
        }
        if let Some((s, _)) = self.home(id) {
            match &self.table {
                Table::Packed { slots, .. } => crate::mem::prefetch(&slots[s]),
                Table::Wide(slots) => crate::mem::prefetch(&slots[s]),
                Table::Runs { .. } => {}
            }
        }
    }

    /// The object index of `id`, if some object has it.
    #[inline]
    pub fn get(&self, id: u64) -> Option<u32> {
        if let Table::Runs { runs, rest } = &self.table {
            return runs.get(id).or_else(|| {
                let (index, of) = &**rest.as_ref()?;
                index.get(id).map(|i| of[i as usize])
            });
        }
        let (mut s, k) = self.home(id)?;
        match &self.table {
            Table::Packed { slots, .. } => loop {
                let e = slots[s];
                if e == 0 {
                    return None;
                }
                if e >> 32 == k {
                    return Some((e as u32).wrapping_sub(1));
                }
                s = next(s, slots.len());
            },
            Table::Wide(slots) => loop {
                let e = &slots[s];
                let cur = e.index.load(Ordering::Relaxed);
                if cur == EMPTY {
                    return None;
                }
                if e.id.load(Ordering::Relaxed) == id {
                    return Some(cur);
                }
                s = (s + 1) & self.mask;
            },
            Table::Runs { .. } => None,
        }
    }
}

/// Keys in groups of `2^GROUP` (16 keys, two cache lines of slots): a
/// group's first slot comes from the hash of the key's high bits (the
/// product's high word times the number of groups, whose high word is
/// the group), and each key sits at its offset within the group. Keys are addresses, and a
/// heap's references point near their object more often than not (a
/// `String` to the array allocated right after it), so neighbouring
/// look-ups tend to read one cache line; the random key still spreads the
/// groups.
const GROUP: u32 = 4;

#[inline]
fn packed_slot(k: u64, key: u64, groups: usize) -> usize {
    let h = ((k >> GROUP) ^ key).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let g = ((h as u128 * groups as u128) >> 64) as usize;
    (g << GROUP) | (k & ((1 << GROUP) - 1)) as usize
}

/// The slot after `s` in a table of `len` slots (probes wrap around).
#[inline(always)]
fn next(s: usize, len: usize) -> usize {
    if s + 1 == len {
        0
    } else {
        s + 1
    }
}

/// A slot word that compare-and-swap claims.
trait Word {
    type V: Copy + Ord;
    fn get(&self) -> Self::V;
    /// Replaces `cur` by `new`; false when the word no longer holds `cur`.
    fn swap(&self, cur: Self::V, new: Self::V) -> bool;
}

impl Word for AtomicU32 {
    type V = u32;
    fn get(&self) -> u32 {
        self.load(Ordering::Acquire)
    }
    fn swap(&self, cur: u32, new: u32) -> bool {
        self.compare_exchange(cur, new, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

impl Word for AtomicU64 {
    type V = u64;
    fn get(&self) -> u64 {
        self.load(Ordering::Acquire)
    }
    fn swap(&self, cur: u64, new: u64) -> bool {
        self.compare_exchange(cur, new, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

/// A slot of a table that one thread fills alone: a claim is a plain read
/// and write. An atomic compare-and-swap costs tens of cycles and holds
/// back the memory accesses around it; with one worker thread, the
/// packed table's build was a tenth faster without it.
impl Word for std::cell::Cell<u64> {
    type V = u64;
    fn get(&self) -> u64 {
        std::cell::Cell::get(self)
    }
    fn swap(&self, cur: u64, new: u64) -> bool {
        if self.get() != cur {
            return false;
        }
        self.set(new);
        true
    }
}

/// Inserts `mine` by linear probing from slot `s`: into the first empty
/// word (then `claimed(s)` runs and 0 is returned), or where a word holds
/// the same key (`same`), keeping the lower of the two (the first record
/// wins) and returning 1. Safe against concurrent inserts.
fn insert_first_wins<'a, W: Word + 'a>(
    word: impl Fn(usize) -> &'a W,
    (mut s, len): (usize, usize),
    (mine, empty): (W::V, W::V),
    same: impl Fn(W::V) -> bool,
    claimed: impl FnOnce(usize),
) -> u64 {
    loop {
        let w = word(s);
        let cur = w.get();
        if cur == empty {
            if w.swap(empty, mine) {
                claimed(s);
                return 0;
            }
            continue;
        }
        if same(cur) {
            if mine < cur && !w.swap(cur, mine) {
                continue;
            }
            return 1;
        }
        s = next(s, len);
    }
}

/// Inserts every record's id in parallel (`insert(index, id)`, which
/// returns 1 when an earlier record had the id), telling `prefetch` the id
/// [`AHEAD`] records ahead so its slot is on its way; the count of such
/// repeats.
fn insert_each(
    ids: &[u64],
    prefetch: impl Fn(u64) + Sync,
    insert: impl Fn(usize, u64) -> u64 + Sync,
) -> u64 {
    ids.par_iter()
        .enumerate()
        .map(|(i, &id)| {
            if let Some(&ahead) = ids.get(i + AHEAD) {
                prefetch(ahead);
            }
            insert(i, id)
        })
        .sum()
}

/// [`insert_each`] on the calling thread alone, for a table no other
/// thread touches (its words need not be atomic).
fn insert_each_alone(
    ids: &[u64],
    prefetch: impl Fn(u64),
    insert: impl Fn(usize, u64) -> u64,
) -> u64 {
    ids.iter()
        .enumerate()
        .map(|(i, &id)| {
            if let Some(&ahead) = ids.get(i + AHEAD) {
                prefetch(ahead);
            }
            insert(i, id)
        })
        .sum()
}

/// How many records ahead of its insert an id's slot is fetched.
const AHEAD: usize = 16;

fn build_packed(
    ids: &[u64],
    spill: Option<&Spill>,
    key: u64,
    base: u64,
    align: u32,
) -> (Table, u64) {
    let groups = packed_groups(ids.len());
    let len = groups << GROUP;
    // Zeroed either way: a spill file's reserved space reads as zeros.
    let mut slots: Scratch<u64> = Scratch::zeroed(len, spill);
    let home = |id: u64| {
        let k = (id - base) >> align;
        (packed_slot(k, key, groups), k)
    };
    let repeated = if rayon::current_num_threads() == 1 {
        // One thread fills the table: plain reads and writes.
        let cells = std::cell::Cell::from_mut(&mut slots[..]).as_slice_of_cells();
        insert_each_alone(
            ids,
            |ahead| crate::mem::prefetch(&cells[home(ahead).0]),
            |i, id| insert_packed(|s| &cells[s], len, home(id), i),
        )
    } else {
        let atomic = crate::mem::as_atomic_u64(&mut slots);
        insert_each(
            ids,
            |ahead| crate::mem::prefetch(&atomic[home(ahead).0]),
            |i, id| insert_packed(|s| &atomic[s], len, home(id), i),
        )
    };
    (
        Table::Packed {
            slots,
            base,
            align,
            groups,
        },
        repeated,
    )
}

/// Inserts record `i`, whose key `k` has its home at slot `s`, into a
/// packed table (`key << 32 | index + 1` a slot, 0 empty).
#[inline]
fn insert_packed<'a, W: Word<V = u64> + 'a>(
    word: impl Fn(usize) -> &'a W,
    len: usize,
    (s, k): (usize, u64),
    i: usize,
) -> u64 {
    insert_first_wins(
        word,
        (s, len),
        (k << 32 | (i as u64 + 1), 0),
        |cur| cur >> 32 == k,
        |_| {},
    )
}

fn build_wide(ids: &[u64], capacity: usize, (mask, shift, key): (usize, u32, u64)) -> (Table, u64) {
    let mut slots = crate::mem::with_capacity(capacity);
    slots.par_extend((0..capacity).into_par_iter().map(|_| WideSlot {
        id: AtomicU64::new(0),
        index: AtomicU32::new(EMPTY),
    }));
    let repeated = insert_each(
        ids,
        |ahead| crate::mem::prefetch(&slots[slot(ahead, key, shift)]),
        |i, id| {
            // The id field may not be written yet: compare by array.
            insert_first_wins(
                |s| &slots[s].index,
                (slot(id, key, shift), mask + 1),
                (i as u32, EMPTY),
                |cur| ids[cur as usize] == id,
                |s| slots[s].id.store(id, Ordering::Relaxed),
            )
        },
    );
    (Table::Wide(slots), repeated)
}

/// How many of `ids` repeat an id that comes before them, without a hash
/// table when the ids fall into a few strictly increasing runs (V8 numbers
/// its objects in snapshot order: a 20-million-node snapshot had three
/// runs): each pair of runs is compared by binary searches of the shorter
/// one's ids in the longer, and a repeat is counted once, in the later
/// run. More than 16 runs: the index counts them.
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
    /// The index of `ids` (position = object index), built now.
    pub fn build(ids: &[u64]) -> IdIndex {
        IdIndex::build_counting(ids).0
    }

    /// The compact form (4 bytes a slot), with the count of records whose
    /// id an earlier record already had; the first record of an id wins.
    pub fn build_counting(ids: &[u64]) -> (IdIndex, u64) {
        assert!(ids.len() < EMPTY as usize, "more than 2^32-1 objects");
        let (capacity, shift) = geometry(ids.len());
        let mask = capacity - 1;
        let key = random_key();
        let mut slots = vec![EMPTY; capacity];
        let atomic = crate::mem::as_atomic(&mut slots);
        let repeated = insert_each(
            ids,
            |ahead| crate::mem::prefetch(&atomic[slot(ahead, key, shift)]),
            |i, id| {
                insert_first_wins(
                    |s| &atomic[s],
                    (slot(id, key, shift), mask + 1),
                    (i as u32, EMPTY),
                    |cur| ids[cur as usize] == id,
                    |_| {},
                )
            },
        );
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

    fn slots<L: IdList + ?Sized>(&self, ids: &L) -> &Slots {
        self.built.get_or_init(|| {
            let built = IdIndex::build(&ids.as_wide()).built;
            built.into_inner().expect("build fills the slots")
        })
    }

    /// The object index of `id`, given the ids the index was made from (a lazy index is built at the first call).
    #[inline]
    pub fn get<L: IdList + ?Sized>(&self, ids: &L, id: u64) -> Option<u32> {
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
            if ids.id_at(cur as usize) == id {
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
    #[cfg(any(test, feature = "testing"))]
    pub fn probes<L: IdList + ?Sized>(&self, ids: &L) -> u64 {
        let t = self.slots(ids);
        (0..ids.count())
            .map(|i| {
                let id = ids.id_at(i);
                let mut s = slot(id, t.key, t.shift);
                let mut n = 1;
                while t.slots[s] != EMPTY && ids.id_at(t.slots[s] as usize) != id {
                    s = (s + 1) & t.mask;
                    n += 1;
                }
                n
            })
            .sum()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    fn one_thread() -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
    }

    /// A xorshift generator of numbers below its argument.
    pub(in crate::model) fn xorshift(mut x: u64) -> impl FnMut(u64) -> u64 {
        move |m| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        }
    }

    #[test]
    fn first_record_wins_and_missing_ids_are_absent() {
        // Packed (8-byte steps from 0x10), then wide (a span past 32 bits).
        for far in [0x40, 0x10 + (8 << 33)] {
            let ids = vec![0x10, 0x20, 0x10, 0x30, 0x20, 0x10, far];
            let wide = WideIdIndex::build(&ids);
            assert_eq!(
                matches!(wide.table, Table::Packed { .. }),
                far == 0x40,
                "{far:x}"
            );
            assert_eq!(wide.repeated, 3);
            assert_eq!(wide.get(0x10), Some(0));
            assert_eq!(wide.get(0x20), Some(1));
            assert_eq!(wide.get(0x30), Some(3));
            assert_eq!(wide.get(far), Some(6));
            for absent in [0, 0x8, 0x18, 0x11, 0x50, far + 16, u64::MAX] {
                assert_eq!(wide.get(absent), None, "{absent:x}");
            }
            let (index, repeated) = IdIndex::build_counting(&ids);
            assert_eq!(repeated, 3);
            for id in [0x10, 0x20, 0x30, 0x40, 0x50, far] {
                assert_eq!(index.get(ids.as_slice(), id), wide.get(id), "{id:x}");
            }
        }
    }

    #[test]
    fn packed_and_wide_tables_agree_with_a_map() {
        let mut rand = xorshift(0x2545_F491_4F6C_DD1Du64);
        for case in 0..200 {
            let n = 1 + rand(300) as usize;
            let (base, step, span) = match case % 3 {
                0 => (rand(1 << 40), 8, 1000),
                1 => (rand(1 << 20), 1 << rand(4), u32::MAX as u64),
                _ => (0, 1, u64::MAX / 2),
            };
            let ids: Vec<u64> = (0..n).map(|_| base + step * rand(span)).collect();
            // Built by several threads (compare-and-swap) or by one.
            let wide = if case % 2 == 0 {
                WideIdIndex::build(&ids)
            } else {
                one_thread().install(|| WideIdIndex::build(&ids))
            };
            let mut first = std::collections::HashMap::new();
            for (i, &id) in ids.iter().enumerate() {
                first.entry(id).or_insert(i as u32);
            }
            assert_eq!(wide.repeated as usize, n - first.len());
            for &id in &ids {
                assert_eq!(wide.get(id), first.get(&id).copied(), "{ids:?}");
                let near = [id.wrapping_add(1), id.wrapping_sub(step), id ^ (1 << 35)];
                for probe in near {
                    assert_eq!(wide.get(probe), first.get(&probe).copied(), "{probe:x}");
                }
            }
        }
    }

    /// A span gathered in parts, merged in any grouping, packs as the
    /// ids' own minimum and the trailing zeros their differences share.
    #[test]
    fn spans_merged_from_parts_pack_as_the_ids_do() {
        let mut rand = xorshift(0x1234_5678_9ABC_DEF1u64);
        for case in 0..300 {
            let n = rand(60) as usize;
            let step = 1u64 << rand(6);
            let base = rand(1 << 40);
            let ids: Vec<u64> = (0..n)
                .map(|_| match case % 3 {
                    0 => base + step * rand(1000),
                    1 => base + step * rand(1 << 34),
                    _ => base,
                })
                .collect();
            let want = (!ids.is_empty()).then(|| {
                let min = *ids.iter().min().unwrap();
                let max = *ids.iter().max().unwrap();
                let bits = ids.iter().fold(0, |b, &id| b | (id - min));
                let align = bits.trailing_zeros().min(63);
                (min, align, (max - min) >> align <= u32::MAX as u64)
            });
            let want = want.and_then(|(min, align, fits)| fits.then_some((min, align)));
            // Cut into parts at random and merged left to right.
            let mut span = IdSpan::default();
            let mut rest = &ids[..];
            while !rest.is_empty() {
                let (part, next) = rest.split_at(1 + rand(rest.len() as u64) as usize);
                let mut p = IdSpan::default();
                part.iter().for_each(|&id| p.add(id));
                span = if rand(2) == 0 {
                    span.merge(p)
                } else {
                    p.merge(span)
                };
                rest = next;
            }
            assert_eq!(span.packing(), want, "{ids:?}");
            assert_eq!(IdSpan::of(&ids).packing(), want, "{ids:?}");
        }
    }

    #[test]
    fn repeats_are_counted_as_the_index_counts_them() {
        let mut rand = xorshift(0x9E37_79B9_7F4A_7C15u64);
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
    fn a_packed_table_in_a_spill_file_finds_what_one_in_memory_finds() {
        let dir = tempfile::tempdir().unwrap();
        let spill = Spill::open(dir.path(), 1 << 20).unwrap();
        // Addresses, some repeated, in no order.
        let ids: Vec<u64> = (0..50_000u64)
            .map(|i| 0x7f00_0000 + (i * 7919 % 40_000) * 16)
            .collect();
        let spilled = WideIdIndex::build_in(&ids, Some(&spill));
        let Table::Packed { slots, .. } = &spilled.table else {
            panic!("addresses take the packed form")
        };
        assert!(slots.is_mapped(), "{:?}", spill.failure());
        let plain = WideIdIndex::build(&ids);
        assert_eq!(spilled.repeated, plain.repeated);
        assert_eq!(spilled.repeated, 10_000);
        crate::mem::spill::release_all();
        for id in ids.iter().copied().chain([0, 0x7f00_0008, u64::MAX]) {
            assert_eq!(spilled.get(id), plain.get(id), "{id:x}");
        }
    }

    /// The packed table holds 5 slots for 3 ids whatever their count (a
    /// power of two above 1.5 slots an id took up to 2.7 slots, 21 bytes),
    /// and finds every id, on either side of where the old size doubled.
    #[test]
    fn a_packed_table_takes_five_slots_for_three_ids() {
        for n in [1usize, 17, 1000, 87_381, 87_382, 150_000] {
            let ids: Vec<u64> = (0..n as u64).map(|i| 0x7f00_0000 + i * 24).collect();
            let w = WideIdIndex::build(&ids);
            let Table::Packed { slots, groups, .. } = &w.table else {
                panic!("ids fit 32-bit keys")
            };
            assert_eq!(slots.len(), *groups << GROUP);
            assert!(slots.len() >= n * 5 / 3 && slots.len() < n * 5 / 3 + 2 * (1 << GROUP));
            assert_eq!(w.bytes(), slots.len() * 8);
            for (i, &id) in ids.iter().enumerate() {
                assert_eq!(w.get(id), Some(i as u32));
            }
            assert_eq!(w.get(0x7f00_0000 + n as u64 * 24), None);
        }
    }

    #[test]
    fn many_clustered_ids() {
        let ids: Vec<u64> = (0..100_000u64).map(|i| 0x1c_0000 + i * 8).collect();
        // One ascending run: bitmaps; and the hash table's packed form.
        let runs = WideIdIndex::build_in_runs(&ids, IdSpan::of(&ids), None);
        assert!(runs.in_runs());
        let packed = WideIdIndex::build(&ids);
        assert!(matches!(packed.table, Table::Packed { .. }));
        for wide in [runs, packed] {
            assert_eq!(wide.repeated, 0);
            for (i, &id) in ids.iter().enumerate() {
                assert_eq!(wide.get(id), Some(i as u32));
            }
            for absent in [0x1c_0004, 0, 0x1c_0000 + 100_000 * 8] {
                assert_eq!(wide.get(absent), None);
            }
        }
        let index = IdIndex::build(&ids);
        for (i, &id) in ids.iter().enumerate() {
            assert_eq!(index.get(ids.as_slice(), id), Some(i as u32));
        }
        assert_eq!(index.get(ids.as_slice(), 0x1c_0004), None);
        assert_eq!(index.get(ids.as_slice(), 0), None);
    }

    #[test]
    fn empty() {
        let index = IdIndex::build(&[]);
        assert_eq!(index.get(&[] as &[u64], 5), None);
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
            assert_eq!(index.get(ids.as_slice(), id), Some(i as u32));
        }
    }

    /// Slots read to find every id of a packed index.
    fn packed_probes(ids: &[u64]) -> f64 {
        let w = WideIdIndex::build(ids);
        let Table::Packed {
            slots,
            base,
            align,
            groups,
        } = &w.table
        else {
            panic!("ids fit 32-bit keys")
        };
        let mut total = 0u64;
        for &id in ids {
            let k = packed_key(id, *base, *align).expect("in the index");
            let mut s = packed_slot(k, w.key, *groups);
            total += 1;
            while slots[s] >> 32 != k {
                s = next(s, slots.len());
                total += 1;
            }
        }
        total as f64 / ids.len() as f64
    }

    #[test]
    fn grouped_slots_stay_cheap_when_groups_are_full() {
        let mut rand = xorshift(0x9E37_79B9_7F4A_7C15);
        let mut rand = move || rand(u64::MAX);
        // Objects of 16 to 56 bytes, one after the other.
        let mut at = 0x7000_0000u64;
        let heap: Vec<u64> = (0..200_000)
            .map(|_| {
                at += 16 + rand() % 6 * 8;
                at
            })
            .collect();
        // Whole groups of adjacent keys at random places: each group's keys
        // fill its slots, so groups that meet probe past each other.
        let mut seen = std::collections::HashSet::new();
        let mut full = Vec::new();
        while full.len() < 200_000 {
            let g = rand() % (1 << 20);
            if seen.insert(g) {
                full.extend((0..1u64 << GROUP).map(|j| ((g << GROUP) + j) * 8));
            }
        }
        let (heap, full) = (packed_probes(&heap), packed_probes(&full));
        assert!(heap < 1.6, "{heap} slots a look-up in a heap");
        assert!(
            full <= (1 << GROUP) as f64,
            "{full} slots a look-up with full groups"
        );
    }
}
