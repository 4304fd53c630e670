//! The V8 heap snapshot importer (`.heapsnapshot`, docs/formats.md): Chrome and
//! Edge DevTools, Node.js, Electron, Deno.
//!
//! A snapshot is one JSON object: a small `snapshot` header whose `meta`
//! declares the record layouts, then flat arrays of integers (`nodes`:
//! `node_fields.len()` numbers per node; `edges`: `edge_fields.len()` per
//! edge, grouped by owning node), then `strings`. The numeric arrays are
//! nearly the whole file, which can be many gigabytes: a JSON value tree of
//! them would cost tens of bytes per number and a sequential parse would run
//! at a fraction of the target speed. So the file is walked without building
//! values (`layout`), the header alone goes through serde_json (`meta`), the
//! arrays are read by a hand-written integer scanner straight from the
//! mapped bytes, in parallel chunks (`numbers`), as the walk meets them,
//! and the strings are found sequentially and decoded in parallel with a
//! real JSON string decoder (`strings`). The strings come last in the file,
//! so names and labels are checked against their count afterwards.
//!
//! The per-edge arrays are the import's largest: the targets (4 bytes an
//! edge, packed in place to the model's ⌈log2 objects⌉ bits once every
//! edge is read: [`crate::mem::Bits`]) and the labels, coded in 2 bytes an edge as they are
//! read (`edge_labels`), put in the model's narrower form once the strings
//! are known. No per-object array is written while the edges are read:
//! each object's reference count is the edge count its node declares less
//! the edges left out, so the references' offsets are made from those
//! counts (4 bytes a node, read anyway) once the edges are read, in the
//! model's form (about 2 bytes an object). On the 519 MB snapshot (6.62 M
//! objects, 21.5 M edges) the import peaks while the edges are read, at
//! 255 MiB (40.4 bytes an object; 396 MiB before, with the labels as
//! `u32`s, the offsets as `u64`s and 64 MiB windows).
//!
//! Where the heap the header declares (`node_count`) is over the memory
//! budget (`import::budget`), the per-node and per-edge arrays are built in
//! spill files from the start (`column`), each part's pages given back as
//! it is written, and the spill goes on with the model.
//!
//! Mapping (docs/formats.md, as Chrome DevTools and memlab compute retained
//! sizes): node 0 is the synthetic root, not an object; object `i` is node
//! `i + 1` with the node's `id` as its id (ids are stable across snapshots
//! of one process) and `self_size` as its shallow size; its type is its name
//! for `object` and `native` nodes, a closure's its function's name and,
//! where `locations` records it, its place (`audit() server.js:42`: see
//! `locations`), else `(<node type>)`; references are its
//! edges in file order except `weak` ones and `shortcut` ones that do not
//! leave the root; the root's remaining edges name the roots (kind 0,
//! flags 0). Edge names become labels, string nodes' names their values.

mod build;
mod column;
mod edge_labels;
mod edges;
mod layout;
mod locations;
mod meta;
mod nodes;
mod numbers;
mod simd;
mod strings;

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

use super::source::Source;
use super::{ImportError, InputError};
use crate::mem::spill::Spill;
use crate::model::{Collector, Kind, ObjectIdx, ObjectTypes, Place, TypeIdx};
use crate::model::{Csr, Format, Model, RecordCounts, Root};
use crate::progress::{Progress, Stage};
use layout::Layout;
use meta::Meta;
use nodes::AFTER_NODES;
use numbers::ScanError;
use strings::Pool;

/// Target size of one parse chunk.
const CHUNK: usize = 4 << 20;

/// Imports a snapshot whose bytes are open (see `import::import_file`).
pub fn import(path: &Path, source: &Source, progress: &Progress) -> Result<Model, ImportError> {
    import_with_chunk(path, source, progress, CHUNK, Spilling::Planned)
}

/// Where the import builds its arrays.
#[derive(Clone)]
enum Spilling {
    /// In spill files where the heap the header declares is over the
    /// memory budget (`import::budget`), else in memory.
    Planned,
    /// In these spill files (tests).
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    Into(Arc<Spill>),
}

