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

use super::view::View;
use crate::graph::DominatorTree;
use crate::model::{LabelRow, Model, ObjectIdx, ValueKind};

/// The block of objects that take no part (unreachable): `bisim::NO_BLOCK`.
const NONE: u32 = super::bisim::NO_BLOCK;

/// What an object's label compares: type, size, reference count, value
/// kind and bytes, reference labels, and the object itself where its value
/// is [`ValueKind::Unknown`] (equal to no other's), or a Java reference
/// object's referent where referents are not references (two weak
/// references are copies only when they refer to the same object), else
/// [`NO_OWN`], and its type descriptors (see `view`).
type Key<'a> = (u32, u64, u64, ValueKind, &'a [u8], LabelRow<'a>, u32, u32);

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
    mix(h, k.7 as u64 | 1 << 41)
}

/// The label blocks of the reachable objects where the dump has values or
/// labels (`None` otherwise): one block per distinct label (type, size,
/// reference count, value, reference labels), numbered densely; unreachable
/// objects get `NO_BLOCK`. Exact: objects are grouped by a hash of the
/// label (a parallel sort, no map of millions of labels), then each group
/// is split by comparing the labels themselves.
pub(crate) fn label_blocks(view: &View, dom: &DominatorTree) -> Option<Vec<u32>> {
    let dump = view.dump;
    if dump.values.is_none() && dump.labels.is_none() {
        return None;
    }
    // In object order, where the arrays a label reads are read in order
    // (the sort below fixes the order anyway). Keys are (hash's high half,
    // its low half, object): sorted as (hash, object), in 12 bytes where a
    // (u64, u32) pair takes 16 (80 MB less on a 20 M-object snapshot, at
    // the stage's peak).
    let weak = WeakReferents::of(dump);
    let weak = weak.as_ref();
    let mut keyed: Vec<[u32; 3]> = super::gather(
        dump.objects(),
        |o| dom.is_reachable(o as u32),
        |o| {
            let h = hash(&key(view, weak, o as u32));
            [(h >> 32) as u32, h as u32, o as u32]
        },
    );
    keyed.par_sort_unstable();
    // First the representative (lowest member met) of every object's label.
    let mut rep = crate::mem::filled(dump.objects(), NONE);
    {
        let out = crate::mem::as_atomic(&mut rep);
        let same_hash = |a: &[u32; 3], b: &[u32; 3]| a[..2] == b[..2];
        keyed.par_chunk_by(same_hash).for_each(|group| {
            if let [[_, _, o]] = group {
                out[*o as usize].store(*o, Ordering::Relaxed);
                return;
            }
            // The distinct labels met so far in the group (almost always
            // one), each with its representative.
            let mut reps: Vec<(u32, Key)> = Vec::new();
            for &[_, _, o] in group {
                let k = key(view, weak, o);
                let r = match reps.iter().find(|(_, rk)| *rk == k) {
                    Some(&(r, _)) => r,
                    None => {
                        reps.push((o, k));
                        o
                    }
                };
                out[o as usize].store(r, Ordering::Relaxed);
            }
        });
    }
    drop(keyed);
    // Then dense ids: a representative's rank among representatives.
    let mut rank: Vec<u32> = crate::mem::with_capacity(rep.len());
    let mut next = 0u32;
    for (o, &r) in rep.iter().enumerate() {
        rank.push(next);
        next += (r == o as u32) as u32;
    }
    rep.par_iter_mut().for_each(|r| {
        if *r != NONE {
            *r = rank[*r as usize];
        }
    });
    Some(rep)
}

/// Per object its value class: equal for objects with equal labels (see
/// [`label_blocks`]), `None` when the dump has neither values nor labels.
pub(crate) fn value_classes(view: &View, dom: &DominatorTree) -> Option<Vec<u32>> {
    label_blocks(view, dom)
}
