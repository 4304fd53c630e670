//! The `edges` array → references, labels and roots (SPEC §1.1). Edges are
//! stored in node order: node `s` owns the `edge_count[s]` edges after those
//! of the nodes before it, so a chunk finds the owner of its first edge by a
//! binary search over the prefix sums and walks on from there.
//!
//! Kept: every edge but `weak` ones and `shortcut` ones (a shortcut counts
//! when it leaves the synthetic root, as DevTools' `isEssentialEdge`). The
//! synthetic root's kept edges become the roots.

use std::sync::atomic::Ordering;

use rayon::prelude::*;

use super::layout::NumberArray;
use super::meta::{EdgeClass, Meta};
use super::numbers::{scan, Chunk, ScanError, Scanned, MAX_FIELDS};
use crate::import::source::Source;
use crate::model::Labels;
use crate::model::{Collector, Kind};
use crate::progress::Progress;

#[derive(Debug, Default)]
pub struct Edges {
    pub targets: Vec<u32>,
    /// Parallel to `targets`: `Labels::index(i)`, `Labels::NONE`, or a raw
    /// string index (top bit clear) to be interned.
    pub labels: Vec<u32>,
    /// Kept references per object.
    pub degrees: Vec<u32>,
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

/// What the chunks need to know.
pub struct Context<'a> {
    pub meta: &'a Meta,
    /// Per node (root included) + 1: index of its first edge.
    pub edge_start: &'a [u64],
    pub strings: usize,
}

impl Context<'_> {
    fn nodes(&self) -> u64 {
        self.edge_start.len() as u64 - 1
    }

    fn claimed(&self) -> u64 {
        *self.edge_start.last().unwrap_or(&0)
    }
}

fn label(class: EdgeClass, name: u64, strings: usize) -> u32 {
    match class {
        EdgeClass::Index => Labels::index(name),
        _ if name < strings as u64 && name < 1 << 31 => name as u32,
        _ => Labels::NONE,
    }
}

fn read_chunk(chunk: &mut Chunk, cx: &Context) -> Result<Part, ScanError> {
    let m = cx.meta;
    let nf = m.node_fields.len() as u64;
    // Sized for every edge of the chunk (weak ones and shortcuts are left
    // out), so the vectors never grow by copying.
    let mut p = Part {
        targets: Vec::with_capacity(chunk.records as usize),
        labels: Vec::with_capacity(chunk.records as usize),
        ..Part::default()
    };
    let mut rec = [0u64; MAX_FIELDS];
    let e0 = chunk.first_record;
    let mut s = cx
        .edge_start
        .partition_point(|&x| x <= e0)
        .saturating_sub(1);
    for e in e0..e0 + chunk.records {
        chunk.read(&mut rec)?;
        if e >= cx.claimed() {
            continue; // beyond what the nodes declare: counted by the caller
        }
        while cx.edge_start[s + 1] <= e {
            s += 1;
        }
        let t = rec[m.e_type];
        let Some(&class) = m.edge_classes.get(t as usize) else {
            p.diag.push(Kind::Skipped, 0, || {
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
        let to = rec[m.e_to];
        if to % nf != 0 || to / nf >= cx.nodes() || to == 0 {
            p.diag.count(Kind::Dangling, 1);
            p.diag.note(0, || match to {
                0 => format!("edge {e} of node {s}: points at the synthetic root"),
                _ if to % nf != 0 => format!(
                    "edge {e} of node {s}: to_node {to} is not a multiple of {nf} node fields"
                ),
                _ => format!("edge {e} of node {s}: to_node {to} is past the last node"),
            });
            continue;
        }
        let object = (to / nf - 1) as u32;
        if s == 0 {
            p.roots.push(object);
            continue;
        }
        p.targets.push(object);
        p.labels.push(label(class, rec[m.e_name], cx.strings));
        let source = (s - 1) as u32;
        match p.runs.last_mut() {
            Some((o, n)) if *o == source => *n += 1,
            _ => p.runs.push((source, 1)),
        }
    }
    Ok(p)
}

/// Reads every edge record; `objects` is the node count less the root.
pub fn read(
    bytes: &[u8],
    array: &NumberArray,
    cx: &Context,
    chunk_size: usize,
    source: &Source,
    progress: &Progress,
) -> Result<Edges, ScanError> {
    let objects = cx.edge_start.len().saturating_sub(2);
    let hint = cx.claimed().min(array.range.len() as u64 / 6) as usize;
    let mut all = Edges {
        targets: Vec::with_capacity(hint),
        labels: Vec::with_capacity(hint),
        degrees: vec![0; objects],
        ..Edges::default()
    };
    let fields = cx.meta.edge_fields.len();
    let scanned = scan(
        bytes,
        array,
        fields,
        chunk_size,
        source,
        progress,
        |c| read_chunk(c, cx),
        |p| {
            // In parallel: on one thread this copy was a fifth of the
            // import (and its first touch of the arrays' pages).
            all.targets.par_extend(p.targets.par_iter().copied());
            all.labels.par_extend(p.labels.par_iter().copied());
            let degrees = crate::mem::as_atomic(&mut all.degrees);
            p.runs.par_iter().for_each(|&(o, n)| {
                degrees[o as usize].fetch_add(n, Ordering::Relaxed);
            });
            all.roots.extend_from_slice(&p.roots);
            all.weak += p.weak;
            all.shortcuts += p.shortcuts;
            all.diag.merge(p.diag);
        },
    )?;
    all.scanned = scanned;
    Ok(all)
}