impl Spilling {
    /// The spill for a heap whose header is `meta`, in a file of
    /// `file_len` bytes: planned by the node count it declares (bounded by
    /// what the bytes can hold, and that bound where it declares none).
    fn spill(&self, meta: &Meta, file_len: usize, progress: &Progress) -> Option<Arc<Spill>> {
        match self {
            Spilling::Into(s) => Some(s.clone()),
            Spilling::Planned => {
                let most = (file_len / (2 * meta.node_fields.len().max(1))) as u64;
                let nodes = meta.node_count.unwrap_or(most).min(most);
                super::budget::plan_counted(nodes, file_len as u64, progress)
            }
        }
    }
}

/// [`import`] of bytes in memory with a chosen chunk size, so tests can
/// check that chunk boundaries change nothing.
#[cfg(feature = "testing")]
pub(crate) fn import_bytes_with_chunk(
    path: &Path,
    bytes: &[u8],
    chunk: usize,
) -> Result<Model, InputError> {
    let source = Source::Owned(bytes.to_vec());
    match import_with_chunk(path, &source, &Progress::new(), chunk, Spilling::Planned) {
        Ok(m) => Ok(m),
        Err(ImportError::Input(e)) => Err(e),
        Err(ImportError::Cancelled) => unreachable!("nobody can cancel this progress"),
    }
}

/// [`import_bytes_with_chunk`] building the arrays in `spill`'s files
/// whatever the budget, so tests can check that spilling changes nothing.
#[cfg(feature = "testing")]
pub(crate) fn import_bytes_spilled(
    path: &Path,
    bytes: &[u8],
    chunk: usize,
    spill: Arc<Spill>,
) -> Result<Model, InputError> {
    let source = Source::Owned(bytes.to_vec());
    match import_with_chunk(
        path,
        &source,
        &Progress::new(),
        chunk,
        Spilling::Into(spill),
    ) {
        Ok(m) => Ok(m),
        Err(ImportError::Input(e)) => Err(e),
        Err(ImportError::Cancelled) => unreachable!("nobody can cancel this progress"),
    }
}

fn scan_error(path: &Path, array: &str, e: ScanError) -> ImportError {
    match e {
        ScanError::Cancelled => ImportError::Cancelled,
        ScanError::Bad { offset: 0, why } => {
            InputError::new(path, format!("{array} array: {why}")).into()
        }
        ScanError::Bad { offset, why } => {
            InputError::new(path, format!("{array} array: {why} at byte {offset}")).into()
        }
    }
}

/// Why a part the importer cannot do without is missing.
fn missing(path: &Path, what: &str, layout: &Layout) -> ImportError {
    let why = match &layout.stopped {
        Some(s) => format!("no {what} found ({s}); not a complete V8 heap snapshot"),
        None => format!("no {what} found; not a V8 heap snapshot"),
    };
    InputError::new(path, why).into()
}

/// The arrays read while the layout walk passes them (see `layout`).
#[derive(Default)]
struct Read {
    /// The header the nodes were read with, parsed.
    meta: Option<(std::ops::Range<usize>, Meta)>,
    /// The nodes, with their problems, and where their array starts.
    nodes: Option<(usize, nodes::Nodes, Collector)>,
    /// The edges (with the edge count the nodes declare), and where their
    /// array starts.
    edges: Option<(usize, edges::Edges, u64)>,
    /// The spill the arrays were read into, once planned.
    spill: Option<Option<Arc<Spill>>>,
    /// While the import spills: the memory watcher looks often (see
    /// `mem::watch`).
    busy: Option<crate::mem::Busy>,
    cancelled: bool,
}

/// Reads the nodes array from `extent`, with the problems of its records
/// (fatal when there is no object).
fn read_nodes(
    path: &Path,
    (bytes, source, progress): (&[u8], &Source, &Progress),
    extent: numbers::Extent,
    meta: &Meta,
    (chunk, spill): (usize, Option<&Arc<Spill>>),
) -> Result<(nodes::Nodes, Collector), ImportError> {
    let _span = tracing::debug_span!(target: "heaptui::profile", "nodes").entered();
    let mut nodes = nodes::read((bytes, source, progress), extent, meta, chunk, spill)
        .map_err(|e| scan_error(path, "nodes", e))?;
    let mut diag = Collector::default();
    check_nodes(path, &nodes, nodes.scanned.closed, meta, &mut diag)?;
    diag.merge(std::mem::take(&mut nodes.diag));
    Ok((nodes, diag))
}

