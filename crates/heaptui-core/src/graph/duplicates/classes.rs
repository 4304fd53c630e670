//! A type's duplicate sets as verification finds them, and their assembly
//! into the result's sets.
//!
//! Layout: verification reads a type's candidate blocks in order (a type's
//! blocks' members in one array, `TypeBlocks` in the parent module) and
//! writes each set it finds over that same array ([`TypeClasses`]): every
//! set is some members of one block, so the sets of the blocks read so far
//! never take more room than those blocks and the write cursor never
//! passes the block being read. A set is then a [`TypeClass`] record, its
//! members' place in the array and its two figures; the array is cut to
//! the sets' members when the type is done. The trivial mode, which has
//! no blocks, appends its sets' members instead.
//!
//! Bytes: 4 a member (in the blocks' array, no second copy) and a 24-byte
//! record a set, the blocks' tail given back at the type's end. On the
//! 406 MB HPROF (502,108 sets, 5.50 M members): 11 MiB of records and
//! 20 MiB of members after the verification, where a vector per set
//! beside the blocks held both at once.
//!
//! Assembly ([`assemble`]): the sets' final order is found first from a
//! key per set (24 bytes a set, and a 4-byte rank, freed before the end),
//! then each set's 32-byte record and member list are written once, at
//! their place in the result's arrays (`DuplicateSet`, `SetLists`), and
//! each type's classes are freed as soon as they are copied.

use rayon::prelude::*;

use super::sets::{DuplicateSet, SetLists};
use super::verify;
use super::view::View;

/// One type's exact classes, in the order found.
pub(super) type Group = (u32, TypeClasses);

/// One type's exact sets, their members written over its blocks' members
/// as its blocks are verified in order: every set is some members of one
/// block, so the sets of blocks `0..=i` take no more room than those
/// blocks, and the write cursor never passes the block being read. The
/// sets' members cost no more than the blocks (4 bytes a member, the
/// buffer cut to the sets' at the end), where a vector per set beside the
/// blocks held both at once: at 16 threads the largest type's leaf sets
/// (16 MiB on the 10.1 M text heap) came on top of its blocks (17 MiB),
/// at the verification's peak.
pub(super) struct TypeClasses {
    /// The sets' members, `..written`; the blocks' not yet read beyond.
    pub(super) members: Vec<u32>,
    written: usize,
    pub(super) classes: Vec<TypeClass>,
}

/// One set of a [`TypeClasses`]: its members at `start..start + len`.
pub(super) struct TypeClass {
    start: u32,
    len: u32,
    objects_per_copy: u64,
    additional_bytes: u64,
}

impl TypeClasses {
    /// Sets to be written over `members`, a type's blocks' members.
    pub(super) fn over(members: Vec<u32>) -> TypeClasses {
        TypeClasses {
            members,
            written: 0,
            classes: Vec::new(),
        }
    }

    /// The whole block at `block` as a set.
    pub(super) fn push_block(
        &mut self,
        block: std::ops::Range<usize>,
        per_copy: u64,
        additional: u64,
    ) {
        let len = block.len();
        self.members.copy_within(block, self.written);
        self.record(len, per_copy, additional);
    }

    /// Sets found in the block last read.
    pub(super) fn extend(&mut self, found: Vec<verify::Class>) {
        for c in found {
            let at = self.written;
            self.members[at..at + c.members.len()].copy_from_slice(&c.members);
            self.record(c.members.len(), c.objects_per_copy, c.additional_bytes);
        }
    }

    /// Records the `len` members just written.
    fn record(&mut self, len: usize, objects_per_copy: u64, additional_bytes: u64) {
        self.classes.push(TypeClass {
            start: self.written as u32,
            len: len as u32,
            objects_per_copy,
            additional_bytes,
        });
        self.written += len;
    }

    /// The blocks' members cut to the sets': the buffer's tail goes back
    /// (a large buffer is a mapping of its own, shrunk in place).
    pub(super) fn done(mut self) -> TypeClasses {
        self.members.truncate(self.written);
        self.members.shrink_to_fit();
        self.classes.shrink_to_fit();
        self
    }

    /// A set whose members are given apart (the trivial mode's leaf
    /// classes, with no blocks to write over): after those written.
    pub(super) fn append(&mut self, members: &[u32], objects_per_copy: u64, additional_bytes: u64) {
        self.members.truncate(self.written);
        self.members.extend_from_slice(members);
        self.record(members.len(), objects_per_copy, additional_bytes);
    }

    /// Whether the type has no set.
    pub(super) fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }

    /// The members of one of the sets.
    fn members_of(&self, c: &TypeClass) -> &[u32] {
        &self.members[c.start as usize..c.start as usize + c.len as usize]
    }
}

/// A class of type `t`, of `members`, as a set's record: trivial when its
/// members are leaves (only leaf blocks give classes of leaves).
fn set_of(graph: &View, t: u32, c: &TypeClass, members: &[u32]) -> DuplicateSet {
    let o = members[0];
    DuplicateSet::new(
        t,
        graph.dump.sizes.get(o as usize),
        c.objects_per_copy,
        c.additional_bytes,
        graph.refs_raw(o).is_empty(),
    )
}

/// The classes of every type as the sets in their final order (additional
/// bytes descending, then the id of the member of lowest id, then the
/// order found) and their members in flat lists, in that order (each set's
/// members still in the order found). The order is found first, from a key
/// per class (24 bytes a set, for the sort), so that the records and the
/// lists are written once, at their place: sorting sets already laid out
/// moved every record and member to new arrays (the lists twice over).
/// Each type's classes are freed as soon as they are copied.
pub(super) fn assemble(graph: &View, groups: Vec<Group>) -> (Vec<DuplicateSet>, SetLists) {
    let rank = final_order(graph, &groups);
    let mut lens = vec![0usize; rank.len()];
    let classes = groups.iter().flat_map(|(_, found)| &found.classes);
    for (c, &r) in classes.zip(&rank) {
        lens[r as usize] = c.len as usize;
    }
    let mut members = SetLists::with_lengths(lens);
    let blank = DuplicateSet::new(0, 0, 0, 0, false);
    let mut sets = vec![blank; rank.len()];
    let mut ranks = rank.iter();
    for (t, found) in groups {
        for c in &found.classes {
            let r = *ranks.next().expect("a rank per class");
            let of = found.members_of(c);
            sets[r as usize] = set_of(graph, t, c, of);
            members.get_mut(r).copy_from_slice(of);
        }
    }
    // The classes' lists, freed in the allocator, go back to the kernel.
    crate::mem::release_free_memory();
    (sets, members)
}

/// Per class (types in order, each type's classes in order) the position
/// of its set once sorted (see [`assemble`]).
fn final_order(graph: &View, groups: &[Group]) -> Vec<u32> {
    let ids = &graph.dump.ids;
    let first_id = |members: &[u32]| {
        let m = members.iter().map(|&m| (ids.get(m as usize), m)).min();
        m.map_or(0, |(id, _)| id)
    };
    let mut keys: Vec<(std::cmp::Reverse<u64>, u64, u32)> = Vec::new();
    for (_, found) in groups {
        let base = keys.len() as u32;
        keys.par_extend(found.classes.par_iter().enumerate().map(|(j, c)| {
            let key = std::cmp::Reverse(c.additional_bytes);
            (key, first_id(found.members_of(c)), base + j as u32)
        }));
    }
    keys.par_sort_unstable();
    let mut rank = vec![0u32; keys.len()];
    for (r, k) in keys.iter().enumerate() {
        rank[k.2 as usize] = r as u32;
    }
    rank
}
