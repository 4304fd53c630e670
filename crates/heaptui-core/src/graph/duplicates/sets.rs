//! What duplicate detection finds: the mode and options it runs with, the
//! duplicate sets, the possible duplicates of types cut short, and the
//! totals the views show.
//!
//! Bytes: a set is a 32-byte record ([`DuplicateSet`]) and a 4-byte start
//! in each of two flat lists ([`SetLists`]), its members and its holders,
//! 4 bytes an entry; no allocation per set. Beside them the member index
//! ([`MemberIndex`]): 0.19 bytes an object and 4 a member, so that the set
//! of an object is one rank away. On the 406 MB HPROF (502,108 sets,
//! 5.50 M members, 9.76 M objects): 2.5 + 2.3 + 2.4 bytes an object, where
//! 96-byte records with two vectors each took 4.9 + 2.3 + 2.4 (and the
//! allocator's 8–16 bytes a list beside).

use rayon::prelude::*;

/// Which duplicates are detected (`--duplicates`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum DuplicateMode {
    /// No detection.
    None,
    /// Only sets of objects that reference nothing (equal shallow contents).
    Trivial,
    /// Every set, also of objects whose referenced graphs are equal.
    #[default]
    All,
}

impl DuplicateMode {
    /// The name `--duplicates` takes.
    pub fn name(self) -> &'static str {
        match self {
            DuplicateMode::None => "none",
            DuplicateMode::Trivial => "trivial",
            DuplicateMode::All => "all",
        }
    }
}

impl std::str::FromStr for DuplicateMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(DuplicateMode::None),
            "trivial" => Ok(DuplicateMode::Trivial),
            "all" => Ok(DuplicateMode::All),
            other => Err(format!(
                "unknown duplicates mode `{other}` (none, trivial, all)"
            )),
        }
    }
}

/// How duplicate detection runs (`--duplicates` and its budget).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateOptions {
    /// Which duplicates are detected.
    pub mode: DuplicateMode,
    /// Work units (object-pairs visited) allowed per type before its
    /// undecided instances are reported as possible duplicates; `None` for
    /// no limit.
    pub budget_per_type: Option<u64>,
}

impl Default for DuplicateOptions {
    fn default() -> Self {
        DuplicateOptions {
            mode: DuplicateMode::All,
            budget_per_type: None,
        }
    }
}

/// One class of two or more mutually duplicate reachable objects: its
/// figures, in a fixed record of 32 bytes. The set's number is its
/// position in [`Duplicates::sets`] (sets are sorted by additional bytes
/// descending, then lowest member id), not a field: a stored number only
/// ever repeated the position. Whether the set is trivial shares a word
/// with its holding set (see [`DuplicateSet::trivial`]): three 8-byte
/// figures, the type and a flag byte beside took 40 bytes with the
/// padding, with the number or without. Its members and the sets that hold it lie in [`Duplicates`]' flat lists, by
/// that number ([`Duplicates::members`], [`Duplicates::held_by`]), not in
/// a vector each: two vectors a set took 48 bytes of headers in the record
/// and the allocator's 8–16 bytes and unused capacity beside (96 bytes a
/// record before).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateSet {
    /// The members' type, an index into `Model::type_names`.
    pub type_index: u32,
    /// Shallow size of one member.
    pub instance_bytes: u64,
    /// Objects reachable from one member, the member included.
    pub objects_per_copy: u64,
    /// Shallow bytes of the other members' copies that the first member's copy does not share (what merging the copies would save).
    pub additional_bytes: u64,
    /// [`DuplicateSet::holding_set`] in bits 0–30 ([`NO_HOLDER`] for
    /// none) and [`DuplicateSet::trivial`] in bit 31. Sets number under
    /// 2^31 (two members at least each, under 2^32 members in all), so a
    /// holder's number fits beside the flag.
    holding_trivial: u32,
}

