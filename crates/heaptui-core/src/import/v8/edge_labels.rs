//! The edges' labels while the edges are read: 2 bytes an edge, where a
//! `u32` each took 4 (82 MiB on the 519 MB snapshot's 21.5 M edges, the
//! largest array alive where the import peaked).
//!
//! Each kept edge's label (`edges::label`: an array index, a raw string
//! index or none) is coded as its part is merged, in file order, in the
//! model's 2-byte form (`LabelCodes::Half`): [`Code::AT`] for an array
//! index equal to the edge's position among its object's references (an
//! array's elements: no dictionary could hold them all), else a code into
//! a dictionary of the labels in the order they are first met (65,534 at
//! most: string indices below [`STRING_SLOTS`] and array indices below
//! [`INDEX_SLOTS`] are looked up in direct tables, 2 bytes a slot), else
//! [`Code::ESCAPE`] with the label in a side table of (edge, label) pairs,
//! 16 bytes each (hardly any in a snapshot V8 writes: a few hundred
//! distinct property names, and array elements at their positions). The positions come from the parts' runs of references
//! by object, counted on across parts.
//!
//! A heap whose labels mostly escape (more than 65,534 distinct ones, an
//! object of a million distinct keys) would take more than 4 bytes an
//! edge that way: once the side table passes one entry in
//! [`ESCAPES_PER`] edges (beyond [`ESCAPES_FREE`]), the rest are kept as `u32`s, and the whole is
//! decoded into `u32`s once the references' offsets are known
//! ([`EdgeLabels::finish`]).
//!
//! The labels are then interned on the dictionary and the side table
//! alone (`build::labels`), and put in the model's narrowest form, whose
//! dictionary is by frequency (`LabelCodes::narrowed_from`).

use std::sync::Arc;

use super::column::Column;
use crate::mem::spill::Spill;
use crate::mem::Array;
use crate::mem::Scratch;
use crate::model::{Code, Coded, LabelRow, Labels, Offsets, Side};

/// String indices below this have a slot in the direct table (2 MiB at
/// most; larger ones, never seen, go through the side table).
const STRING_SLOTS: usize = 1 << 20;

/// Array indices below this have a slot in the direct table.
const INDEX_SLOTS: usize = 1 << 16;

/// Where no code is given yet.
const UNSEEN: u16 = u16::MAX;

/// The labels go on as `u32`s once more than one edge in this many has
/// escaped (an escape costs 16 bytes; a `u32` label 2 more than a code),
/// beyond the first [`ESCAPES_FREE`].
const ESCAPES_PER: usize = 8;

/// Escapes always allowed (1 MiB of side table).
const ESCAPES_FREE: usize = 1 << 16;

/// The edges' labels as they are read, in order.
pub struct EdgeLabels {
    codes: Column<u16>,
    /// The label of each dictionary code.
    dict: Vec<u32>,
    /// `(edge, label)` pairs of the escaped labels, by edge.
    side: Vec<u64>,
    /// Per string index: its code, or [`UNSEEN`].
    by_string: Vec<u16>,
    /// Per array index below [`INDEX_SLOTS`]: its code, or [`UNSEEN`].
    by_index: Vec<u16>,
    /// The code of no label, or [`UNSEEN`].
    none: u16,
    /// The object whose references were merged last, and how many.
    last: Option<(u32, u32)>,
    /// The labels after the coded ones, where too many escaped.
    rest: Option<Column<u32>>,
    /// The edges the reading expects (a capacity hint for `rest`).
    hint: usize,
    spill: Option<Arc<Spill>>,
}

impl Default for EdgeLabels {
    fn default() -> EdgeLabels {
        EdgeLabels::new(0, None)
    }
}

impl std::fmt::Debug for EdgeLabels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "EdgeLabels({} coded, {} in the dictionary, {} escaped, {} as u32)",
            self.codes.len(),
            self.dict.len(),
            self.side.len() / 2,
            self.rest.as_ref().map_or(0, |r| r.len())
        )
    }
}

impl EdgeLabels {
    /// Room for `hint` labels, in a spill file where `spill` is given.
    pub fn new(hint: usize, spill: Option<&Arc<Spill>>) -> EdgeLabels {
        EdgeLabels {
            codes: Column::with_capacity(hint, spill),
            dict: Vec::new(),
            side: Vec::new(),
            by_string: Vec::new(),
            by_index: Vec::new(),
            none: UNSEEN,
            last: None,
            rest: None,
            hint,
            spill: spill.cloned(),
        }
    }