/// Reads the edges array from `extent`; also returns the edge count the
/// nodes declare.
fn read_edges(
    path: &Path,
    (bytes, source, progress): (&[u8], &Source, &Progress),
    extent: numbers::Extent,
    meta: &Meta,
    nodes: &nodes::Nodes,
    (chunk, spill): (usize, Option<&Arc<Spill>>),
) -> Result<(edges::Edges, u64), ImportError> {
    let _span = tracing::debug_span!(target: "heaptui::profile", "edges").entered();
    let cx = edges::Context::new(meta, &nodes.edge_counts);
    if nodes.edge_counts.is_spilled() {
        // The counts were read whole; the edges read them in order.
        crate::mem::spill::release_all();
    }
    let edges = edges::read((bytes, source, progress), extent, &cx, chunk, spill)
        .map_err(|e| scan_error(path, "edges", e))?;
    Ok((edges, cx.claimed()))
}

fn import_with_chunk(
    path: &Path,
    source: &Source,
    progress: &Progress,
    chunk: usize,
    spilling: Spilling,
) -> Result<Model, ImportError> {
    let bytes = source.bytes();
    let io = (bytes, source, progress);
    progress.start(Stage::Parse, bytes.len() as u64);
    let _span = tracing::debug_span!(target: "heaptui::profile", "v8").entered();
    let (layout, mut read) = walk(path, io, chunk, &spilling)?;
    let header = layout
        .header
        .clone()
        .ok_or_else(|| missing(path, "`snapshot` header", &layout))?;
    let meta = match read.meta.take() {
        Some((read_with, meta)) if read_with == header => meta,
        _ => {
            // A later `snapshot` key: what was read with another is read again.
            (read.nodes, read.edges) = (None, None);
            meta::parse(&bytes[header]).map_err(|e| InputError::new(path, e))?
        }
    };
    let spill = match read.spill.take() {
        Some(spill) => spill,
        None => spilling.spill(&meta, bytes.len(), progress),
    };
    let _busy = read
        .busy
        .take()
        .or_else(|| spill.is_some().then(crate::mem::busy));
    let at = (chunk, spill.as_ref());
    let Some(nodes_array) = &layout.nodes else {
        return Err(missing(path, "`nodes` array", &layout));
    };
    let start = |array: &layout::NumberArray| array.range.start - 1;
    let (mut nodes, nodes_diag) = match read.nodes.take() {
        Some((at, nodes, diag)) if at == start(nodes_array) => (nodes, diag),
        _ => {
            let extent = numbers::Extent::Known(nodes_array.clone());
            read_nodes(path, io, extent, &meta, at)?
        }
    };
    let (mut edges, claimed) = match (read.edges.take(), &layout.edges) {
        (Some((at, edges, claimed)), Some(array)) if at == start(array) => (edges, claimed),
        (_, Some(array)) => {
            let extent = numbers::Extent::Known(array.clone());
            read_edges(path, io, extent, &meta, &nodes, at)?
        }
        (_, None) => {
            let claimed = edges::Context::new(&meta, &nodes.edge_counts).claimed();
            (edges::Edges::default(), claimed)
        }
    };
    // What the edges were read with (4 bytes a node) become the objects'
    // reference counts, then the references' offsets.
    let declared = std::mem::take(&mut nodes.edge_counts);
    edges.cut_rows(declared, claimed, spill.as_deref());
    crate::mem::checkpoint("import: nodes, edges");
    let (pool, diag) = read_strings(source, &layout, &mut nodes, nodes_diag);
    crate::mem::checkpoint("import: strings");
    let (defined, diag) = read_locations(io, &layout, (&meta, &nodes, &edges), &pool, diag, chunk)?;
    crate::mem::checkpoint("import: locations");
    let _span = tracing::debug_span!(target: "heaptui::profile", "assemble").entered();
    let mut model = assemble(
        path,
        bytes.len() as u64,
        (nodes, edges, claimed),
        (&meta, &defined),
        &pool,
        diag,
    );
    model.spill = spill;
    Ok(model)
}

