//! Choosing and building a heap's [`LabelCodes`] form from its labels as
//! the importer stored them (a `u32` each): the labels counted (those at
//! their position apart), the most frequent made the dictionary, the form
//! of fewest bytes taken, then the codes written in parallel ranges of
//! objects.

use std::ops::Range;

use rayon::prelude::*;

use super::{Code, LabelCodes, Side, INDEX, NONE};
use crate::mem::Array;
use crate::model::Csr;

/// Array indices below this are counted for the dictionary (larger ones
/// are rare and always escape).
const INDEX_SLOTS: usize = 1 << 16;

/// What a side table's entry is counted at when choosing: its 16 bytes
/// and 8 for the binary search a read of it costs.
const ENTRY_COST: u64 = 24;

/// Objects per range of the parallel passes.
const RANGE: usize = 1 << 14;

/// Where a label is counted: 0 for none, `1 + name`, or
/// `1 + names + index`; `None` for a label never in the dictionary.
#[inline]
fn slot(l: u32, names: usize) -> Option<usize> {
    if l == NONE {
        Some(0)
    } else if l & INDEX != 0 {
        let i = (l & !INDEX) as usize;
        (i < INDEX_SLOTS).then_some(1 + names + i)
    } else {
        ((l as usize) < names).then_some(1 + l as usize)
    }
}

/// The label counted at `slot`.
fn label_of(slot: usize, names: usize) -> u32 {
    match slot {
        0 => NONE,
        s if s <= names => (s - 1) as u32,
        s => INDEX | (s - 1 - names) as u32,
    }
}

/// Each object range's references, as a [`RANGE`]-object part.
fn ranges(refs: &Csr) -> Vec<std::ops::Range<usize>> {
    let n = refs.nodes();
    (0..n.div_ceil(RANGE))
        .map(|r| r * RANGE..((r + 1) * RANGE).min(n))
        .collect()
}

/// Labels read row by row: as stored (`u32`s), or in a coded form (an
/// importer's provisional one, see [`narrowed_from`]).
trait Rows: Sync {
    /// Calls `f(edge, label)` for the references `span` of the object
    /// whose first reference is `start`.
    fn each(&self, start: usize, span: Range<usize>, f: impl FnMut(usize, u32));
}

impl Rows for [u32] {
    #[inline]
    fn each(&self, _: usize, span: Range<usize>, mut f: impl FnMut(usize, u32)) {
        for e in span {
            f(e, self[e]);
        }
    }
}

impl Rows for LabelCodes {
    #[inline]
    fn each(&self, start: usize, span: Range<usize>, mut f: impl FnMut(usize, u32)) {
        for (e, l) in span.clone().zip(self.row(start, span).iter()) {
            f(e, l);
        }
    }
}

/// How often each slot's label occurs off its position, and how many
/// labels are at their position.
fn count<R: Rows + ?Sized>(raw: &R, names: usize, refs: &Csr) -> (Vec<u64>, u64) {
    let slots = 1 + names + INDEX_SLOTS;
    // A few ranges per thread, each with its own counts (a count array
    // per small range would be many megabytes at once).
    let parts = rayon::current_num_threads().max(1) * 2;
    let n = refs.nodes();
    let per = n.div_ceil(parts).max(1);
    let counted: Vec<(Vec<u32>, u64)> = (0..n.div_ceil(per))
        .into_par_iter()
        .map(|p| {
            let mut counts = vec![0u32; slots];
            let mut at = 0u64;
            for o in p * per..((p + 1) * per).min(n) {
                let r = refs.range(o as u32);
                raw.each(r.start, r.clone(), |e, l| {
                    if l != NONE && l == super::at(r.start, e) {
                        at += 1;
                    } else if let Some(s) = slot(l, names) {
                        counts[s] = counts[s].saturating_add(1);
                    }
                });
            }
            (counts, at)
        })
        .collect();
    let mut total = vec![0u64; slots];
    let mut at = 0;
    for (c, a) in counted {
        at += a;
        for (t, x) in total.iter_mut().zip(c) {
            *t += x as u64;
        }
    }
    (total, at)
}

/// The form of fewest bytes for `raw`, the labels of `refs` (a heap with
/// `names` label names); the labels are freed as the codes are made.
pub(in crate::model) fn narrowed(raw: Array<u32>, names: usize, refs: &Csr) -> LabelCodes {
    let len = raw.len();
    if len == 0 || len != refs.edges() {
        return LabelCodes::Full(raw);
    }
    match choose(&raw[..], names, refs) {
        (1, slots) => {
            let (codes, dict, side) = encode::<u8, _>(&raw[..], names, refs, &slots);
            LabelCodes::Byte { codes, dict, side }
        }
        (2, slots) => {
            let (codes, dict, side) = encode::<u16, _>(&raw[..], names, refs, &slots);
            LabelCodes::Half { codes, dict, side }
        }
        _ => LabelCodes::Full(raw),
    }
}

