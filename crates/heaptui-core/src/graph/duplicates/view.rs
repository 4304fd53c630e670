//! The graph duplicate detection walks: the heap's references less those
//! from an object to its type descriptor (see `docs/duplicates.md`).
//!
//! A Java instance's or array's `<class>` reference, a V8 object's `map`
//! (to its hidden class) and `__proto__`: these say what the object is, not
//! what it holds. Two objects are copies only if their descriptors are the
//! same objects (they are part of the label, compared as the type is), and
//! the descriptors are never walked into, nor counted in a copy. Without
//! the rule every Java instance reaches its class's statics and every V8
//! object the global object through its map and prototype, so a shared
//! object reaching back to the members breaks every pairing, and a
//! copy's reach is most of the heap.
//!
//! Formats without type objects in the heap (the text format, gcdump) have
//! no descriptor references: the view is the graph itself.

use rayon::prelude::*;

use crate::graph::{Csr, HeapGraph};
use crate::mem::BitRow;
use crate::model::{Format, LabelRow, Labels, Model};

/// The stored label of no label.
const NONE: u32 = Labels::NONE;

/// The graph as duplicate detection sees it.
pub(crate) struct View<'a> {
    pub graph: &'a HeapGraph,
    pub dump: &'a Model,
    own: Option<Own>,
}

/// What differs from the graph, in little memory: a descriptor is almost
/// always among the first or last references of its object (HPROF's
/// `<class>` first, V8's `__proto__` and `map` last), so an object's walked
/// references are its references less `skip[o]` = (first, last) of them;
/// the few objects whose descriptors sit elsewhere have their walked
/// references in `odd`. Retainers differ only for descriptor targets
/// (classes, hidden classes, prototypes): theirs are in `targets`. An
/// object's descriptors are read where `skip` says they lie (an odd
/// object's by `rule`): a number per object for its list took 4 bytes an
/// object through the whole detection. `skip` is one byte an object (see
/// [`Skip`]), where two took 9 MiB more on the 406 MB HPROF through the
/// whole detection.
struct Own {
    skip: Vec<Skip>,
    odd: Rows,
    targets: Rows,
    is_target: Vec<u64>,
    rule: DescriptorRule,
}

/// An object's `skip`: how many of its first references are descriptors
/// in the low four bits, how many of its last in the high four, each under
/// [`SKIP_LIMIT`]; [`ODD`] where its walked references are in `Own::odd`.
type Skip = u8;

/// `skip` of an object whose walked references are in `Own::odd`.
const ODD: Skip = u8::MAX;

/// `skip` of an object whose descriptors are its references at odd
/// positions (1, 3, …) of an even number of them: its walked references
/// are every other one from its first, read in place
/// ([`BitRow::every_other`]). A V8 array is one (its elements, its map,
/// its properties, its prototype): 800,038 of the 6.62 M-object
/// snapshot's 805,384 objects that `skip` could not describe otherwise,
/// whose rows copied in `Own::odd` were 16 MiB through the whole
/// detection (50 MiB on the 20.2 M-object one). `skip_of` never makes it
/// (both its halves are below 15).
const ALTERNATE: Skip = u8::MAX - 1;

/// Descriptors leading or trailing an object's references, at most one
/// fewer than this each (an object with more is odd).
const SKIP_LIMIT: usize = 15;

/// The (first, last) references a `skip` leaves out.
#[inline]
fn ends(s: Skip) -> (usize, usize) {
    ((s & 15) as usize, (s >> 4) as usize)
}

/// The `skip` leaving out `front` first and `back` last references (each
/// under [`SKIP_LIMIT`]).
fn skip_of(front: usize, back: usize) -> Skip {
    debug_assert!(front < SKIP_LIMIT && back < SKIP_LIMIT);
    front as u8 | (back as u8) << 4
}

/// Rows of a few objects: `objects` ascending, row `i` of `csr` theirs,
/// and labels parallel to the targets where the dump has them.
#[derive(Default)]
struct Rows {
    objects: Vec<u32>,
    csr: Csr,
    labels: Vec<u32>,
}

impl Rows {
    fn build(rows: Vec<(u32, Vec<u32>, Vec<u32>)>) -> Rows {
        let objects = rows.iter().map(|r| r.0).collect();
        let offsets = crate::mem::prefix_sums(rows.len(), |i| rows[i].1.len() as u64);
        let labels = rows.iter().flat_map(|r| r.2.iter().copied()).collect();
        let targets = rows.into_iter().flat_map(|r| r.1).collect();
        Rows {
            objects,
            csr: Csr::from_offsets(offsets, targets),
            labels,
        }
    }

