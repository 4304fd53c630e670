//! Node records → per-object arrays and references, decoded in parallel
//! blocks of nodes (every record is found through the node table, so blocks
//! are independent), straight into the final arrays. The root node is not
//! an object: object `o` is node `o` below the root and node `o + 1` above
//! it.
//!
//! Two walks over the records: the first reads each record's head (type,
//! size, child count) into the per-object arrays; the child counts then
//! place each block's children in one array of references, and the second
//! walk decodes them there. A child takes at least one byte of the blob, so
//! a record's count is bounded by the bytes after its head. Records never
//! share bytes in the files PerfView writes, so their children number less
//! than the file's bytes; a damaged file's counts may claim more, and
//! children past one per byte of the file are dropped (counted), so memory
//! stays proportional to the file whatever its counts say.

use std::ops::Range;

use rayon::prelude::*;

use super::graph::{compressed, RawGraph};
use crate::import::source::Source;
use crate::mem::spill::Spill;
use crate::mem::Scratch;
use crate::model::{Collector, Kind};

/// Larger sizes are corrupt; the bound keeps every sum of sizes in u64.
const MAX_SIZE: u64 = 1 << 48;

/// Nodes per block of the parallel walks.
const BLOCK: usize = 1 << 14;

/// The per-object and per-reference arrays, in spill files where the
/// import spills.
#[derive(Debug, Default)]
pub struct Nodes {
    /// Per object: its id (node number), model type and shallow size.
    pub ids: Scratch<u64>,
    pub types: Scratch<u32>,
    pub sizes: Scratch<u64>,
    /// The objects' references: `offsets` (one more than the objects) cut
    /// `targets`.
    pub offsets: Scratch<u64>,
    pub targets: Scratch<u32>,
    /// The root node's children, as objects.
    pub roots: Vec<u32>,
    /// Whether some object's type is outside the graph's table: those take
    /// the type after the model's names (an "(unknown type)" to add).
    pub unknown_types: bool,
    pub diag: Collector,
}

/// A record's head: its type-and-size word, size, and child count as
/// declared and as bounded by the bytes left after the head; its children
/// start at `children`.
struct Head {
    ts: i32,
    size: i32,
    declared: u32,
    count: u32,
    children: usize,
}

struct Ctx<'a> {
    source: &'a Source,
    g: &'a RawGraph,
    /// Graph type → model type; types outside it become `unknown`.
    type_map: &'a [u32],
    unknown: u32,
    bytes: &'a [u8],
    blob: &'a [u8],
    root: usize,
    n: usize,
}

