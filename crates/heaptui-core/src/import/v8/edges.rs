//! The `edges` array → references, labels and roots (docs/formats.md). Edges are
//! stored in node order: node `s` owns the `edge_count[s]` edges after those
//! of the nodes before it, so a chunk finds the owner of its first edge by a
//! binary search over the prefix sums and walks on from there.
//!
//! Kept: every edge but `weak` ones and `shortcut` ones (a shortcut counts
//! when it leaves the synthetic root, as DevTools' `isEssentialEdge`). The
//! synthetic root's kept edges become the roots.

use std::sync::Arc;

use rayon::prelude::*;

use super::column::Column;
use super::edge_labels::{EdgeLabels, RawLabels};
use super::meta::{EdgeClass, Meta};
use super::nodes::AFTER_NODES;
use super::numbers::{Chunk, Extent, Scan, ScanError, Scanned};
use crate::import::source::Source;
use crate::mem::spill::Spill;
use crate::model::{Collector, Kind};
use crate::model::{Csr, Labels, Offsets};
use crate::progress::Progress;

/// The edges' arrays, in spill files where the import spills.
#[derive(Debug, Default)]
pub struct Edges {
    pub targets: Column<u32>,
    /// Parallel to `targets` while the edges are read (see `edge_labels`):
    /// `Labels::index(i)`, `Labels::NONE`, or a raw string index (top bit
    /// clear) to be interned.
    labels: EdgeLabels,
    /// The same labels once the edges are read ([`Edges::cut_rows`]).
    pub raw_labels: RawLabels,
    /// Where each object's kept references start, and where the last
    /// one's end: the CSR's `objects + 1` offsets, in the model's form
    /// (about 2 bytes an object). Made once the edges are read
    /// ([`Edges::cut_rows`]) from the counts the nodes declare, less the
    /// edges left out (`drops`): no per-object array is written while the
    /// edges are read (a `u64` count each took 8 bytes an object there).
    pub offsets: Offsets,
    /// `(object, how many)`: runs of an object's edges that are not its
    /// references (weak ones, shortcuts, dangling ones, unknown types), in
    /// edge order. Few in a snapshot V8 writes; at most one a run of left
    /// out edges in any.
    drops: Vec<(u32, u32)>,
    /// Objects the synthetic root points at, in edge order.
    pub roots: Vec<u32>,
    pub weak: u64,
    pub shortcuts: u64,
    pub scanned: Scanned,
    pub diag: Collector,
}

#[derive(Default)]
struct Part {
    targets: Vec<u32>,
    labels: Vec<u32>,
    /// (object, kept references) in object order.
    runs: Vec<(u32, u32)>,
    /// The labels' codes, as they are merged.
    codes: Vec<u16>,
    /// (object, edges left out) in object order.
    drops: Vec<(u32, u32)>,
    roots: Vec<u32>,
    weak: u64,
    shortcuts: u64,
    diag: Collector,
}

/// Nodes per entry of [`Context::block_start`].
const OWNER_BLOCK: usize = 1024;

/// What the chunks need to know.
pub struct Context<'a> {
    pub meta: &'a Meta,
    /// Per node (root included): its declared edge count.
    edge_counts: &'a [u32],
    /// The index of the first edge of nodes `0, OWNER_BLOCK, 2 *
    /// OWNER_BLOCK, …`, then the edge count of all nodes: where a chunk's
    /// first edge is found (a start per node took 8 bytes a node).
    block_start: Vec<u64>,
}

impl<'a> Context<'a> {
    pub fn new(meta: &'a Meta, edge_counts: &'a [u32]) -> Context<'a> {
        let mut block_start: Vec<u64> = edge_counts
            .par_chunks(OWNER_BLOCK)
            .map(|b| b.iter().map(|&c| c as u64).sum::<u64>())
            .collect();
        let mut total = 0;
        for b in block_start.iter_mut() {
            (*b, total) = (total, total + *b);
        }
        block_start.push(total);
        Context {
            meta,
            edge_counts,
            block_start,
        }
    }

    fn nodes(&self) -> u64 {
        self.edge_counts.len() as u64
    }

    /// How many edges the nodes declare.
    pub fn claimed(&self) -> u64 {
        *self.block_start.last().unwrap_or(&0)
    }

    /// The node owning edge `e` (below [`Self::claimed`]) and the index
    /// of the next node's first edge.
    fn owner(&self, e: u64) -> (usize, u64) {
        let blocks = &self.block_start[..self.block_start.len() - 1];
        let b = blocks.partition_point(|&x| x <= e).saturating_sub(1);
        let mut s = b * OWNER_BLOCK;
        let mut next = self.block_start[b] + self.edge_counts[s] as u64;
        while next <= e {
            s += 1;
            next += self.edge_counts[s] as u64;
        }
        (s, next)
    }
}