    fn row(&self, o: u32) -> Option<usize> {
        self.objects.binary_search(&o).ok()
    }
}

/// Which references of a dump are type descriptors: by label (and for
/// V8's `map`, by its target being a hidden-class node, so that a user's
/// property called `map` stays a field).
pub struct DescriptorRule {
    /// Labels (indices into `Labels::names`) that are descriptors whatever
    /// they point at.
    always: Vec<u32>,
    /// Labels that are descriptors when the target's type is one of
    /// `hidden_types`.
    when_hidden: Vec<u32>,
    hidden_types: Vec<u32>,
}

impl DescriptorRule {
    /// The rule for a dump; `None` where its format has no type objects
    /// or the dump has no labels.
    pub fn of(dump: &Model) -> Option<DescriptorRule> {
        let labels = dump.labels.as_ref()?;
        let label = |name: &str| {
            labels
                .names
                .iter()
                .position(|n| &**n == name)
                .map(|i| i as u32)
        };
        let ty = |name: &str| {
            dump.type_names
                .iter()
                .position(|n| &**n == name)
                .map(|i| i as u32)
        };
        let rule = match dump.format {
            Format::Hprof => DescriptorRule {
                always: label("<class>").into_iter().collect(),
                when_hidden: Vec::new(),
                hidden_types: Vec::new(),
            },
            Format::Heapsnapshot => DescriptorRule {
                always: label("__proto__").into_iter().collect(),
                when_hidden: label("map").into_iter().collect(),
                hidden_types: ["(object shape)", "(hidden)"]
                    .into_iter()
                    .filter_map(ty)
                    .collect(),
            },
            Format::Rpm | Format::Gcdump => return None,
        };
        if rule.always.is_empty() && (rule.when_hidden.is_empty() || rule.hidden_types.is_empty()) {
            return None;
        }
        Some(rule)
    }

    /// Whether the reference at position `edge` of the targets, to
    /// `target`, is a descriptor.
    #[inline]
    pub fn is_descriptor(&self, dump: &Model, edge: usize, target: u32) -> bool {
        let Some(l) = dump.labels.as_ref().and_then(|l| l.name_id(edge)) else {
            return false;
        };
        self.always.contains(&l)
            || (self.when_hidden.contains(&l)
                && self
                    .hidden_types
                    .contains(&dump.types.get(target as usize).raw()))
    }
}

impl<'a> View<'a> {
    pub fn new(graph: &'a HeapGraph) -> View<'a> {
        let dump = &graph.dump;
        let own = DescriptorRule::of(dump).and_then(|rule| Own::build(graph, rule));
        if let Some(o) = &own {
            let rows = |r: &Rows| {
                r.objects.capacity() * 4
                    + r.csr.offsets().bytes()
                    + r.csr.targets.bytes()
                    + r.labels.capacity() * 4
            };
            crate::mem::arrays_alive(
                "duplicates: view",
                &[
                    ("skip", o.skip.capacity()),
                    ("odd", rows(&o.odd)),
                    ("targets", rows(&o.targets)),
                    ("is_target", o.is_target.capacity() * 8),
                ],
            );
        }
        View { graph, dump, own }
    }

    /// The graph itself (no descriptors), for tests and formats without
    /// type objects.
    #[cfg(test)]
    pub fn plain(graph: &'a HeapGraph) -> View<'a> {
        View {
            graph,
            dump: &graph.dump,
            own: None,
        }
    }

    pub fn objects(&self) -> usize {
        self.graph.objects()
    }

    /// Where `o`'s walked references lie in the dump's targets, or its
    /// row among the odd ones.
    #[inline]
    fn walk(&self, own: &Own, o: u32) -> Walk {
        let s = own.skip[o as usize];
        if s == ODD {
            if let Some(r) = own.odd.row(o) {
                return Walk::Row(r);
            }
        }
        let r = self.dump.refs.range(o);
        if s == ALTERNATE {
            return Walk::EveryOther(r.start, r.end);
        }
        let (front, back) = ends(s);
        Walk::Run(r.start + front, r.end - back)
    }

    /// The references walked, in field order.
    #[inline]
    pub fn refs_raw(&self, o: u32) -> BitRow<'_> {
        match &self.own {
            Some(own) => match self.walk(own, o) {
                Walk::Run(s, e) => self.dump.refs.targets.row(s..e),
                Walk::EveryOther(s, e) => self.dump.refs.targets.row(s..e).every_other(),
                Walk::Row(r) => own.odd.csr.neighbors(r as u32),
            },
            None => self.graph.refs_raw(o),
        }
    }

    /// The objects whose walked references include `o`, ascending.
    #[inline]
    pub fn retainers_raw(&self, o: u32) -> Retainers<'_> {
        if let Some(own) = &self.own {
            if own.is_target[o as usize / 64] >> (o % 64) & 1 != 0 {
                if let Some(r) = own.targets.row(o) {
                    return Retainers::Own(own.targets.csr.neighbors(r as u32).iter());
                }
            }
        }
        Retainers::Graph(self.graph.retainers_raw(o))
    }