/// [`DuplicateSet`]'s holder bits when nothing holds the set (not a set's
/// number: sets number under 2^31 - 1).
const NO_HOLDER: u32 = (1 << 31) - 1;

/// [`DuplicateSet`]'s trivial bit.
const TRIVIAL: u32 = 1 << 31;

/// Sets a result may hold: every number below [`NO_HOLDER`], the sets' own
/// bound (a cache file with more is refused).
pub(crate) const MAX_SETS: usize = NO_HOLDER as usize;

const _: () = assert!(std::mem::size_of::<DuplicateSet>() == 32);

impl DuplicateSet {
    /// A set's figures, held by nothing (holders are given by detection,
    /// or by [`DuplicateSet::set_holding_set`]).
    pub fn new(
        type_index: u32,
        instance_bytes: u64,
        objects_per_copy: u64,
        additional_bytes: u64,
        trivial: bool,
    ) -> DuplicateSet {
        DuplicateSet {
            type_index,
            instance_bytes,
            objects_per_copy,
            additional_bytes,
            holding_trivial: NO_HOLDER | if trivial { TRIVIAL } else { 0 },
        }
    }

    /// Whether the members reference nothing.
    #[inline]
    pub fn trivial(&self) -> bool {
        self.holding_trivial & TRIVIAL != 0
    }

    /// The one holder of [`Duplicates::held_by`] that no other holder
    /// holds (lowest id on a tie); `None` when nothing holds the set.
    #[inline]
    pub fn holding_set(&self) -> Option<u32> {
        let h = self.holding_trivial & !TRIVIAL;
        (h != NO_HOLDER).then_some(h)
    }

    /// Sets the holding set (detection, the reopen cache, tests). Panics
    /// for a number of [`MAX_SETS`] or more, which no set has (the cache
    /// refuses files with more sets).
    pub fn set_holding_set(&mut self, h: Option<u32>) {
        let h = h.unwrap_or(NO_HOLDER);
        assert!(h <= NO_HOLDER, "set number {h} past the sets' bound");
        self.holding_trivial = self.holding_trivial & TRIVIAL | h;
    }
}

/// One list of `u32` per set, all in one array: list `i` is
/// `items[starts[i]..starts[i + 1]]`. 4 bytes an entry and 4 a list, where
/// a vector per list took 24 bytes of header, the allocator's 8–16 and its
/// unused capacity; an empty list (most sets' holders) takes its 4 bytes
/// of start only. Entries number under 2^32 (members are distinct objects;
/// a cache file with more is refused).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetLists {
    starts: Vec<u32>,
    items: Vec<u32>,
}

impl Default for SetLists {
    fn default() -> SetLists {
        SetLists {
            starts: vec![0],
            items: Vec::new(),
        }
    }
}

impl SetLists {
    /// The lists, in order. Panics past 2^32 entries in all.
    pub fn from_lists<L: AsRef<[u32]>>(lists: impl IntoIterator<Item = L>) -> SetLists {
        let mut out = SetLists::default();
        for l in lists {
            out.items.extend_from_slice(l.as_ref());
            out.starts.push(entries(out.items.len()));
        }
        out
    }

    /// Lists of `lens` entries each, zero-filled (to be written with
    /// [`SetLists::get_mut`]). Panics past 2^32 entries in all.
    pub(crate) fn with_lengths(lens: impl IntoIterator<Item = usize>) -> SetLists {
        let mut starts = vec![0u32];
        let mut end = 0usize;
        for l in lens {
            end += l;
            starts.push(entries(end));
        }
        starts.shrink_to_fit();
        SetLists {
            starts,
            items: crate::mem::zeroed(end),
        }
    }

    /// From `starts` (from 0, never decreasing, the last `items.len()`)
    /// and the entries; `None` where they do not fit (a damaged cache).
    pub(crate) fn from_parts(starts: Vec<u32>, items: Vec<u32>) -> Option<SetLists> {
        let ok = starts.first() == Some(&0)
            && starts.last().map(|&l| l as usize) == Some(items.len())
            && starts.windows(2).all(|w| w[0] <= w[1]);
        ok.then_some(SetLists { starts, items })
    }