/// The walk over the file's keys. The arrays are read as the walk meets
/// them, when what they need is known (the header before the nodes, the
/// nodes before the edges, as V8 writes them), so each array's end is found
/// while it is read; else the walk searches the end and the array is read
/// after it.
fn walk(
    path: &Path,
    io: (&[u8], &Source, &Progress),
    chunk: usize,
    spilling: &Spilling,
) -> Result<(Layout, Read), ImportError> {
    let _span = tracing::debug_span!(target: "heaptui::profile", "layout").entered();
    let (bytes, source, progress) = io;
    let mut read = Read::default();
    let layout = layout::find_reading(bytes, source, &mut |layout, key, pos| {
        let extent = numbers::Extent::Open(pos + 1);
        let result = match (key, &layout.header, &read.meta, &read.nodes) {
            (b"nodes", Some(header), _, _) => meta::parse(&bytes[header.clone()])
                .map_err(|e| InputError::new(path, e).into())
                .and_then(|meta| {
                    let spill = read
                        .spill
                        .get_or_insert_with(|| spilling.spill(&meta, bytes.len(), progress))
                        .clone();
                    if spill.is_some() && read.busy.is_none() {
                        read.busy = Some(crate::mem::busy());
                    }
                    let at = (chunk, spill.as_ref());
                    let (nodes, diag) = read_nodes(path, io, extent, &meta, at)?;
                    let array = nodes.scanned.array();
                    read.meta = Some((header.clone(), meta));
                    read.nodes = Some((pos, nodes, diag));
                    // Edges read before these nodes are read again.
                    read.edges = None;
                    Ok(array)
                }),
            (b"edges", _, Some((_, meta)), Some((_, nodes, _))) => {
                let spill = read.spill.clone().flatten();
                let at = (chunk, spill.as_ref());
                read_edges(path, io, extent, meta, nodes, at).map(|(edges, claimed)| {
                    let array = edges.scanned.array();
                    read.edges = Some((pos, edges, claimed));
                    array
                })
            }
            _ => return ControlFlow::Continue(None),
        };
        match result {
            Ok(array) => ControlFlow::Continue(Some(array)),
            Err(ImportError::Cancelled) => {
                read.cancelled = true;
                ControlFlow::Break(())
            }
            // Read again after the walk, which reports the error (unless a
            // later key of the same name supersedes the part).
            Err(_) => ControlFlow::Continue(None),
        }
    });
    if read.cancelled {
        return Err(ImportError::Cancelled);
    }
    Ok((layout, read))
}

/// The strings, with the problems of the strings and the nodes' names.
fn read_strings(
    source: &Source,
    layout: &Layout,
    nodes: &mut nodes::Nodes,
    nodes_diag: Collector,
) -> (Pool, Collector) {
    let _span = tracing::debug_span!(target: "heaptui::profile", "strings").entered();
    let bytes = source.bytes();
    let mut diag = Collector::default();
    let pool = match &layout.strings {
        Some(spans) => strings::decode_all(bytes, spans),
        None => Pool::default(),
    };
    if let Some(why) = layout
        .stopped
        .as_deref()
        .filter(|w| w.starts_with("the file ends"))
    {
        diag.ended_early(Kind::Skipped, 0, 1, || {
            format!("the file ended early (a cut or unfinished snapshot): {why}")
        });
    }
    note_strings(layout, &pool, &mut diag);
    if let Some(spans) = &layout.strings {
        source.release(spans.start, spans.end.saturating_sub(spans.start));
    }
    diag.merge(nodes_diag);
    nodes::check_names(nodes, pool.len(), &mut diag);
    (pool, diag)
}

