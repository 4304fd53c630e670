//! Value equality for duplicate detection (docs/duplicates.md, last paragraphs):
//! where the dump carries values and reference labels, paired objects must
//! also hold equal value bytes of the same kind, and their i-th references
//! must carry equal labels. Both are properties of one object, so they fold
//! into its label: objects get a *value class*, equal exactly when kind,
//! value bytes and the sequence of reference labels are equal, and the
//! candidate blocks start from (type, size, reference count, value class).
//! Every block then still has a single label, which is all `verify` relies
//! on, so the rest of the pipeline is unchanged.
//!
//! Dumps without values or labels (the text format) skip all of this.

use std::sync::atomic::Ordering;

use rayon::prelude::*;

use super::view::{Descriptors, View, WalkLabels};
use crate::graph::ParentsAside;
use crate::model::{Model, ObjectIdx, ValueKind};

/// The block of objects that take no part (unreachable): `bisim::NO_BLOCK`.
const NONE: u32 = super::bisim::NO_BLOCK;

/// What an object's label compares: type, size, reference count, value
/// kind and bytes, reference labels, and the object itself where its value
/// is [`ValueKind::Unknown`] (equal to no other's), or a Java reference
/// object's referent where referents are not references (two weak
/// references are copies only when they refer to the same object), else
/// [`NO_OWN`], and its type descriptors (see `view`).
type Key<'a> = (
    u32,
    u64,
    u64,
    ValueKind,
    &'a [u8],
    WalkLabels<'a>,
    u32,
    Descriptors<'a>,
);

const NO_OWN: u32 = u32::MAX;

/// The referents that are not references, and the types of the objects
/// holding one (so that only those objects look theirs up).
struct WeakReferents<'a> {
    referents: &'a crate::model::Referents,
    types: Vec<bool>,
}

impl<'a> WeakReferents<'a> {
    fn of(dump: &'a Model) -> Option<WeakReferents<'a>> {
        let referents = dump
            .referents
            .as_ref()
            .filter(|r| !r.strong && !r.is_empty())?;
        let mut types = vec![false; dump.type_names.len()];
        for r in referents.list() {
            types[dump.type_of(r.reference).index()] = true;
        }
        Some(WeakReferents { referents, types })
    }

    #[inline]
    fn referent(&self, dump: &Model, o: u32) -> Option<u32> {
        if !self.types[dump.types.get(o as usize).index()] {
            return None;
        }
        self.referents.of(ObjectIdx(o)).map(|r| r.referent.raw())
    }
}

fn key<'a>(view: &'a View, weak: Option<&WeakReferents>, o: u32) -> Key<'a> {
    let dump = view.dump;
    let (bytes, kind) = dump
        .values
        .as_ref()
        .and_then(|v| v.get(ObjectIdx(o)))
        .map_or((&[][..], ValueKind::None), |(b, k)| (b, k));
    let labels = view.ref_labels(o);
    let i = o as usize;
    let degree = view.refs_raw(o).len() as u64;
    let own = match kind {
        ValueKind::Unknown => o,
        _ => weak.and_then(|w| w.referent(dump, o)).unwrap_or(NO_OWN),
    };
    (
        dump.types.get(i).raw(),
        dump.sizes.get(i),
        degree,
        kind,
        bytes,
        labels,
        own,
        view.descriptors(o),
    )
}

