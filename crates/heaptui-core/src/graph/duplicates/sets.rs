//! What duplicate detection finds: the mode and options it runs with, the
//! duplicate sets, the possible duplicates of types cut short, and the
//! totals the views show.

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

/// One class of two or more mutually duplicate reachable objects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateSet {
    /// Position in [`Duplicates::sets`] (sets are sorted by additional
    /// bytes descending, then lowest member id).
    pub id: u32,
    /// The members' type, an index into `Model::type_names`.
    pub type_index: u32,
    /// Members, sorted by object id.
    pub members: Vec<u32>,
    /// Shallow size of one member.
    pub instance_bytes: u64,
    /// Objects reachable from one member, the member included.
    pub objects_per_copy: u64,
    /// Shallow bytes of the other members' copies that the first member's copy does not share (what merging the copies would save).
    pub additional_bytes: u64,
    /// Members reference nothing.
    pub trivial: bool,
    /// Every set that fully holds this one, ascending.
    pub held_by: Vec<u32>,
    /// The one holder of [`DuplicateSet::held_by`] that no other holder holds (lowest id on a tie); `None` when nothing holds the set.
    pub holding_set: Option<u32>,
}

/// Instances of one type whose detection was cut short.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PossibleDuplicates {
    /// Their type, an index into `Model::type_names`.
    pub type_index: u32,
    /// Undecided instances, in index order.
    pub instances: Vec<u32>,
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
    /// The set of every member.
    pub(super) members: MemberIndex,
    /// Whether values and reference labels were compared (see `values`).
    pub(super) values_compared: bool,
}

impl Duplicates {
    /// A result from its parts (the reopen cache): sets numbered by
    /// position; the member index rebuilt from them. `objects` bounds every
    /// member (the caller checked them).
    pub fn from_parts(
        objects: usize,
        values_compared: bool,
        mode: Option<DuplicateMode>,
        mut sets: Vec<DuplicateSet>,
        possible: Vec<PossibleDuplicates>,
        budget_per_type: Option<u64>,
        finished_types: Vec<u32>,
    ) -> Duplicates {
        for (i, s) in sets.iter_mut().enumerate() {
            s.id = i as u32;
        }
        let members = MemberIndex::new(objects, &sets);
        Duplicates {
            mode,
            sets,
            possible,
            budget_per_type,
            finished_types,
            members,
            values_compared,
        }
    }

    /// The bytes of the member index (the set of every member), for the
    /// memory account.
    pub fn member_index_bytes(&self) -> usize {
        let m = &self.members;
        m.members.heap_bytes() + m.set.capacity() * 4
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
        set.trivial && !self.values_compared
    }

    /// `extra_bytes` of the sets `sets` picks (positions in
    /// [`Duplicates::sets`]), split by verification. O(sets picked).
    pub fn totals(&self, sets: impl IntoIterator<Item = u32>) -> DuplicateTotals {
        let mut t = DuplicateTotals::default();
        for i in sets {
            let Some(s) = self.sets.get(i as usize) else {
                continue;
            };
            let extra = extra_bytes(s);
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
        let set = self.members.set_of(object);
        (set != NO_SET).then_some(set)
    }

    /// The bytes a heap with every duplicate set merged into one instance
    /// would not need: all members but one of each set. Every object of a
    /// set's additional bytes pairs with an equal object, so it is itself a
    /// member of a set; summing the sets' additional bytes instead would
    /// count a copy once per set that reaches it (a list's copy and again its
    /// strings' copies) and can exceed the heap.
    pub fn total_additional_bytes(&self) -> u64 {
        self.sets.iter().map(extra_bytes).sum()
    }
}

/// A set's extra instances: all members but one, shallow.
fn extra_bytes(s: &DuplicateSet) -> u64 {
    (s.members.len() as u64).saturating_sub(1) * s.instance_bytes
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

/// The set of every member of a set, in 4 bytes a member and 0.19 an
/// object (not 4 an object): a bit an object for the members, the number
/// of members before each word of 64 objects, and each member's set in
/// object order, found at the member's rank among the members.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct MemberIndex {
    members: crate::mem::RankedBits,
    set: Vec<u32>,
}

impl MemberIndex {
    /// The index of `sets` (`sets[i].id == i`) over `objects` objects;
    /// every member is below `objects`. Should an object be in two sets
    /// (a damaged cache), it counts once, in one of them.
    pub(crate) fn new(objects: usize, sets: &[DuplicateSet]) -> MemberIndex {
        use std::sync::atomic::Ordering::Relaxed;
        let mut bits = vec![0u64; objects.div_ceil(64)];
        let at = crate::mem::as_atomic_u64(&mut bits);
        sets.par_iter().for_each(|s| {
            for &m in &s.members {
                at[m as usize / 64].fetch_or(1 << (m % 64), Relaxed);
            }
        });
        let members = crate::mem::RankedBits::new(bits);
        let mut set = crate::mem::filled(members.ones(), NO_SET);
        let at = crate::mem::as_atomic(&mut set);
        sets.par_iter().for_each(|s| {
            for &m in &s.members {
                if let Some(r) = members.rank(m) {
                    at[r].store(s.id, Relaxed);
                }
            }
        });
        MemberIndex { members, set }
    }

    /// The set of `object`, [`NO_SET`] for none (also for an object past
    /// the index: the empty index of a result with no detection).
    #[inline]
    pub(crate) fn set_of(&self, object: u32) -> u32 {
        self.members.rank(object).map_or(NO_SET, |r| self.set[r])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(id: u32, members: Vec<u32>) -> DuplicateSet {
        DuplicateSet {
            id,
            type_index: 0,
            instance_bytes: 8,
            objects_per_copy: 1,
            additional_bytes: 8,
            members,
            trivial: true,
            held_by: Vec::new(),
            holding_set: None,
        }
    }

    /// Every object's set as a plain per-object array says, across word
    /// boundaries, and none past the objects or in an empty index.
    #[test]
    fn member_index_agrees_with_a_plain_array() {
        let n = 300;
        let sets = vec![
            set(0, vec![0, 63, 64, 200]),
            set(1, vec![1, 65, 127, 128, 299]),
            set(2, vec![5, 190]),
        ];
        let mut plain = vec![NO_SET; n];
        for s in &sets {
            for &m in &s.members {
                plain[m as usize] = s.id;
            }
        }
        let index = MemberIndex::new(n, &sets);
        for (o, &expect) in plain.iter().enumerate() {
            assert_eq!(index.set_of(o as u32), expect, "object {o}");
        }
        assert_eq!(index.set_of(100_000), NO_SET);
        assert_eq!(MemberIndex::default().set_of(3), NO_SET);
    }
}
