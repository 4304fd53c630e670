//! The `nodes` array → per-object arrays. Node 0 is the synthetic root: not
//! an object, only its edge count is kept; object `i` is node `i + 1`.

use std::sync::Arc;

use rayon::prelude::*;

use super::column::Column;
use super::meta::Meta;
use super::numbers::{Chunk, Extent, Scan, ScanError, Scanned};
use crate::import::source::Source;
use crate::mem::spill::Spill;
use crate::model::{count_repeats, Collector, Ids, Kind, Sizes};
use crate::progress::Progress;

/// Larger self sizes are corrupt (no object spans a 48-bit address space);
/// the bound keeps every sum of sizes in u64.
pub const MAX_SELF_SIZE: u64 = 1 << 48;

/// Stands for a node type index outside `meta.node_types`.
pub const UNKNOWN_KIND: u8 = u8::MAX;

/// Stands for a name index no string has.
pub const NO_STRING: u32 = u32::MAX;

/// Where a message about field `field` (0 type, 1 name, 2 size) of node
/// `node` sorts among the messages: after the file-wide ones (place 0), by
/// node, then by field, as if noted while the record was read; a name is
/// checked later (see [`check_names`]).
pub fn place(node: u64, field: u64) -> u64 {
    node.saturating_mul(4).saturating_add(1 + field)
}

/// The place of every message about the edges: after the nodes'.
pub const AFTER_NODES: u64 = u64::MAX;

/// One chunk's records, in the arrays' forms.
#[derive(Debug, Default)]
struct Part {
    kinds: Vec<u8>,
    names: Vec<u32>,
    ids: Vec<u64>,
    sizes: Vec<u64>,
    edge_counts: Vec<u32>,
    diag: Collector,
}

/// The nodes' arrays, in spill files where the import spills.
#[derive(Debug, Default)]
pub struct Nodes {
    /// Per object: the node type index, or [`UNKNOWN_KIND`].
    pub kinds: Column<u8>,
    /// Per object: the name's string index, or [`NO_STRING`].
    pub names: Column<u32>,
    /// Per object, while the records are read (then empty: see `kept`).
    ids: Column<u64>,
    /// Per object, while the records are read (then empty: see `kept`).
    sizes: Column<u64>,
    /// Per node, the root included: its declared edge count.
    pub edge_counts: Column<u32>,
    pub scanned: Scanned,
    pub diag: Collector,
    /// Once every record is read ([`read`]), the ids and sizes in the
    /// model's forms.
    pub kept: Kept,
}

/// The objects' ids and sizes in the model's forms, made as soon as the
/// nodes are read: the `u64` arrays (16 bytes an object) are not held
/// while the edges are read, where the import peaks, and after.
#[derive(Debug, Default)]
pub struct Kept {
    /// How many objects.
    pub objects: usize,
    pub ids: Ids,
    pub sizes: Sizes,
    /// How many nodes repeat the id of an earlier one.
    pub repeated: u64,
}

impl Kept {
    /// From the read arrays (freed); the sizes' small form made in
    /// `spill` where given.
    fn new(ids: Column<u64>, sizes: Column<u64>, spill: Option<&Spill>) -> Kept {
        match (ids, sizes) {
            (Column::Memory(ids), Column::Memory(sizes)) => Kept {
                objects: ids.len(),
                repeated: count_repeats(&ids),
                ids: ids.into(),
                sizes: sizes.into(),
            },
            (ids, sizes) => {
                let ids = ids.into_scratch();
                let kept = Kept {
                    objects: ids.len(),
                    repeated: count_repeats(&ids),
                    ids: Ids::from(&ids[..]),
                    sizes: Sizes::from_scratch(sizes.into_scratch(), spill),
                };
                ids.release(0..ids.len());
                kept
            }
        }
    }
}