    /// How many lists.
    #[inline]
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Whether there are no lists.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// List `i` (panics past the lists, as a slice's index does).
    #[inline]
    pub fn get(&self, i: u32) -> &[u32] {
        let i = i as usize;
        &self.items[self.starts[i] as usize..self.starts[i + 1] as usize]
    }

    /// List `i`, to write.
    #[inline]
    pub(crate) fn get_mut(&mut self, i: u32) -> &mut [u32] {
        let i = i as usize;
        &mut self.items[self.starts[i] as usize..self.starts[i + 1] as usize]
    }

    /// Every list, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u32]> + '_ {
        self.starts
            .windows(2)
            .map(|w| &self.items[w[0] as usize..w[1] as usize])
    }

    /// Every entry, list after list.
    pub fn items(&self) -> &[u32] {
        &self.items
    }

    /// The bytes of the starts and of the entries.
    pub fn bytes(&self) -> (usize, usize) {
        (self.starts.capacity() * 4, self.items.capacity() * 4)
    }

    /// `f(i, list i)` for every list, in parallel: the lists' range split
    /// in halves down to small ranges, each half's entries split off at
    /// its start (no table of slices).
    pub(crate) fn par_for_each_mut(&mut self, f: impl Fn(u32, &mut [u32]) + Sync) {
        let items = &mut self.items[..];
        split_each(&self.starts, 0, items, &f);
    }
}

/// [`SetLists::par_for_each_mut`] over the lists from `first` on whose
/// entries are `items` (`starts` their starts, the last one past them).
fn split_each(
    starts: &[u32],
    first: u32,
    items: &mut [u32],
    f: &(impl Fn(u32, &mut [u32]) + Sync),
) {
    let n = starts.len() - 1;
    if n <= SPLIT_LISTS || items.len() < SPLIT_ITEMS {
        let base = starts[0];
        for i in 0..n {
            let (a, b) = ((starts[i] - base) as usize, (starts[i + 1] - base) as usize);
            f(first + i as u32, &mut items[a..b]);
        }
        return;
    }
    let mid = n / 2;
    let (lo, hi) = items.split_at_mut((starts[mid] - starts[0]) as usize);
    rayon::join(
        || split_each(&starts[..=mid], first, lo, f),
        || split_each(&starts[mid..], first + mid as u32, hi, f),
    );
}

/// Lists and entries below which [`split_each`] splits no further (small
/// in tests, so that they split).
const SPLIT_LISTS: usize = if cfg!(test) { 4 } else { 1024 };
const SPLIT_ITEMS: usize = if cfg!(test) { 8 } else { 1 << 12 };

/// An entry count as a start; past 2^32 entries the lists cannot be held.
fn entries(n: usize) -> u32 {
    u32::try_from(n).expect("set lists: more than 2^32 entries")
}

/// Instances of one type whose detection was cut short.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PossibleDuplicates {
    /// Their type, an index into `Model::type_names`.
    pub type_index: u32,
    /// Undecided instances, in index order.
    pub instances: crate::mem::IdSet,
}

/// What duplicate detection found in one analysis.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Duplicates {
    /// The mode detection ran in (`None`, as `Some(DuplicateMode::None)`, when it did not run).
    pub mode: Option<DuplicateMode>,
    /// The duplicate sets, by additional bytes descending (then lowest member id).
    pub sets: Vec<DuplicateSet>,
    /// Possible duplicates per type, by type index.
    pub possible: Vec<PossibleDuplicates>,
    /// The per-type work budget this result was detected with.
    pub budget_per_type: Option<u64>,
    /// Types detected to completion on request ([`super::detect_type`]), ascending.
    pub finished_types: Vec<u32>,
    /// Every set's members, by set.
    pub(super) set_members: SetLists,
    /// Every set's holders, by set.
    pub(super) set_holders: SetLists,
    /// The set of every member.
    pub(super) index: MemberIndex,
    /// Whether values and reference labels were compared (see `values`).
    pub(super) values_compared: bool,
}