    /// The labels of `o`'s walked references (empty without labels).
    pub fn ref_labels(&self, o: u32) -> WalkLabels<'_> {
        let Some(labels) = &self.dump.labels else {
            return WalkLabels::of(LabelRow::Raw(&[]));
        };
        let start = self.dump.refs.offset(o as usize) as usize;
        let (s, e) = match &self.own {
            Some(own) => match self.walk(own, o) {
                Walk::Run(s, e) => (s, e),
                Walk::EveryOther(s, e) => {
                    return WalkLabels {
                        row: labels.row(start, s..e),
                        every_other: true,
                    }
                }
                Walk::Row(r) => {
                    let csr = &own.odd.csr;
                    return WalkLabels::of(LabelRow::Raw(&own.odd.labels[csr.range(r as u32)]));
                }
            },
            None => {
                let r = self.dump.refs.range(o);
                (r.start, r.end)
            }
        };
        WalkLabels::of(labels.row(start, s..e))
    }

    /// `o`'s type descriptors, the objects in field order (part of its
    /// label).
    pub fn descriptors(&self, o: u32) -> Descriptors<'_> {
        let Some(own) = &self.own else {
            return Descriptors::Ends(BitRow::empty(), BitRow::empty());
        };
        let s = own.skip[o as usize];
        let refs = &self.dump.refs;
        let r = refs.range(o);
        if s == ODD || s == ALTERNATE {
            return Descriptors::Odd(self.dump, &own.rule, r);
        }
        let (front, back) = ends(s);
        Descriptors::Ends(
            refs.targets.row(r.start..r.start + front),
            refs.targets.row(r.end - back..r.end),
        )
    }
}

/// An object's type descriptors ([`View::descriptors`]): equal exactly
/// where the lists of objects are.
#[derive(Clone)]
pub(crate) enum Descriptors<'a> {
    /// Its first and its last references.
    Ends(BitRow<'a>, BitRow<'a>),
    /// Those of these references (positions in the dump's targets) that
    /// the rule takes.
    Odd(&'a Model, &'a DescriptorRule, std::ops::Range<usize>),
}

impl Descriptors<'_> {
    /// The descriptors, in field order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let (ends, odd) = match self {
            Descriptors::Ends(a, b) => (Some(a.iter().chain(b.iter())), None),
            Descriptors::Odd(dump, rule, r) => {
                let targets = &dump.refs.targets;
                let taken = r
                    .clone()
                    .map(|e| (e, targets.get(e)))
                    .filter(|&(e, t)| rule.is_descriptor(dump, e, t))
                    .map(|(_, t)| t);
                (None, Some(taken))
            }
        };
        ends.into_iter().flatten().chain(odd.into_iter().flatten())
    }
}

impl PartialEq for Descriptors<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

/// Objects per range of the parallel passes.
const RANGE: usize = 1 << 14;

impl Own {
    fn build(graph: &HeapGraph, rule: DescriptorRule) -> Option<Own> {
        let dump = &graph.dump;
        let n = dump.objects();
        // The skips, written in place a range at a time; the few odd rows
        // come back per range.
        let mut skip: Vec<Skip> = crate::mem::zeroed(n);
        let odd: Vec<(usize, usize)> = skip
            .par_chunks_mut(RANGE)
            .enumerate()
            .map(|(r, part)| Self::scan(dump, &rule, r * RANGE, part))
            .collect();
        if skip.iter().all(|&s| s == 0) {
            return None;
        }
        let odd = Self::odd_rows(dump, &rule, &skip, &odd);
        let is_target = Self::targets(dump, &rule, &skip);
        let described: Vec<u32> = (0..n as u32)
            .filter(|&t| is_target[t as usize / 64] >> (t % 64) & 1 != 0)
            .collect();
        let own = Own {
            skip,
            odd,
            targets: Rows::default(),
            is_target,
            rule,
        };
        // The descriptor targets' retainers, less those that refer to them
        // only as a descriptor.
        let view = View {
            graph,
            dump,
            own: Some(own),
        };
        let rows: Vec<(u32, Vec<u32>, Vec<u32>)> = described
            .par_iter()
            .map(|&t| {
                let kept = graph
                    .retainers_raw(t)
                    .filter(|&p| view.refs_raw(p).contains(&t))
                    .collect();
                (t, kept, Vec::new())
            })
            .collect();
        let mut own = view.own.expect("built above");
        own.targets = Rows::build(rows);
        Some(own)
    }

