//! Node records → per-object arrays and references, decoded in parallel
//! blocks of nodes (every record is found through the node table, so blocks
//! are independent) and merged in node order. The root node is not an
//! object: object `o` is node `o` below the root and node `o + 1` above it.

use rayon::prelude::*;

use super::graph::{compressed, RawGraph};
use crate::model::{Collector, Kind};

/// Stands for a type index outside the graph's type table.
pub const BAD_TYPE: u32 = u32::MAX;

/// Larger sizes are corrupt; the bound keeps every sum of sizes in u64.
const MAX_SIZE: u64 = 1 << 48;

#[derive(Debug, Default)]
pub struct Nodes {
    /// Per object: the graph's type index, or [`BAD_TYPE`].
    pub types: Vec<u32>,
    pub sizes: Vec<u64>,
    pub degrees: Vec<u32>,
    pub targets: Vec<u32>,
    /// The root node's children, as objects.
    pub roots: Vec<u32>,
    pub diag: Collector,
}

struct Ctx<'a> {
    g: &'a RawGraph,
    bytes: &'a [u8],
    blob: &'a [u8],
    root: usize,
    n: usize,
}

impl Ctx<'_> {
    fn object(&self, node: usize) -> u32 {
        (if node < self.root { node } else { node - 1 }) as u32
    }

    /// Decodes node `i` into `out`; children go to `targets` (the root's to
    /// `out.roots`).
    fn node(&self, i: usize, out: &mut Nodes) {
        let at = self.g.label(self.bytes, i);
        let mut pos = at;
        let blob = self.blob;
        let head = compressed(blob, &mut pos).and_then(|ts| {
            let size = if ts & 1 != 0 {
                compressed(blob, &mut pos)?
            } else {
                0
            };
            Some((ts, size, compressed(blob, &mut pos)?))
        });
        let Some((ts, size, children)) = head.filter(|h| h.2 >= 0) else {
            if i != self.root {
                out.types.push(BAD_TYPE);
                out.sizes.push(0);
                out.degrees.push(0);
            }
            out.diag.push(Kind::Skipped, 0, || {
                format!("node {i}: its record at blob byte {at} is cut or corrupt")
            });
            return;
        };
        if i != self.root {
            let t = (ts >> 1) as u32;
            let size = match self.g.types.get(t as usize) {
                _ if ts & 1 != 0 => size as i64,
                Some(&(_, s)) => s as i64,
                None => 0,
            };
            let ty = if (t as usize) < self.g.types.len() {
                t
            } else {
                out.diag.count(Kind::Undefined, 1);
                out.diag
                    .note(0, || format!("node {i}: type {t} is not in the type table"));
                BAD_TYPE
            };
            out.types.push(ty);
            out.sizes.push(match u64::try_from(size) {
                Ok(s) if s <= MAX_SIZE => s,
                _ => {
                    out.diag.push(Kind::Skipped, 0, || {
                        format!("node {i}: size {size} is not believable; taken as 0")
                    });
                    0
                }
            });
        }
        let mut kept = 0u32;
        for _ in 0..children {
            let Some(delta) = compressed(blob, &mut pos) else {
                out.diag.push(Kind::Skipped, 0, || {
                    format!("node {i}: its children are cut at blob byte {pos}")
                });
                break;
            };
            let child = i as i64 + delta as i64;
            if child < 0 || child >= self.n as i64 || child as usize == self.root {
                out.diag.count(Kind::Dangling, 1);
                out.diag.note(0, || {
                    format!("node {i}: child {child} is not an object node")
                });
                continue;
            }
            let o = self.object(child as usize);
            if i == self.root {
                out.roots.push(o);
            } else {
                out.targets.push(o);
                kept += 1;
            }
        }
        if i != self.root {
            out.degrees.push(kept);
        }
    }
}

/// Decodes every node record.
pub fn decode(bytes: &[u8], g: &RawGraph) -> Nodes {
    const BLOCK: usize = 1 << 14;
    let n = g.node_count();
    let cx = Ctx {
        g,
        bytes,
        blob: &bytes[g.blob.clone()],
        root: g.root as usize,
        n,
    };
    let parts: Vec<Nodes> = (0..n.div_ceil(BLOCK))
        .into_par_iter()
        .map(|b| {
            let mut out = Nodes::default();
            for i in b * BLOCK..((b + 1) * BLOCK).min(n) {
                cx.node(i, &mut out);
            }
            out
        })
        .collect();
    let objects = n.saturating_sub(1);
    let edges = parts.iter().map(|p| p.targets.len()).sum();
    let mut all = Nodes {
        types: Vec::with_capacity(objects),
        sizes: Vec::with_capacity(objects),
        degrees: Vec::with_capacity(objects),
        targets: Vec::with_capacity(edges),
        ..Nodes::default()
    };
    for p in parts {
        all.types.extend_from_slice(&p.types);
        all.sizes.extend_from_slice(&p.sizes);
        all.degrees.extend_from_slice(&p.degrees);
        all.targets.extend_from_slice(&p.targets);
        all.roots.extend_from_slice(&p.roots);
        all.diag.merge(p.diag);
    }
    all
}