/// Where the closures were defined, from the `locations` array when there
/// is one (a bad one is a message: closures are then named without).
fn read_locations(
    (bytes, source, progress): (&[u8], &Source, &Progress),
    layout: &Layout,
    (meta, nodes, edges): (&Meta, &nodes::Nodes, &edges::Edges),
    pool: &Pool,
    mut diag: Collector,
    chunk: usize,
) -> Result<(Vec<locations::Defined>, Collector), ImportError> {
    let _span = tracing::debug_span!(target: "heaptui::profile", "locations").entered();
    let located = match (&layout.locations, meta.locations) {
        (Some(array), Some(fields)) => {
            let io = (fields, meta, nodes);
            match locations::read(bytes, array.clone(), io, chunk, source, progress) {
                Ok(located) => located,
                Err(ScanError::Cancelled) => return Err(ImportError::Cancelled),
                Err(ScanError::Bad { why, .. }) => {
                    diag.push(Kind::Skipped, AFTER_NODES, || {
                        format!("locations array: {why}; closures are named without their places")
                    });
                    Vec::new()
                }
            }
        }
        _ => Vec::new(),
    };
    Ok((locations::resolve(located, nodes, edges, meta, pool), diag))
}

fn note_strings(layout: &Layout, pool: &Pool, diag: &mut Collector) {
    match &layout.strings {
        None => diag.push(Kind::Skipped, 0, || {
            "no `strings` array: names are unknown".into()
        }),
        Some(spans) => {
            if let Some(why) = &spans.stopped {
                diag.push(Kind::Skipped, 0, || {
                    format!("{why}: only the first {} strings are known", pool.len())
                });
            }
        }
    }
    if pool.undecodable > 0 {
        diag.count(Kind::Skipped, pool.undecodable);
        diag.note(0, || {
            format!(
                "{} strings are not valid JSON strings (kept as written)",
                pool.undecodable
            )
        });
    }
}

/// The node array's problems: fatal when there is no object at all.
fn check_nodes(
    path: &Path,
    nodes: &nodes::Nodes,
    closed: bool,
    meta: &Meta,
    diag: &mut Collector,
) -> Result<(), ImportError> {
    let fields = meta.node_fields.len() as u64;
    let s = nodes.scanned;
    if s.records <= 1 {
        return Err(InputError::new(
            path,
            "no objects: the nodes array holds no node besides the synthetic root",
        )
        .into());
    }
    if !closed {
        diag.push(Kind::Skipped, 0, || {
            format!("the nodes array is cut after {} whole nodes", s.records)
        });
    } else if !s.numbers.is_multiple_of(fields) {
        diag.push(Kind::Skipped, 0, || {
            format!(
                "the nodes array holds {} numbers, not a multiple of {fields} node fields: the last {} are ignored",
                s.numbers,
                s.numbers % fields
            )
        });
    }
    if let Some(claimed) = meta.node_count.filter(|&c| c != s.records) {
        diag.push(Kind::Skipped, 0, || {
            format!(
                "snapshot.node_count says {claimed} nodes, the nodes array holds {}",
                s.records
            )
        });
    }
    Ok(())
}

/// The edge array's problems, all usable: cut, short or long.
fn check_edges(edges: &edges::Edges, claimed: u64, meta: &Meta, diag: &mut Collector) {
    let s = edges.scanned;
    let fields = meta.edge_fields.len() as u64;
    if !s.numbers.is_multiple_of(fields) {
        diag.push(Kind::Skipped, AFTER_NODES, || {
            format!(
                "the edges array ends inside an edge ({} numbers left over)",
                s.numbers % fields
            )
        });
    }
    if s.records < claimed {
        diag.count(Kind::Skipped, claimed - s.records);
        diag.note(AFTER_NODES, || format!("the nodes declare {claimed} edges, the edges array holds {}: {} missing (cut file?)", s.records, claimed - s.records));
    } else if s.records > claimed {
        diag.count(Kind::Skipped, s.records - claimed);
        diag.note(AFTER_NODES, || format!("the edges array holds {} edges, the nodes declare {claimed}: the {} extra are ignored", s.records, s.records - claimed));
    }
    if let Some(c) = meta.edge_count.filter(|&c| c != s.records) {
        diag.push(Kind::Skipped, AFTER_NODES, || {
            format!(
                "snapshot.edge_count says {c} edges, the edges array holds {}",
                s.records
            )
        });
    }
}