impl Duplicates {
    /// A result from its parts (the reopen cache, tests): sets numbered by
    /// their position, `members` and `held_by` their lists (one each, in
    /// the sets' order); the member index rebuilt from them. `objects` bounds
    /// every member (the caller checked them). Panics unless there is one
    /// list of each per set.
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        objects: usize,
        values_compared: bool,
        mode: Option<DuplicateMode>,
        sets: Vec<DuplicateSet>,
        members: SetLists,
        held_by: SetLists,
        possible: Vec<PossibleDuplicates>,
        budget_per_type: Option<u64>,
        finished_types: Vec<u32>,
    ) -> Duplicates {
        assert!(members.len() == sets.len() && held_by.len() == sets.len());
        let index = MemberIndex::new(objects, &members);
        Duplicates {
            mode,
            sets,
            set_members: members,
            set_holders: held_by,
            possible,
            budget_per_type,
            finished_types,
            index,
            values_compared,
        }
    }

    /// The members of set `set`, sorted by object id (panics past the
    /// sets, as `sets[set]` does).
    #[inline]
    pub fn members(&self, set: u32) -> &[u32] {
        self.set_members.get(set)
    }

    /// Every set with its number (its position in [`Duplicates::sets`]).
    pub fn numbered(&self) -> impl ExactSizeIterator<Item = (u32, &DuplicateSet)> + '_ {
        self.sets.iter().enumerate().map(|(i, s)| (i as u32, s))
    }

    /// The sets that fully hold set `set`, ascending.
    #[inline]
    pub fn held_by(&self, set: u32) -> &[u32] {
        self.set_holders.get(set)
    }

    /// Every set's members, in the sets' order.
    pub fn member_lists(&self) -> &SetLists {
        &self.set_members
    }

    /// Every set's holders, in the sets' order.
    pub fn holder_lists(&self) -> &SetLists {
        &self.set_holders
    }

    /// Replaces set `set`'s holders (tests forging a cache file).
    #[cfg(test)]
    pub(crate) fn replace_held_by(&mut self, set: u32, list: &[u32]) {
        let mut lists: Vec<Vec<u32>> = self.set_holders.iter().map(<[u32]>::to_vec).collect();
        lists[set as usize] = list.to_vec();
        self.set_holders = SetLists::from_lists(lists);
    }

    /// Set `set`'s members, to write (tests forging a cache file).
    #[cfg(test)]
    pub(crate) fn members_mut(&mut self, set: u32) -> &mut [u32] {
        self.set_members.get_mut(set)
    }

    /// The bytes of the member index (the set of every member), for the
    /// memory account.
    pub fn member_index_bytes(&self) -> usize {
        let m = &self.index;
        m.members.heap_bytes() + m.set.bytes()
    }

    /// Whether members were compared by their values and reference labels
    /// too (the dump has them, docs/duplicates.md): then duplicates are equal in every
    /// field, not only in type, size and reference shape.
    pub fn has_values(&self) -> bool {
        self.values_compared
    }

    /// Whether a set's equality cannot be verified: its copies are single
    /// objects without references (trivial) in a dump without values, so
    /// they are "equal" only in type and size (strings of one length, say).
    /// Such sets are counted apart and stay out of the headline waste.
    pub fn is_unverified(&self, set: &DuplicateSet) -> bool {
        set.trivial() && !self.values_compared
    }

    /// `extra_bytes` of the sets `sets` picks (positions in
    /// [`Duplicates::sets`]), split by verification. O(sets picked).
    pub fn totals(&self, sets: impl IntoIterator<Item = u32>) -> DuplicateTotals {
        let mut t = DuplicateTotals::default();
        for i in sets {
            let Some(s) = self.sets.get(i as usize) else {
                continue;
            };
            let extra = self.extra_bytes(i);
            if self.is_unverified(s) {
                t.unverified_sets += 1;
                t.unverified_bytes += extra;
            } else {
                t.sets += 1;
                t.bytes += extra;
            }
        }
        t
    }

    /// The totals of every set (the headline).
    pub fn all_totals(&self) -> DuplicateTotals {
        self.totals(0..self.sets.len() as u32)
    }

    /// The set an object belongs to.
    pub fn set_of(&self, object: u32) -> Option<u32> {
        let set = self.index.set_of(object);
        (set != NO_SET).then_some(set)
    }

    /// The bytes a heap with every duplicate set merged into one instance
    /// would not need: all members but one of each set. Every object of a
    /// set's additional bytes pairs with an equal object, so it is itself a
    /// member of a set; summing the sets' additional bytes instead would
    /// count a copy once per set that reaches it (a list's copy and again its
    /// strings' copies) and can exceed the heap.
    pub fn total_additional_bytes(&self) -> u64 {
        (0..self.sets.len() as u32)
            .map(|i| self.extra_bytes(i))
            .sum()
    }

    /// The extra instances of set `i`: all members but one, shallow.
    fn extra_bytes(&self, i: u32) -> u64 {
        let copies = (self.members(i).len() as u64).saturating_sub(1);
        copies * self.sets[i as usize].instance_bytes
    }
}