impl Ctx<'_> {
    /// The object of node `node` (not the root).
    fn object(&self, node: usize) -> u32 {
        (if node < self.root { node } else { node - 1 }) as u32
    }

    /// The objects of nodes `nodes` (the root among them or not).
    fn objects(&self, nodes: Range<usize>) -> Range<usize> {
        let below = |i: usize| if i > self.root { i - 1 } else { i };
        below(nodes.start)..below(nodes.end)
    }

    /// The file's spans (start, length) of the table entries and of the
    /// records of `nodes`; the records' empty unless they lie in node
    /// order, as PerfView writes them, within 64 bytes a node.
    fn spans(&self, nodes: Range<usize>) -> [(usize, usize); 2] {
        let g = self.g;
        let table = (g.nodes.start + 4 * nodes.start, 4 * nodes.len());
        let first = self.g.label(self.bytes, nodes.start);
        let next = match nodes.end {
            end if end < self.n => self.g.label(self.bytes, end),
            _ => self.blob.len(),
        };
        if first < next && next <= self.blob.len() && next - first <= 64 * BLOCK {
            [table, (g.blob.start + first, next - first)]
        } else {
            [table, (0, 0)]
        }
    }

    /// Maps the file's pages of the table entries and records of `nodes`
    /// in one call each before they are read (where the file is mapped and
    /// the records lie in node order).
    fn populate(&self, nodes: Range<usize>) {
        for (start, len) in self.spans(nodes) {
            self.source.populate(start, len);
        }
    }

    /// Drops the file's pages of the table entries and records of `nodes`
    /// from the resident set once a walk is done with them (whole pages
    /// only; read again from the file if touched): each walk holds a few
    /// blocks' pages of the file, not the whole file (164 MB of a 6.62 M
    /// node gcdump beside the arrays being filled).
    fn release(&self, nodes: Range<usize>) {
        for (start, len) in self.spans(nodes) {
            self.source.release(start, len);
        }
    }

    fn block(&self, b: usize) -> Range<usize> {
        b * BLOCK..((b + 1) * BLOCK).min(self.n)
    }

    /// Node `i`'s head, or `None` where it is cut or corrupt.
    fn head(&self, i: usize) -> Option<Head> {
        let blob = self.blob;
        let mut pos = self.g.label(self.bytes, i);
        let ts = compressed(blob, &mut pos)?;
        let size = if ts & 1 != 0 {
            compressed(blob, &mut pos)?
        } else {
            0
        };
        let declared = u32::try_from(compressed(blob, &mut pos)?).ok()?;
        let left = blob.len().saturating_sub(pos);
        Some(Head {
            ts,
            size,
            declared,
            count: declared.min(u32::try_from(left).unwrap_or(u32::MAX)),
            children: pos,
        })
    }

    /// The first walk over a block: each object's id, type and size;
    /// returns the block's children by the records' counts (the root's
    /// aside), the root's, and whether a type was unknown.
    fn heads(
        &self,
        b: usize,
        ids: &mut [u64],
        types: &mut [u32],
        sizes: &mut [u64],
        diag: &mut Collector,
    ) -> (u64, u64, bool) {
        let (mut children, mut roots, mut unknown) = (0u64, 0u64, false);
        let mut o = 0;
        self.populate(self.block(b));
        for i in self.block(b) {
            let head = self.head(i);
            if i == self.root {
                roots = head.map_or(0, |h| h.count as u64);
                continue;
            }
            ids[o] = i as u64;
            let Some(h) = head else {
                (types[o], sizes[o]) = (self.unknown, 0);
                unknown = true;
                o += 1;
                let at = self.g.label(self.bytes, i);
                diag.push(Kind::Skipped, i as u64, || {
                    format!("node {i}: its record at blob byte {at} is cut or corrupt")
                });
                continue;
            };
            let t = (h.ts >> 1) as u32;
            let size = match self.g.types.get(t as usize) {
                _ if h.ts & 1 != 0 => h.size as i64,
                Some(&(_, s)) => s as i64,
                None => 0,
            };
            types[o] = match self.type_map.get(t as usize) {
                Some(&t) => t,
                None => {
                    diag.count(Kind::Undefined, 1);
                    diag.note(i as u64, || {
                        format!("node {i}: type {t} is not in the type table")
                    });
                    unknown = true;
                    self.unknown
                }
            };
            sizes[o] = match u64::try_from(size) {
                Ok(s) if s <= MAX_SIZE => s,
                _ => {
                    diag.push(Kind::Skipped, i as u64, || {
                        format!("node {i}: size {size} is not believable; taken as 0")
                    });
                    0
                }
            };
            children += h.count as u64;
            o += 1;
        }
        (children, roots, unknown)
    }

    /// The second walk over a block: its objects' children into `targets`
    /// (which starts at reference `start`; room for the counts of the first
    /// walk, or less) and the root's into `roots`; each object's end
    /// offset into `ends`. Returns how many were kept.
    fn children(
        &self,
        b: usize,
        (targets, start): (&mut [u32], u64),
        ends: &mut [u64],
        roots: &mut Vec<u32>,
        diag: &mut Collector,
    ) -> usize {
        let blob = self.blob;
        let (mut k, mut o) = (0, 0);
        self.populate(self.block(b));
        for i in self.block(b) {
            let Some(h) = self.head(i) else {
                if i != self.root {
                    ends[o] = start + k as u64;
                    o += 1;
                }
                continue;
            };
            let mut pos = h.children;
            // Each child read takes a byte: past the blob's end the read
            // fails, whatever the record claims.
            for _ in 0..h.declared {
                let Some(delta) = compressed(blob, &mut pos) else {
                    diag.push(Kind::Skipped, i as u64, || {
                        format!("node {i}: its children are cut at blob byte {pos}")
                    });
                    break;
                };
                let child = i as i64 + delta as i64;
                if child < 0 || child >= self.n as i64 || child as usize == self.root {
                    diag.count(Kind::Dangling, 1);
                    diag.note(i as u64, || {
                        format!("node {i}: child {child} is not an object node")
                    });
                    continue;
                }
                let c = self.object(child as usize);
                if i == self.root {
                    roots.push(c);
                } else if k == targets.len() {
                    diag.push(Kind::Skipped, i as u64, || {
                        format!("node {i}: children past one per byte of the file are dropped")
                    });
                    break;
                } else {
                    targets[k] = c;
                    k += 1;
                }
            }
            if i != self.root {
                ends[o] = start + k as u64;
                o += 1;
            }
        }
        k
    }
}

