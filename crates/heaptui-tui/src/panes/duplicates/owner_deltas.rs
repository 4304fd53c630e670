//! The owners view's comparison: per owner of the newest snapshot, its
//! waste newest − oldest (matched by the type names of its path, as
//! `report --baseline` does), and the owners the newest snapshot lacks.
//! Built once per owners result and comparison (O(owners · path length)),
//! never per key or per frame.

use std::collections::HashMap;

use crate::compared::{rises, Compared};
use heaptui_core::analysis::{default_owner_exclude, Owners};
use heaptui_core::model::Model;

/// One owner's change across the snapshots.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OwnerDelta {
    /// Wasted bytes newest − oldest.
    pub bytes: i128,
    /// Extra copies newest − oldest.
    pub copies: i128,
    /// The wasted bytes rise at every step.
    pub steady: bool,
}

/// An owner of the baselines that the newest snapshot lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoneOwner {
    /// Its path, type names joined by ` / ` (`<GC roots>`: held by roots).
    pub path: String,
    /// Its change (its newest figures are 0).
    pub delta: OwnerDelta,
    /// Its wasted bytes in the last snapshot that had it.
    pub last_bytes: u64,
    /// That snapshot's position, oldest 0.
    pub last_seen: usize,
}

/// The comparison of the owners view.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnerDeltas {
    /// Per owner of the view, its change.
    pub owners: Vec<OwnerDelta>,
    /// The owners gone from the newest snapshot, most shrunk first.
    pub gone: Vec<GoneOwner>,
}

impl OwnerDeltas {
    /// The change of `owners` against the comparison's owners; `None`
    /// when the owners were cut at other patterns than the format's
    /// defaults (the comparison's owners are cut at those).
    pub fn of(c: &Compared, owners: &Owners, dump: &Model) -> Option<OwnerDeltas> {
        let defaults = default_owner_exclude(dump.format);
        if owners
            .exclude
            .iter()
            .map(String::as_str)
            .ne(defaults.iter().copied())
        {
            return None;
        }
        let rows = &c.cmp.owners;
        let by_path: HashMap<Vec<&str>, usize> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.path.iter().map(String::as_str).collect(), i))
            .collect();
        let delta = |i: usize| {
            let r = &rows[i];
            let last = r.bytes.len() - 1;
            OwnerDelta {
                bytes: r.growth(),
                copies: r.copies[last] as i128 - r.copies[0] as i128,
                steady: rises(&r.bytes),
            }
        };
        let deltas = owners
            .owners
            .iter()
            .map(|o| {
                let names: Vec<&str> = o
                    .path
                    .iter()
                    .map(|t| &*dump.type_names[t.index()])
                    .collect();
                match by_path.get(&names) {
                    Some(&i) => delta(i),
                    // Not in the comparison (it cannot happen with the same
                    // patterns): all of it is new.
                    None => OwnerDelta {
                        bytes: o.bytes as i128,
                        copies: o.copies as i128,
                        steady: false,
                    },
                }
            })
            .collect();
        let mut gone: Vec<GoneOwner> = rows
            .iter()
            .enumerate()
            .filter(|(_, r)| r.bytes.last() == Some(&0) && r.copies.last() == Some(&0))
            .filter_map(|(i, r)| {
                let last_seen = r.copies.iter().rposition(|&n| n > 0)?;
                Some(GoneOwner {
                    path: match r.path.is_empty() {
                        true => "<GC roots>".into(),
                        false => r.path.join(" / "),
                    },
                    delta: delta(i),
                    last_bytes: r.bytes[last_seen],
                    last_seen,
                })
            })
            .collect();
        gone.sort_by(|a, b| a.delta.bytes.cmp(&b.delta.bytes).then(a.path.cmp(&b.path)));
        Some(OwnerDeltas {
            owners: deltas,
            gone,
        })
    }
}