/// Sets and extra-instance bytes (see [`Duplicates::total_additional_bytes`]),
/// the verified ones apart from those whose equality cannot be verified
/// ([`Duplicates::is_unverified`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DuplicateTotals {
    /// Verified sets.
    pub sets: u64,
    /// Their extra instances' shallow bytes.
    pub bytes: u64,
    /// Sets whose equality could not be verified (trivial sets whose values were not compared).
    pub unverified_sets: u64,
    /// Their extra instances' shallow bytes.
    pub unverified_bytes: u64,
}

/// `set_of` entry of an object in no set.
pub(super) const NO_SET: u32 = u32::MAX;

/// The set of every member of a set, in the bits of a set number a
/// member and 0.19 bytes an object (not 4 an object): a bit an object for
/// the members, the number of members before each word of 64 objects, and
/// each member's set in object order, found at the member's rank among
/// the members, bit-packed at the width of the set count (19 bits on the
/// 6.62 M-object V8 snapshot's 3.9 M members, where a `u32` each took 2.4
/// bytes an object of the heap).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct MemberIndex {
    members: crate::mem::RankedBits,
    set: crate::mem::Bits,
}

impl MemberIndex {
    /// The index of the sets whose members are `sets` (set `i`'s list
    /// `i`) over `objects` objects; every member is below `objects`. Should
    /// an object be in two sets (a damaged cache), it counts once, in one
    /// of them.
    pub(crate) fn new(objects: usize, sets: &SetLists) -> MemberIndex {
        use std::sync::atomic::Ordering::Relaxed;
        let mut bits = vec![0u64; objects.div_ceil(64)];
        let at = crate::mem::as_atomic_u64(&mut bits);
        sets.items().par_iter().for_each(|&m| {
            at[m as usize / 64].fetch_or(1 << (m % 64), Relaxed);
        });
        let members = crate::mem::RankedBits::new(bits);
        let mut set = crate::mem::filled(members.ones(), NO_SET);
        let at = crate::mem::as_atomic(&mut set);
        (0..sets.len() as u32).into_par_iter().for_each(|s| {
            for &m in sets.get(s) {
                if let Some(r) = members.rank(m) {
                    at[r].store(s, Relaxed);
                }
            }
        });
        MemberIndex {
            members,
            set: crate::mem::Bits::from(set),
        }
    }