/// Decodes every node record; the graph has at least two nodes and a root
/// among them. `type_map` maps the graph's types to the model's `types`
/// names; objects of other types get type `types` (the name to add). The
/// arrays are made in `spill` where given, each block's pages given back
/// once written.
pub fn decode(
    source: &Source,
    g: &RawGraph,
    (type_map, types): (&[u32], usize),
    spill: Option<&Spill>,
) -> Nodes {
    let bytes = source.bytes();
    let n = g.node_count();
    let cx = Ctx {
        source,
        g,
        type_map,
        unknown: types as u32,
        bytes,
        blob: &bytes[g.blob.clone()],
        root: g.root as usize,
        n,
    };
    let blocks = n.div_ceil(BLOCK);
    let lens: Vec<usize> = (0..blocks).map(|b| cx.objects(cx.block(b)).len()).collect();
    let objects = n - 1;
    let Heads {
        ids,
        types,
        sizes,
        blocks: heads,
    } = heads(&cx, &lens, spill);
    // At most one child per byte of the file, in node order: only a damaged
    // file's counts (records sharing bytes) claim more.
    let mut budget = bytes.len() as u64;
    let room: Vec<usize> = heads
        .iter()
        .map(|h| {
            let r = h.0.min(budget);
            budget -= r;
            r as usize
        })
        .collect();
    let root_room = heads.iter().map(|h| h.1 as usize).sum();
    let mut targets: Scratch<u32> = Scratch::zeroed(room.iter().sum(), spill);
    let mut offsets: Scratch<u64> = Scratch::zeroed(objects + 1, spill);
    let span = tracing::debug_span!(target: "heaptui::profile", "children").entered();
    let walked: Vec<(usize, Vec<u32>, Collector)> = targets
        .parts(room.iter().copied())
        .into_par_iter()
        .zip(starts(&room).collect::<Vec<_>>())
        .zip(
            offsets
                .parts(std::iter::once(1).chain(lens.iter().copied()))
                .split_off(1),
        )
        .enumerate()
        .map(|(b, ((mut targets, (start, _)), mut ends))| {
            let mut roots = Vec::with_capacity(if cx.block(b).contains(&cx.root) {
                root_room
            } else {
                0
            });
            let mut diag = Collector::default();
            let kept = cx.children(
                b,
                (&mut targets, start as u64),
                &mut ends,
                &mut roots,
                &mut diag,
            );
            targets.release();
            ends.release();
            cx.release(cx.block(b));
            (kept, roots, diag)
        })
        .collect();
    span.exit();
    let mut diag = Collector::default();
    let mut unknown_types = false;
    for (_, _, unknown, d) in heads {
        unknown_types |= unknown;
        diag.merge(d);
    }
    let roots = close_gaps(
        walked,
        (&room, &lens),
        (&mut targets, &mut offsets),
        &mut diag,
    );
    Nodes {
        ids,
        types,
        sizes,
        offsets,
        targets,
        roots,
        unknown_types,
        diag,
    }
}

/// The node heads of every block: the objects' ids, types and sizes, and
/// per block its children and root children claimed, whether it met an
/// unknown type, and its problems.
struct Heads {
    ids: Scratch<u64>,
    types: Scratch<u32>,
    sizes: Scratch<u64>,
    blocks: Vec<(u64, u64, bool, Collector)>,
}

/// Reads the node heads, block by block in parallel (into `spill` where
/// given).
fn heads(cx: &Ctx, lens: &[usize], spill: Option<&Spill>) -> Heads {
    let _span = tracing::debug_span!(target: "heaptui::profile", "heads").entered();
    let objects = cx.n - 1;
    let mut ids: Scratch<u64> = Scratch::zeroed(objects, spill);
    let mut types: Scratch<u32> = Scratch::zeroed(objects, spill);
    let mut sizes: Scratch<u64> = Scratch::zeroed(objects, spill);
    let blocks = ids
        .parts(lens.iter().copied())
        .into_par_iter()
        .zip(types.parts(lens.iter().copied()))
        .zip(sizes.parts(lens.iter().copied()))
        .enumerate()
        .map(|(b, ((mut ids, mut types), mut sizes))| {
            let mut diag = Collector::default();
            let (children, roots, unknown) =
                cx.heads(b, &mut ids, &mut types, &mut sizes, &mut diag);
            ids.release();
            types.release();
            sizes.release();
            cx.release(cx.block(b));
            (children, roots, unknown, diag)
        })
        .collect();
    Heads {
        ids,
        types,
        sizes,
        blocks,
    }
}

/// Blocks that dropped children leave a gap after their kept ones: closes
/// the gaps and moves their offsets back (only in damaged files). Returns
/// the root's children; the blocks' problems go to `diag`.
fn close_gaps(
    walked: Vec<(usize, Vec<u32>, Collector)>,
    (room, lens): (&[usize], &[usize]),
    (targets, offsets): (&mut Scratch<u32>, &mut [u64]),
    diag: &mut Collector,
) -> Vec<u32> {
    let mut end = 0;
    let mut roots = Vec::new();
    let mut object = 1;
    for (((kept, r, d), (start, room)), len) in walked.into_iter().zip(starts(room)).zip(lens) {
        if start != end {
            targets.copy_within(start..start + kept, end);
            let gap = (start - end) as u64;
            offsets[object..object + len]
                .iter_mut()
                .for_each(|x| *x -= gap);
        }
        debug_assert!(kept <= room);
        end += kept;
        object += len;
        roots.extend(r);
        diag.merge(d);
    }
    targets.truncate(end);
    roots
}

/// Each block's (start, length) in an array of the blocks' lengths.
fn starts(lens: &[usize]) -> impl Iterator<Item = (usize, usize)> + '_ {
    lens.iter().scan(0, |at, &len| {
        let start = *at;
        *at += len;
        Some((start, len))
    })
}