/// Exact division by the node field count, without a `div` per edge (a
/// `div` was a fifth of the edge loop): `n` is a multiple of `d` exactly
/// when `n` times the inverse of `d`'s odd part, rotated right by `d`'s
/// trailing zero bits, is at most `u64::MAX / d`, and that number is then
/// the quotient (Hacker's Delight, 10-17).
#[derive(Debug, Clone, Copy)]
struct ExactDivisor {
    inverse: u64,
    shift: u32,
    limit: u64,
}

impl ExactDivisor {
    fn new(d: u64) -> ExactDivisor {
        assert!(d > 0);
        let shift = d.trailing_zeros();
        let odd = d >> shift;
        // Newton's iteration doubles the correct low bits: 3 → 96 ≥ 64.
        let mut inverse = odd;
        for _ in 0..5 {
            inverse = inverse.wrapping_mul(2u64.wrapping_sub(odd.wrapping_mul(inverse)));
        }
        ExactDivisor {
            inverse,
            shift,
            limit: u64::MAX / d,
        }
    }

    /// `n / d` when `d` divides `n`.
    #[inline(always)]
    fn divide(self, n: u64) -> Option<u64> {
        let q = n.wrapping_mul(self.inverse).rotate_right(self.shift);
        (q <= self.limit).then_some(q)
    }
}

/// An edge's label; a string index is checked against the strings' count
/// when the labels are interned (`build::labels`: the strings come after
/// the arrays).
fn label(class: EdgeClass, name: u64) -> u32 {
    match class {
        EdgeClass::Index => Labels::index(name),
        _ if name < 1 << 31 => name as u32,
        _ => Labels::NONE,
    }
}

fn read_chunk(chunk: &mut Chunk, p: &mut Part, cx: &Context) -> Result<(), ScanError> {
    let m = cx.meta;
    let nf = m.node_fields.len() as u64;
    let by_fields = ExactDivisor::new(nf);
    // Sized for every edge of the chunk (weak ones and shortcuts are left
    // out), so the vectors never grow by copying.
    let n = chunk.records as usize;
    for v in [&mut p.targets, &mut p.labels] {
        v.clear();
        v.reserve(n);
    }
    p.drops.clear();
    p.runs.clear();
    p.roots.clear();
    (p.weak, p.shortcuts) = (0, 0);
    p.diag = Collector::default();
    let e0 = chunk.first_record;
    let claimed = cx.claimed();
    // The owner of the next edge, and the first edge of the node after it.
    let (mut s, mut next) = match e0 < claimed {
        true => cx.owner(e0),
        false => (0, u64::MAX),
    };
    for e in e0..e0 + chunk.records {
        let (t, to, name) = {
            let rec = chunk.record()?;
            (rec[m.e_type], rec[m.e_to], rec[m.e_name])
        };
        if e >= claimed {
            continue; // beyond what the nodes declare: counted by the caller
        }
        while next <= e {
            s += 1;
            next += cx.edge_counts[s] as u64;
        }
        let Some(&class) = m.edge_classes.get(t as usize) else {
            p.drop_edge(s);
            p.diag.push(Kind::Skipped, AFTER_NODES, || {
                format!("edge {e} of node {s}: edge type {t} is not in snapshot.meta")
            });
            continue;
        };
        match class {
            EdgeClass::Weak => {
                p.weak += 1;
                p.drop_edge(s);
                continue;
            }
            EdgeClass::Shortcut if s != 0 => {
                p.shortcuts += 1;
                p.drop_edge(s);
                continue;
            }
            _ => {}
        }
        let node = by_fields.divide(to).filter(|&n| n < cx.nodes() && n != 0);
        let Some(node) = node else {
            p.drop_edge(s);
            p.diag.count(Kind::Dangling, 1);
            p.diag.note(AFTER_NODES, || match to {
                0 => format!("edge {e} of node {s}: points at the synthetic root"),
                _ if to % nf != 0 => format!(
                    "edge {e} of node {s}: to_node {to} is not a multiple of {nf} node fields"
                ),
                _ => format!("edge {e} of node {s}: to_node {to} is past the last node"),
            });
            continue;
        };
        let object = (node - 1) as u32;
        if s == 0 {
            p.roots.push(object);
            continue;
        }
        p.targets.push(object);
        p.labels.push(label(class, name));
        let source = (s - 1) as u32;
        match p.runs.last_mut() {
            Some((o, n)) if *o == source => *n += 1,
            _ => p.runs.push((source, 1)),
        }
    }
    Ok(())
}