/// [`narrowed`] from labels in any form (an importer's provisional one:
/// the V8 importer's 2-byte codes, its dictionary in the order the labels
/// came): the same form and codes as from the labels as `u32`s.
pub(in crate::model) fn narrowed_from(src: LabelCodes, names: usize, refs: &Csr) -> LabelCodes {
    let len = src.len();
    if len == 0 || len != refs.edges() {
        return src;
    }
    if let LabelCodes::Full(raw) = src {
        return narrowed(raw, names, refs);
    }
    match choose(&src, names, refs) {
        (1, slots) => {
            let (codes, dict, side) = encode::<u8, _>(&src, names, refs, &slots);
            LabelCodes::Byte { codes, dict, side }
        }
        (2, slots) => {
            let (codes, dict, side) = encode::<u16, _>(&src, names, refs, &slots);
            LabelCodes::Half { codes, dict, side }
        }
        _ => {
            let mut raw: Vec<u32> = crate::mem::zeroed(len);
            for o in 0..refs.nodes() as u32 {
                let r = refs.range(o);
                src.each(r.start, r, |e, l| raw[e] = l);
            }
            LabelCodes::Full(raw.into())
        }
    }
}

/// The width of the form of fewest bytes for the labels `raw` of `refs`
/// (a heap with `names` label names), and the dictionary's slots by
/// frequency.
fn choose<R: Rows + ?Sized>(raw: &R, names: usize, refs: &Csr) -> (u64, Vec<usize>) {
    let len = refs.edges();
    let (counts, at) = count(raw, names, refs);
    // Slots by frequency (then by slot): the dictionary is a prefix.
    let mut order: Vec<(u64, usize)> = counts
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c > 0)
        .map(|(s, &c)| (c, s))
        .collect();
    order.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let off_position = len as u64 - at;
    let cost = |k: usize, width: u64| {
        let kept: u64 = order.iter().take(k).map(|o| o.0).sum();
        let dict = order.len().min(k) as u64 * 4;
        width * len as u64 + (off_position - kept) * ENTRY_COST + dict
    };
    let forms = [
        (cost(u8::DICT, 1), 1),
        (cost(u16::DICT, 2), 2),
        (4 * len as u64, 4),
    ];
    let width = forms.iter().min_by_key(|f| f.0).map_or(4, |f| f.1);
    (width, order.iter().map(|o| o.1).collect())
}