    /// The set of `object`, [`NO_SET`] for none (also for an object past
    /// the index: the empty index of a result with no detection).
    #[inline]
    pub(crate) fn set_of(&self, object: u32) -> u32 {
        self.members
            .rank(object)
            .map_or(NO_SET, |r| self.set.get(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every object's set as a plain per-object array says, across word
    /// boundaries, and none past the objects or in an empty index.
    #[test]
    fn member_index_agrees_with_a_plain_array() {
        let n = 300;
        let sets = SetLists::from_lists([
            vec![0, 63, 64, 200],
            vec![1, 65, 127, 128, 299],
            vec![5, 190],
        ]);
        let mut plain = vec![NO_SET; n];
        for (i, s) in sets.iter().enumerate() {
            for &m in s {
                plain[m as usize] = i as u32;
            }
        }
        let index = MemberIndex::new(n, &sets);
        for (o, &expect) in plain.iter().enumerate() {
            assert_eq!(index.set_of(o as u32), expect, "object {o}");
        }
        assert_eq!(index.set_of(100_000), NO_SET);
        assert_eq!(MemberIndex::default().set_of(3), NO_SET);
    }

    #[test]
    fn a_set_record_is_thirty_two_bytes_and_keeps_its_holder() {
        assert_eq!(std::mem::size_of::<DuplicateSet>(), 32);
        for trivial in [false, true] {
            let mut s = DuplicateSet::new(1, 2, 3, 4, trivial);
            assert_eq!((s.holding_set(), s.trivial()), (None, trivial));
            for h in [0, 7, MAX_SETS as u32 - 1] {
                s.set_holding_set(Some(h));
                assert_eq!((s.holding_set(), s.trivial()), (Some(h), trivial));
            }
            s.set_holding_set(None);
            assert_eq!((s.holding_set(), s.trivial()), (None, trivial));
            assert_eq!((s.type_index, s.instance_bytes), (1, 2));
            assert_eq!((s.objects_per_copy, s.additional_bytes), (3, 4));
        }
    }

    #[test]
    fn bad_starts_are_refused() {
        assert!(SetLists::from_parts(vec![0, 2, 1], vec![1]).is_none());
        assert!(SetLists::from_parts(vec![1, 1], vec![1]).is_none());
        assert!(SetLists::from_parts(vec![0, 1], vec![1, 2]).is_none());
        assert!(SetLists::from_parts(vec![], vec![]).is_none());
        assert_eq!(
            SetLists::from_parts(vec![0, 0, 2], vec![4, 5]),
            Some(SetLists::from_lists([vec![], vec![4, 5]]))
        );
    }

    proptest! {
        /// The flat lists give back each list as a vector per list holds
        /// it, in order, and a parallel pass over them sees and writes each
        /// list at its index.
        #[test]
        fn flat_lists_agree_with_a_vector_each(
            lists in proptest::collection::vec(proptest::collection::vec(any::<u32>(), 0..6), 0..3000),
        ) {
            let mut flat = SetLists::from_lists(&lists);
            prop_assert_eq!(flat.len(), lists.len());
            prop_assert_eq!(flat.is_empty(), lists.is_empty());
            for (i, l) in lists.iter().enumerate() {
                prop_assert_eq!(flat.get(i as u32), &l[..]);
            }
            prop_assert!(flat.iter().eq(lists.iter().map(|l| &l[..])));
            let sized = SetLists::with_lengths(lists.iter().map(Vec::len));
            prop_assert_eq!(sized.len(), lists.len());
            prop_assert_eq!(sized.items().len(), flat.items().len());
            flat.par_for_each_mut(|i, l| {
                l.reverse();
                l.iter_mut().for_each(|x| *x ^= i);
            });
            for (i, l) in lists.iter().enumerate() {
                let expect: Vec<u32> = l.iter().rev().map(|x| x ^ i as u32).collect();
                prop_assert_eq!(flat.get(i as u32), &expect[..]);
            }
        }
    }
}