    /// The descriptor targets, as bits: one pass in object order that
    /// reads each list where `skip` says it lies (an odd object's by the
    /// rule).
    fn targets(dump: &Model, rule: &DescriptorRule, skip: &[Skip]) -> Vec<u64> {
        let mut is_target = vec![0u64; skip.len().div_ceil(64)];
        for (o, &s) in skip.iter().enumerate().filter(|s| *s.1 != 0) {
            let (front, back) = ends(s);
            let d = if s == ODD || s == ALTERNATE {
                Descriptors::Odd(dump, rule, dump.refs.range(o as u32))
            } else {
                let (targets, r) = (&dump.refs.targets, dump.refs.range(o as u32));
                Descriptors::Ends(
                    targets.row(r.start..r.start + front),
                    targets.row(r.end - back..r.end),
                )
            };
            for t in d.iter() {
                is_target[t as usize / 64] |= 1 << (t % 64);
            }
        }
        is_target
    }

    /// Writes the skips of the objects from `first` on into `skip` (see
    /// [`Own::skip`]; 0: no descriptor); returns how many of them
    /// have their descriptors neither leading nor trailing (odd), and how
    /// many references those keep.
    fn scan(
        dump: &Model,
        rule: &DescriptorRule,
        first: usize,
        skip: &mut [Skip],
    ) -> (usize, usize) {
        let refs = &dump.refs;
        let is_descriptor = |e: usize| rule.is_descriptor(dump, e, refs.targets.get(e));
        let (mut odd, mut kept) = (0, 0);
        let mut found: Vec<usize> = Vec::new();
        for (o, slot) in (first..).zip(skip.iter_mut()) {
            let (s, e) = (refs.offset(o) as usize, refs.offset(o + 1) as usize);
            found.clear();
            found.extend((s..e).filter(|&e| is_descriptor(e)));
            if found.is_empty() {
                continue;
            }
            let front = found
                .iter()
                .zip(s..)
                .take_while(|(&f, at)| f == *at)
                .count();
            let back = found
                .iter()
                .rev()
                .zip((s..e).rev())
                .take_while(|(&f, at)| f == *at)
                .count();
            let fits = |k: usize| k < SKIP_LIMIT;
            *slot = if front == found.len() && fits(front) {
                skip_of(front, 0)
            } else if back == found.len() && fits(back) {
                skip_of(0, back)
            } else if front + back == found.len() && fits(front) && fits(back) {
                skip_of(front, back)
            } else if alternate(&found, s, e) {
                ALTERNATE
            } else {
                odd += 1;
                kept += e - s - found.len();
                ODD
            };
        }
        (odd, kept)
    }