impl Part {
    /// Counts an edge of node `s` that is not a reference (the synthetic
    /// root's are not counted: it is no object).
    fn drop_edge(&mut self, s: usize) {
        let Some(object) = s.checked_sub(1) else {
            return;
        };
        let object = object as u32;
        match self.drops.last_mut() {
            Some((o, n)) if *o == object => *n += 1,
            _ => self.drops.push((object, 1)),
        }
    }
}

/// Reads every edge record, into spill files where `spill` is given.
pub fn read(
    (bytes, source, progress): (&[u8], &Source, &Progress),
    extent: Extent,
    cx: &Context,
    chunk_size: usize,
    spill: Option<&Arc<Spill>>,
) -> Result<Edges, ScanError> {
    let room = extent.room(bytes.len());
    // No edge past the declared ones is kept (see `read_chunk`).
    let hint = cx.claimed().min(room as u64 / 6) as usize;
    let mut all = Edges {
        targets: Column::with_capacity(hint, spill),
        labels: EdgeLabels::new(hint, spill),
        ..Edges::default()
    };
    let fields = cx.meta.edge_fields.len();
    let scan = Scan {
        bytes,
        extent,
        fields,
        chunk_size,
        source,
        progress,
    };
    let scanned = scan.run(
        |c, p| read_chunk(c, p, cx),
        |p| {
            // In parallel: on one thread this copy was a fifth of the
            // import (and its first touch of the arrays' pages).
            all.targets.extend(&p.targets);
            all.labels.append(&p.labels, &p.runs, &mut p.codes);
            all.drops.extend_from_slice(&p.drops);
            all.roots.extend_from_slice(&p.roots);
            all.weak += p.weak;
            all.shortcuts += p.shortcuts;
            all.diag.merge(std::mem::take(&mut p.diag));
        },
    )?;
    all.scanned = scanned;
    Ok(all)
}

impl Edges {
    /// Makes [`Edges::offsets`] from `declared`, the edge count each node
    /// declares (the synthetic root's first), which become in place each
    /// node's references: its edges that were read (the array may end
    /// before the `claimed` ones the counts add up to) less those left out
    /// ([`Edges::drops`]). Each object's count is then the references
    /// `targets` holds for it, in node order, so the offsets cut `targets`
    /// exactly. `declared` is freed (given back where spilled).
    pub fn cut_rows(&mut self, mut declared: Column<u32>, claimed: u64, spill: Option<&Spill>) {
        let read = self.scanned.records;
        if read < claimed {
            unread(&mut declared, read);
        }
        for &(o, n) in &std::mem::take(&mut self.drops) {
            if let Some(c) = declared.get_mut(o as usize + 1) {
                *c = c.saturating_sub(n);
            }
        }
        let degrees = declared.get(1..).unwrap_or(&[]);
        self.offsets = Csr::offsets_of_degrees(degrees, spill);
        self.raw_labels = std::mem::take(&mut self.labels).finish(&self.offsets);
    }
}

/// Leaves out of each node's count (per node, in node order) its edges from
/// the `read`th on: the array ended there.
fn unread(counts: &mut [u32], read: u64) {
    let mut start = 0u64;
    for c in counts.iter_mut() {
        let end = start + *c as u64;
        *c = (end.min(read).saturating_sub(start)) as u32;
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::{unread, ExactDivisor};

    #[test]
    fn unread_edges_leave_the_counts_from_where_the_array_ends() {
        // Nodes of 2, 0, 3 and 1 edges: edges 0-1, -, 2-4, 5.
        let counts = [2u32, 0, 3, 1];
        let cut = |read: u64| {
            let mut c = counts;
            unread(&mut c, read);
            c
        };
        assert_eq!(cut(6), counts);
        assert_eq!(cut(9), counts);
        assert_eq!(cut(5), [2, 0, 3, 0]);
        assert_eq!(cut(3), [2, 0, 1, 0]);
        assert_eq!(cut(2), [2, 0, 0, 0]);
        assert_eq!(cut(1), [1, 0, 0, 0]);
        assert_eq!(cut(0), [0, 0, 0, 0]);
    }

    #[test]
    fn exact_division_agrees_with_the_operators() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for d in (1..=40).chain([64, 96, 1 << 20, u64::MAX / 3, u64::MAX]) {
            let e = ExactDivisor::new(d);
            let check = |n: u64| {
                let want = n.is_multiple_of(d).then(|| n / d);
                assert_eq!(e.divide(n), want, "{n} / {d}");
            };
            for n in (0..200).chain([u64::MAX, u64::MAX - 1, d.wrapping_mul(12345)]) {
                check(n);
            }
            for _ in 0..2000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                check(x);
                check(x - x % d);
                check((x >> 30).wrapping_mul(d));
            }
        }
    }
}