    /// How many labels.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.codes.len() + self.rest.as_ref().map_or(0, |r| r.len())
    }

    /// Appends a part's labels: `raw` (see `edges::label`), whose edges
    /// are `runs` of `(object, references)` in order; `out` is a buffer
    /// for the part's codes.
    pub fn append(&mut self, raw: &[u32], runs: &[(u32, u32)], out: &mut Vec<u16>) {
        if let Some(rest) = &mut self.rest {
            return rest.extend(raw);
        }
        out.clear();
        out.reserve(raw.len());
        let mut labels = raw.iter();
        for &(object, n) in runs {
            let first = match self.last {
                Some((o, seen)) if o == object => seen,
                _ => 0,
            };
            for position in first..first + n {
                let Some(&l) = labels.next() else { break };
                let code = match l != Labels::NONE && l == Labels::index(position as u64) {
                    true => u16::AT,
                    false => self.code(l),
                };
                if code == u16::ESCAPE {
                    let edge = self.codes.len() + out.len();
                    self.side.extend([edge as u64, l as u64]);
                }
                out.push(code);
            }
            self.last = Some((object, first + n));
        }
        self.codes.extend(out);
        if self.side.len() / 2 > self.codes.len() / ESCAPES_PER + ESCAPES_FREE {
            let hint = self.hint.saturating_sub(self.codes.len());
            self.rest = Some(Column::with_capacity(hint, self.spill.as_ref()));
        }
    }

    /// The dictionary code of label `l`, given it if new and there is
    /// room; else [`Code::ESCAPE`].
    fn code(&mut self, l: u32) -> u16 {
        const INDEX: u32 = 1 << 31;
        let slot = if l == Labels::NONE {
            &mut self.none
        } else if l & INDEX != 0 {
            let i = (l & !INDEX) as usize;
            if i >= INDEX_SLOTS {
                return u16::ESCAPE;
            }
            if self.by_index.is_empty() {
                self.by_index = vec![UNSEEN; INDEX_SLOTS];
            }
            &mut self.by_index[i]
        } else {
            let s = l as usize;
            if s >= STRING_SLOTS {
                return u16::ESCAPE;
            }
            if s >= self.by_string.len() {
                let len = (s + 1).next_power_of_two().clamp(1024, STRING_SLOTS);
                self.by_string.resize(len, UNSEEN);
            }
            &mut self.by_string[s]
        };
        if *slot == UNSEEN && self.dict.len() < u16::DICT {
            *slot = self.dict.len() as u16;
            self.dict.push(l);
        }
        match *slot {
            UNSEEN => u16::ESCAPE,
            c => c,
        }
    }

    /// The labels, once the references' `offsets` are known (they cut
    /// the labels as the references): in the 2-byte form, or as `u32`s
    /// where too many escaped.
    pub fn finish(self, offsets: &Offsets) -> RawLabels {
        let coded = self.codes.len();
        let half = RawLabels::Half {
            codes: self.codes.into_scratch().into_array(),
            dict: self.dict,
            side: Side::new(self.side.into(), coded),
        };
        let Some(rest) = self.rest else {
            return half;
        };
        let rest = rest.into_scratch();
        let mut all: Scratch<u32> = Scratch::zeroed(coded + rest.len(), self.spill.as_deref());
        let objects = offsets.len().saturating_sub(1);
        for o in 0..objects {
            let (start, end) = (offsets.get(o) as usize, offsets.get(o + 1) as usize);
            if start >= coded {
                break;
            }
            let end = end.min(coded);
            for (slot, l) in all[start..end]
                .iter_mut()
                .zip(half.row(start, start..end).iter())
            {
                *slot = l;
            }
        }
        all[coded..].copy_from_slice(&rest);
        RawLabels::Full(all)
    }
}

/// The edges' labels once read, not yet interned: string indices as the
/// snapshot numbers its strings.
pub enum RawLabels {
    /// In the 2-byte form (as `LabelCodes::Half`), the dictionary in the
    /// order the labels were met.
    Half {
        codes: Array<u16>,
        dict: Vec<u32>,
        side: Side,
    },
    /// A `u32` each.
    Full(Scratch<u32>),
}

impl Default for RawLabels {
    fn default() -> RawLabels {
        RawLabels::Full(Scratch::default())
    }
}