fn read_chunk(chunk: &mut Chunk, out: &mut Part, meta: &Meta) -> Result<(), ScanError> {
    let n = chunk.records as usize;
    for v in [&mut out.ids, &mut out.sizes] {
        v.clear();
        v.reserve(n);
    }
    for v in [&mut out.names, &mut out.edge_counts] {
        v.clear();
        v.reserve(n);
    }
    out.kinds.clear();
    out.kinds.reserve(n);
    out.diag = Collector::default();
    for r in chunk.first_record..chunk.first_record + chunk.records {
        let (edges, kind, name, id, mut size) = {
            let rec = chunk.record()?;
            let m = meta;
            (
                rec[m.n_edges],
                rec[m.n_type],
                rec[m.n_name],
                rec[m.n_id],
                rec[m.n_size],
            )
        };
        let Ok(edges) = u32::try_from(edges) else {
            return Err(ScanError::Bad {
                offset: 0,
                why: "a node declares more than 2^32 edges",
            });
        };
        out.edge_counts.push(edges);
        if r == 0 {
            continue;
        }
        out.kinds.push(
            if kind < meta.node_types.len().min(UNKNOWN_KIND as usize) as u64 {
                kind as u8
            } else {
                out.diag.count(Kind::Undefined, 1);
                out.diag.note(place(r, 0), || match kind < meta.node_types.len() as u64 {
                    true => format!(
                        "node {r}: node type {kind} is past the first {UNKNOWN_KIND} node types, the ones heaptui keeps"
                    ),
                    false => format!("node {r}: node type {kind} is not in snapshot.meta"),
                });
                UNKNOWN_KIND
            },
        );
        // Checked against the strings' count once they are read (they come
        // after the arrays): see [`check_names`].
        out.names.push(if name < NO_STRING as u64 {
            name as u32
        } else {
            out.diag.count(Kind::Undefined, 1);
            out.diag.note(place(r, 1), || {
                format!("node {r}: name {name} is not in the strings array")
            });
            NO_STRING
        });
        out.ids.push(id);
        if size > MAX_SELF_SIZE {
            out.diag.push(Kind::Skipped, place(r, 2), || {
                format!("node {r}: self_size {size} is not believable; taken as 0")
            });
            size = 0;
        }
        out.sizes.push(size);
    }
    Ok(())
}

/// Reads every node record, into spill files where `spill` is given.
pub fn read(
    (bytes, source, progress): (&[u8], &Source, &Progress),
    extent: Extent,
    meta: &Meta,
    chunk_size: usize,
    spill: Option<&Arc<Spill>>,
) -> Result<Nodes, ScanError> {
    // The header's count is only a capacity hint, bounded by what the bytes
    // can hold (two bytes a number at least).
    let fields = meta.node_fields.len();
    let room = extent.room(bytes.len());
    let bound = (room / 2 / fields) as u64 + 1;
    let hint = meta.node_count.unwrap_or(0).min(bound) as usize;
    // Backed by huge pages where the kernel allows it, as the other
    // importers' arrays are: the merges below touch every page first.
    let mut all = Nodes {
        kinds: Column::with_capacity(hint, spill),
        names: Column::with_capacity(hint, spill),
        ids: Column::with_capacity(hint, spill),
        sizes: Column::with_capacity(hint, spill),
        edge_counts: Column::with_capacity(hint, spill),
        ..Nodes::default()
    };
    let scan = Scan {
        bytes,
        extent,
        fields,
        chunk_size,
        source,
        progress,
    };
    let scanned = scan.run(
        |c, part| read_chunk(c, part, meta),
        |part: &mut Part| {
            // In parallel, as the edges (see there).
            all.kinds.extend(&part.kinds);
            all.names.extend(&part.names);
            all.ids.extend(&part.ids);
            all.sizes.extend(&part.sizes);
            all.edge_counts.extend(&part.edge_counts);
            all.diag.merge(std::mem::take(&mut part.diag));
        },
    )?;
    all.scanned = scanned;
    let (ids, sizes) = (std::mem::take(&mut all.ids), std::mem::take(&mut all.sizes));
    all.kept = Kept::new(ids, sizes, spill.map(|s| &**s));
    Ok(all)
}

/// Names no string has: the strings come after the arrays, so node names
/// are checked once the strings are read. In parallel blocks, each noting
/// its own; their places put the messages where reading the records would
/// have noted them.
pub fn check_names(nodes: &mut Nodes, strings: usize, diag: &mut Collector) {
    const BLOCK: usize = 1 << 16;
    let bad = |n: u32| n != NO_STRING && n as usize >= strings;
    if !nodes.names.par_iter().any(|&n| bad(n)) {
        return;
    }
    let parts: Vec<Collector> = nodes
        .names
        .par_chunks_mut(BLOCK)
        .enumerate()
        .map(|(b, names)| {
            let mut part = Collector::default();
            for (i, n) in names.iter_mut().enumerate() {
                if bad(*n) {
                    let (r, name) = ((b * BLOCK + i + 1) as u64, *n);
                    part.count(Kind::Undefined, 1);
                    part.note(place(r, 1), || {
                        format!("node {r}: name {name} is not in the strings array")
                    });
                    *n = NO_STRING;
                }
            }
            part
        })
        .collect();
    for part in parts {
        diag.merge(part);
    }
}