/// The codes of `raw` with the dictionary of the first `C::DICT` of
/// `slots`, and the side table of the labels left out.
fn encode<C: Code, R: Rows + ?Sized>(
    raw: &R,
    names: usize,
    refs: &Csr,
    slots: &[usize],
) -> (Array<C>, Vec<u32>, Side) {
    let kept = &slots[..slots.len().min(C::DICT)];
    let dict: Vec<u32> = kept.iter().map(|&s| label_of(s, names)).collect();
    let mut code_of = vec![C::ESCAPE; 1 + names + INDEX_SLOTS];
    for (c, &s) in kept.iter().enumerate() {
        code_of[s] = C::code(c);
    }
    let ranges = ranges(refs);
    let mut codes: Vec<C> = crate::mem::zeroed(refs.edges());
    let lens = ranges
        .iter()
        .map(|r| (refs.offset(r.end) - refs.offset(r.start)) as usize);
    let parts = crate::mem::split_by(&mut codes, lens);
    let side: Vec<Vec<u64>> = ranges
        .into_par_iter()
        .zip(parts)
        .map(|(objects, out)| {
            let first = refs.offset(objects.start) as usize;
            let mut side = Vec::new();
            for o in objects {
                let r = refs.range(o as u32);
                raw.each(r.start, r.clone(), |e, l| {
                    let c = if l != NONE && l == super::at(r.start, e) {
                        C::AT
                    } else {
                        slot(l, names).map_or(C::ESCAPE, |s| code_of[s])
                    };
                    if c == C::ESCAPE {
                        side.extend([e as u64, l as u64]);
                    }
                    out[e - first] = c;
                });
            }
            side
        })
        .collect();
    let side = Side::new(side.concat().into(), codes.len());
    (codes.into(), dict, side)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Labels;

    /// Random labels over random rows: names, indices at and off their
    /// position, none; every form reads back every label.
    #[test]
    fn every_form_reads_back_every_label() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for (names, rare) in [(3usize, 0u64), (300, 5), (70_000, 50), (10, 1000)] {
            let mut offsets = vec![0u64];
            let mut raw = Vec::new();
            for _ in 0..3000 {
                let degree = (next() % 12) as usize;
                let start = raw.len();
                for p in 0..degree {
                    let l = match next() % 1000 {
                        r if r < rare => Labels::index(next() % 100_000),
                        r if r < 400 => Labels::index(p as u64),
                        r if r < 420 => Labels::NONE,
                        _ => (next() % names as u64) as u32,
                    };
                    raw.push(l);
                    let _ = start;
                }
                offsets.push(raw.len() as u64);
            }
            let refs = Csr::from_offsets(offsets, vec![0u32; raw.len()]);
            let codes = narrowed(raw.clone().into(), names, &refs);
            let full = LabelCodes::Full(raw.clone().into());
            for o in 0..refs.nodes() as u32 {
                let r = refs.range(o);
                let row: Vec<u32> = codes.row(r.start, r.clone()).iter().collect();
                assert_eq!(row, raw[r.clone()], "row {o}");
                assert_eq!(codes.row(r.start, r.clone()), full.row(r.start, r.clone()));
                for e in r.clone() {
                    assert_eq!(codes.raw(r.start, e), Some(raw[e]));
                }
                // A row cut at its front reads the same labels.
                if r.len() > 1 {
                    let cut: Vec<u32> = codes.row(r.start, r.start + 1..r.end).iter().collect();
                    assert_eq!(cut, raw[r.start + 1..r.end]);
                }
            }
            assert_eq!(codes.raw(0, raw.len()), None);
            // Read back as a cache reads it.
            let again = match &codes {
                LabelCodes::Byte {
                    codes: c,
                    dict,
                    side,
                } => LabelCodes::checked_byte(c.clone(), dict.clone(), side.pairs().clone(), names),
                LabelCodes::Half {
                    codes: c,
                    dict,
                    side,
                } => LabelCodes::checked_half(c.clone(), dict.clone(), side.pairs().clone(), names),
                LabelCodes::Full(a) => LabelCodes::checked_full(a.clone(), names),
            };
            assert_eq!(again.as_ref(), Ok(&codes));
            assert!(codes.bytes() <= full.bytes(), "{names} names");
        }
    }

    #[test]
    fn the_form_follows_the_labels() {
        // Few names: one byte; an array of many indices off their
        // position (nulls before them) keeps four.
        let refs = Csr::from_offsets(vec![0, 4000], vec![0u32; 4000]);
        let few: Vec<u32> = (0..4000).map(|i| i % 7).collect();
        assert!(matches!(
            narrowed(few.into(), 7, &refs),
            LabelCodes::Byte { .. }
        ));
        let at: Vec<u32> = (0..4000).map(Labels::index).collect();
        let c = narrowed(at.into(), 0, &refs);
        assert!(matches!(&c, LabelCodes::Byte { side, .. } if side.pairs().is_empty()));
        let off: Vec<u32> = (0..4000).map(|i| Labels::index(2 * i + 1)).collect();
        assert!(matches!(
            narrowed(off.into(), 0, &refs),
            LabelCodes::Full(_)
        ));
        let some: Vec<u32> = (0..4000).map(|i| i % 1000).collect();
        assert!(matches!(
            narrowed(some.into(), 1000, &refs),
            LabelCodes::Half { .. }
        ));
    }

    #[test]
    fn hostile_tables_are_refused() {
        let ok = |c: &[u8], d: &[u32], s: &[u64]| {
            LabelCodes::checked_byte(c.to_vec().into(), d.to_vec(), s.to_vec().into(), 2)
        };
        assert!(ok(&[0, u8::AT, u8::ESCAPE], &[1], &[2, 7 | INDEX as u64]).is_ok());
        // A code past the dictionary.
        assert!(ok(&[1], &[1], &[]).is_err());
        // A dictionary label naming no name.
        assert!(ok(&[0], &[5], &[]).is_err());
        // An escape without its pair, a pair without its escape, pairs out
        // of order, a pair past the end, a label wider than 32 bits.
        assert!(ok(&[u8::ESCAPE], &[], &[]).is_err());
        assert!(ok(&[0], &[1], &[0, 1]).is_err());
        let two = [u8::ESCAPE, u8::ESCAPE];
        assert!(ok(&two, &[], &[1, 1, 0, 1]).is_err());
        assert!(ok(&[u8::ESCAPE], &[], &[5, 1]).is_err());
        assert!(ok(&[u8::ESCAPE], &[], &[0, 1 << 40]).is_err());
        assert!(ok(&[u8::ESCAPE], &[], &[0]).is_err());
        let big = vec![0u32; u8::DICT + 1];
        assert!(ok(&[0], &big, &[]).is_err());
        assert!(LabelCodes::checked_full(vec![5u32].into(), 2).is_err());
        assert!(LabelCodes::checked_full(vec![1, NONE, INDEX].into(), 2).is_ok());
    }
}