impl std::fmt::Debug for RawLabels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RawLabels::Half { codes, .. } => {
                write!(f, "RawLabels::Half({} labels)", codes.len())
            }
            RawLabels::Full(a) => write!(f, "RawLabels::Full({} labels)", a.len()),
        }
    }
}

/// `span` cut at `len`.
fn clamp(span: std::ops::Range<usize>, len: usize) -> std::ops::Range<usize> {
    let end = span.end.min(len);
    span.start.min(end)..end
}

impl RawLabels {
    /// The labels of the references in `span` (clamped to the end), whose
    /// object's first reference is `start`.
    pub fn row(&self, start: usize, span: std::ops::Range<usize>) -> LabelRow<'_> {
        match self {
            RawLabels::Half { codes, dict, side } => {
                let span = clamp(span, codes.len());
                let first = span.start;
                LabelRow::Half(Coded::new(&codes[span], dict, side, start, first))
            }
            RawLabels::Full(a) => LabelRow::Raw(&a[clamp(span, a.len())]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Csr;

    /// Labels of rows of random lengths: names (some past the direct
    /// table), indices at and off their position, none; cut into parts
    /// anywhere (an object's references may span parts).
    fn rows(seed: u64, names: u64, rows: usize) -> (Vec<u32>, Vec<u32>) {
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut degrees, mut raw) = (Vec::new(), Vec::new());
        for _ in 0..rows {
            let degree = (next() % 9) as u32 + if next() % 50 == 0 { 300 } else { 0 };
            for p in 0..degree {
                raw.push(match next() % 100 {
                    r if r < 40 => Labels::index(p as u64),
                    r if r < 45 => Labels::index(next() % 200_000),
                    r if r < 50 => Labels::NONE,
                    r if r < 52 => (STRING_SLOTS as u64 + next() % 1000) as u32,
                    _ => (next() % names) as u32,
                });
            }
            degrees.push(degree);
        }
        (degrees, raw)
    }

    /// `raw` appended in parts of `part` edges, with its rows' runs.
    fn coded(degrees: &[u32], raw: &[u32], part: usize) -> EdgeLabels {
        let mut labels = EdgeLabels::new(raw.len(), None);
        let owners: Vec<u32> = (0..degrees.len() as u32)
            .flat_map(|o| std::iter::repeat_n(o, degrees[o as usize] as usize))
            .collect();
        let mut out = Vec::new();
        for (chunk, owners) in raw.chunks(part).zip(owners.chunks(part)) {
            let mut runs: Vec<(u32, u32)> = Vec::new();
            for &o in owners {
                match runs.last_mut() {
                    Some((r, n)) if *r == o => *n += 1,
                    _ => runs.push((o, 1)),
                }
            }
            labels.append(chunk, &runs, &mut out);
        }
        labels
    }

    fn check(degrees: &[u32], raw: &[u32], part: usize) -> RawLabels {
        let labels = coded(degrees, raw, part);
        assert_eq!(labels.len(), raw.len());
        let refs = Csr::from_degrees(degrees, vec![0; raw.len()]);
        let codes = labels.finish(refs.offsets());
        for o in 0..refs.nodes() as u32 {
            let r = refs.range(o);
            let row: Vec<u32> = codes.row(r.start, r.clone()).iter().collect();
            assert_eq!(row, raw[r], "row {o}, parts of {part}");
        }
        codes
    }

    #[test]
    fn the_labels_read_back_whatever_the_parts() {
        for (seed, names) in [(1, 5), (2, 300), (3, 70_000)] {
            let (degrees, raw) = rows(seed, names, 2000);
            for part in [1, 7, 1000, raw.len()] {
                check(&degrees, &raw, part);
            }
        }
    }

    #[test]
    fn few_distinct_labels_keep_two_bytes_and_many_go_on_as_u32() {
        let (degrees, raw) = rows(4, 50, 3000);
        assert!(matches!(check(&degrees, &raw, 333), RawLabels::Half { .. }));
        // Every label a distinct name: the dictionary fills, then the
        // side table passes its share.
        let degrees = vec![1000u32; 300];
        let raw: Vec<u32> = (0..300_000u32).map(|i| i * 3).collect();
        for part in [1000, 4096, 300_000] {
            assert!(matches!(check(&degrees, &raw, part), RawLabels::Full(_)));
        }
    }
}