    /// The odd objects' rows: their kept references (and labels), written
    /// in place a range at a time where `counts` (per range of [`RANGE`]
    /// objects, its odd objects and their kept references) puts them. A
    /// vector per odd object (a V8 snapshot has about one object in eight
    /// odd) held 130 MiB at once on a 6.6 M-object snapshot and left
    /// 56 MiB free in pieces the later stages could not reuse.
    fn odd_rows(
        dump: &Model,
        rule: &DescriptorRule,
        skip: &[Skip],
        counts: &[(usize, usize)],
    ) -> Rows {
        let rows: usize = counts.iter().map(|c| c.0).sum();
        let kept: usize = counts.iter().map(|c| c.1).sum();
        let refs = &dump.refs;
        let mut objects: Vec<u32> = crate::mem::zeroed(rows);
        let mut offsets: Vec<u64> = crate::mem::zeroed(rows + 1);
        let mut targets: Vec<u32> = crate::mem::zeroed(kept);
        let labels = dump.labels.as_ref();
        let mut kept_labels: Vec<u32> = crate::mem::zeroed(if labels.is_some() { kept } else { 0 });
        let mut base = Vec::with_capacity(counts.len());
        let mut at = 0u64;
        for c in counts {
            base.push(at);
            at += c.1 as u64;
        }
        let label_lens = counts
            .iter()
            .map(|c| if labels.is_some() { c.1 } else { 0 });
        let parts = crate::mem::split_by(&mut objects, counts.iter().map(|c| c.0))
            .into_iter()
            .zip(crate::mem::split_by(
                &mut offsets[1..],
                counts.iter().map(|c| c.0),
            ))
            .zip(crate::mem::split_by(
                &mut targets,
                counts.iter().map(|c| c.1),
            ))
            .zip(crate::mem::split_by(&mut kept_labels, label_lens))
            .zip(base)
            .enumerate()
            .collect::<Vec<_>>();
        parts
            .into_par_iter()
            .for_each(|(r, ((((objs, ends), tgts), lbls), base))| {
                let first = r * RANGE;
                let odd = skip[first..(first + RANGE).min(skip.len())]
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| **s == ODD)
                    .map(|(i, _)| first + i);
                let (mut row, mut next) = (0, 0);
                for o in odd {
                    let (s, e) = (refs.offset(o) as usize, refs.offset(o + 1) as usize);
                    let kept = (s..e).zip(refs.targets.row::<u32>(s..e));
                    for (edge, t) in kept.filter(|&(x, t)| !rule.is_descriptor(dump, x, t)) {
                        tgts[next] = t;
                        if let Some(l) = labels {
                            lbls[next] = l.raw(s, edge).unwrap_or(NONE);
                        }
                        next += 1;
                    }
                    objs[row] = o as u32;
                    ends[row] = base + next as u64;
                    row += 1;
                }
            });
        Rows {
            objects,
            csr: Csr::from_offsets(offsets, targets),
            labels: kept_labels,
        }
    }
}

/// Whether `found`, the positions of the descriptors among the references
/// `s..e`, are exactly every other one from the second (see [`ALTERNATE`]).
fn alternate(found: &[usize], s: usize, e: usize) -> bool {
    (e - s).is_multiple_of(2)
        && found.len() == (e - s) / 2
        && found
            .iter()
            .zip((s + 1..).step_by(2))
            .all(|(&f, at)| f == at)
}

/// Where an object's walked references lie ([`View::refs_raw`]).
enum Walk {
    /// The dump's references `s..e`.
    Run(usize, usize),
    /// Every other one of the dump's references `s..e`, from the first.
    EveryOther(usize, usize),
    /// Row `r` of the odd objects'.
    Row(usize),
}

/// The labels of an object's walked references ([`View::ref_labels`]): a
/// row of the dump's labels, or every other one of it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WalkLabels<'a> {
    row: LabelRow<'a>,
    every_other: bool,
}

impl<'a> WalkLabels<'a> {
    fn of(row: LabelRow<'a>) -> WalkLabels<'a> {
        WalkLabels {
            row,
            every_other: false,
        }
    }

    /// How many labels.
    pub fn len(&self) -> usize {
        match self.every_other {
            true => self.row.len().div_ceil(2),
            false => self.row.len(),
        }
    }

    /// Calls `f` with each label, in order.
    #[inline]
    pub fn for_each(&self, f: impl FnMut(u32)) {
        match self.every_other {
            true => self.row.iter().step_by(2).for_each(f),
            false => self.row.for_each(f),
        }
    }
}

/// Equal when the labels are, whatever their form.
impl PartialEq for WalkLabels<'_> {
    fn eq(&self, other: &Self) -> bool {
        if !self.every_other && !other.every_other {
            return self.row == other.row;
        }
        let step = |w: &Self| if w.every_other { 2 } else { 1 };
        self.len() == other.len()
            && self
                .row
                .iter()
                .step_by(step(self))
                .eq(other.row.iter().step_by(step(other)))
    }
}

impl Eq for WalkLabels<'_> {}

/// One object's retainers in a [`View`]: its own row (a descriptor
/// target's, less the descriptor references) or the graph's.
#[derive(Debug, Clone)]
pub enum Retainers<'a> {
    /// The view's own row.
    Own(crate::mem::BitIter<'a>),
    /// The graph's, decoded as read.
    Graph(crate::graph::Row<'a>),
}

impl Iterator for Retainers<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        match self {
            Retainers::Own(i) => i.next(),
            Retainers::Graph(r) => r.next(),
        }
    }
}
