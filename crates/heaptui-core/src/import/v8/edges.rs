//! The `edges` array → references, labels and roots (docs/formats.md). Edges are
//! stored in node order: node `s` owns the `edge_count[s]` edges after those
//! of the nodes before it, so a chunk finds the owner of its first edge by a
//! binary search over the prefix sums and walks on from there.
//!
//! Kept: every edge but `weak` ones and `shortcut` ones (a shortcut counts
//! when it leaves the synthetic root, as DevTools' `isEssentialEdge`). The
//! synthetic root's kept edges become the roots.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use rayon::prelude::*;

use super::column::Column;
use super::meta::{EdgeClass, Meta};
use super::nodes::AFTER_NODES;
use super::numbers::{Chunk, Extent, Scan, ScanError, Scanned};
use crate::import::source::Source;
use crate::mem::spill::Spill;
use crate::mem::Scratch;
use crate::model::Labels;
use crate::model::{Collector, Kind};
use crate::progress::Progress;

/// The edges' arrays, in spill files where the import spills.
#[derive(Debug, Default)]
pub struct Edges {
    pub targets: Column<u32>,
    /// Parallel to `targets`: `Labels::index(i)`, `Labels::NONE`, or a raw
    /// string index (top bit clear) to be interned.
    pub labels: Column<u32>,
    /// Where each object's kept references start, and where the last
    /// one's end: the CSR's `objects + 1` offsets (counted into the entry
    /// after the object's, then summed, so no per-object count array is
    /// allocated besides them).
    pub offsets: Scratch<u64>,
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
            p.diag.push(Kind::Skipped, AFTER_NODES, || {
                format!("edge {e} of node {s}: edge type {t} is not in snapshot.meta")
            });
            continue;
        };
        match class {
            EdgeClass::Weak => {
                p.weak += 1;
                continue;
            }
            EdgeClass::Shortcut if s != 0 => {
                p.shortcuts += 1;
                continue;
            }
            _ => {}
        }
        let node = by_fields.divide(to).filter(|&n| n < cx.nodes() && n != 0);
        let Some(node) = node else {
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

/// Reads every edge record, into spill files where `spill` is given.
pub fn read(
    (bytes, source, progress): (&[u8], &Source, &Progress),
    extent: Extent,
    cx: &Context,
    chunk_size: usize,
    spill: Option<&Arc<Spill>>,
) -> Result<Edges, ScanError> {
    let objects = cx.edge_counts.len().saturating_sub(1);
    let room = extent.room(bytes.len());
    // No edge past the declared ones is kept (see `read_chunk`).
    let hint = cx.claimed().min(room as u64 / 6) as usize;
    let mut all = Edges {
        targets: Column::with_capacity(hint, spill),
        labels: Column::with_capacity(hint, spill),
        offsets: Scratch::zeroed(objects + 1, spill.map(|s| &**s)),
        ..Edges::default()
    };
    // Objects before this one have their counts final (edges come in node
    // order): a spilled array's pages up to it are given back.
    let mut counted = 0;
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
            all.labels.extend(&p.labels);
            // A part's runs have distinct objects (edges come in node
            // order), and parts merge one at a time: no two threads add to
            // one count, so a plain add through the atomic view does (a
            // locked add per object was a tenth of the merge).
            let counts = crate::mem::as_atomic_u64(&mut all.offsets[1..]);
            p.runs.par_iter().for_each(|&(o, n)| {
                let c = &counts[o as usize];
                c.store(c.load(Ordering::Relaxed) + n as u64, Ordering::Relaxed);
            });
            if let Some(&(o, _)) = p.runs.first() {
                // `o`'s count may grow with the next part; those before not.
                all.offsets.release(counted..o as usize + 1);
                // From the page holding it, which is given back once whole.
                counted = (o as usize + 1) / PAGE_WORDS * PAGE_WORDS;
            }
            all.roots.extend_from_slice(&p.roots);
            all.weak += p.weak;
            all.shortcuts += p.shortcuts;
            all.diag.merge(std::mem::take(&mut p.diag));
        },
    )?;
    running_totals(&mut all.offsets);
    all.scanned = scanned;
    Ok(all)
}

/// Offsets a page holds.
const PAGE_WORDS: usize = 4096 / 8;

/// The offsets from the counts: summed in place, in blocks whose pages a
/// spilled array gives back as it goes.
fn running_totals(offsets: &mut Scratch<u64>) {
    if !offsets.is_mapped() {
        return crate::mem::running_totals(offsets);
    }
    const BLOCK: usize = 1 << 20;
    let mut total = 0u64;
    for at in (0..offsets.len()).step_by(BLOCK) {
        let end = (at + BLOCK).min(offsets.len());
        for x in &mut offsets[at..end] {
            total += *x;
            *x = total;
        }
        offsets.release(at..end);
    }
}

#[cfg(test)]
mod tests {
    use super::ExactDivisor;

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
