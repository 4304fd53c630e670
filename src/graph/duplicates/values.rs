//! Value equality for duplicate detection (SPEC §2.4, last paragraphs):
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

use crate::graph::DominatorTree;
use crate::model::{Model, ValueKind};

/// The class of objects that take no part (unreachable).
const NONE: u32 = u32::MAX;

/// What an object's value class compares.
fn key(dump: &Model, o: u32) -> (ValueKind, &[u8], &[u32]) {
    let (bytes, kind) = dump
        .values
        .as_ref()
        .and_then(|v| v.get(o))
        .map_or((&[][..], ValueKind::None), |(b, k)| (b, k));
    let labels = match &dump.labels {
        Some(l) => {
            let (s, e) = (
                dump.refs.offsets[o as usize],
                dump.refs.offsets[o as usize + 1],
            );
            l.of_ref.get(s as usize..e as usize).unwrap_or(&[])
        }
        None => &[],
    };
    (kind, bytes, labels)
}

fn hash(k: &(ValueKind, &[u8], &[u32])) -> u64 {
    let mut h: u64 = 0x243f_6a88_85a3_08d3 ^ k.0 as u64;
    let mix = |h: u64, w: u64| (h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(23);
    let mut words = k.1.chunks_exact(8);
    for w in &mut words {
        h = mix(h, u64::from_le_bytes(w.try_into().unwrap()));
    }
    for &b in words.remainder() {
        h = mix(h, b as u64 | 1 << 8);
    }
    h = mix(h, k.1.len() as u64);
    for &l in k.2 {
        h = mix(h, l as u64 | 1 << 40);
    }
    h
}

/// Per object its value class (see the module doc), `None` when the dump
/// has neither values nor labels. Exact: objects are grouped by a hash,
/// then each group is split by comparing the keys themselves.
pub(crate) fn value_classes(dump: &Model, dom: &DominatorTree) -> Option<Vec<u32>> {
    if dump.values.is_none() && dump.labels.is_none() {
        return None;
    }
    let mut keyed: Vec<(u64, u32)> = dom
        .preorder
        .par_iter()
        .map(|&o| (hash(&key(dump, o)), o))
        .collect();
    keyed.par_sort_unstable();
    let mut class = crate::mem::filled(dump.objects(), NONE);
    {
        let out = crate::mem::as_atomic(&mut class);
        keyed.par_chunk_by(|a, b| a.0 == b.0).for_each(|group| {
            // Representatives of the distinct keys met so far in the group
            // (almost always one); a class is named by its first member.
            let mut reps: Vec<u32> = Vec::new();
            for &(_, o) in group {
                let k = key(dump, o);
                let rep = match reps.iter().find(|&&r| key(dump, r) == k) {
                    Some(&r) => r,
                    None => {
                        reps.push(o);
                        o
                    }
                };
                out[o as usize].store(rep, Ordering::Relaxed);
            }
        });
    }
    Some(class)
}