/// The model from the nodes, the edges and the edge count the nodes
/// declare.
fn assemble(
    path: &Path,
    file_bytes: u64,
    (mut nodes, mut edges, claimed): (nodes::Nodes, edges::Edges, u64),
    (meta, defined): (&Meta, &[locations::Defined]),
    pool: &Pool,
    mut diag: Collector,
) -> Model {
    check_edges(&edges, claimed, meta, &mut diag);
    diag.merge(std::mem::take(&mut edges.diag));
    // The labels first: their 2-byte codes as read (2 bytes an edge) and
    // the model's narrower form are both alive while it is made, the
    // values not yet.
    let offsets = std::mem::take(&mut edges.offsets);
    let targets = std::mem::take(&mut edges.targets);
    let refs = Csr::packing(offsets, targets.into_scratch());
    let raw = std::mem::take(&mut edges.raw_labels);
    let labels = tracing::debug_span!(target: "heaptui::profile", "labels")
        .in_scope(|| build::labels(raw, pool, &refs));
    crate::mem::checkpoint("import: labels");
    let values = tracing::debug_span!(target: "heaptui::profile", "values")
        .in_scope(|| build::values(&nodes, meta, pool));
    crate::mem::checkpoint("import: values");
    let mut names = std::mem::take(&mut nodes.names);
    let type_names = tracing::debug_span!(target: "heaptui::profile", "types")
        .in_scope(|| build::types(&mut names, &nodes.kinds, meta, pool, defined));
    let types = names.into_scratch();
    let types: ObjectTypes = match types.is_mapped() {
        true => types.into_array().cast::<TypeIdx>().into(),
        false => TypeIdx::cast_vec(types.into_vec()).into(),
    };
    crate::mem::checkpoint("import: types");
    let repeated = nodes.kept.repeated;
    if repeated > 0 {
        diag.note(AFTER_NODES, || {
            format!(
                "{repeated} nodes repeat the id of an earlier node (look-ups by id find the first)"
            )
        });
    }
    let roots: Vec<Root> = edges
        .roots
        .iter()
        .map(|&o| Root::plain(ObjectIdx(o)))
        .collect();
    let objects = nodes.kept.objects as u64;
    let details = details(meta, &nodes, &edges, pool);
    Model {
        records: RecordCounts {
            objects,
            types: type_names.len() as u64,
            roots: roots.len() as u64,
            sections: 0,
        },
        type_names,
        types,
        refs,
        sizes: nodes.kept.sizes,
        ids: nodes.kept.ids,
        roots,
        diagnostics: {
            diag.count(Kind::Duplicate, repeated);
            diag.finish(Place::Unplaced)
        },
        details,
        labels: Some(labels),
        values: Some(values),
        ..Model::native(path, file_bytes, Format::Heapsnapshot, objects)
    }
}

fn details(
    meta: &Meta,
    nodes: &nodes::Nodes,
    edges: &edges::Edges,
    pool: &Pool,
) -> Vec<(String, String)> {
    let mut d = vec![
        (
            "node fields".into(),
            format!(
                "{} ({})",
                meta.node_fields.len(),
                meta.node_fields.join(", ")
            ),
        ),
        (
            "edge fields".into(),
            format!(
                "{} ({})",
                meta.edge_fields.len(),
                meta.edge_fields.join(", ")
            ),
        ),
        ("node types".into(), meta.node_types.join(", ")),
        ("edge types".into(), meta.edge_types.join(", ")),
        ("nodes".into(), nodes.scanned.records.to_string()),
        ("edges".into(), edges.scanned.records.to_string()),
        ("strings".into(), pool.len().to_string()),
        ("weak edges (not references)".into(), edges.weak.to_string()),
        (
            "shortcut edges (not references)".into(),
            edges.shortcuts.to_string(),
        ),
    ];
    if let Some(x) = meta.extra_native_bytes {
        d.push(("extra native bytes".into(), x.to_string()));
    }
    d
}