fn hash(k: &Key) -> u64 {
    let mix = |h: u64, w: u64| (h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(23);
    let mut h: u64 = 0x243f_6a88_85a3_08d3;
    for w in [k.0 as u64, k.1, k.2, k.3 as u64, k.6 as u64] {
        h = mix(h, w);
    }
    let mut words = k.4.chunks_exact(8);
    for w in &mut words {
        h = mix(h, u64::from_le_bytes(w.try_into().unwrap()));
    }
    for &b in words.remainder() {
        h = mix(h, b as u64 | 1 << 8);
    }
    h = mix(h, k.4.len() as u64);
    k.5.for_each(|l| h = mix(h, l as u64 | 1 << 40));
    k.7.iter().for_each(|t| h = mix(h, t as u64 | 1 << 41));
    mix(h, 1 << 42)
}

/// Pieces [`label_blocks`] sorts its keys in, by the top bits of their
/// hash (log2).
const PIECE_BITS: u32 = 2;

/// The label blocks of the reachable objects where the dump has values or
/// labels (`None` otherwise): one block per distinct label (type, size,
/// reference count, value, reference labels), numbered densely in object
/// order of each label's first member; unreachable objects get `NO_BLOCK`.
/// Exact: objects are grouped by a hash of the label (a parallel sort, no
/// map of millions of labels), then each group is split by comparing the
/// labels themselves.
pub(crate) fn label_blocks(view: &View, dom: ParentsAside<'_>) -> Option<Vec<u32>> {
    let dump = view.dump;
    if dump.values.is_none() && dump.labels.is_none() {
        return None;
    }
    let weak = WeakReferents::of(dump);
    let weak = weak.as_ref();
    // Each object's hash first, in the array that ends holding its block
    // (read in object order, where the arrays a label reads are read in
    // order); then the (hash, object) keys a piece of the hashes at a
    // time: 2 bytes an object at once where all keys took 12.
    let mut rep: Vec<u32> = crate::mem::filled(dump.objects(), NONE);
    rep.par_iter_mut().enumerate().for_each(|(o, h)| {
        if dom.is_reachable(o as u32) {
            *h = (hash(&key(view, weak, o as u32)) >> 32) as u32;
        }
    });
    // The objects whose slot holds their representative, no longer a hash.
    let mut done = vec![0u64; rep.len().div_ceil(64)];
    for piece in 0..1u32 << PIECE_BITS {
        let (r, d) = (&rep, &done);
        let mut keyed: Vec<[u32; 2]> = super::gather(
            r.len(),
            |o| {
                d[o / 64] >> (o % 64) & 1 == 0
                    && r[o] >> (32 - PIECE_BITS) == piece
                    && dom.is_reachable(o as u32)
            },
            |o| [r[o], o as u32],
        );
        keyed.par_sort_unstable();
        crate::mem::arrays_alive(
            "duplicates: value labels",
            &[
                ("rep", rep.capacity() * 4),
                ("done", done.capacity() * 8),
                ("keyed", keyed.capacity() * 8),
            ],
        );
        representatives(view, weak, &keyed, &mut rep, &mut done);
    }
    // Then dense ids, in place: a representative's rank among
    // representatives, which every later member reads from its
    // representative's slot (a representative is its label's lowest
    // member).
    let mut next = 0u32;
    for o in 0..rep.len() {
        let r = rep[o];
        if r == o as u32 {
            rep[o] = next;
            next += 1;
        } else if r != NONE {
            rep[o] = rep[r as usize];
        }
    }
    Some(rep)
}

/// Writes into `rep` the representative (lowest member) of each keyed
/// object's label, and marks the object `done`. `keyed` is sorted (hash,
/// object); objects of one label share a hash.
fn representatives(
    view: &View,
    weak: Option<&WeakReferents>,
    keyed: &[[u32; 2]],
    rep: &mut [u32],
    done: &mut [u64],
) {
    let out = crate::mem::as_atomic(rep);
    let done = crate::mem::as_atomic_u64(done);
    let put = |o: u32, r: u32| {
        out[o as usize].store(r, Ordering::Relaxed);
        done[o as usize / 64].fetch_or(1 << (o % 64), Ordering::Relaxed);
    };
    keyed.par_chunk_by(|a, b| a[0] == b[0]).for_each(|group| {
        if let [[_, o]] = group {
            put(*o, *o);
            return;
        }
        // The distinct labels met so far in the group (almost always
        // one), each with its representative.
        let mut reps: Vec<(u32, Key)> = Vec::new();
        for &[_, o] in group {
            let k = key(view, weak, o);
            let r = match reps.iter().find(|(_, rk)| *rk == k) {
                Some(&(r, _)) => r,
                None => {
                    reps.push((o, k));
                    o
                }
            };
            put(o, r);
        }
    });
}

/// Per object its value class: equal for objects with equal labels (see
/// [`label_blocks`]), `None` when the dump has neither values nor labels.
pub(crate) fn value_classes(view: &View, dom: ParentsAside<'_>) -> Option<Vec<u32>> {
    label_blocks(view, dom)
}
